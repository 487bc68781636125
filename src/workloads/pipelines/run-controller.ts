// The Run controller: plays the KFP v2 driver and launcher for one Run. Each reconcile recomputes
// everything from the Run's status and its owned Pods: (1) finished Pods have their outputs read
// back and recorded, and that is written before anything else; (2) the DAG is walked, sub-DAGs are
// resolved, ready container tasks become Pods (or cache hits, or controller-side tasks: importers,
// CreatePVC/DeletePVC); (3) the run's state follows. Pod names are derived from the run uid, the
// task path, the retry generation and the attempt, so a Pod created just before a crash is found,
// not duplicated; a task whose outputs are recorded is never run again.
//
// Failure semantics (as Argo runs KFP's DAGs): a failed task stops new tasks in its DAG from
// starting, but tasks already running finish, and tasks whose triggerPolicy.strategy is
// ALL_UPSTREAM_TASKS_COMPLETED (exit handlers, ignore_upstream_failure) still run once their
// upstream tasks are final. A DAG with a failed task fails when nothing in it can move any more.
//
// For an S3 root, a task's inputs are downloaded before its Pod and its outputs uploaded after it
// (staging.ts). Those transfers run in the background (transfers.ts): a pass starts one, records the
// task as waiting on it and goes on; the transfer's end queues the run again, and that pass reads
// the outcome. One large artifact never holds up the other runs' steps. On a cluster a task Pod may
// run on another machine: its node does the launcher's part instead (launcher.ts), and the outputs
// are read from S3.
import { createHash } from 'node:crypto';
import { setCondition } from '../../api/conditions.js';
import type { Pod } from '../../api/core-types.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { join } from 'node:path';
import { clone, deepEqual, now, ownerRefTo } from '../../api/meta.js';
import type { Run, RunArtifact, RunOutputs, RunState, RunStatus, RunTask, TaskCache, TaskStatus } from '../../api/pipelines.js';
import { RunLabels, RunStates } from '../../api/pipelines.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { ArtifactStore } from '../../artifacts/store.js';
import type { Recorder } from '../../control/events.js';
import { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import { durationMs } from '../../util/duration.js';
import { cacheEntryName, cacheFingerprint, cachingEnabled } from './cache.js';
import { evaluateCondition, selectParameter } from './cel.js';
import { topologicalOrder, upstreamOf } from '../../api/kfp/dag.js';
import type { ArtifactList, ExecutorInput, InputArtifactArg, InputParameterArg, JsonValue, ParameterType } from './executor-input.js';
import { buildExecutorInput, localPathForUri, normalizePipelineRoot, taskRootUri } from './executor-input.js';
import { isS3Root, namespaceS3Store, resolvePipelineRoot, type RootStore, type RootStores } from './artifact-roots.js';
import { TaskStaging } from './staging.js';
import { type InPodLauncher, inPodLauncher, inPodLauncherSecret, launcherAnnotation, launcherError, launcherPlan, launcherVolumes, uriForLocalPath } from './launcher.js';
import { TransferTracker, type TransferOutcome } from './transfers.js';
import { importArtifact } from './importer.js';
import type { ComponentSpec, PipelineContainerSpec, PipelineSpec, PipelineTaskSpec, RetryPolicy } from '../../api/kfp/ir.js';
import { resolveFString, resolvePlaceholders } from './placeholders.js';
import { applyKubernetesConfig, containerResources, executorConfig } from './platform.js';
import { readBackOutputs } from './read-back.js';

export interface RunControllerOptions {
  client: Client;
  recorder: Recorder;
  /** local directory under which artifacts and output files are written */
  pipelineRoot: string;
  /** with tenancy, each namespace's runs write under `<pipelineRoot>/<namespace>`: the only part of
   *  the root its isolated Pods can see */
  rootPerNamespace?: boolean;
  /** where task outputs are read back from and artifacts moved to: the only way to a task's files */
  artifacts: ArtifactStore;
  /** the configured root of runs that name none (after their namespace's kfp-launcher ConfigMap);
   *  absent: the local pipelineRoot */
  defaultPipelineRoot?: string;
  /** the S3 server of s3:// and minio:// roots; absent: such roots are refused */
  s3?: RootStores;
  /**
   * task Pods may run on other machines (Skiff on a cluster): for an S3 root each Pod carries KFP's
   * launcher plan and gets emptyDir volumes, its node downloads and uploads its artifacts
   * (launcher.ts), and its outputs are read from S3; no staging directory on this machine
   */
  launcherInPod?: boolean;
  /**
   * with launcherInPod: the launcher goes inside each task Pod (an init container from this image),
   * for nodes that are real kubelets rather than `skiff node` agents (launcher.ts)
   */
  inPodLauncher?: InPodLauncher;
  /** an S3 root's downloads and uploads running at once, over all runs (default 4) */
  transferConcurrency?: number;
  /** the Manager's informers: Runs, their Pods and their task records are read from memory */
  cache?: InformerCache;
}

export const RunAnnotations = {
  taskPath: 'pipelines.kubeflow.org/task-path',
  component: 'pipelines.kubeflow.org/component',
  executorInput: 'pipelines.kubeflow.org/executor-input',
  /** the task's retryPolicy (JSON), on Pods of tasks that have one */
  retryPolicy: 'pipelines.kubeflow.org/retry-policy',
  /** the attempt this Pod runs, from 0 */
  attempt: 'pipelines.kubeflow.org/attempt',
  /** the cache fingerprint, on Pods of cacheable tasks: a success is written to the cache */
  fingerprint: 'pipelines.kubeflow.org/cache-fingerprint',
  /** the run's name, as KFP's fieldPathAsEnv examples read it */
  runName: 'pipelines.kubeflow.org/run_name',
} as const;

type RunObject = Run & StoredObject;
type PodObject = Pod & StoredObject;

class TaskFailure extends Error {}
/** an output artifact could not be uploaded to the run's S3 root */
class OutputUploadError extends Error {}

export function addRunController(mgr: Manager, opts: RunControllerOptions): Controller {
  const r = new RunReconciler({ cache: mgr.cache, ...opts });
  const c = mgr.add({
    name: 'run', for: Kinds.Run, reconcile: (key) => r.reconcile(key),
    watches: [{
      kind: Kinds.Pod,
      // A pass acts on a Pod only once it has finished or gone: its start and progress (scheduled,
      // running, an IP) change nothing the Run records, and skipping them saves a pass per event.
      predicate: (e) => e.type === 'DELETED' || Boolean(e.object.metadata.deletionTimestamp) || e.object.status?.phase === 'Succeeded' || e.object.status?.phase === 'Failed',
      map: (pod) => pod.metadata.ownerReferences?.filter((o) => o.controller && o.kind === 'Run').map((o) => ({ namespace: pod.metadata.namespace, name: o.name })) ?? [],
    }],
  });
  // a transfer's end is news for its run, as a Pod's end is
  r.requeue = (key) => c.enqueue(key);
  return c;
}

const emptyOutputs = (): RunOutputs => ({ parameters: {}, artifacts: {} });

const { running: RUNNING, succeeded: SUCCEEDED, failed: FAILED, skipped: SKIPPED, canceled: CANCELED } = RunStates;

/** Finished without failing: the task's dependents may go on. */
function isSettled(state: string | undefined): boolean {
  return state === SUCCEEDED || state === SKIPPED;
}

/** Finished one way or another. */
function isFinal(state: string | undefined): boolean {
  return state === SUCCEEDED || state === SKIPPED || state === FAILED || state === CANCELED;
}

function isFailed(state: string | undefined): boolean {
  return state === FAILED || state === CANCELED;
}

/** A run that has ended: nothing more happens to it unless it is retried. */
export function isRunDone(state: string | undefined): boolean {
  return state === SUCCEEDED || state === FAILED || state === CANCELED;
}

/** `<run>-<task>-<hash>`: stable for a run uid, task path, retry generation and attempt. */
export function podNameFor(run: RunObject, taskPath: string, generation = 0, attempt = 0): string {
  const key = generation === 0 && attempt === 0 ? `${run.metadata.uid}|${taskPath}` : `${run.metadata.uid}|${taskPath}|${generation}|${attempt}`;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
  const leaf = (taskPath.split('.').pop() ?? 'task').toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const head = `${run.metadata.name}-${leaf}`.slice(0, 63 - 9).replace(/-+$/, '');
  return `${head}-${hash}`;
}

/** `<run>-<hash>`: a task's RunTask, stable for a run uid and task path, so a create after a crash finds it. */
export function runTaskName(run: RunObject, taskPath: string): string {
  const hash = createHash('sha256').update(`${run.metadata.uid}|${taskPath}`).digest('hex').slice(0, 10);
  return `${run.metadata.name.slice(0, 200)}-${hash}`;
}

/** Whether a task's record is unchanged: fields a pass did not touch are the very same values. */
function sameRecord(a: TaskStatus | undefined, b: TaskStatus): boolean {
  if (!a) return false;
  // a final record is the stored one itself (see reconcile): nothing to compare
  if (a === b) return true;
  let n = 0;
  for (const k in b) {
    n++;
    const f = k as keyof TaskStatus;
    if (a[f] !== b[f] && !deepEqual(a[f], b[f])) return false;
  }
  for (const k in a) if (--n < 0 || !(k in b)) return false;
  return true;
}

/** kfp-kubernetes' CreatePVC/DeletePVC compile to executors with these placeholder images. */
function controllerTaskKind(container: PipelineContainerSpec | undefined): 'createpvc' | 'deletepvc' | undefined {
  const image = container?.image ?? '';
  if (/(^|\/)createpvc(:|$)/.test(image) && !container?.command?.length) return 'createpvc';
  if (/(^|\/)deletepvc(:|$)/.test(image) && !container?.command?.length) return 'deletepvc';
  return undefined;
}

/** The first feature of a task this controller cannot honour, in KFP's words. */
export function unsupportedFeature(spec: PipelineSpec, task: PipelineTaskSpec): string | undefined {
  const comp = spec.components?.[task.componentRef.name];
  if ((task.parameterIterator || task.artifactIterator) && !comp?.dag) return 'a loop (dsl.ParallelFor) whose body is not a DAG';
  if (comp?.dag) return undefined;
  const exec = comp?.executorLabel ? spec.deploymentSpec?.executors?.[comp.executorLabel] : undefined;
  if (exec?.importer) return undefined;
  if (!exec?.container) return `an executor that is not a container or an importer (${Object.keys(exec ?? {}).join(', ') || 'none'})`;
  return undefined;
}

/** Walks every DAG reachable from root; the first unsupported task, as `<path>: <feature>`. */
function firstUnsupported(spec: PipelineSpec, comp: ComponentSpec, scope: string[]): { path: string; feature: string } | undefined {
  for (const [name, task] of Object.entries(comp.dag?.tasks ?? {})) {
    const path = [...scope, name].join('.');
    const feature = unsupportedFeature(spec, task);
    if (feature) return { path, feature };
    const child = spec.components?.[task.componentRef.name];
    if (child?.dag) {
      const inner = firstUnsupported(spec, child, [...scope, name]);
      if (inner) return inner;
    }
  }
  return undefined;
}

async function readIfExists(store: ArtifactStore, uri: string): Promise<string | undefined> {
  return (await store.readIfExists(uri))?.toString('utf8');
}

function toRunArtifact(a: { name: string; uri: string; type?: object; metadata?: object }): RunArtifact {
  return { name: a.name, uri: a.uri, type: { ...(a.type ?? {}) }, metadata: { ...(a.metadata ?? {}) } };
}

function exitMessage(pod: PodObject): string {
  const t = pod.status?.containerStatuses?.find((s: { state?: { terminated?: { exitCode: number } } }) => s.state?.terminated && s.state.terminated.exitCode !== 0)?.state?.terminated;
  if (t) {
    // the launcher inside the Pod failed around the command: its own message says what
    const launcher = launcherError(t.message);
    return `container exited with code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}${launcher ? `: ${launcher}` : ''}`;
  }
  const reason = pod.status?.reason;
  return `pod ${pod.status?.phase ?? 'failed'}${reason ? ` (${reason}${pod.status?.message ? `: ${pod.status.message}` : ''})` : ''}`;
}

/** The wait before retry number `attempt + 1`: backoffDuration × backoffFactor^attempt, capped. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  const base = durationMs(policy.backoffDuration, 0);
  const factor = typeof policy.backoffFactor === 'number' && policy.backoffFactor > 0 ? policy.backoffFactor : 2;
  const max = durationMs(policy.backoffMaxDuration, 3600_000);
  return Math.min(base * factor ** attempt, max);
}

/** TaskFinalStatus.state as the backend (MLMD) names it. */
function finalStatusState(state: RunState | undefined): string {
  switch (state) {
    case SUCCEEDED: return 'COMPLETE';
    case FAILED: return 'FAILED';
    case CANCELED: return 'CANCELED';
    case SKIPPED: return 'SKIPPED';
    default: return 'RUNNING';
  }
}

type DagResult = 'done' | 'pending' | 'failed';

/** Work for after the walk: things that need the API (cache lookups, PVCs). */
interface Deferred {
  path: string;
  kind: 'createpvc' | 'deletepvc';
  inputs: RunOutputs;
}

/** What one pass works on: read once, mutated in memory, written at the end of a rung. */
interface Pass {
  run: RunObject;
  spec: PipelineSpec;
  status: RunStatus;
  tasks: Record<string, TaskStatus>;
  /** the stored RunTask behind each task path, as this pass read it: what a save compares with */
  records: Map<string, RunTask & StoredObject>;
  pods: Map<string, PodObject>;
  root: string;
  at: string;
  generation: number;
  toCreate: PodObject[];
  deferred: Deferred[];
  cacheWrites: TaskCache[];
  /** events about Pods to create: platform settings the local node keeps but cannot honour */
  notes: Map<string, string[]>;
  /** the earliest time a waiting retry starts (ms) */
  wakeAt?: number;
  /** the root is in S3: task Pods get their artifacts through staging directories (staging.ts) */
  remote: boolean;
  /** the root is in S3 and task Pods may run elsewhere: their nodes move their artifacts (launcher.ts) */
  launcher: boolean;
  /** the S3 store of the run's root, with its namespace's credentials (asked for once per pass) */
  s3Store?: Promise<RootStore>;
  /** with the launcher in the Pods: why the namespace's Secret cannot give them S3 credentials (undefined: it can) */
  launcherSecret?: Promise<string | undefined>;
  /** staging directories of Pods whose results this pass recorded: removed once that is written */
  staged: string[];
  /** Pods whose ended transfer this pass recorded: forgotten once that is written */
  consumed: string[];
  /** what earlier passes over this run learnt (RunReconciler.progress) */
  progress: RunProgress;
}

/**
 * What the passes over one run carry from one to the next, in memory only: a hint, never the truth.
 * A restarted controller starts without it and finds the same from the run's records.
 */
interface RunProgress {
  /** the run's namespace/name: a run gone from the cache is known by that alone */
  key: string;
  /** the run's task records the last pass read: fewer now means some were deleted, and the hints go */
  records: number;
  /** per loop path: every iteration below this index was settled (SUCCEEDED or SKIPPED) when a pass
   *  began. A settled record never changes again (a retry keeps it), so a pass starts its walk there. */
  settledBelow: Map<string, number>;
}

/** a task record without the mark of a transfer it no longer waits on */
function settled(rec: TaskStatus): TaskStatus {
  const out = { ...rec };
  delete out.transfer;
  return out;
}

export class RunReconciler {
  private readonly cache: InformerCache;
  private readonly staging: TaskStaging;
  private readonly transfers: TransferTracker;
  /** queues a run for another pass (the controller's enqueue) */
  requeue: (key: ObjectKey) => void = () => undefined;
  /** per run uid, what earlier passes learnt (RunProgress); dropped when the run ends or goes */
  private readonly progress = new Map<string, RunProgress>();

  constructor(private readonly opts: RunControllerOptions) {
    this.cache = opts.cache ?? new InformerCache(opts.client);
    this.staging = new TaskStaging(opts.artifacts, (ns) => join(opts.pipelineRoot, ns), opts.rootPerNamespace === true);
    this.transfers = new TransferTracker({ concurrency: opts.transferConcurrency ?? 4, onEnd: (key) => this.requeue(key) });
  }

  /** drops what the passes over a run that is gone from the cache learnt */
  private forgetProgress(key: ObjectKey): void {
    const k = `${key.namespace ?? ''}/${key.name}`;
    for (const [uid, p] of this.progress) if (p.key === k) this.progress.delete(uid);
  }

  /** the S3 store of the pass's run (its namespace's credentials), asked for once per pass */
  private s3Store(pass: Pass): Promise<RootStore> {
    const s3 = this.opts.s3;
    if (!s3) return Promise.reject(new Error(`pipeline root ${pass.root} is in S3, and Skiff has no S3 server configured (artifacts.s3 in its config)`));
    pass.s3Store ??= namespaceS3Store(this.opts.client, s3, pass.run.metadata.namespace ?? 'default', pass.root);
    return pass.s3Store;
  }

  /** why the run's namespace cannot give the launcher in its Pods S3 credentials; undefined when it can */
  private async launcherSecretProblem(pass: Pass): Promise<string | undefined> {
    const namespace = pass.run.metadata.namespace ?? 'default';
    const { name, accessKey, secretKey } = inPodLauncherSecret;
    const secret = await this.opts.client.find<KObject & { data?: Record<string, string> }>(Kinds.Secret, { namespace, name });
    const wanted = `the launcher in its Pod reads the S3 credentials from the Secret ${name} in namespace ${namespace} (keys ${accessKey} and ${secretKey})`;
    if (!secret) return `${wanted}, which does not exist`;
    const lacking = [accessKey, secretKey].filter((k) => !secret.data?.[k]);
    return lacking.length ? `${wanted}, which has no ${lacking.join(' and no ')}` : undefined;
  }

  private stagingDir(pass: Pass, podName: string): string {
    return this.staging.dir(pass.run.metadata.namespace ?? 'default', podName);
  }

  /**
   * A made Pod's staging directory: the one its volumes show it. On a cluster the replica that made
   * the Pod may have been another leader, with another data directory, whose staging the Pod wrote to.
   */
  private podStagingDir(pass: Pass, pod: PodObject): string {
    return this.staging.dirOf(pod) ?? this.stagingDir(pass, pod.metadata.name);
  }

  /** removes the staging directories of Pods whose results are written */
  private async removeStaged(pass: Pass, dirs: string[]): Promise<void> {
    for (const dir of dirs.splice(0)) await this.staging.remove(dir).catch(() => undefined);
  }

  /** the pipeline root of a run that names none */
  private defaultRoot(run: StoredObject): string {
    return this.opts.rootPerNamespace ? join(this.opts.pipelineRoot, run.metadata.namespace ?? 'default') : this.opts.pipelineRoot;
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const run = this.cache.get(Kinds.Run, key) as RunObject | undefined;
    if (!run || run.metadata.deletionTimestamp) {
      // a deleted run's downloads and uploads are nobody's any more
      this.transfers.cancelRun(run ? { uid: run.metadata.uid } : { key });
      if (run) this.progress.delete(run.metadata.uid);
      else this.forgetProgress(key);
      return {};
    }
    const generation = run.spec.retryGeneration ?? 0;
    if (isRunDone(run.status?.state)) {
      this.progress.delete(run.metadata.uid);
      if (generation > (run.status?.retryGeneration ?? 0)) await this.retry(run as RunObject, generation);
      return {};
    }
    const owned = this.cache.owned(Kinds.Pod, run.metadata.uid) as PodObject[];
    const status = clone(run.status ?? {});
    // a run's records are its RunTasks; status.tasks is read too for what an older Skiff left there
    const tasks = status.tasks ?? {};
    delete status.tasks;
    const records = new Map<string, RunTask & StoredObject>();
    for (const o of this.cache.owned(Kinds.RunTask, run.metadata.uid) as (RunTask & StoredObject)[]) {
      if (o.metadata.deletionTimestamp) continue;
      records.set(o.spec.path, o);
      // the pass changes records' own fields only, never what they point at: a shallow copy will do.
      // A final record is never changed in place (a pass replaces it, or leaves it), so the stored one
      // serves as it is: a pass over a large run copies and compares only the records still moving.
      tasks[o.spec.path] = isFinal(o.status?.state) ? o.status : { ...o.status };
    }
    let progress = this.progress.get(run.metadata.uid);
    if (!progress || records.size < progress.records) {
      progress = { key: `${run.metadata.namespace ?? ''}/${run.metadata.name}`, records: 0, settledBelow: new Map() };
      this.progress.set(run.metadata.uid, progress);
    }
    progress.records = records.size;
    const pass: Pass = {
      run, spec: run.spec.pipelineSpec, status, tasks, records,
      pods: new Map(owned.map((p) => [p.metadata.name, p])),
      root: '', at: now(), generation: status.retryGeneration ?? 0, toCreate: [], deferred: [], cacheWrites: [], notes: new Map(), remote: false, launcher: false, staged: [], consumed: [], progress,
    };
    // 0. start: refuse what cannot run, before any Pod exists
    if (!status.state) {
      // the root is decided once, as KFP's root driver does, and kept: a later change of the namespace's
      // kfp-launcher ConfigMap does not move a run's artifacts halfway
      const root = await resolvePipelineRoot(this.opts.client, run, this.opts.defaultPipelineRoot, this.defaultRoot(run));
      const reason = root.startsWith('/') || root.startsWith('file:///') ? undefined
        : isS3Root(root) ? (this.opts.s3 ? undefined : `pipeline root ${root} is in S3, and Skiff has no S3 server configured: set artifacts.s3.endpoint in its config`)
        : `pipeline root ${JSON.stringify(root)} is not supported: only a local directory, s3:// and minio:// are`;
      status.pipelineRoot = root;
      const bad = firstUnsupported(pass.spec, pass.spec.root, []);
      const message = reason ?? (bad ? `task ${bad.path} uses ${bad.feature}, which is not supported` : undefined);
      if (message) return this.finish(pass, FAILED, 'Unsupported', message, bad?.path);
      if (run.spec.terminate) return this.finish(pass, CANCELED, 'Terminated', 'the run was terminated before it started');
      status.state = RUNNING;
      status.startedAt = pass.at;
      status.retryGeneration = generation;
      setCondition(status, { type: 'Succeeded', status: 'Unknown', reason: 'Running', message: 'the run has started' }, pass.at);
      await this.write(pass);
      this.opts.recorder.event(run, 'Normal', 'Started', `run of pipeline ${pass.spec.pipelineInfo.name} started`);
      return {};
    }
    pass.root = normalizePipelineRoot(status.pipelineRoot ?? run.spec.pipelineRoot ?? this.defaultRoot(run));
    pass.remote = isS3Root(pass.root);
    pass.launcher = pass.remote && this.opts.launcherInPod === true;
    // 1. harvest: record what finished Pods produced. The same pass goes on to start what that made
    // ready: a crash before the status write loses nothing, as the next pass harvests the same Pods
    // again and adopts the Pods this one created (their names are deterministic).
    await this.harvest(pass);
    if (run.spec.terminate) return this.terminate(pass);
    // 2. walk the DAG: resolve sub-DAGs, plan Pods for ready tasks
    const rootResult = this.walk(pass, pass.spec.root, [], { parameters: { ...(run.spec.parameters ?? {}) }, artifacts: {} });
    await this.act(pass);
    // 3. the run's own state
    if (rootResult === 'failed') {
      const leaf = firstFailedLeaf(pass.tasks);
      return this.finish(pass, FAILED, 'TaskFailed', leaf?.[1].message ?? 'a task failed', leaf?.[0]);
    }
    if (rootResult === 'done') {
      try {
        status.outputs = this.dagOutputs(pass, pass.spec.root, []);
      } catch (e) {
        return this.finish(pass, FAILED, 'OutputsFailed', (e as Error).message);
      }
      return this.finish(pass, SUCCEEDED, 'Succeeded', 'all tasks succeeded');
    }
    await this.write(pass);
    for (const podName of pass.consumed.splice(0)) this.transfers.forget(run.metadata.uid, podName);
    await this.writeCache(pass);
    await this.removeStaged(pass, pass.staged);
    return pass.wakeAt !== undefined ? { requeueAfter: Math.max(0, pass.wakeAt - Date.now()) } : {};
  }

  /** Creates what the walk planned: Pods (unless the cache has the task), PVCs. */
  private async act(pass: Pass): Promise<void> {
    const { client, recorder } = this.opts;
    const { run } = pass;
    for (const d of pass.deferred) {
      try {
        const outputs = d.kind === 'createpvc' ? await this.createPvc(pass, d) : await this.deletePvc(pass, d);
        pass.tasks[d.path] = { ...pass.tasks[d.path], state: SUCCEEDED, finishedAt: pass.at, outputs, kind: d.kind } as TaskStatus;
      } catch (e) {
        pass.tasks[d.path] = { ...pass.tasks[d.path], state: FAILED, finishedAt: pass.at, message: `task ${d.path} failed: ${(e as Error).message}`, kind: d.kind } as TaskStatus;
      }
    }
    for (const pod of pass.toCreate) {
      const taskPath = pod.metadata.annotations?.[RunAnnotations.taskPath] ?? '';
      const rec = pass.tasks[taskPath];
      const fingerprint = pod.metadata.annotations?.[RunAnnotations.fingerprint];
      if (fingerprint && rec) {
        const hit = await client.find<TaskCache>(Kinds.TaskCache, { namespace: run.metadata.namespace, name: cacheEntryName(pass.spec.pipelineInfo.name, fingerprint) });
        if (hit && hit.spec.fingerprint === fingerprint) {
          const from = `${hit.spec.run}/${hit.spec.task}`;
          pass.tasks[taskPath] = { state: SUCCEEDED, startedAt: rec.startedAt ?? pass.at, finishedAt: pass.at, inputs: rec.inputs, outputs: clone(hit.spec.outputs), cachedFrom: from, fingerprint };
          recorder.event(run, 'Normal', 'TaskCached', `task ${taskPath} reused the outputs of ${from}`);
          continue;
        }
      }
      if (pass.remote && !pass.launcher) {
        // the launcher's part before the component: the bucket reachable with the namespace's
        // credentials, the inputs downloaded where the Pod reads them. In the background: the Pod
        // is made by the pass that finds the download done.
        const podName = pod.metadata.name;
        const dir = this.stagingDir(pass, podName);
        const t = this.transfers.get<void>(run.metadata.uid, podName, 'inputs');
        if (!t) {
          const ei = parseJson<ExecutorInput>(pod.metadata.annotations?.[RunAnnotations.executorInput]) as ExecutorInput;
          this.transfers.start({ namespace: run.metadata.namespace, name: run.metadata.name }, run.metadata.uid, podName, 'inputs', async (signal) => {
            const remote = await this.s3Store(pass);
            await remote.check();
            await this.staging.stageInputs(remote, dir, ei, signal);
          }, () => this.staging.remove(dir));
          recorder.event(run, 'Normal', 'DownloadingInputs', `task ${taskPath}: downloading its input artifacts from ${pass.root}`);
        }
        if (!t || t.state === 'running') {
          // no Pod yet: the next pass plans the task again and finds the download's outcome here
          const waiting: TaskStatus = { ...(rec as TaskStatus), transfer: 'inputs' };
          delete waiting.podName;
          pass.tasks[taskPath] = waiting;
          continue;
        }
        pass.consumed.push(podName);
        if (t.state === 'failed') {
          const failed = { ...settled(rec as TaskStatus), state: FAILED, finishedAt: pass.at, message: `task ${taskPath} failed: ${t.error.message}` } as TaskStatus;
          // its Pod was never made
          delete failed.podName;
          pass.tasks[taskPath] = failed;
          pass.staged.push(dir);
          continue;
        }
      }
      if (pass.launcher && this.opts.inPodLauncher) {
        // a Pod whose Secret is missing would wait forever in CreateContainerConfigError
        const missing = await (pass.launcherSecret ??= this.launcherSecretProblem(pass));
        if (missing) {
          pass.tasks[taskPath] = { ...rec, state: FAILED, finishedAt: pass.at, message: `task ${taskPath}: ${missing}` } as TaskStatus;
          continue;
        }
      }
      try {
        await client.create(pod);
        recorder.event(run, 'Normal', 'TaskStarted', `task ${taskPath} started as pod ${pod.metadata.name}`);
        for (const note of pass.notes.get(taskPath) ?? []) recorder.event(run, 'Normal', 'PlatformSetting', `task ${taskPath}: ${note}`);
      } catch (e) {
        if (e instanceof ApiError && e.reason === StatusReason.AlreadyExists) continue;
        if (e instanceof ApiError && (e.code === 422 || e.code === 400)) {
          pass.tasks[taskPath] = { ...rec, state: FAILED, finishedAt: pass.at, message: `task ${taskPath}: its pod was refused: ${e.message}` } as TaskStatus;
          continue;
        }
        throw e;
      }
    }
  }

  private async createPvc(pass: Pass, d: Deferred): Promise<RunOutputs> {
    const p = d.inputs.parameters;
    const suffix = typeof p['pvc_name_suffix'] === 'string' ? p['pvc_name_suffix'] : '';
    const name = typeof p['pvc_name'] === 'string' && p['pvc_name'] !== '' ? p['pvc_name'] : `${pass.run.metadata.name}${suffix || '-pvc'}`.toLowerCase().slice(0, 253);
    if (typeof p['size'] !== 'string' || p['size'] === '') throw new Error('CreatePVC: size is required');
    const pvc: KObject = {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: pass.run.metadata.namespace, labels: { [RunLabels.run]: pass.run.metadata.name }, ...(p['annotations'] && typeof p['annotations'] === 'object' ? { annotations: p['annotations'] as Record<string, string> } : {}) },
      spec: {
        accessModes: Array.isArray(p['access_modes']) ? p['access_modes'] : ['ReadWriteOnce'],
        resources: { requests: { storage: p['size'] } },
        ...(typeof p['storage_class_name'] === 'string' && p['storage_class_name'] ? { storageClassName: p['storage_class_name'] } : {}),
        ...(typeof p['volume_name'] === 'string' && p['volume_name'] ? { volumeName: p['volume_name'] } : {}),
      },
    };
    try {
      await this.opts.client.create(pvc);
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.AlreadyExists)) throw e;
      const existing = await this.opts.client.find(Kinds.PersistentVolumeClaim, { namespace: pass.run.metadata.namespace, name });
      if (existing?.metadata.labels?.[RunLabels.run] !== pass.run.metadata.name) throw new Error(`CreatePVC: a PersistentVolumeClaim named ${name} already exists`);
    }
    if (p['data_source']) this.opts.recorder.event(pass.run, 'Normal', 'PlatformSetting', `task ${d.path}: the claim ${name} starts empty: data_source is not restored on the local substrate`);
    return { parameters: { name }, artifacts: {} };
  }

  private async deletePvc(pass: Pass, d: Deferred): Promise<RunOutputs> {
    const name = d.inputs.parameters['pvc_name'];
    if (typeof name !== 'string' || name === '') throw new Error('DeletePVC: pvc_name is required');
    try {
      await this.opts.client.delete(Kinds.PersistentVolumeClaim, { namespace: pass.run.metadata.namespace, name });
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
    }
    return emptyOutputs();
  }

  private async writeCache(pass: Pass): Promise<void> {
    const entries = pass.cacheWrites.splice(0);
    for (const entry of entries) {
      try {
        await this.opts.client.create(entry);
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === StatusReason.AlreadyExists)) throw e;
      }
    }
  }

  /** Saves the task records that changed, then the Run's status if it changed: the records first, so a crash between leaves the Run behind them, never ahead. */
  private async write(pass: Pass): Promise<void> {
    await this.saveTasks(pass);
    const status: RunStatus = { ...pass.status };
    if (isRunDone(status.state)) {
      // the ended run carries every record, for readers of the finished run
      status.tasks = pass.tasks;
      delete status.taskCounts;
    } else {
      const counts: Partial<Record<RunState, number>> = {};
      // counted in place: no array of every record made for it on each pass
      for (const path in pass.tasks) {
        const state = (pass.tasks[path] as TaskStatus).state;
        counts[state] = (counts[state] ?? 0) + 1;
      }
      status.taskCounts = counts;
    }
    if (deepEqual(status, pass.run.status)) return;
    pass.run = await this.opts.client.updateStatus<Run>({ ...pass.run, status });
  }

  /**
   * Creates, updates or deletes the RunTask of each record that differs from the stored one. The deepest
   * records go first, so a watcher never sees a loop or DAG finished while a task inside it still shows
   * running: an iteration's record lands before its loop's.
   */
  private async saveTasks(pass: Pass): Promise<void> {
    const { client } = this.opts;
    const { run } = pass;
    // only the records that changed are ordered (most of a large run's are as stored); each path's
    // depth counted once, not in every comparison of the sort
    const changed: { path: string; rec: TaskStatus; depth: number }[] = [];
    for (const path in pass.tasks) {
      const rec = pass.tasks[path] as TaskStatus;
      if (!sameRecord(pass.records.get(path)?.status, rec)) changed.push({ path, rec, depth: path.split('.').length });
    }
    changed.sort((a, b) => b.depth - a.depth);
    for (const { path, rec } of changed) {
      const stored = pass.records.get(path);
      const obj: RunTask = stored
        ? { ...stored, status: rec }
        : {
          apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'RunTask',
          metadata: { name: runTaskName(run, path), namespace: run.metadata.namespace, labels: { [RunLabels.run]: run.metadata.name }, ownerReferences: [ownerRefTo(run)] },
          spec: { run: run.metadata.name, path }, status: rec,
        };
      // a stale cache shows here as a conflict or AlreadyExists: the error requeues the run
      pass.records.set(path, stored ? await client.update<RunTask>(obj) : await client.create<RunTask>(obj));
    }
    for (const [path, stored] of pass.records) {
      if (path in pass.tasks) continue;
      try {
        await client.delete(Kinds.RunTask, { namespace: stored.metadata.namespace, name: stored.metadata.name }, { uid: stored.metadata.uid });
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
      }
      pass.records.delete(path);
    }
  }

  private async finish(pass: Pass, state: 'SUCCEEDED' | 'FAILED' | 'CANCELED', reason: string, message: string, task?: string): Promise<Result> {
    const { status } = pass;
    status.state = state;
    status.startedAt ??= pass.at;
    status.finishedAt = pass.at;
    status.message = message;
    if (task) status.failedTask = task;
    else delete status.failedTask;
    setCondition(status, { type: 'Succeeded', status: state === SUCCEEDED ? 'True' : 'False', reason, message }, pass.at);
    await this.write(pass);
    this.progress.delete(pass.run.metadata.uid);
    await this.writeCache(pass);
    // an ended run's Pods need no staging any more, those it stopped included; a transfer still
    // running (a terminated run's) is stopped, and its staging removed once it has
    this.transfers.cancelRun({ uid: pass.run.metadata.uid });
    if (pass.remote && !pass.launcher) await this.removeStaged(pass, [...pass.staged, ...[...pass.pods.values()].map((pod) => this.podStagingDir(pass, pod))]);
    this.opts.recorder.event(pass.run, state === SUCCEEDED ? 'Normal' : 'Warning', reason, message);
    return {};
  }

  /** spec.terminate: stop every unfinished Pod, cancel unfinished tasks, end the run CANCELED. */
  private async terminate(pass: Pass): Promise<Result> {
    for (const pod of pass.pods.values()) {
      if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' || pod.metadata.deletionTimestamp) continue;
      try {
        await this.opts.client.delete(Kinds.Pod, { namespace: pod.metadata.namespace ?? pass.run.metadata.namespace, name: pod.metadata.name });
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
      }
    }
    for (const rec of Object.values(pass.tasks)) {
      if (isFinal(rec.state)) continue;
      rec.state = CANCELED;
      rec.finishedAt = pass.at;
      rec.message = 'the run was terminated';
      delete rec.retryAt;
      delete rec.transfer;
    }
    return this.finish(pass, CANCELED, 'Terminated', 'the run was terminated');
  }

  /**
   * KFP's RetryRun: a FAILED or CANCELED run goes on from where it stopped. Failed and canceled tasks (and the
   * DAGs holding them) lose their records and run again, as new Pods; succeeded tasks keep theirs.
   */
  private async retry(run: RunObject, generation: number): Promise<void> {
    const status: RunStatus = clone(run.status ?? {});
    status.retryGeneration = generation;
    if ((status.state === FAILED || status.state === CANCELED) && !run.spec.terminate) {
      const tasks = status.tasks ?? {};
      for (const [path, rec] of Object.entries(tasks)) if (!isSettled(rec.state)) delete tasks[path];
      for (const o of this.cache.owned(Kinds.RunTask, run.metadata.uid) as (RunTask & StoredObject)[]) {
        if (isSettled(o.status?.state)) continue;
        try {
          await this.opts.client.delete(Kinds.RunTask, { namespace: o.metadata.namespace, name: o.metadata.name }, { uid: o.metadata.uid });
        } catch (e) {
          if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
        }
      }
      status.state = RUNNING;
      delete status.finishedAt;
      delete status.message;
      delete status.failedTask;
      delete status.outputs;
      const at = now();
      setCondition(status, { type: 'Succeeded', status: 'Unknown', reason: 'Retrying', message: `retry ${generation}: failed tasks run again` }, at);
      await this.opts.client.updateStatus<Run>({ ...run, status });
      this.opts.recorder.event(run, 'Normal', 'Retrying', `retry ${generation}: failed tasks run again`);
      return;
    }
    // nothing to retry (a run that succeeded, or one still terminated): just acknowledge the request
    await this.opts.client.updateStatus<Run>({ ...run, status });
  }

  /** Records every finished Pod's result in its task. */
  private async harvest(pass: Pass): Promise<void> {
    for (const pod of pass.pods.values()) {
      const path = pod.metadata.annotations?.[RunAnnotations.taskPath];
      const phase = pod.status?.phase;
      if (!path || (phase !== 'Succeeded' && phase !== 'Failed')) continue;
      const rec = pass.tasks[path];
      // only the current attempt's Pod counts; an earlier attempt's or generation's is history
      if (!rec || rec.state !== RUNNING || rec.podName !== pod.metadata.name) continue;
      const ei = parseJson<ExecutorInput>(pod.metadata.annotations?.[RunAnnotations.executorInput]);
      const inputs = podInputs(ei);
      if (phase === 'Failed') {
        if (pass.remote && !pass.launcher) pass.staged.push(this.podStagingDir(pass, pod));
        const message = `task ${path} failed: ${exitMessage(pod)}`;
        const policy = parseJson<RetryPolicy>(pod.metadata.annotations?.[RunAnnotations.retryPolicy]);
        const attempt = rec.attempt ?? 0;
        if (policy && attempt < Number(policy.maxRetryCount ?? 0)) {
          const delay = retryDelayMs(policy, attempt);
          const at = Date.parse(pass.at) + delay;
          pass.tasks[path] = { ...rec, state: RUNNING, attempt: attempt + 1, retryAt: new Date(at).toISOString(), message: `attempt ${attempt + 1} failed (${exitMessage(pod)}); retrying` };
          delete pass.tasks[path].podName;
          pass.wakeAt = Math.min(pass.wakeAt ?? Infinity, at);
          this.opts.recorder.event(pass.run, 'Normal', 'TaskRetrying', `task ${path}: attempt ${attempt + 1} of ${Number(policy.maxRetryCount) + 1} failed; retrying in ${Math.round(delay / 1000)}s`);
        } else {
          pass.tasks[path] = { ...rec, state: FAILED, finishedAt: pass.at, inputs, message };
        }
      } else {
        let read: Promise<RunOutputs>;
        if (pass.remote) {
          // the outputs go up to S3 in the background; the task stays RUNNING, its Pod and staging
          // kept, until the pass that finds the upload done
          const t = this.outputsUpload(pass, pod, path, ei ?? ({} as ExecutorInput));
          if (t.state === 'running') {
            pass.tasks[path] = { ...rec, transfer: 'outputs' };
            continue;
          }
          pass.consumed.push(pod.metadata.name);
          if (!pass.launcher) pass.staged.push(this.podStagingDir(pass, pod));
          read = t.state === 'succeeded' ? Promise.resolve(t.value) : Promise.reject(t.error);
        } else read = this.readBack(pass, pod, ei ?? ({} as ExecutorInput));
        try {
          const outputs = await read;
          pass.tasks[path] = { ...settled(rec), state: SUCCEEDED, finishedAt: pass.at, inputs, outputs };
          delete pass.tasks[path].retryAt;
          const fingerprint = pod.metadata.annotations?.[RunAnnotations.fingerprint];
          if (fingerprint) {
            pass.tasks[path].fingerprint = fingerprint;
            pass.cacheWrites.push({
              apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'TaskCache',
              metadata: { name: cacheEntryName(pass.spec.pipelineInfo.name, fingerprint), namespace: pass.run.metadata.namespace },
              spec: { pipelineName: pass.spec.pipelineInfo.name, fingerprint, outputs, run: pass.run.metadata.name, task: path },
            });
          }
        } catch (e) {
          const what = e instanceof OutputUploadError ? e.message : `reading its outputs failed: ${(e as Error).message}`;
          pass.tasks[path] = { ...settled(rec), state: FAILED, finishedAt: pass.at, inputs, message: `task ${path}: ${what}` };
        }
      }
    }
  }

  /** The upload of a succeeded Pod's outputs to the run's S3 root (with the reading of its output files): started unless known. */
  private outputsUpload(pass: Pass, pod: PodObject, path: string, ei: ExecutorInput): TransferOutcome<RunOutputs> {
    const { run } = pass;
    const podName = pod.metadata.name;
    const known = this.transfers.get<RunOutputs>(run.metadata.uid, podName, 'outputs');
    if (known) return known;
    if (pass.launcher) {
      // its node uploaded them before it reported the Pod Succeeded: what is left is reading them
      this.transfers.start({ namespace: run.metadata.namespace, name: run.metadata.name }, run.metadata.uid, podName, 'outputs', (signal) => this.readBack(pass, pod, ei, signal));
      this.opts.recorder.event(run, 'Normal', 'ReadingOutputs', `task ${path}: reading its outputs from ${pass.root}`);
      return { state: 'running' };
    }
    const dir = this.podStagingDir(pass, pod);
    this.transfers.start({ namespace: run.metadata.namespace, name: run.metadata.name }, run.metadata.uid, podName, 'outputs', (signal) => this.readBack(pass, pod, ei, signal), () => this.staging.remove(dir));
    this.opts.recorder.event(run, 'Normal', 'UploadingOutputs', `task ${path}: uploading its output artifacts to ${pass.root}`);
    return { state: 'running' };
  }

  private async readBack(pass: Pass, pod: PodObject, ei: ExecutorInput, signal?: AbortSignal): Promise<RunOutputs> {
    const store = this.opts.artifacts;
    const comp = pass.spec.components?.[pod.metadata.annotations?.[RunAnnotations.component] ?? ''];
    const types: Record<string, ParameterType> = {};
    for (const [n, d] of Object.entries(comp?.outputDefinitions?.parameters ?? {})) types[n] = d.parameterType as ParameterType;
    // an S3 root's task wrote into its staging directory, at the paths it saw under /minio and /s3;
    // a task whose node is its launcher had them uploaded to the URIs those paths stand for
    const fromS3 = pass.launcher ? await this.s3Store(pass) : undefined;
    const staged = pass.remote && !pass.launcher ? this.podStagingDir(pass, pod) : undefined;
    const readText = async (p: string): Promise<string | undefined> => {
      if (fromS3) {
        const uri = uriForLocalPath(p);
        return uri ? (await fromS3.readIfExists(uri))?.toString('utf8') : undefined;
      }
      return staged ? this.staging.read(staged, p) : readIfExists(store, p);
    };
    const files: Record<string, string | undefined> = {};
    for (const [n, p] of Object.entries(ei.outputs.parameters)) files[n] = await readText(p.outputFile);
    const r = readBackOutputs({ executorOutputText: await readText(ei.outputs.outputFile), outputParameterFiles: files, outputParameters: types, outputArtifacts: ei.outputs.artifacts });
    const artifacts: Record<string, RunArtifact[]> = {};
    for (const [n, list] of Object.entries(r.artifacts)) {
      if (fromS3) {
        signal?.throwIfAborted();
        artifacts[n] = list.map(toRunArtifact);
        continue;
      }
      if (staged) {
        // the launcher's uploadOutputArtifacts: from where the component wrote each artifact to its URI
        const remote = await this.s3Store(pass);
        for (const a of list) {
          if (!a.uri || !remote.handles(a.uri)) continue;
          try {
            await this.staging.upload(remote, staged, a.customPath || localPathForUri(a.uri), a.uri, signal);
          } catch (e) {
            if (signal?.aborted) throw e;
            throw new OutputUploadError(`uploading its output artifact ${n} failed: ${(e as Error).message}`);
          }
        }
        artifacts[n] = list.map(toRunArtifact);
        continue;
      }
      for (const a of list) {
        // Artifact.set_path: the launcher uploads from where the component wrote it to the artifact's URI
        if (a.customPath && a.uri && store.handles(a.uri) && (await store.exists(a.customPath)) && !(await store.contains(a.uri, a.customPath))) {
          await store.copy(a.customPath, a.uri);
        }
      }
      artifacts[n] = list.map(toRunArtifact);
    }
    return { parameters: r.parameters, artifacts };
  }

  /** Advances one DAG: 'done' when every task settled, 'failed' when one failed and nothing can move any more. */
  private walk(pass: Pass, comp: ComponentSpec, scope: string[], inputs: RunOutputs): DagResult {
    const tasks = comp.dag?.tasks ?? {};
    let pending = false;
    let failed = false;
    /** tasks that will never run: an upstream failed or never ran, or the DAG is failing */
    const blocked = new Set<string>();
    const at = (t: string): TaskStatus | undefined => pass.tasks[[...scope, t].join('.')];
    for (const name of topologicalOrder(comp.dag ?? {})) {
      const task = tasks[name];
      if (!task) continue;
      const path = [...scope, name].join('.');
      let rec = pass.tasks[path];
      if (isFinal(rec?.state)) {
        if (isFailed(rec?.state)) failed = true;
        continue;
      }
      const completedStrategy = task.triggerPolicy?.strategy === 'ALL_UPSTREAM_TASKS_COMPLETED';
      if (!rec) {
        const ups = upstreamOf(task).filter((u) => u in tasks);
        if (completedStrategy) {
          // exit handlers and ignore_upstream_failure: once every upstream task is final (or never runs)
          if (!ups.every((u) => isFinal(at(u)?.state) || blocked.has(u))) {
            pending = true;
            continue;
          }
        } else {
          if (ups.some((u) => isFailed(at(u)?.state) || blocked.has(u))) {
            blocked.add(name);
            continue;
          }
          if (!ups.every((u) => isSettled(at(u)?.state))) {
            pending = true;
            continue;
          }
          if (failed) {
            // a failed task stops new ones from starting in its DAG
            blocked.add(name);
            continue;
          }
          const skippedUp = ups.find((u) => at(u)?.state === SKIPPED);
          if (skippedUp !== undefined) {
            // dsl.OneOf consumers depend on the branches' parent DAG, which is never skipped itself
            pass.tasks[path] = { state: SKIPPED, startedAt: pass.at, finishedAt: pass.at, message: `upstream task ${skippedUp} was skipped` };
            continue;
          }
        }
      }
      const child = pass.spec.components?.[task.componentRef.name];
      try {
        if (!child) throw new TaskFailure(`task ${path}: component ${task.componentRef.name} not found`);
        if (task.parameterIterator || task.artifactIterator) this.walkLoop(pass, path, task, child, scope, inputs);
        else if (child.dag) this.walkSubDag(pass, path, task, child, scope, inputs);
        else if (!rec || (rec.state === RUNNING && !rec.podName)) this.planTask(pass, path, task, child, scope, inputs);
        else if (rec.podName && !pass.pods.has(rec.podName)) throw new TaskFailure(`task ${path} failed: its pod ${rec.podName} was deleted before it finished`);
      } catch (e) {
        const message = e instanceof TaskFailure ? e.message : `task ${path}: ${(e as Error).message}`;
        pass.tasks[path] = { ...pass.tasks[path], state: FAILED, startedAt: pass.tasks[path]?.startedAt ?? pass.at, finishedAt: pass.at, message };
      }
      rec = pass.tasks[path];
      if (isFailed(rec?.state)) failed = true;
      else if (!isFinal(rec?.state)) pending = true;
    }
    if (pending) return 'pending';
    return failed ? 'failed' : 'done';
  }

  /**
   * A new task's record: its resolved inputs, SKIPPED when its triggerPolicy.condition is false
   * (evaluated once, by the pass that first reaches the task; the record keeps the answer).
   */
  private startTask(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs, provided: string[] = []): TaskStatus {
    const inputs = this.resolveInputs(pass, path, task, comp, scope, outer, provided);
    const condition = task.triggerPolicy?.condition;
    let run = true;
    if (condition) {
      try {
        run = evaluateCondition(condition, inputs);
      } catch (e) {
        throw new TaskFailure(`task ${path}: its condition failed: ${(e as Error).message}`);
      }
    }
    const rec: TaskStatus = run
      ? { state: RUNNING, startedAt: pass.at, inputs }
      : { state: SKIPPED, startedAt: pass.at, finishedAt: pass.at, inputs, message: `condition ${condition ?? ''} is false` };
    pass.tasks[path] = rec;
    return rec;
  }

  private walkSubDag(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs): void {
    const rec = pass.tasks[path] ?? this.startTask(pass, path, task, comp, scope, outer);
    if (rec.state !== RUNNING) return;
    const result = this.walk(pass, comp, path.split('.'), rec.inputs ?? emptyOutputs());
    if (result === 'pending') return;
    rec.finishedAt = pass.at;
    if (result === 'failed') {
      rec.state = FAILED;
      rec.message = firstFailedLeaf(pass.tasks, `${path}.`)?.[1].message ?? `a task in ${path} failed`;
      return;
    }
    rec.outputs = this.dagOutputs(pass, comp, path.split('.'));
    rec.state = SUCCEEDED;
  }

  /**
   * dsl.ParallelFor: the body DAG once per item (parameters, or artifacts with artifactIterator),
   * as `<loop>.<index>` with the item bound to `itemInput`; at most `parallelismLimit` iterations
   * unfinished at once. A failed iteration stops new ones; the loop fails once the rest are done.
   * The loop's outputs collect each iteration's DAG outputs in iteration order (dsl.Collected).
   */
  private walkLoop(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs): void {
    const it = task.parameterIterator ?? task.artifactIterator;
    if (!it || !comp.dag) throw new TaskFailure(`task ${path}: a loop needs an iterator and a DAG body`);
    const rec = pass.tasks[path] ?? this.startTask(pass, path, task, comp, scope, outer, [it.itemInput]);
    if (rec.state !== RUNNING) return;
    const inputs = rec.inputs ?? emptyOutputs();
    const items = task.artifactIterator ? loopArtifacts(path, task.artifactIterator, inputs) : loopItems(path, task.parameterIterator!, inputs);
    const limitRaw = Number(task.iteratorPolicy?.parallelismLimit ?? 0);
    const limit = limitRaw > 0 ? limitRaw : Infinity;
    let running = 0;
    let unfinished = 0;
    let failedAt: string | undefined;
    // the iterations settled before this pass began count for nothing below: the walk starts after them
    let settledBelow = Math.min(pass.progress.settledBelow.get(path) ?? 0, items.length);
    const from = settledBelow;
    for (let i = from; i < items.length; i++) {
      const item = items[i];
      const ipath = `${path}.${i}`;
      let irec = pass.tasks[ipath];
      if (isSettled(irec?.state)) {
        if (settledBelow === i) settledBelow = i + 1;
        continue;
      }
      if (isFailed(irec?.state)) {
        failedAt ??= ipath;
        continue;
      }
      if (!irec) {
        if (running >= limit || failedAt !== undefined) {
          if (failedAt === undefined) unfinished++;
          continue;
        }
        const iterInputs: RunOutputs = task.artifactIterator
          ? { parameters: { ...inputs.parameters }, artifacts: { ...inputs.artifacts, [it.itemInput]: [item as RunArtifact] } }
          : { parameters: { ...inputs.parameters, [it.itemInput]: item }, artifacts: { ...inputs.artifacts } };
        irec = pass.tasks[ipath] = { state: RUNNING, startedAt: pass.at, inputs: iterInputs };
      }
      const result = this.walk(pass, comp, ipath.split('.'), irec.inputs ?? emptyOutputs());
      if (result === 'done') {
        irec.outputs = this.dagOutputs(pass, comp, ipath.split('.'));
        irec.state = SUCCEEDED;
        irec.finishedAt = pass.at;
      } else if (result === 'failed') {
        irec.state = FAILED;
        irec.finishedAt = pass.at;
        irec.message = firstFailedLeaf(pass.tasks, `${ipath}.`)?.[1].message ?? `iteration ${ipath} failed`;
        failedAt ??= ipath;
      } else {
        running++;
        unfinished++;
      }
    }
    pass.progress.settledBelow.set(path, settledBelow);
    if (unfinished > 0) return;
    rec.finishedAt = pass.at;
    if (failedAt !== undefined) {
      rec.state = FAILED;
      rec.message = pass.tasks[failedAt]?.message ?? `iteration ${failedAt} failed`;
      return;
    }
    const out = emptyOutputs();
    const iterations = items.map((_, i) => pass.tasks[`${path}.${i}`]).filter((r): r is TaskStatus => r?.state === SUCCEEDED);
    for (const name of Object.keys(comp.dag.outputs?.parameters ?? {})) {
      out.parameters[name] = iterations.map((r) => r.outputs?.parameters[name]).filter((v) => v !== undefined);
    }
    for (const name of Object.keys(comp.dag.outputs?.artifacts ?? {})) {
      out.artifacts[name] = iterations.flatMap((r) => r.outputs?.artifacts[name] ?? []);
    }
    rec.outputs = out;
    rec.state = SUCCEEDED;
  }

  /** `dag.outputs` selectors → values recorded by the producing subtasks. */
  private dagOutputs(pass: Pass, comp: ComponentSpec, scope: string[]): RunOutputs {
    const out = emptyOutputs();
    const producer = (t: string): TaskStatus | undefined => pass.tasks[[...scope, t].join('.')];
    for (const [name, sel] of Object.entries(comp.dag?.outputs?.parameters ?? {})) {
      const from = sel.valueFromParameter;
      if (from) {
        const p = producer(from.producerSubtask);
        if (p?.state === SKIPPED) continue; // a skipped branch produces nothing
        const v = p?.outputs?.parameters[from.outputParameterKey];
        if (v === undefined) throw new TaskFailure(`dag output ${name}: task ${from.producerSubtask} produced no parameter ${from.outputParameterKey}`);
        out.parameters[name] = v;
      } else if (sel.valueFromOneof) {
        // dsl.OneOf: the value of the first branch that ran
        const sels = sel.valueFromOneof.parameterSelectors;
        const hit = sels.map((s) => producer(s.producerSubtask)?.state === SUCCEEDED ? producer(s.producerSubtask)?.outputs?.parameters[s.outputParameterKey] : undefined).find((v) => v !== undefined);
        if (hit === undefined) throw new TaskFailure(`dag output ${name}: none of the dsl.OneOf branches ${sels.map((s) => s.producerSubtask).join(', ')} produced a value`);
        out.parameters[name] = hit;
      }
    }
    for (const [name, sel] of Object.entries(comp.dag?.outputs?.artifacts ?? {})) {
      const sels = sel.artifactSelectors;
      if (sels.length === 0) continue;
      if (sels.length === 1 && producer(sels[0]?.producerSubtask ?? '')?.state === SKIPPED) continue;
      const list = sels.map((s) => producer(s.producerSubtask)?.state === SUCCEEDED ? producer(s.producerSubtask)?.outputs?.artifacts[s.outputArtifactKey] : undefined).find((l) => l !== undefined);
      if (!list) {
        const s = sels[0];
        throw new TaskFailure(sels.length === 1 && s ? `dag output ${name}: task ${s.producerSubtask} produced no artifact ${s.outputArtifactKey}` : `dag output ${name}: none of the dsl.OneOf branches ${sels.map((x) => x.producerSubtask).join(', ')} produced an artifact`);
      }
      out.artifacts[name] = list;
    }
    return out;
  }

  /** The driver's `resolveInputs`: parameter values and artifacts from the parent scope and upstream tasks. */
  private resolveInputs(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs, provided: string[] = []): RunOutputs {
    const resolved = emptyOutputs();
    const upstream = (t: string): TaskStatus | undefined => pass.tasks[[...scope, t].join('.')];
    // ignore_upstream_failure: a failed producer's outputs are absent, and the input's default applies
    const tolerant = task.triggerPolicy?.strategy === 'ALL_UPSTREAM_TASKS_COMPLETED';
    for (const [name, p] of Object.entries(task.inputs?.parameters ?? {})) {
      let v: unknown;
      if (p.componentInputParameter !== undefined) v = outer.parameters[p.componentInputParameter];
      else if (p.taskOutputParameter) {
        const prod = upstream(p.taskOutputParameter.producerTask);
        v = prod?.outputs?.parameters[p.taskOutputParameter.outputParameterKey];
        if (v === undefined && !(tolerant && prod?.state !== SUCCEEDED)) throw new TaskFailure(`task ${path}: input ${name}: task ${p.taskOutputParameter.producerTask} produced no parameter ${p.taskOutputParameter.outputParameterKey}`);
      } else if (p.runtimeValue) v = p.runtimeValue.constant;
      else if (p.taskFinalStatus) {
        const producer = p.taskFinalStatus.producerTask;
        const prod = upstream(producer);
        v = {
          state: finalStatusState(prod?.state), pipelineJobResourceName: pass.run.metadata.name, pipelineTaskName: producer,
          error: isFailed(prod?.state) ? { code: prod?.state === CANCELED ? 1 : 2, message: prod?.message ?? `task ${producer} failed` } : {},
        };
      }
      if (p.parameterExpressionSelector && v !== undefined && v !== null) {
        try {
          v = selectParameter(p.parameterExpressionSelector, v);
        } catch (e) {
          throw new TaskFailure(`task ${path}: input ${name}: ${(e as Error).message}`);
        }
      }
      if (v !== undefined && v !== null) resolved.parameters[name] = v;
    }
    // f-strings read the task's other inputs, so they resolve once all of those have
    for (const [name, p] of Object.entries(task.inputs?.parameters ?? {})) {
      const v = resolved.parameters[name];
      if (p.runtimeValue && typeof v === 'string') resolved.parameters[name] = resolveFString(v, resolved.parameters);
    }
    for (const [name, a] of Object.entries(task.inputs?.artifacts ?? {})) {
      let list: RunArtifact[] | undefined;
      if (a.componentInputArtifact !== undefined) list = outer.artifacts[a.componentInputArtifact];
      else if (a.taskOutputArtifact) {
        const prod = upstream(a.taskOutputArtifact.producerTask);
        list = prod?.outputs?.artifacts[a.taskOutputArtifact.outputArtifactKey];
        if (!list && !(tolerant && prod?.state !== SUCCEEDED) && prod?.state !== SKIPPED) throw new TaskFailure(`task ${path}: input ${name}: task ${a.taskOutputArtifact.producerTask} produced no artifact ${a.taskOutputArtifact.outputArtifactKey}`);
      }
      if (list) resolved.artifacts[name] = list;
    }
    for (const [name, d] of Object.entries(comp.inputDefinitions?.parameters ?? {})) {
      // a PipelineTaskFinalStatus input nobody feeds (a component compiled as its own pipeline):
      // the state of the run so far
      if (!comp.dag && d.parameterType === 'TASK_FINAL_STATUS' && resolved.parameters[name] === undefined) {
        const failed = firstFailedLeaf(pass.tasks);
        resolved.parameters[name] = {
          state: failed ? 'FAILED' : 'COMPLETE', pipelineJobResourceName: pass.run.metadata.name, pipelineTaskName: pass.spec.pipelineInfo.name,
          error: failed ? { code: 2, message: failed[1].message ?? `task ${failed[0]} failed` } : {},
        };
      }
      // a sub-pipeline's own defaults: its tasks read them through componentInputParameter
      if (comp.dag && resolved.parameters[name] === undefined && d.defaultValue !== undefined && d.defaultValue !== null) resolved.parameters[name] = structuredClone(d.defaultValue);
      if (resolved.parameters[name] === undefined && d.defaultValue === undefined && !d.isOptional && !provided.includes(name)) {
        throw new TaskFailure(`task ${path}: input parameter ${name} has no value and no default`);
      }
    }
    for (const [name, d] of Object.entries(comp.inputDefinitions?.artifacts ?? {})) {
      if (resolved.artifacts[name] === undefined && !d.isOptional && !provided.includes(name) && !comp.dag) {
        throw new TaskFailure(`task ${path}: input artifact ${name} has no value`);
      }
    }
    return resolved;
  }

  /** A leaf task that is ready: a Pod, or work the controller does itself (importer, CreatePVC, DeletePVC). */
  private planTask(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs): void {
    const { run, spec } = pass;
    let rec = pass.tasks[path];
    if (rec?.retryAt) {
      const due = Date.parse(rec.retryAt);
      if (due > Date.parse(pass.at)) {
        pass.wakeAt = Math.min(pass.wakeAt ?? Infinity, due);
        return;
      }
    }
    const attempt = rec?.attempt ?? 0;
    const podName = podNameFor(run, path, pass.generation, attempt);
    if (pass.pods.has(podName)) {
      // created by a pass whose status write was lost: adopt it
      pass.tasks[path] = { ...(rec ?? { startedAt: pass.at }), state: RUNNING, podName };
      delete pass.tasks[path].retryAt;
      delete pass.tasks[path].transfer;
      pass.consumed.push(podName);
      return;
    }
    const exec = spec.deploymentSpec?.executors?.[comp.executorLabel ?? ''];
    if (!rec) {
      rec = this.startTask(pass, path, task, comp, scope, outer);
      if (rec.state !== RUNNING) return;
    }
    const inputs = rec.inputs ?? emptyOutputs();
    if (exec?.importer) {
      let outputs: RunOutputs;
      try {
        outputs = importArtifact(exec.importer, inputs);
      } catch (e) {
        throw new TaskFailure(`task ${path} failed: ${(e as Error).message}`);
      }
      pass.tasks[path] = { ...rec, state: SUCCEEDED, finishedAt: pass.at, outputs, kind: 'importer' };
      return;
    }
    const container = exec?.container;
    if (!container) throw new TaskFailure(`task ${path}: executor ${comp.executorLabel ?? ''} has no container`);
    const special = controllerTaskKind(container);
    if (special) {
      rec.kind = special;
      pass.deferred.push({ path, kind: special, inputs });
      return;
    }
    const executionId = podName.slice(-8);
    const taskRoot = taskRootUri({ pipelineRoot: pass.root, pipelineName: spec.pipelineInfo.name, runId: run.metadata.uid, taskName: path.split('.').join('/'), executionId });
    const parameters: Record<string, InputParameterArg> = {};
    for (const [name, d] of Object.entries(comp.inputDefinitions?.parameters ?? {})) {
      parameters[name] = { value: inputs.parameters[name] as JsonValue | undefined, parameterType: d.parameterType as ParameterType };
    }
    const inputArtifacts: Record<string, InputArtifactArg[]> = {};
    for (const [name, list] of Object.entries(inputs.artifacts)) {
      inputArtifacts[name] = list.map((a) => ({ name: a.name, uri: a.uri, metadata: (a.metadata ?? {}) as Record<string, JsonValue>, schemaTitle: a.type?.['schemaTitle'] as string | undefined, schemaVersion: a.type?.['schemaVersion'] as string | undefined }));
    }
    const outputArtifacts: Record<string, { schemaTitle: string; schemaVersion?: string; metadata?: Record<string, JsonValue> }> = {};
    for (const [name, d] of Object.entries(comp.outputDefinitions?.artifacts ?? {})) {
      outputArtifacts[name] = { schemaTitle: d.artifactType.schemaTitle ?? 'system.Artifact', ...(d.artifactType.schemaVersion ? { schemaVersion: d.artifactType.schemaVersion } : {}), ...(d.metadata ? { metadata: d.metadata as Record<string, JsonValue> } : {}) };
    }
    // a Pod writes files where it sees them: for an S3 root, under its /minio or /s3 (staging.ts), as upstream
    const taskDir = pass.remote ? localPathForUri(taskRoot) : taskRoot;
    const outputParameterFiles: Record<string, string> = {};
    for (const name of Object.keys(comp.outputDefinitions?.parameters ?? {})) outputParameterFiles[name] = `${taskDir}/output_parameters/${name}`;
    const executorInput = buildExecutorInput({ parameters, inputArtifacts, outputArtifacts, outputArtifactUri: taskRoot, outputParameterFiles, executorOutputFile: `${taskDir}/output_metadata.json` });
    const ctx = {
      executorInput, inputDefinitions: comp.inputDefinitions as never, pipelineJobName: run.metadata.name, pipelineJobResourceName: run.metadata.name,
      pipelineJobUuid: run.metadata.uid, pipelineTaskName: path.split('.').pop() ?? path, pipelineTaskUuid: executionId, pipelineRoot: pass.root,
    };
    const command = resolvePlaceholders(container.command ?? [], ctx);
    const args = resolvePlaceholders(container.args ?? [], ctx);
    const env = [...(container.env ?? []).map((e) => ({ name: e.name, value: e.value ?? '' })), { name: 'KFP_POD_NAME', value: podName }, { name: 'KFP_RUN_ID', value: run.metadata.uid }];
    const annotations: Record<string, string> = {
      [RunAnnotations.taskPath]: path, [RunAnnotations.component]: task.componentRef.name, [RunAnnotations.executorInput]: JSON.stringify(executorInput),
      [RunAnnotations.runName]: run.metadata.name, [RunAnnotations.attempt]: String(attempt),
    };
    if (task.retryPolicy && Number(task.retryPolicy.maxRetryCount ?? 0) > 0) annotations[RunAnnotations.retryPolicy] = JSON.stringify(task.retryPolicy);
    let resources: ReturnType<typeof containerResources>;
    try {
      resources = containerResources(container.resources, (v) => resolvePlaceholders([v], ctx)[0] ?? v);
    } catch (e) {
      throw new TaskFailure(`task ${path}: resources: ${(e as Error).message}`);
    }
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: podName, namespace: run.metadata.namespace,
        labels: { [RunLabels.run]: run.metadata.name, [RunLabels.task]: (path.split('.').pop() ?? path).slice(0, 63) },
        annotations,
        ownerReferences: [ownerRefTo(run)],
      },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: container.image, command, args, env, ...(resources ? { resources } : {}) }] },
    } as unknown as PodObject;
    if (pass.launcher) {
      // the folders KFP's executor Pods have for S3 URIs, emptyDirs that the launcher fills and
      // empties (launcher.ts), and what KFP's launcher would be told: on the Pod for its node's
      // agent, or in the Pod's environment for the launcher inside it
      try {
        const plan = launcherPlan(executorInput, pass.root);
        if (this.opts.inPodLauncher) {
          inPodLauncher(pod.spec, plan, this.opts.inPodLauncher);
        } else {
          const { volumes, mounts } = launcherVolumes();
          pod.spec.volumes = volumes;
          (pod.spec.containers[0] as { volumeMounts?: unknown[] }).volumeMounts = mounts;
          annotations[launcherAnnotation] = JSON.stringify(plan);
        }
      } catch (e) {
        throw new TaskFailure(`task ${path}: ${(e as Error).message}`);
      }
    } else if (pass.remote) {
      // the folders KFP's executor Pods have for S3 URIs, backed by this Pod's staging directory
      const { volumes, mounts } = this.staging.podVolumes(this.stagingDir(pass, podName));
      pod.spec.volumes = volumes;
      (pod.spec.containers[0] as { volumeMounts?: unknown[] }).volumeMounts = mounts;
    }
    // kfp-kubernetes: volumes, secrets, config maps, timeouts ... on this task's Pod
    let pvcNames: string[] = [];
    const config = executorConfig(run.spec.platformSpec, comp.executorLabel ?? '');
    if (config !== undefined) {
      const resolve = (ps: unknown, field: string): unknown => this.resolvePlatformParam(pass, path, scope, outer, ps, field);
      try {
        const r = applyKubernetesConfig(pod, config, resolve);
        pvcNames = r.pvcNames;
        if (r.notes.length) pass.notes.set(path, r.notes);
      } catch (e) {
        throw new TaskFailure(`task ${path}: its platform config (${comp.executorLabel ?? ''}): ${(e as Error).message}`);
      }
    }
    if (cachingEnabled(task, run.spec.enableCaching)) {
      const fingerprint = cacheFingerprint({ task, component: comp, container, inputs, pvcNames });
      annotations[RunAnnotations.fingerprint] = fingerprint;
    }
    // the launcher's prepareOutputFolders (an S3 root's are made with its staging, when the Pod is
    // created). kfp's executor makes the folders of everything it writes itself (the executor output,
    // output artifacts, OutputPath parameters), as the task's user: its tasks skip this, and a large
    // loop's start is spared four directories a task on the server's thread
    if (!pass.remote && !runsKfpExecutor(command)) {
      const outputUris = [executorInput.outputs.outputFile, ...Object.values(outputParameterFiles)];
      for (const list of Object.values(executorInput.outputs.artifacts) as ArtifactList[]) for (const a of list.artifacts) outputUris.push(a.uri);
      this.opts.artifacts.prepareOutputs(outputUris);
    }
    pass.toCreate.push(pod);
    pass.tasks[path] = { ...rec, state: RUNNING, podName, attempt: rec.attempt };
    if (pass.tasks[path].attempt === undefined) delete pass.tasks[path].attempt;
    delete pass.tasks[path].retryAt;
    // an S3 root's Pod waits for its inputs: act() marks the record again while they download
    delete pass.tasks[path].transfer;
  }

  /** A parameter spec inside a platform config: a constant, the parent DAG's input, or an upstream task's output. */
  private resolvePlatformParam(pass: Pass, path: string, scope: string[], outer: RunOutputs, ps: unknown, field: string): unknown {
    const p = (ps ?? {}) as { runtimeValue?: { constant?: unknown }; componentInputParameter?: string; taskOutputParameter?: { producerTask: string; outputParameterKey: string }; constant?: unknown };
    if (p.runtimeValue) return p.runtimeValue.constant;
    if (p.componentInputParameter !== undefined) {
      // inside a sub-DAG the parent's inputs are the pipelinechannel names the task was given
      // an optional input that was not given: the entry is skipped (and noted), as the KFP driver does
      return outer.parameters[p.componentInputParameter];
    }
    if (p.taskOutputParameter) {
      const prod = pass.tasks[[...scope, p.taskOutputParameter.producerTask].join('.')];
      const v = prod?.outputs?.parameters[p.taskOutputParameter.outputParameterKey];
      if (v === undefined) throw new Error(`${field}: task ${p.taskOutputParameter.producerTask} produced no parameter ${p.taskOutputParameter.outputParameterKey}`);
      return v;
    }
    if (p.constant !== undefined) return p.constant;
    throw new Error(`${field}: no value (expected runtimeValue, componentInputParameter or taskOutputParameter) for task ${path}`);
  }
}

