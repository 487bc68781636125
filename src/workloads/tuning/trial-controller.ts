// The Trial controller: from a Trial (Katib's kubeflow.org/v1beta1, created by the Experiment
// controller) to its job, its metrics and its outcome, with Katib's conditions and reasons.
//
// Metrics without a sidecar: where Katib injects a collector container that wraps the training
// command, Skiff reads what the trial's primary container printed (its log, through the substrate's
// PodLogSource) or wrote (a file on the `metrics-volume` emptyDir, through PodFileSource) once the
// job has ended, so collection never keeps a trial alive. Every value read goes into the trial's
// ObservationLog, rewritten whole from the source on each read (a restart re-reads, never appends
// twice); status.observation is its summary by the metric strategies. Push trials append to the
// ObservationLog themselves; the controller only summarises it.
//
// Level-triggered and restart-safe: each pass reads the Trial, its job and its Pods afresh, writes
// the ObservationLog before the status that depends on it, and the status (compare-and-swap) before
// acting on the job, so a pass interrupted anywhere is finished by the next one.
//
// Early stopping (spec.earlyStoppingRules, StdOut and File collectors): while the job runs, the
// controller re-reads the primary container's log or file every `pollMs`, and sooner when a
// follower of the log sees a line naming a rule's metric, and applies Katib's rule over everything
// read so far. When every rule fires the trial is EarlyStopped (reason TrialEarlyStopped), keeps the
// metrics read so far, and its job is suspended (batch Job spec.suspend, training jobs'
// spec.runPolicy.suspend, a pipeline Run's spec.terminate): its Pods go, the job is not Failed, and
// a retained job stays to be looked at.
//
// A Trial marked Killed=True (by the Experiment controller ending it) is stopped the same way. A
// deleted Trial takes its job with it through owner garbage collection (the job's ownerReference).
import type { Condition } from '../../api/conditions.js';
import { findCondition, isTrue, setCondition } from '../../api/conditions.js';
import type { Container, Pod, PodTemplateSpec, Volume } from '../../api/core-types.js';
import { isAlreadyExists, isNotFound } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { controllerOf, ownerRefTo } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import type { EarlyStoppingRule, MetricLog, MetricsCollectorSpec, ObservationLog, Suggestion, Trial, TrialStatus } from '../../api/tuning-types.js';
import { ObservationLogGroup, TuningApiVersion, TuningLabels, UnavailableMetricValue } from '../../api/tuning-types.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import type { PodFileSource, PodLogSource } from '../../substrate/substrate.js';
import { PBT_LABELS } from './algorithms/pbt.js';
import { CheckpointError, SuggestionVolume, prepareCheckpointDir, removeTrialCheckpoints, trialDirOf } from './checkpoints.js';
import { GjsonSyntaxError, gjsonMatch } from './gjson.js';
import { MetricsParseError, ZeroTime, compileFormats, earlyStopped, metricNames, metricStrategies, observationAvailable, parseJsonMetrics, parseTextMetrics, summarise } from './metrics.js';
import { tfEventMetrics } from './tfevent.js';
import { filesFromLogs, wholeLog, wrapForFilesInLog } from './files-in-log.js';
import type { Stopper } from './asha.js';

export interface TrialControllerOptions {
  client: Client;
  recorder: Recorder;
  /** Pods' logs (StdOut collector) */
  podLogs: PodLogSource;
  /**
   * files Pods wrote (File and TensorFlowEvent collectors): read on their node, or `'log'` where the
   * node's files cannot be reached (a cluster): trials' commands are then wrapped to write them into
   * the primary container's log, and read back from there (files-in-log.ts)
   */
  podFiles: PodFileSource | 'log';
  /** how often a running trial with early-stopping rules is read again (default 1000 ms) */
  pollMs?: number;
  /** clock, for tests */
  now?: () => Date;
  /** a stopping rule that looks beyond the trial (ASHA), consulted while it runs */
  stopper?: Stopper;
  /** where PBT trials' checkpoint directories live (checkpoints.ts); without it none are mounted */
  checkpointRoot?: string;
}

/** the env var Katib gives every trial container: what report_metrics reads */
export const TrialNameEnv = 'KATIB_TRIAL_NAME';
/** the emptyDir Katib mounts at the metrics directory */
export const MetricsVolume = 'metrics-volume';
/** Katib's default paths (katib-config) for collectors that need one */
const defaultFilePath = '/var/log/katib/metrics.log';
const defaultTfEventDir = '/var/log/katib/tfevent/';

