// What one pass of the training controller works on: the job, its Pods sorted into the rendered
// replicas' slots, and what the rungs (controller.ts) decide from them; plus the pure readings of
// Pods and the status they add up to.
import type { Pod } from '../../api/core-types.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { controllerOf } from '../../api/meta.js';
import type { Rendered, RenderedReplica, ReplicaStatus, ReplicaView, TrainingJob, TrainingJobStatus, TrainingKind } from './types.js';
import { TrainingLabels } from './types.js';

export type PodObject = Pod & StoredObject;

/** One replica as this pass sees it. */
export interface Slot {
  replica: RenderedReplica;
  name: string;
  pod?: PodObject;
  /** a Pod of that name that is not ours (another owner): nothing is created over it */
  foreign?: StoredObject;
  /** a Pod of that name with no owner: the job adopts it */
  adoptable?: StoredObject;
}

export interface Pass {
  job: TrainingJob & StoredObject;
  kind: TrainingKind;
  now: Date;
  at: string;
  status: TrainingJobStatus;
  /** the job's own Pods */
  pods: PodObject[];
  wakes: number[];
  /** changes made after the status is written */
  after: (() => Promise<void>)[];
  events: [type: 'Normal' | 'Warning', reason: string, message: string][];
}

/** What the rungs of a job that has not finished share: the job as rendered, its Pods in slots. */
export interface Active extends Pass {
  rendered: Rendered;
  /** the job's Pods not being deleted */
  live: PodObject[];
  slots: Slot[];
  /** the names of the Pods the job renders */
  wanted: Set<string>;
  views: ReplicaView[];
  /** uids of failed Pods already counted as restarts */
  counted: Set<string>;
  /** restarts so far: counted ones and those the live Pods' containers had */
  restarts: number;
  /** replica types being replaced in this pass, with how many */
  restarting: Map<string, number>;
  /** failed replicas' types the kind judges itself once this pass's restarts are known */
  judged: string[];
  limitReached(restarts: number): boolean;
}

/** a rung returns true when it decided the pass (the pass ends there) */
export type Rung = (a: Active) => boolean | Promise<boolean>;

/** Sorts the job's Pods (and Pods of its names that are not its own) into the rendered replicas' slots. */
export function observe(pass: Pass, all: PodObject[], rendered: Rendered): Active {
  const { job, status } = pass;
  const live = pass.pods.filter((p) => !p.metadata.deletionTimestamp);
  const byName = new Map(pass.pods.map((p) => [p.metadata.name, p]));
  const others = new Map(all.filter((p) => controllerOf(p)?.uid !== job.metadata.uid).map((p) => [p.metadata.name, p]));
  const slots: Slot[] = rendered.replicas.map((replica) => {
    const podName = replica.pod.metadata.name ?? '';
    const slot: Slot = { replica, name: podName, pod: byName.get(podName) };
    const other = others.get(podName);
    if (!slot.pod && other) {
      if (!controllerOf(other) && !other.metadata.deletionTimestamp) slot.adoptable = other;
      else slot.foreign = other;
    }
    return slot;
  });
  const counted = new Set(status.countedFailures ?? []);
  // the mpi-operator's launcher is a batch/v1 Job, whose backoffLimit defaults to 6
  const limit = job.spec.runPolicy?.backoffLimit ?? (isMpiV2(job) ? 6 : undefined);
  return {
    ...pass, rendered, live, slots, wanted: new Set(slots.map((s) => s.name)), views: buildViews(pass.kind, slots),
    counted, restarts: (status.restarts ?? 0) + liveRestarts(slots, counted), restarting: new Map(), judged: [],
    limitReached: (n) => limit !== undefined && n >= Math.max(1, limit),
  };
}

export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

export function keyOf(obj: KObject): ObjectKey {
  return obj.metadata.namespace ? { namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' } : { name: obj.metadata.name ?? '' };
}

export function isTerminal(p: Pod): boolean {
  return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
}

export function isMpiV2(job: TrainingJob): boolean {
  return job.kind === 'MPIJob' && job.apiVersion === 'kubeflow.org/v2beta1';
}

export function managedHere(job: TrainingJob): boolean {
  const by = job.spec.runPolicy?.managedBy;
  if (by === undefined || by === '') return true;
  return by === (isMpiV2(job) ? 'kubeflow.org/mpi-operator' : 'kubeflow.org/training-operator');
}

/** the gang's size: schedulingPolicy.minAvailable, else every replica */
export function minAvailable(job: TrainingJob, total: number): number {
  const m = job.spec.runPolicy?.schedulingPolicy?.minAvailable;
  return m !== undefined && m > 0 ? Math.min(m, total) : total;
}

/** the exit code of the kind's default container (containers[0] when none has that name); 0xbeef when unknown */
export function exitCodeOf(pod: Pod, defaultContainer: string): number {
  const statuses = pod.status?.containerStatuses ?? [];
  const s = statuses.find((c) => c.name === defaultContainer) ?? (pod.spec.containers.some((c) => c.name === defaultContainer) ? undefined : statuses.find((c) => c.name === pod.spec.containers[0]?.name));
  return s?.state.terminated?.exitCode ?? s?.lastState.terminated?.exitCode ?? 0xbeef;
}

/**
 * What a failed replica's program said last: from a container that ended in error, the termination
 * message's line that names the error (a Python exception's `Type: message`), else its last line.
 * Training Pods keep their log's tail there (terminationMessagePolicy FallbackToLogsOnError).
 */
export function programErrorOf(pod: Pod): string | undefined {
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    for (const t of [s.state?.terminated, s.lastState?.terminated]) {
      if (!t || t.exitCode === 0 || t.reason === 'StartError' || !t.message) continue;
      const lines = t.message.split('\n').map((l) => l.trim()).filter(Boolean);
      const line = [...lines].reverse().find((l) => errorLine.test(l)) ?? lines.at(-1);
      if (line) return line.length > maxErrorLine ? `${line.slice(0, maxErrorLine)}…` : line;
    }
  }
  return undefined;
}