/** What a Pod consumed, from its executor input: the lineage of its task. */
function podInputs(ei: ExecutorInput | undefined): RunOutputs {
  const out = emptyOutputs();
  if (!ei) return out;
  Object.assign(out.parameters, ei.inputs?.parameterValues ?? {});
  for (const [name, list] of Object.entries(ei.inputs?.artifacts ?? {})) {
    out.artifacts[name] = (list as ArtifactList).artifacts.map((a) => ({ name: a.name ?? name, uri: a.uri ?? '', type: { ...(a.type ?? {}) }, metadata: { ...(a.metadata ?? {}) } }));
  }
  return out;
}

function parseJson<T>(text: string | undefined): T | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The first failed task with no failed task inside it: the one that failed the run. */
function firstFailedLeaf(tasks: Record<string, TaskStatus>, prefix = ''): [string, TaskStatus] | undefined {
  const failed = Object.entries(tasks).filter(([p, r]) => p.startsWith(prefix) && isFailed(r.state));
  const leaves = failed.filter(([p]) => !failed.some(([q]) => q.startsWith(`${p}.`)));
  leaves.sort((a, b) => (a[1].finishedAt ?? '').localeCompare(b[1].finishedAt ?? ''));
  return leaves[0];
}

/** A loop's items: `raw` (a JSON list as a string) or the list in one of the loop task's inputs. */
function loopItems(path: string, it: NonNullable<PipelineTaskSpec['parameterIterator']>, inputs: RunOutputs): unknown[] {
  let items: unknown;
  if (it.items.raw !== undefined) {
    try {
      items = JSON.parse(it.items.raw);
    } catch (e) {
      throw new TaskFailure(`task ${path}: loop items ${JSON.stringify(it.items.raw)} are not JSON: ${(e as Error).message}`);
    }
  } else if (it.items.inputParameter !== undefined) {
    items = inputs.parameters[it.items.inputParameter];
    if (typeof items === 'string') {
      try {
        items = JSON.parse(items);
      } catch {
        // not a JSON list: reported below
      }
    }
  } else throw new TaskFailure(`task ${path}: parameterIterator has neither items.raw nor items.inputParameter`);
  if (!Array.isArray(items)) throw new TaskFailure(`task ${path}: loop items must be a list, got ${JSON.stringify(items)}`);
  return items;
}

/** An artifact loop's items: the artifacts of the loop task's input `items.inputArtifact`. */
function loopArtifacts(path: string, it: NonNullable<PipelineTaskSpec['artifactIterator']>, inputs: RunOutputs): RunArtifact[] {
  const name = it.items.inputArtifact;
  if (name === undefined) throw new TaskFailure(`task ${path}: artifactIterator has no items.inputArtifact`);
  const list = inputs.artifacts[name];
  if (!list) throw new TaskFailure(`task ${path}: loop input artifact ${name} has no value`);
  return list;
}

/** whether a task's command runs kfp's executor (`python3 -m kfp.dsl.executor_main`), as the SDK
 *  compiles every lightweight Python component, with or without its pip bootstrap */
export function runsKfpExecutor(command: string[]): boolean {
  return command.some((c) => /(^|\s)python3?\s+-m\s+kfp\.dsl\.executor_main(\s|$)/.test(c));
}