export const TrialReasons = {
  created: 'TrialCreated',
  running: 'TrialRunning',
  succeeded: 'TrialSucceeded',
  failed: 'TrialFailed',
  metricsUnavailable: 'MetricsUnavailable',
  earlyStopped: 'TrialEarlyStopped',
  killed: 'TrialKilled',
} as const;

const completedTypes = ['Succeeded', 'Failed', 'MetricsUnavailable', 'EarlyStopped', 'Killed'];

/** a Trial that ended: Succeeded, Failed, MetricsUnavailable, EarlyStopped or Killed */
export function trialCompleted(t: { status?: TrialStatus }): boolean {
  return completedTypes.some((c) => isTrue(t.status?.conditions, c));
}

export function collectorKind(mc: MetricsCollectorSpec | undefined): string {
  return mc?.collector?.kind ?? 'StdOut';
}

/** where a File or TensorFlowEvent collector reads, and the directory the emptyDir is mounted at */
export function metricsPath(mc: MetricsCollectorSpec | undefined): { path: string; dir: string } | undefined {
  const kind = collectorKind(mc);
  if (kind !== 'File' && kind !== 'TensorFlowEvent') return undefined;
  const fsp = mc?.source?.fileSystemPath;
  const path = fsp?.path || (kind === 'File' ? defaultFilePath : defaultTfEventDir);
  const isDir = kind === 'TensorFlowEvent' || fsp?.kind === 'Directory';
  const trimmed = path.replace(/\/+$/, '') || '/';
  const dir = isDir ? trimmed : trimmed.slice(0, trimmed.lastIndexOf('/')) || '/';
  return { path: trimmed, dir };
}

// ---- the job: rendering ------------------------------------------------------------------------

/** the pod templates of a job of a kind Skiff knows: a batch Job's, or each replica's of a training job */
export function podTemplates(job: KObject): PodTemplateSpec[] {
  const spec = job.spec as Record<string, unknown> | undefined;
  if (!spec) return [];
  const out: PodTemplateSpec[] = [];
  if (job.kind === 'Job' && spec.template && typeof spec.template === 'object') out.push(spec.template as PodTemplateSpec);
  for (const [field, v] of Object.entries(spec)) {
    if (!field.endsWith('ReplicaSpecs') || !v || typeof v !== 'object') continue;
    for (const rs of Object.values(v as Record<string, { template?: PodTemplateSpec }>)) if (rs?.template) out.push(rs.template);
  }
  return out;
}

function primaryContainerOf(containers: Container[], name: string | undefined): Container | undefined {
  return name ? containers.find((c) => c.name === name) : containers.length === 1 ? containers[0] : containers[0];
}

/**
 * The job a Trial runs: its runSpec named as the Trial, in its namespace, owned by it, labelled with
 * the Trial's labels and katib.kubeflow.org/trial; every pod template gets those labels and
 * KATIB_TRIAL_NAME in each container (what Katib's pod webhook adds); for File and TensorFlowEvent
 * collectors the primary container gets the `metrics-volume` emptyDir at the metrics directory, so
 * the file outlives the container; with `checkpoints`, the primary container gets the trial's
 * checkpoint directory as the `suggestion-volume` hostPath at its mount path. With `filesInLog` (on
 * a cluster), the primary container's command runs under sh, which writes the metrics files to its
 * log after it (files-in-log.ts).
 */