/** `RuntimeError: ...`, `paddle.base.core.EnforceNotMet: ...`, `KeyboardInterrupt`, `Error: ...` */
const errorLine = /^[A-Za-z_][\w.]*(Error|Exception|Exit|NotMet|Interrupt)\b(:|$)/;
const maxErrorLine = 512;

/** a container that could not start at all (no such command): retrying cannot help */
export function startErrorOf(pod: Pod): string | undefined {
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    for (const t of [s.state?.terminated, s.lastState?.terminated]) {
      if (t?.reason === 'StartError') return `container ${s.name}: ${t.message ?? 'StartError'}`;
    }
  }
  return undefined;
}

/**
 * A failed container's own words: the last line of its termination message (what it wrote to its
 * termination-message file, or with `terminationMessagePolicy: FallbackToLogsOnError` the end of its
 * log, where a Python traceback ends with the exception). Undefined when no container left one: the
 * operator's message then stands alone, as upstream.
 */
export function lastWordsOf(pod: Pod): string | undefined {
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    for (const t of [s.state?.terminated, s.lastState?.terminated]) {
      if (!t || t.exitCode === 0 || !t.message) continue;
      const line = t.message.split('\n').map((l) => l.trim()).filter(Boolean).at(-1);
      if (line) return `${pod.metadata.name} (container ${s.name}, exit code ${t.exitCode}): ${line}`;
    }
  }
  return undefined;
}

export function podRestarts(pod: Pod): number {
  let n = 0;
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) n += s.restartCount ?? 0;
  return n;
}

/** container restarts of the Pods the kubelet restarts in place, not counted yet */
export function liveRestarts(slots: Slot[], counted: Set<string>): number {
  let n = 0;
  for (const s of slots) {
    if (!s.pod || s.pod.metadata.deletionTimestamp || counted.has(s.pod.metadata.uid)) continue;
    if (s.replica.restartPolicy === 'Never') continue;
    n += podRestarts(s.pod);
  }
  return n;
}

export function buildViews(kind: TrainingKind, slots: Slot[]): ReplicaView[] {
  const views = new Map<string, ReplicaView>();
  for (const s of slots) {
    const { type, restartPolicy } = s.replica;
    let v = views.get(type);
    if (!v) {
      v = { type, replicas: 0, restartPolicy, active: 0, succeeded: 0, failed: 0, pods: [] };
      views.set(type, v);
    }
    v.replicas++;
    const pod = s.pod && !s.pod.metadata.deletionTimestamp ? s.pod : undefined;
    const phase = pod?.status?.phase;
    if (phase === 'Running') v.active++;
    else if (phase === 'Succeeded') v.succeeded++;
    else if (phase === 'Failed') v.failed++;
    if (pod) {
      const entry: ReplicaView['pods'][number] = { index: s.replica.index };
      if (phase) entry.phase = phase;
      if (isTerminal(pod)) entry.exitCode = exitCodeOf(pod, kind.defaultContainer);
      const reason = pod.status?.reason ?? pod.status?.containerStatuses?.find((c: { state: { terminated?: unknown } }) => c.state.terminated)?.state.terminated?.reason;
      if (reason) entry.reason = reason;
      v.pods.push(entry);
    }
  }
  return [...views.values()];
}

export function replicaStatuses(kind: TrainingKind, replicas: RenderedReplica[], pods: Pod[]): Record<string, ReplicaStatus> {
  const out: Record<string, ReplicaStatus> = {};
  const typeOfPod = new Map(replicas.map((r) => [r.pod.metadata.name ?? '', r.type]));
  for (const r of replicas) {
    if (out[r.type]) continue;
    const labels = r.pod.metadata.labels ?? {};
    // by replica type; by role where the kind labels no type (MPIJob v2beta1)
    const keys = labels[TrainingLabels.replicaType] !== undefined ? [TrainingLabels.replicaType] : [TrainingLabels.jobRole];
    const sel = [TrainingLabels.jobName, TrainingLabels.operatorName, ...keys]
      .filter((k) => labels[k] !== undefined)
      .map((k) => `${k}=${labels[k]}`);
    out[r.type] = { selector: sel.length ? sel.join(',') : `${TrainingLabels.operatorName}=${kind.controllerName}` };
  }
  for (const p of pods) {
    const type = typeOfPod.get(p.metadata.name ?? '');
    const rs = type ? out[type] : undefined;
    if (!rs || p.metadata.deletionTimestamp) continue;
    const phase = p.status?.phase;
    if (phase === 'Running') rs.active = (rs.active ?? 0) + 1;
    else if (phase === 'Succeeded') rs.succeeded = (rs.succeeded ?? 0) + 1;
    else if (phase === 'Failed') rs.failed = (rs.failed ?? 0) + 1;
  }
  return out;
}
