// A Job's Pods: building one from the template, and the questions the controller asks about one.
import type { Job } from '../../api/batch.js';
import { JobLabels } from '../../api/batch.js';
import type { Container, Pod } from '../../api/core-types.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { clone, ownerRefTo } from '../../api/meta.js';

/** a stored Job, with its status typed (StoredObject's is `any`) */
export interface JobObject extends Job {
  metadata: StoredObject['metadata'];
}
export interface PodObject extends Pod {
  metadata: StoredObject['metadata'];
}

export const JobAnnotations = {
  completionIndex: JobLabels.completionIndex,
  indexFailureCount: 'batch.kubernetes.io/job-index-failure-count',
  indexIgnoredFailureCount: 'batch.kubernetes.io/job-index-ignored-failure-count',
} as const;

export const completionIndexEnv = 'JOB_COMPLETION_INDEX';
/** the longest generateName the API server keeps whole (63 minus the 5 random characters) */
const maxGeneratedNameLength = 58;

export interface PodPlan {
  /** the completion index, for Indexed Jobs */
  index?: number;
  /** per-index failure counts carried over from the pod being replaced (backoffLimitPerIndex) */
  failureCount?: number;
  ignoredFailureCount?: number;
}

/** The Pod the Job controller creates: template + identity labels, owner, tracking finalizer, index. */
export function buildPod(job: JobObject, plan: PodPlan = {}): Pod {
  const tmpl = clone(job.spec.template);
  const labels: Record<string, string> = { ...tmpl.metadata?.labels };
  const annotations: Record<string, string> = { ...tmpl.metadata?.annotations };
  const spec = tmpl.spec;
  const name = job.metadata.name;
  let generateName = `${name}-`;
  if (generateName.length > maxGeneratedNameLength) generateName = generateName.slice(0, maxGeneratedNameLength);
  if (plan.index !== undefined) {
    const ix = String(plan.index);
    annotations[JobAnnotations.completionIndex] = ix;
    labels[JobLabels.completionIndex] = ix;
    spec.hostname = `${name}-${ix}`;
    const suffix = `-${ix}-`;
    generateName = `${name}${suffix}`;
    if (generateName.length > maxGeneratedNameLength) generateName = name.slice(0, maxGeneratedNameLength - suffix.length) + suffix;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) addIndexEnv(c);
    if (plan.failureCount !== undefined) annotations[JobAnnotations.indexFailureCount] = String(plan.failureCount);
    if (plan.ignoredFailureCount) annotations[JobAnnotations.indexIgnoredFailureCount] = String(plan.ignoredFailureCount);
  }
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName,
      namespace: job.metadata.namespace,
      labels,
      annotations,
      ownerReferences: [ownerRefTo(job)],
      finalizers: [JobLabels.trackingFinalizer],
    },
    spec,
  };
  if (Object.keys(annotations).length === 0) delete pod.metadata.annotations;
  return pod;
}

function addIndexEnv(c: Container): void {
  if (c.env?.some((e) => e.name === completionIndexEnv)) return;
  (c.env ??= []).push({ name: completionIndexEnv, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${JobLabels.completionIndex}']` } } });
}

export function completionIndexOf(pod: Pod): number | undefined {
  const v = pod.metadata.annotations?.[JobAnnotations.completionIndex];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

function intAnnotation(pod: Pod, key: string): number {
  const v = pod.metadata.annotations?.[key];
  if (v === undefined || !/^\d+$/.test(v)) return 0;
  const n = Number(v);
  return n > 2147483647 ? 0 : n;
}

export function indexFailureCount(pod: Pod): number {
  return intAnnotation(pod, JobAnnotations.indexFailureCount);
}

export function indexIgnoredFailureCount(pod: Pod): number {
  return intAnnotation(pod, JobAnnotations.indexIgnoredFailureCount);
}

export function hasTrackingFinalizer(pod: KObject): boolean {
  return pod.metadata.finalizers?.includes(JobLabels.trackingFinalizer) ?? false;
}

export function isFinishedPhase(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** not finished and not being deleted */
export function isActive(pod: Pod): boolean {
  return !isFinishedPhase(pod) && !pod.metadata.deletionTimestamp;
}

/** being deleted but its processes are not stopped yet */
export function isTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata.deletionTimestamp) && !isFinishedPhase(pod);
}

export function isReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** When the pod finished, in ms: the last container exit, else Ready=False, deletion, creation. */
export function finishedAt(pod: Pod): number {
  let latest: number | undefined;
  for (const s of pod.status?.containerStatuses ?? []) {
    const t = Date.parse(s.state?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(t) && (latest === undefined || t > latest)) latest = t;
  }
  if (latest !== undefined) return latest;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False');
  for (const s of [ready?.lastTransitionTime, pod.metadata.deletionTimestamp, pod.metadata.creationTimestamp]) {
    const t = Date.parse(s ?? '');
    if (!Number.isNaN(t)) return t;
  }
  return 0;
}

function rank(pod: Pod): number[] {
  const phase = pod.status?.phase === 'Running' ? 2 : pod.status?.phase === 'Pending' ? 1 : 0;
  return [pod.spec?.nodeName ? 1 : 0, phase, isReady(pod) ? 1 : 0];
}

/** Orders active pods the way Kubernetes picks which to delete first: unscheduled < scheduled,
 * pending < running, not ready < ready, then the newest first. */
export function sortForRemoval<T extends Pod>(pods: T[]): T[] {
  return [...pods].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] ?? 0) - (rb[i] ?? 0);
    return Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  });
}