export function renderTrialJob(trial: Trial & StoredObject, checkpoints?: { mountPath: string; hostDir: string }, opts: { filesInLog?: boolean } = {}): KObject {
  const runSpec = trial.spec.runSpec;
  if (!runSpec || typeof runSpec !== 'object') throw new Error('spec.runSpec: Required value');
  const job = structuredClone(runSpec) as KObject;
  if (!job.apiVersion || !job.kind) throw new Error('spec.runSpec: apiVersion and kind are required');
  const labels: Record<string, string> = { ...(trial.metadata.labels ?? {}), ...(trial.spec.labels ?? {}), [TuningLabels.trial]: trial.metadata.name };
  job.metadata = {
    ...(job.metadata ?? {}),
    name: trial.metadata.name,
    namespace: trial.metadata.namespace,
    labels: { ...labels, ...(job.metadata?.labels ?? {}), [TuningLabels.trial]: trial.metadata.name },
    ownerReferences: [ownerRefTo(trial)],
  };
  delete (job.metadata as Record<string, unknown>).generateName;
  delete (job.metadata as Record<string, unknown>).resourceVersion;
  delete (job.metadata as Record<string, unknown>).uid;
  const mp = metricsPath(trial.spec.metricsCollector);
  for (const tpl of podTemplates(job)) {
    tpl.metadata = { ...(tpl.metadata ?? {}), labels: { ...(tpl.metadata?.labels ?? {}), ...labels } };
    const containers = tpl.spec?.containers ?? [];
    for (const c of containers) {
      const env = (c.env ??= []);
      if (!env.some((e) => e.name === TrialNameEnv)) env.push({ name: TrialNameEnv, value: trial.metadata.name });
    }
    const primary = primaryContainerOf(containers, trial.spec.primaryContainerName);
    if (checkpoints && primary && mayBePrimary(tpl, trial.spec.primaryPodLabels)) {
      const volumes = ((tpl.spec as { volumes?: Volume[] }).volumes ??= []);
      if (!volumes.some((v) => v.name === SuggestionVolume)) volumes.push({ name: SuggestionVolume, hostPath: { path: checkpoints.hostDir, type: 'DirectoryOrCreate' } } as Volume);
      if (!(primary.volumeMounts ?? []).some((m) => m.name === SuggestionVolume)) (primary.volumeMounts ??= []).push({ name: SuggestionVolume, mountPath: checkpoints.mountPath });
    }
    if (!mp) continue;
    if (!primary || !mayBePrimary(tpl, trial.spec.primaryPodLabels)) continue;
    // on a cluster the files come back in the container's log (files-in-log.ts)
    if (opts.filesInLog) wrapForFilesInLog(primary, mp.path, collectorKind(trial.spec.metricsCollector));
    const covered = (primary.volumeMounts ?? []).some((m) => {
      const at = m.mountPath.replace(/\/+$/, '') || '/';
      return mp.dir === at || mp.dir.startsWith(at === '/' ? '/' : `${at}/`);
    });
    if (covered) continue;
    const volumes = ((tpl.spec as { volumes?: Volume[] }).volumes ??= []);
    if (!volumes.some((v) => v.name === MetricsVolume)) volumes.push({ name: MetricsVolume, emptyDir: {} } as Volume);
    (primary.volumeMounts ??= []).push({ name: MetricsVolume, mountPath: mp.dir });
  }
  return job;
}

/** a template whose own labels contradict primaryPodLabels cannot make a primary Pod (others can: the operator adds labels) */
function mayBePrimary(tpl: PodTemplateSpec, primary: Record<string, string> | undefined): boolean {
  const own = tpl.metadata?.labels ?? {};
  return Object.entries(primary ?? {}).every(([k, v]) => own[k] === undefined || own[k] === v);
}

// ---- the controller ----------------------------------------------------------------------------

/** the job kinds a Trial can run, of those the registry serves */
function jobKinds(client: Client): KindDef[] {
  return client.registry.all().filter((d) =>
    (d.group === 'batch' && d.kind === 'Job') ||
    (d.group === 'kubeflow.org' && !['Experiment', 'Trial', 'Suggestion'].includes(d.kind)) ||
    (d.group === 'pipelines.kubeflow.org' && d.kind === 'Run'));
}

