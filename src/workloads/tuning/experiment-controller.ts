// The Experiment controller, as Katib's: keeps `parallelTrialCount` trials active until the goal,
// the failure budget or the trial budget ends the experiment; asks its Suggestion for assignments
// and turns each into a Trial whose job is the trial template with the assignment substituted.
//
// Where Skiff differs from Katib, on purpose:
// - when the experiment ends, its unfinished trials are stopped (condition Killed; their jobs go),
//   where Katib leaves them running (katib#2061);
// - a trial whose metrics never appeared counts as finished when sizing the next batch, so no more
//   than maxTrialCount trials are ever made;
// - a search that has nothing left to offer (a grid walked fully) ends the experiment
//   (ExperimentSuggestionEndReached), which Katib declares but never reaches.
//
// Level-triggered and idempotent: status is recomputed from the Trials on every pass; trial names
// come from the Suggestion, so a create repeated after a crash is an AlreadyExists, never a second trial.
import YAML from 'yaml';
import { isAlreadyExists, isNotFound } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { now, ownerRefTo } from '../../api/meta.js';
import type { Condition } from '../../api/conditions.js';
import type { Experiment, ExperimentStatus, Suggestion, SuggestionStatus, Trial, TrialAssignment } from '../../api/tuning.js';
import { TemplateError, TuningApiVersion, TuningLabels, renderTrialJob, templateText } from '../../api/tuning.js';
import type { Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import { activeCount, bucketOf, finishedCount, setKatibCondition, summarise, verdict } from './status.js';

export interface ExperimentControllerOptions {
  client: Client;
  recorder: Recorder;
  /** Skiff's checks of an Experiment (Katib's webhook's and the algorithms'): on a cluster, kubectl
   *  writes straight to the API server, whose open Experiment schema checks nothing, so an experiment
   *  these refuse is failed here, naming the fields, instead of being run */
  validate?: (exp: Experiment & StoredObject) => { field: string; message: string }[];
}

export function addExperimentController(mgr: Manager, opts: ExperimentControllerOptions): void {
  const r = new ExperimentReconciler(opts, mgr.cache);
  mgr.add({
    name: 'experiment-controller',
    for: Kinds.KatibExperiment,
    owns: [Kinds.Trial, Kinds.Suggestion],
    watches: [{
      // a trial template kept in a ConfigMap: its experiments look again when it appears or changes
      kind: Kinds.ConfigMap,
      map: (cm) => r.usersOf(cm),
    }],
    reconcile: (key) => r.reconcile(key),
  });
}

const isDone = (e: Experiment) => e.status?.conditions?.find((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');

export class ExperimentReconciler {
  constructor(private readonly opts: ExperimentControllerOptions, private readonly cache: InformerCache) {}

  usersOf(cm: StoredObject): ObjectKey[] {
    return (this.cache.list(Kinds.KatibExperiment) as unknown as Experiment[])
      .filter((e) => e.spec.trialTemplate?.configMap?.configMapName === cm.metadata.name && e.spec.trialTemplate?.configMap?.configMapNamespace === cm.metadata.namespace)
      .map((e) => ({ namespace: e.metadata.namespace, name: e.metadata.name as string }));
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client } = this.opts;
    const exp = await client.find<Experiment>(Kinds.KatibExperiment, key);
    if (!exp || exp.metadata.deletionTimestamp) return {};
    const at = now();
    const status: ExperimentStatus = structuredClone(exp.status ?? {});
    const invalid = isDone(exp) ? [] : (this.opts.validate?.(exp) ?? []);
    if (invalid.length) {
      const message = `Experiment is invalid: ${invalid.map((e) => `${e.field}: ${e.message}`).join('; ')}`;
      setKatibCondition(status, { type: 'Failed', status: 'True', reason: 'ExperimentInvalid', message }, at);
      status.completionTime ??= at;
      this.opts.recorder.event(exp, 'Warning', 'ExperimentInvalid', message);
      return this.write(exp, status);
    }
    if (!status.conditions?.some((c) => c.type === 'Created')) {
      setKatibCondition(status, { type: 'Created', status: 'True', reason: 'ExperimentCreated', message: 'Experiment is created' }, at);
      this.opts.recorder.event(exp, 'Normal', 'ExperimentCreated', `Experiment ${exp.metadata.name} is created`);
    }
    status.startTime ??= at;
    const sug = await this.suggestion(exp);
    const trials = this.cache.owned(Kinds.Trial, exp.metadata.uid ?? '') as unknown as (Trial & StoredObject)[];
    const summary = summarise(exp.spec, trials);
    for (const k of ['runningTrialList', 'pendingTrialList', 'failedTrialList', 'succeededTrialList', 'killedTrialList', 'earlyStoppedTrialList', 'metricsUnavailableTrialList', 'trialsSucceeded', 'trialsFailed', 'trialsKilled', 'trialsPending', 'trialsRunning', 'trialsEarlyStopped', 'trialMetricsUnavailable', 'currentOptimalTrial', 'paretoFront'] as const) delete status[k];
    Object.assign(status, summary.status);
    status.trials = trials.length;

    let done = isDone(exp);
    // Katib's restart: a finished LongRunning/FromVolume experiment whose maxTrialCount was raised runs again
    if (done && done.type === 'Succeeded' && done.reason === 'ExperimentMaxTrialsReached' && exp.spec.maxTrialCount !== undefined && exp.spec.maxTrialCount > finishedCount(summary)
      && (exp.spec.resumePolicy === 'LongRunning' || exp.spec.resumePolicy === 'FromVolume')) {
      status.conditions = status.conditions?.filter((c) => c.type !== 'Succeeded' && c.type !== 'Failed');
      setKatibCondition(status, { type: 'Restarting', status: 'True', reason: 'ExperimentRestarting', message: 'Experiment is restarting' }, at);
      delete status.completionTime;
      this.opts.recorder.event(exp, 'Normal', 'ExperimentRestarting', `maxTrialCount raised to ${exp.spec.maxTrialCount}: the experiment runs again`);
      done = undefined;
    }
    if (done) {
      await this.stopUnfinished(exp, trials, `the experiment ended: ${done.reason}`);
      return this.write(exp, status);
    }

    const v = verdict(exp.spec, summary);
    const sugStatus = sug?.status as SuggestionStatus | undefined;
    const sugFailed = sugStatus?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    const sugEnded = sugStatus?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True' && c.reason === 'SuggestionEndReached');
    const unmade = (sugStatus?.suggestions ?? []).filter((a) => !trials.some((t) => t.metadata.name === a.name));
    let end: { type: 'Succeeded' | 'Failed'; reason: string; message: string } | undefined;
    if (v.done) end = v;
    else if (sugFailed) end = { type: 'Failed', reason: 'ExperimentFailed', message: `Suggestion has failed: ${sugFailed.message ?? sugFailed.reason}` };
    else if (sugEnded && activeCount(summary) === 0 && unmade.length === 0) end = { type: 'Succeeded', reason: 'ExperimentSuggestionEndReached', message: 'Experiment has succeeded because the search space is exhausted' };
    if (end) {
      const running = status.conditions?.find((c) => c.type === 'Running');
      if (running) setKatibCondition(status, { type: 'Running', status: 'False', reason: running.reason ?? 'ExperimentRunning', message: running.message ?? '' }, at);
      status.conditions = status.conditions?.filter((c) => c.type !== 'Restarting');
      setKatibCondition(status, { type: end.type, status: 'True', reason: end.reason, message: end.message }, at);
      status.completionTime = at;
      this.opts.recorder.event(exp, end.type === 'Succeeded' ? 'Normal' : 'Warning', end.reason, end.message);
      await this.write(exp, status);
      await this.stopUnfinished(exp, trials, `the experiment ended: ${end.reason}`);
      return {};
    }
    status.conditions = status.conditions?.filter((c) => c.type !== 'Restarting');
    setKatibCondition(status, { type: 'Running', status: 'True', reason: 'ExperimentRunning', message: 'Experiment is running' }, at);
    if (sug) await this.trials(exp, sug, trials, summary);
    return this.write(exp, status);
  }

  /** Katib's ReconcileTrials: shrink to parallelTrialCount, or fill up to it from the Suggestion. */
  private async trials(exp: Experiment & StoredObject, sug: Suggestion & StoredObject, trials: (Trial & StoredObject)[], summary: ReturnType<typeof summarise>): Promise<void> {
    const parallel = exp.spec.parallelTrialCount ?? 3;
    const active = activeCount(summary);
    if (active > parallel) {
      // Katib removes the newest active trials when the parallelism is lowered
      const unfinished = trials.filter((t) => ['pending', 'running'].includes(bucketOf(t)))
        .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || (b.metadata.name ?? '').localeCompare(a.metadata.name ?? ''));
      for (const t of unfinished.slice(0, active - parallel)) await this.deleteQuietly(t);
      return;
    }
    const finished = finishedCount(summary);
    const required = exp.spec.maxTrialCount !== undefined ? Math.min(parallel, exp.spec.maxTrialCount - finished) : parallel;
    const add = required - active;
    if (add <= 0) return;
    const names = new Set(trials.map((t) => t.metadata.name));
    const unmade = ((sug.status as SuggestionStatus | undefined)?.suggestions ?? []).filter((a) => !names.has(a.name ?? ""));
    for (const a of unmade.slice(0, add)) await this.createTrial(exp, a);
    const more = add - Math.min(add, unmade.length);
    const requests = (sug.status?.suggestions?.length ?? 0) + more;
    if (more > 0 && (sug.spec.requests ?? 0) < requests) {
      await this.opts.client.update({ ...sug, spec: { ...sug.spec, requests } });
    }
  }

  private async createTrial(exp: Experiment & StoredObject, a: TrialAssignment): Promise<void> {
    const t = exp.spec.trialTemplate ?? {};
    const name = a.name as string;
    const ns = exp.metadata.namespace as string;
    let text: string | undefined;
    if (t.configMap) {
      const cm = await this.opts.client.find(Kinds.ConfigMap, { namespace: t.configMap.configMapNamespace, name: t.configMap.configMapName ?? '' });
      text = (cm?.data as Record<string, string> | undefined)?.[t.configMap.templatePath ?? ''];
      if (text === undefined) {
        this.opts.recorder.event(exp, 'Warning', 'TrialTemplateNotFound', `the trial template ${t.configMap.templatePath} is not in ConfigMap ${t.configMap.configMapNamespace}/${t.configMap.configMapName}: trials wait for it`);
        return;
      }
    } else {
      text = templateText(t);
    }
    let runSpec: KObject;
    try {
      runSpec = renderTrialJob(t, text ?? '', (s) => (t.trialSpec ? JSON.parse(s) : YAML.parse(s)), name, ns, a.parameterAssignments);
    } catch (e) {
      if (!(e instanceof TemplateError) && !(e instanceof SyntaxError) && !(e instanceof YAML.YAMLParseError)) throw e;
      this.opts.recorder.event(exp, 'Warning', 'TrialTemplateInvalid', `trial ${name}: ${(e as Error).message}`);
      return;
    }
    const trial: Trial = {
      apiVersion: TuningApiVersion, kind: 'Trial',
      metadata: { name, namespace: ns, labels: { ...(a.labels ?? {}), [TuningLabels.experiment]: exp.metadata.name as string }, ownerReferences: [ownerRefTo(exp)] },
      spec: {
        objective: exp.spec.objective,
        parameterAssignments: a.parameterAssignments,
        ...(a.earlyStoppingRules?.length ? { earlyStoppingRules: a.earlyStoppingRules } : {}),
        runSpec,
        retainRun: t.retain ?? false,
        metricsCollector: exp.spec.metricsCollectorSpec,
        ...(t.primaryPodLabels ? { primaryPodLabels: t.primaryPodLabels } : {}),
        primaryContainerName: t.primaryContainerName,
        successCondition: t.successCondition,
        failureCondition: t.failureCondition,
        ...(a.labels ? { labels: a.labels } : {}),
      },
    };
    try {
      await this.opts.client.create(trial);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }

  private async suggestion(exp: Experiment & StoredObject): Promise<(Suggestion & StoredObject) | undefined> {
    const key = { namespace: exp.metadata.namespace, name: exp.metadata.name as string };
    const found = await this.opts.client.find<Suggestion>(Kinds.Suggestion, key);
    if (found) return found;
    try {
      return await this.opts.client.create<Suggestion>({
        apiVersion: TuningApiVersion, kind: 'Suggestion',
        metadata: { ...key, labels: { [TuningLabels.experiment]: exp.metadata.name as string }, ownerReferences: [ownerRefTo(exp)] },
        spec: { algorithm: exp.spec.algorithm, ...(exp.spec.earlyStopping ? { earlyStopping: exp.spec.earlyStopping } : {}), requests: 0, resumePolicy: exp.spec.resumePolicy },
      });
    } catch (e) {
      if (isAlreadyExists(e)) return undefined; // the next pass reads it
      throw e;
    }
  }

  /** marks each unfinished trial Killed; its Trial controller stops the job */
  private async stopUnfinished(exp: Experiment & StoredObject, trials: (Trial & StoredObject)[], message: string): Promise<void> {
    const at = now();
    for (const t of trials) {
      const b = bucketOf(t);
      if (b !== 'pending' && b !== 'running') continue;
      const st = structuredClone(t.status ?? {});
      const running = (st.conditions as Condition[] | undefined)?.find((c) => c.type === 'Running');
      if (running) setKatibCondition(st, { type: 'Running', status: 'False', reason: running.reason ?? 'TrialRunning', message: running.message ?? '' }, at);
      setKatibCondition(st, { type: 'Killed', status: 'True', reason: 'TrialKilled', message: `Trial is killed: ${message}` }, at);
      st.completionTime ??= at;
      try {
        await this.opts.client.updateStatus({ ...t, status: st });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      this.opts.recorder.event(exp, 'Normal', 'TrialKilled', `trial ${t.metadata.name} stopped: ${message}`);
    }
  }

  private async deleteQuietly(t: Trial & StoredObject): Promise<void> {
    try {
      await this.opts.client.delete(Kinds.Trial, { namespace: t.metadata.namespace, name: t.metadata.name as string }, { uid: t.metadata.uid });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  private async write(exp: Experiment & StoredObject, status: ExperimentStatus): Promise<Result> {
    const strip = (s: ExperimentStatus | undefined) => JSON.stringify({ ...(s ?? {}), lastReconcileTime: undefined });
    if (strip(exp.status) === strip(status)) return {};
    status.lastReconcileTime = now();
    await this.opts.client.updateStatus({ ...exp, status });
    return {};
  }
}
