// The Suggestion controller: when an Experiment asks for more assignments (spec.requests above
// status.suggestionCount), it runs the experiment's search algorithm in-process (Katib runs one
// Deployment per experiment and calls it over gRPC) and appends what it returns to
// status.suggestions, each with the trial's name and, under medianstop, the early stopping rules new
// trials get. The algorithm sees every trial so far: finished ones with their objective (failed and
// early-stopped ones too), assigned-but-unfinished ones as pending, so parallel asks never repeat.
//
// Crash safety: the assignments and the algorithm's state are written in one status update before
// any Trial exists; a crash before it loses nothing (the next pass asks again), a crash after it
// finds them written. Names come from the experiment's uid and the assignment's index, so asking
// again after a crash gives the same names.
import { createHash } from 'node:crypto';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { now } from '../../api/meta.js';
import type { EarlyStoppingRule, Experiment, ObservationLog, Suggestion, SuggestionStatus, Trial, TrialAssignment } from '../../api/tuning.js';
import { TuningLabels } from '../../api/tuning.js';
import type { Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import type { Algorithm, TrialRecord } from './algorithms/types.js';
import { medianStopRules } from './early-stopping.js';
import { bucketOf, lossesOf, objectivesOf, setKatibCondition } from './status.js';

export type AlgorithmLookup = (name: string) => Algorithm | undefined;

export interface SuggestionControllerOptions {
  client: Client;
  recorder: Recorder;
  algorithms: AlgorithmLookup;
}

/** Katib's trial name alphabet (Kubernetes' utilrand) */
const alphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** `<experiment>-<8 characters>`, the same for the same experiment and index */
export function trialName(exp: Experiment, index: number): string {
  const h = createHash('sha256').update(`${exp.metadata.uid}/${index}`).digest();
  let s = '';
  for (let i = 0; i < 8; i++) s += alphabet[(h[i] as number) % alphabet.length];
  return `${exp.metadata.name}-${s}`;
}

function seedOf(exp: Experiment, settings: Record<string, string>, call: number): number {
  const fixed = settings['random_state'];
  const base = fixed !== undefined && fixed !== '' && Number.isFinite(Number(fixed)) ? Number(fixed) : createHash('sha256').update(exp.metadata.uid ?? '').digest().readUInt32LE(0);
  return (Math.trunc(base) + call * 0x9e3779b1) >>> 0;
}

export function addSuggestionController(mgr: Manager, opts: SuggestionControllerOptions): void {
  const r = new SuggestionReconciler(opts, mgr.cache);
  mgr.add({
    name: 'suggestion-controller',
    for: Kinds.Suggestion,
    watches: [
      // an algorithm that gave fewer than asked (a rung not finished, a grid…) looks again when trials move
      { kind: Kinds.Trial, map: (t) => (t.metadata.labels?.[TuningLabels.experiment] ? [{ namespace: t.metadata.namespace, name: t.metadata.labels[TuningLabels.experiment] as string }] : []) },
      { kind: Kinds.KatibExperiment, map: (e) => [{ namespace: e.metadata.namespace, name: e.metadata.name }] },
    ],
    reconcile: (key) => r.reconcile(key),
  });
}

export class SuggestionReconciler {
  constructor(private readonly opts: SuggestionControllerOptions, private readonly cache: InformerCache) {}

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client } = this.opts;
    const sug = await client.find<Suggestion>(Kinds.Suggestion, key);
    if (!sug || sug.metadata.deletionTimestamp) return {};
    const exp = await client.find<Experiment>(Kinds.KatibExperiment, key);
    if (!exp) return {};
    const at = now();
    const status: SuggestionStatus = structuredClone(sug.status ?? {});
    status.startTime ??= at;
    setKatibCondition(status, { type: 'Created', status: 'True', reason: 'SuggestionCreated', message: 'Suggestion is created' }, at);
    const expConditions = (exp.status as Experiment['status'])?.conditions;
    const ended = expConditions?.find((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
    const failed = status.conditions?.some((c) => c.type === 'Failed' && c.status === 'True');
    if (ended && exp.spec.resumePolicy !== 'LongRunning' && exp.spec.resumePolicy !== 'FromVolume') {
      // Katib's Never: the experiment is over, and so is its search
      if (!failed && !status.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True')) {
        setKatibCondition(status, { type: 'Running', status: 'False', reason: 'SuggestionRunning', message: 'Suggestion is not running' }, at);
        setKatibCondition(status, { type: 'Succeeded', status: 'True', reason: 'SuggestionSucceeded', message: "Suggestion is succeeded, can't be restarted" }, at);
        status.completionTime ??= at;
      }
      return this.write(sug, status);
    }
    if (failed) return this.write(sug, status);
    const algorithm = this.opts.algorithms(exp.spec.algorithm?.algorithmName ?? '');
    if (!algorithm) {
      return this.fail(sug, status, at, 'AlgorithmNotBuilt', `Skiff has no algorithm ${JSON.stringify(exp.spec.algorithm?.algorithmName)}`);
    }
    setKatibCondition(status, { type: 'DeploymentReady', status: 'True', reason: 'DeploymentReady', message: `the ${algorithm.name} algorithm runs inside Skiff: nothing to deploy` }, at);
    setKatibCondition(status, { type: 'Running', status: 'True', reason: 'SuggestionRunning', message: 'Suggestion is running' }, at);
    const have = status.suggestionCount ?? status.suggestions?.length ?? 0;
    const want = (sug.spec.requests ?? 0) - have;
    const exhausted = status.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True' && c.reason === 'SuggestionEndReached');
    if (want <= 0 || exhausted) return this.write(sug, status);

    const trials = this.cache.owned(Kinds.Trial, exp.metadata.uid ?? '') as unknown as (Trial & StoredObject)[];
    const byName = new Map(trials.map((t) => [t.metadata.name, t]));
    const logs = new Map((this.cache.list(Kinds.ObservationLog, { namespace: exp.metadata.namespace }) as unknown as ObservationLog[]).map((l) => [l.metadata.name, l]));
    const objectives = objectivesOf(exp.spec);
    const main = objectives[0];
    const reports = (name: string): number[] => {
      const log = logs.get(name);
      if (!log || !main) return [];
      return log.spec.metricLogs.filter((m) => m.name === main.name).map((m) => Number(m.value)).filter(Number.isFinite);
    };
    const records: TrialRecord[] = (status.suggestions ?? []).map((a) => {
      const rec: TrialRecord = { name: a.name ?? '', assignments: Object.fromEntries(a.parameterAssignments.map((p) => [p.name, p.value])), state: 'pending', ...(a.labels ? { labels: a.labels } : {}) };
      const t = byName.get(a.name ?? '');
      if (!t) return rec;
      const b = bucketOf(t);
      const losses = lossesOf(exp.spec, t);
      const raw = reports(t.metadata.name ?? '');
      if (raw.length) rec.intermediate = main?.type === 'maximize' ? raw.map((v) => -v) : raw;
      if (b === 'pending' || b === 'running') return rec;
      if ((b === 'succeeded' || b === 'earlyStopped') && losses) {
        rec.state = b === 'succeeded' ? 'succeeded' : 'early-stopped';
        rec.value = losses[0] as number;
        if (losses.length > 1) rec.values = losses;
      } else {
        rec.state = 'failed';
      }
      return rec;
    });
    const spec = exp.spec as Experiment['spec'];
    const settings = Object.fromEntries((spec.algorithm?.algorithmSettings ?? []).map((s) => [s.name, s.value]));
    const state = Object.fromEntries((status.algorithmSettings ?? []).map((s) => [s.name, s.value]));
    let result;
    try {
      result = algorithm.suggest({
        parameters: exp.spec.parameters ?? [], settings, trials: records, count: want, state,
        seed: seedOf(exp, settings, have), parallelTrialCount: exp.spec.parallelTrialCount ?? 3,
        ...(exp.spec.maxTrialCount !== undefined ? { maxTrialCount: exp.spec.maxTrialCount } : {}),
      });
    } catch (e) {
      return this.fail(sug, status, at, 'AlgorithmFailed', `the ${algorithm.name} algorithm failed: ${(e as Error).message}`);
    }
    let rules: EarlyStoppingRule[] = [];
    const es = exp.spec.earlyStopping;
    if (es?.algorithmName === 'medianstop' && main) {
      const finished = trials.filter((t) => bucketOf(t) === 'succeeded').map((t) => reports(t.metadata.name ?? ''));
      rules = medianStopRules(main, es.algorithmSettings, finished);
    }
    const added: TrialAssignment[] = result.assignments.slice(0, want).map((a, i) => ({
      name: a.name ?? trialName(exp, have + i),
      parameterAssignments: (spec.parameters ?? []).map((p) => ({ name: p.name, value: a.assignments[p.name] as string })),
      ...(rules.length ? { earlyStoppingRules: rules } : {}),
      ...(a.labels && Object.keys(a.labels).length ? { labels: a.labels } : {}),
    }));
    status.suggestions = [...(status.suggestions ?? []), ...added];
    status.suggestionCount = have + added.length;
    if (result.state) status.algorithmSettings = Object.entries(result.state).map(([name, value]) => ({ name, value }));
    if (result.done && added.length < want) {
      setKatibCondition(status, { type: 'Succeeded', status: 'True', reason: 'SuggestionEndReached', message: `the ${algorithm.name} search has no more assignments to offer` }, at);
    }
    status.lastReconcileTime = at;
    return this.write(sug, status);
  }

  private async fail(sug: Suggestion & StoredObject, status: SuggestionStatus, at: string, reason: string, message: string): Promise<Result> {
    setKatibCondition(status, { type: 'Running', status: 'False', reason, message }, at);
    setKatibCondition(status, { type: 'Failed', status: 'True', reason, message }, at);
    this.opts.recorder.event(sug, 'Warning', reason, message);
    return this.write(sug, status);
  }

  private async write(sug: Suggestion & StoredObject, status: SuggestionStatus): Promise<Result> {
    const before = JSON.stringify({ ...(sug.status ?? {}), lastReconcileTime: undefined });
    const after = JSON.stringify({ ...status, lastReconcileTime: undefined });
    if (before !== after) await this.opts.client.updateStatus({ ...sug, status });
    return {};
  }
}