export function addTrialController(mgr: Manager, opts: TrialControllerOptions): Controller {
  const trialDef = opts.client.registry.forObject(TuningApiVersion, 'Trial');
  if (!trialDef) throw new Error(`the Trial kind (${TuningApiVersion}) is not registered`);
  const logDef = opts.client.registry.forObject(`${ObservationLogGroup}/v1`, 'ObservationLog');
  if (!logDef) throw new Error(`the ObservationLog kind (${ObservationLogGroup}/v1) is not registered`);
  const r = new TrialReconciler(trialDef, logDef, opts);
  const seen = new Set<string>();
  const owns = jobKinds(opts.client).filter((d) => {
    const k = `${d.group}/${d.plural}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const c = mgr.add({
    name: 'trial-controller',
    for: trialDef,
    owns,
    watches: [{
      kind: Kinds.Pod,
      predicate: (e) => Boolean(e.object.metadata.labels?.[TuningLabels.trial]),
      map: (p) => [{ namespace: p.metadata.namespace, name: p.metadata.labels?.[TuningLabels.trial] as string }],
    }],
    reconcile: (key) => r.reconcile(key),
  });
  r.wake = (key) => c.enqueue(key);
  r.useCache(mgr.cache);
  return c;
}

interface Pass {
  trial: Trial & StoredObject;
  status: TrialStatus;
  at: string;
  /** Events told once the status saying the same is written (a conflict retries without repeating them) */
  events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
}

export class TrialReconciler {
  private readonly client: Client;
  private readonly now: () => Date;
  private readonly pollMs: number;
  private readonly podFiles: PodFileSource;
  private readonly filesInLog: boolean;
  /** log followers of running trials with early-stopping rules, by trial key and pod uid */
  private readonly followers = new Map<string, Map<string, AbortController>>();
  /** set by addTrialController: asks for a pass of this trial */
  wake: (key: ObjectKey) => void = () => undefined;

  constructor(private readonly trialDef: KindDef, private readonly logDef: KindDef, private readonly opts: TrialControllerOptions) {
    this.client = opts.client;
    this.now = opts.now ?? (() => new Date());
    this.pollMs = opts.pollMs ?? 1000;
    this.filesInLog = opts.podFiles === 'log';
    this.podFiles = opts.podFiles === 'log' ? filesFromLogs(opts.podLogs) : opts.podFiles;
  }

  /** PBT: the trial's checkpoint directory, made (from its parent's) when the algorithm asks for one */
  private async checkpoints(trial: Trial & StoredObject, pass: Pass): Promise<{ mountPath: string; hostDir: string } | undefined> {
    const root = this.opts.checkpointRoot;
    const experiment = trial.metadata.labels?.[TuningLabels.experiment];
    if (!root || !experiment) return undefined;
    const ns = trial.metadata.namespace ?? 'default';
    const suggestion = await this.client.find<Suggestion>(Kinds.Suggestion, { namespace: ns, name: experiment });
    const mountPath = trialDirOf(suggestion?.spec.algorithm?.algorithmSettings);
    if (!mountPath) return undefined;
    const parent = trial.metadata.labels?.[PBT_LABELS.parent];
    const made = prepareCheckpointDir(root, ns, experiment, trial.metadata.name, parent);
    if (made.parentMissing) pass.events.push({ type: 'Warning', reason: 'CheckpointNotFound', message: `parent trial ${parent} left no checkpoint directory: the trial starts without one` });
    return { mountPath, hostDir: made.dir };
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const trial = await this.client.find<Trial>(this.trialDef, key);
    if (!trial || trial.metadata.deletionTimestamp) {
      this.unfollow(key);
      if (!trial && this.opts.checkpointRoot) removeTrialCheckpoints(this.opts.checkpointRoot, key.namespace ?? 'default', key.name);
      return {};
    }
    const pass: Pass = { trial, status: structuredClone(trial.status ?? {}), at: this.now().toISOString(), events: [] };
    const jobDef = trial.spec.runSpec ? this.client.registry.forObject(trial.spec.runSpec.apiVersion ?? '', trial.spec.runSpec.kind ?? '') : undefined;
    if (trialCompleted(trial)) {
      this.unfollow(key);
      if (jobDef) await this.afterCompletion(trial, jobDef);
      return {};
    }
    if (!findCondition(pass.status.conditions, 'Created')) {
      setCondition(pass.status, { type: 'Created', status: 'True', reason: TrialReasons.created, message: 'Trial is created' }, pass.at);
      pass.status.startTime ??= pass.at;
    }
    if (!jobDef) {
      const what = trial.spec.runSpec ? `${trial.spec.runSpec.apiVersion}/${trial.spec.runSpec.kind}` : 'none';
      this.complete(pass, 'Failed', TrialReasons.failed, `Trial has failed. spec.runSpec: kind ${what} is not served here`);
      await this.writeStatus(pass);
      return {};
    }
    let job = await this.client.find(jobDef, { namespace: key.namespace, name: key.name });
    if (job && controllerOf(job)?.uid !== trial.metadata.uid) {
      this.complete(pass, 'Failed', TrialReasons.failed, `Trial has failed. ${job.kind} ${job.metadata.name} exists and is not this trial's`);
      await this.writeStatus(pass);
      return {};
    }
    if (!job) {
      let rendered: KObject;
      // a bad setting fails the trial below; the store or the disk failing is thrown, and retried
      const checkpoints = await this.checkpoints(trial, pass).catch((e: unknown) => (e instanceof CheckpointError ? e : Promise.reject(e)));
      try {
        if (checkpoints instanceof CheckpointError) throw checkpoints;
        rendered = renderTrialJob(trial, checkpoints, { filesInLog: this.filesInLog });
      } catch (e) {
        this.complete(pass, 'Failed', TrialReasons.failed, `Trial has failed. ${(e as Error).message}`);
        await this.writeStatus(pass);
        return {};
      }
      // the status first: a crash before the create is finished by the next pass
      await this.writeStatus(pass);
      try {
        job = await this.client.create(rendered);
        pass.events.push({ type: 'Normal', reason: 'JobCreated', message: `Job ${job.metadata.name} is created` });
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        job = await this.client.get(jobDef, { namespace: key.namespace, name: key.name });
      }
    }
    let failure: ReturnType<typeof gjsonMatch>;
    let success: ReturnType<typeof gjsonMatch>;
    try {
      failure = gjsonMatch(job, trial.spec.failureCondition ?? '');
      success = failure.matched ? { matched: false } : gjsonMatch(job, trial.spec.successCondition ?? '');
    } catch (e) {
      if (!(e instanceof GjsonSyntaxError)) throw e;
      this.complete(pass, 'Failed', TrialReasons.failed, `Trial has failed. ${e.message}`);
      await this.writeStatus(pass);
      return {};
    }
    if (!isTrue(pass.status.conditions, 'Running')) {
      setCondition(pass.status, { type: 'Running', status: 'True', reason: TrialReasons.running, message: 'Trial is running' }, pass.at);
      pass.events.push({ type: 'Normal', reason: 'JobRunning', message: `Job ${job.metadata.name} is running` });
    }
    if (failure.matched) {
      try {
        await this.collect(pass, job, 'failed');
      } catch {
        // what a failed payload printed is kept when it can be read; its failure is the news
      }
      this.complete(pass, 'Failed', withJob(TrialReasons.failed, failure.reason), withJobMessage('Trial has failed', failure.message));
      pass.events.push({ type: 'Normal', reason: 'JobFailed', message: `Job ${job.metadata.name} has failed` });
      await this.writeStatus(pass);
      return {};
    }
    if (success.matched) return this.succeeded(pass, job, success);
    const rules: EarlyStoppingRule[] = trial.spec.earlyStoppingRules ?? [];
    const kind = collectorKind(trial.spec.metricsCollector);
    const judged = this.opts.stopper?.follows(trial) !== undefined;
    if ((rules.length || judged) && (kind === 'StdOut' || kind === 'File')) {
      const logs = await this.collect(pass, job, 'running');
      let fire = false;
      let why = rules.map((r) => `${r.name} ${r.comparison} ${r.value}`).join(', ');
      try {
        fire = logs !== undefined && rules.length > 0 && earlyStopped(logs, rules, trial.spec.objective);
      } catch (e) {
        if (!(e instanceof MetricsParseError)) throw e;
        pass.events.push({ type: 'Warning', reason: 'EarlyStoppingRuleInvalid', message: e.message });
      }
      if (!fire && judged && logs !== undefined) {
        const verdict = this.opts.stopper?.decide(trial, logs);
        if (verdict) {
          fire = true;
          why = verdict;
        }
      }
      if (fire) {
        pass.status.observation = summarise(logs ?? [], metricStrategies(trial.spec.objective));
        this.complete(pass, 'EarlyStopped', TrialReasons.earlyStopped, judged && !rules.length ? `Trial is early stopped: ${why}` : 'Trial is early stopped');
        pass.events.push({ type: 'Normal', reason: 'TrialEarlyStopped', message: `Trial ${trial.metadata.name} is early stopped: ${why}` });
        await this.writeStatus(pass);
        await this.stopJob(job, jobDef);
        this.unfollow(key);
        return {};
      }
      await this.writeStatus(pass);
      if (kind === 'StdOut') await this.follow(key, trial, job);
      return { requeueAfter: this.pollMs };
    }
    await this.writeStatus(pass);
    return {};
  }

  /** the job succeeded: the trial Succeeds when its objective has a value, else MetricsUnavailable */
  private async succeeded(pass: Pass, job: StoredObject, success: { reason?: string; message?: string }): Promise<Result> {
    const { trial } = pass;
    const kind = collectorKind(trial.spec.metricsCollector);
    let problem: string | undefined;
    if (kind === 'Push') {
      const log = await this.client.find<ObservationLog>(this.logDef, { namespace: trial.metadata.namespace, name: trial.metadata.name });
      const logs: MetricLog[] = log?.spec.metricLogs ?? [];
      pass.status.observation = summarise(logs, metricStrategies(trial.spec.objective));
      if (!observationAvailable(pass.status.observation, trial.spec.objective)) {
        // as Katib does for Push: the unavailable value goes into the log too
        const name = trial.spec.objective?.objectiveMetricName ?? '';
        if (!logs.some((l) => l.name === name && l.value === UnavailableMetricValue)) {
          await this.writeLog(trial, [...logs, { timeStamp: ZeroTime, name, value: UnavailableMetricValue }], log);
        }
      }
    } else if (kind === 'StdOut' || kind === 'File' || kind === 'TensorFlowEvent') {
      try {
        await this.collect(pass, job, 'final');
      } catch (e) {
        if (!(e instanceof MetricsParseError)) throw e;
        problem = e.message;
      }
    } else {
      // Katib requeues a None trial forever once its job succeeds; here it ends, saying why
      problem = kind === 'None' ? 'the metrics collector is None, so nothing collects the objective' : `the ${kind} metrics collector is not supported by Skiff: use StdOut, File, TensorFlowEvent or Push`;
    }
    if (!problem && observationAvailable(pass.status.observation, trial.spec.objective)) {
      this.complete(pass, 'Succeeded', withJob(TrialReasons.succeeded, success.reason), withJobMessage('Trial has succeeded', success.message));
      pass.events.push({ type: 'Normal', reason: 'JobSucceeded', message: `Job ${job.metadata.name} has succeeded` });
    } else {
      const objective = trial.spec.objective?.objectiveMetricName;
      const why = problem ?? `metric ${objective} was not reported${kind === 'Push' ? '' : ` (${describeSource(trial)})`}`;
      this.complete(pass, 'MetricsUnavailable', withJob(TrialReasons.metricsUnavailable, success.reason), withJobMessage(`Metrics are not available: ${why}`, success.message));
      pass.events.push({ type: 'Warning', reason: 'MetricsUnavailable', message: `Metrics are not available for Job ${job.metadata.name}: ${why}` });
    }
    await this.writeStatus(pass);
    return {};
  }

  /**
   * Reads the trial's metrics from their source (pull collectors) and writes them whole into the
   * ObservationLog. Returns what was read; undefined for collectors that are not read here.
   * - `running`: the payload is still writing: whole lines only (a number cut mid-write must not
   *   fire a rule), what cannot be read yet is passed over, and the status keeps no observation
   *   (the trial has not reported yet).
   * - `failed`: the payload ended badly: what can be read is kept, into the observation too.
   * - `final`: the payload succeeded: everything is read, a source that cannot be is an error, and
   *   a missing objective is recorded as "unavailable", as Katib's collectors do.
   */
  private async collect(pass: Pass, job: StoredObject, mode: 'running' | 'failed' | 'final'): Promise<MetricLog[] | undefined> {
    const lenient = mode !== 'final';
    const lines = (text: string): string => (mode === 'running' ? text.slice(0, text.lastIndexOf('\n') + 1) : text);
    const { trial } = pass;
    const mc = trial.spec.metricsCollector;
    const kind = collectorKind(mc);
    if (kind !== 'StdOut' && kind !== 'File' && kind !== 'TensorFlowEvent') return undefined;
    const names = metricNames(trial.spec.objective);
    const pods = this.primaryPods(trial, job);
    const cname = (p: Pod): string | undefined => primaryContainerOf(p.spec.containers, trial.spec.primaryContainerName)?.name;
    const logs: MetricLog[] = [];
    try {
      if (kind === 'StdOut') {
        const formats = compileFormats(mc?.source?.filter?.metricsFormat);
        for (const p of pods) {
          let text: string | undefined;
          try {
            text = await this.readLog(p, cname(p));
          } catch (e) {
            // the payload has ended: a log that cannot be read ends the trial rather than keeping it waiting
            if (lenient) continue;
            throw new MetricsParseError(`cannot read the log of Pod ${p.metadata.name}: ${(e as Error).message}`);
          }
          if (text !== undefined) logs.push(...parseTextMetrics(lines(text), names, formats));
        }
      } else {
        const where = metricsPath(mc) as { path: string };
        for (const p of pods) {
          const c = cname(p);
          if (!c) continue;
          let files;
          try {
            files = await this.podFiles.readPodFiles(p, c, where.path);
          } catch (e) {
            if (lenient) continue;
            throw new MetricsParseError(`cannot read ${where.path} of Pod ${p.metadata.name}: ${(e as Error).message}`);
          }
          if (kind === 'TensorFlowEvent') logs.push(...tfEventMetrics(files, names));
          else {
            const format = mc?.source?.fileSystemPath?.format || 'TEXT';
            for (const f of files) {
              const text = lines(f.data.toString('utf8'));
              if (format === 'JSON') logs.push(...parseJsonMetrics(text, names));
              else logs.push(...parseTextMetrics(text, names, compileFormats(mc?.source?.filter?.metricsFormat)));
            }
          }
        }
      }
    } catch (e) {
      if (!(e instanceof MetricsParseError) || !lenient) throw e;
    }
    const objective = names[0];
    if (mode === 'final' && objective !== undefined && !logs.some((l) => l.name === objective)) {
      // as Katib's collectors report a metric that never appeared (Skiff keeps the other metrics' values)
      logs.push({ timeStamp: ZeroTime, name: objective, value: UnavailableMetricValue });
    }
    const existing = await this.client.find<ObservationLog>(this.logDef, { namespace: trial.metadata.namespace, name: trial.metadata.name });
    if (logs.length || existing) await this.writeLog(trial, logs, existing);
    if (mode !== 'running') pass.status.observation = summarise(logs, metricStrategies(trial.spec.objective));
    return logs;
  }

  /** the primary container's whole log, or undefined when it has none yet */
  private async readLog(pod: Pod & StoredObject, container: string | undefined): Promise<string | undefined> {
    return wholeLog(this.opts.podLogs, pod, container);
  }

  /** the job's Pods that carry the metrics: those matching primaryPodLabels, else all of them, oldest first */
  private primaryPods(trial: Trial & StoredObject, job: StoredObject): (Pod & StoredObject)[] {
    const all = (this.cacheList(trial.metadata.namespace) as (Pod & StoredObject)[]).filter((p) =>
      p.metadata.labels?.[TuningLabels.trial] === trial.metadata.name || controllerOf(p)?.uid === job.metadata.uid);
    const sel = trial.spec.primaryPodLabels ?? {};
    const primary = all.filter((p) => Object.entries(sel).every(([k, v]) => p.metadata.labels?.[k] === v));
    return primary.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));
  }

  private podCache?: { list(def: KindDef, opts: { namespace?: string }): StoredObject[] };
  /** set by the controller's manager: Pods are read from its informer rather than listed each pass */
  useCache(cache: { list(def: KindDef, opts: { namespace?: string }): StoredObject[] }): void {
    this.podCache = cache;
  }

  private cacheList(namespace: string | undefined): StoredObject[] {
    if (!this.podCache) throw new Error('trial controller: no Pod cache');
    return this.podCache.list(Kinds.Pod, { namespace });
  }

  /** writes the ObservationLog whole, owned by the Trial; unchanged logs are not rewritten */
  private async writeLog(trial: Trial & StoredObject, logs: MetricLog[], existing: (ObservationLog & StoredObject) | undefined): Promise<void> {
    if (existing) {
      if (JSON.stringify(existing.spec.metricLogs) === JSON.stringify(logs)) return;
      await this.client.update({ ...existing, spec: { ...existing.spec, metricLogs: logs } });
      return;
    }
    const obj: ObservationLog = {
      apiVersion: `${ObservationLogGroup}/v1`, kind: 'ObservationLog',
      metadata: { name: trial.metadata.name, namespace: trial.metadata.namespace, labels: { [TuningLabels.trial]: trial.metadata.name, ...(trial.metadata.labels?.[TuningLabels.experiment] ? { [TuningLabels.experiment]: trial.metadata.labels[TuningLabels.experiment] } : {}) }, ownerReferences: [ownerRefTo(trial)] },
      spec: { trialName: trial.metadata.name, metricLogs: logs },
    };
    try {
      await this.client.create(obj);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const now = await this.client.get<ObservationLog>(this.logDef, { namespace: trial.metadata.namespace, name: trial.metadata.name });
      await this.client.update({ ...now, spec: { ...now.spec, metricLogs: logs } });
    }
  }

  /** sets the completing condition (Running goes False, keeping its reason) and the completion time */
  private complete(pass: Pass, type: string, reason: string, message: string): void {
    const running = findCondition(pass.status.conditions, 'Running');
    if (running && running.status === 'True') setCondition(pass.status, { ...running, status: 'False', lastTransitionTime: undefined } as Condition, pass.at);
    setCondition(pass.status, { type, status: 'True', reason, message }, pass.at);
    pass.status.completionTime ??= pass.at;
  }

  /** writes the status if it changed (a conflict throws: the pass starts again from fresh state) */
  private async writeStatus(pass: Pass): Promise<void> {
    if (JSON.stringify(pass.status) !== JSON.stringify(pass.trial.status ?? {})) {
      pass.status.lastReconcileTime = pass.at;
      pass.trial = await this.client.updateStatus<Trial>({ ...pass.trial, status: pass.status });
      pass.status = structuredClone(pass.trial.status ?? {});
    }
    for (const e of pass.events.splice(0)) this.opts.recorder.event(pass.trial, e.type, e.reason, e.message);
  }

  /** a completed trial: a stopped trial's job stays stopped; a job not retained goes */
  private async afterCompletion(trial: Trial & StoredObject, jobDef: KindDef): Promise<void> {
    const job = await this.client.find(jobDef, { namespace: trial.metadata.namespace, name: trial.metadata.name });
    if (!job || controllerOf(job)?.uid !== trial.metadata.uid || job.metadata.deletionTimestamp) return;
    if (isTrue(trial.status?.conditions, 'EarlyStopped') || isTrue(trial.status?.conditions, 'Killed')) await this.stopJob(job, jobDef);
    if (trial.spec.retainRun) return;
    try {
      await this.client.delete(jobDef, { namespace: trial.metadata.namespace, name: trial.metadata.name }, { propagationPolicy: 'Foreground', uid: job.metadata.uid });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** stops a job without failing it: suspends it (its Pods go), or terminates a pipeline Run */
  private async stopJob(job: StoredObject, jobDef: KindDef): Promise<void> {
    const spec = (job.spec ?? {}) as Record<string, unknown>;
    let patch: Record<string, unknown> | undefined;
    if (job.kind === 'Run') {
      if (spec.terminate !== true) patch = { spec: { terminate: true } };
    } else if (job.kind === 'Job') {
      if (spec.suspend !== true && !finishedBatchJob(job)) patch = { spec: { suspend: true } };
    } else if ((spec.runPolicy as { suspend?: boolean } | undefined)?.suspend !== true) {
      patch = { spec: { runPolicy: { suspend: true } } };
    }
    if (!patch) return;
    try {
      await this.client.patch(jobDef, { namespace: job.metadata.namespace, name: job.metadata.name }, patch, 'merge');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  // ---- following logs for early stopping -----------------------------------------------------

  /** follows each primary Pod's log; a line naming a rule's metric asks for a pass at once */
  private async follow(key: ObjectKey, trial: Trial & StoredObject, job: StoredObject): Promise<void> {
    const k = `${key.namespace}/${key.name}`;
    const mine = this.followers.get(k) ?? new Map<string, AbortController>();
    this.followers.set(k, mine);
    const followed = this.opts.stopper?.follows(trial);
    const names = [...((trial.spec.earlyStoppingRules ?? []) as EarlyStoppingRule[]).map((r) => r.name), ...(followed ? [followed] : [])];
    for (const pod of this.primaryPods(trial, job)) {
      if (mine.has(pod.metadata.uid) || pod.status?.phase !== 'Running') continue;
      const ac = new AbortController();
      mine.set(pod.metadata.uid, ac);
      const container = primaryContainerOf(pod.spec.containers, trial.spec.primaryContainerName)?.name;
      void (async () => {
        // at most a few passes a poll interval, however chatty the log: each pass reads it whole
        const gap = this.pollMs / 4;
        let last = 0;
        try {
          const it = await this.opts.podLogs.logs(pod, { container, follow: true }, ac.signal);
          for await (const chunk of it) {
            if (ac.signal.aborted) return;
            const t = Date.now();
            if (t - last >= gap && names.some((n) => chunk.includes(n))) {
              last = t;
              this.wake(key);
            }
          }
        } catch {
          // the polling pass reads the log anyway; a follower is only a wake-up
        }
      })();
    }
  }

  private unfollow(key: ObjectKey): void {
    const k = `${key.namespace}/${key.name}`;
    for (const ac of this.followers.get(k)?.values() ?? []) ac.abort();
    this.followers.delete(k);
  }

  /** stops every follower (the controller is stopping) */
  stop(): void {
    for (const k of [...this.followers.keys()]) {
      const i = k.indexOf('/');
      this.unfollow({ namespace: k.slice(0, i), name: k.slice(i + 1) });
    }
  }
}

function finishedBatchJob(job: StoredObject): boolean {
  const conds = (job.status as { conditions?: Condition[] } | undefined)?.conditions;
  return isTrue(conds, 'Complete') || isTrue(conds, 'Failed');
}

function withJob(reason: string, jobReason: string | undefined): string {
  return jobReason ? `${reason}. Job reason: ${jobReason}` : reason;
}

function withJobMessage(msg: string, jobMessage: string | undefined): string {
  return jobMessage ? `${msg}. Job message: ${jobMessage}` : msg;
}

function describeSource(trial: Trial): string {
  const mc = trial.spec.metricsCollector;
  const kind = collectorKind(mc);
  if (kind === 'StdOut') return `no line of the primary container's log has it${trial.spec.primaryContainerName ? ` (container ${trial.spec.primaryContainerName})` : ''}`;
  return `not found in ${metricsPath(mc)?.path}`;
}
