// Counting finished Pods exactly once, the way Kubernetes does it with the tracking finalizer:
//   1. record: a finished pod's uid goes into status.uncountedTerminatedPods (Indexed successes go
//      straight into status.completedIndexes, which is idempotent), written with compare-and-swap;
//   2. release: the pod's batch.kubernetes.io/job-tracking finalizer is removed;
//   3. flush: uids whose pods no longer hold the finalizer move from uncounted to the totals.
// A crash between any two steps repeats at most the step it interrupted, and every step is idempotent.
// This file computes the view of a Job's pods and the plans for these steps; it writes nothing.
import type { JobStatus } from '../../api/batch.js';
import type { Pod } from '../../api/core-types.js';
import { clone, controllerOf } from '../../api/meta.js';
import { matchPodFailurePolicy } from './failure-policy.js';
import type { Interval } from './indexes.js';
import { countIndexes, formatIndexes, hasIndex, parseIndexes, withIndexes } from './indexes.js';
import type { JobObject, PodObject } from './pods.js';
import {
  completionIndexOf, finishedAt, hasTrackingFinalizer, indexFailureCount, indexIgnoredFailureCount, isActive, isReady, isTerminating,
} from './pods.js';

/** how many uids status.uncountedTerminatedPods may hold, as in Kubernetes (keeps status small) */
export const maxUncountedPods = 500;

export interface JobView {
  job: JobObject;
  indexed: boolean;
  completions: number | undefined;
  perIndex: boolean;
  /** pods whose controller reference is this Job (by uid) */
  pods: PodObject[];
  active: PodObject[];
  terminating: number;
  ready: number;
  uncounted: { succeeded: Set<string>; failed: Set<string> };
  /** finished pods still holding the finalizer and not yet in uncounted */
  newSucceeded: PodObject[];
  newFailed: PodObject[];
  /** totals including what is not flushed yet (Kubernetes' jobCtx.succeeded / failed) */
  succeeded: number;
  failed: number;
  prevSucceededIndexes: Interval[];
  succeededIndexes: Interval[];
  failedIndexes?: Interval[];
  /** per index, the failed pod kept (with its finalizer) until its replacement exists */
  delayed: Map<number, PodObject>;
}

/** Pods count as failed when Failed, or, unless only failed pods are replaced, when being deleted. */
export function isPodFailed(pod: Pod, job: JobObject): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(job)) return false;
  return Boolean(pod.metadata.deletionTimestamp) && pod.status?.phase !== 'Succeeded';
}

export function onlyReplaceFailedPods(job: JobObject): boolean {
  return job.spec.podReplacementPolicy === 'Failed' || job.spec.podFailurePolicy !== undefined;
}

function validIndex(view: Pick<JobView, 'indexed' | 'completions'>, pod: PodObject): number | undefined {
  const ix = completionIndexOf(pod);
  return ix !== undefined && ix < (view.completions ?? 0) ? ix : undefined;
}

export function ownedBy(job: JobObject, pods: PodObject[]): PodObject[] {
  return pods.filter((p) => controllerOf(p)?.uid === job.metadata.uid);
}

export function buildView(job: JobObject, owned: PodObject[]): JobView {
  const spec = job.spec;
  const status: JobStatus = job.status ?? {};
  const indexed = spec.completionMode === 'Indexed';
  const completions = spec.completions;
  const perIndex = indexed && spec.backoffLimitPerIndex !== undefined;
  const uncounted = {
    succeeded: new Set(status.uncountedTerminatedPods?.succeeded ?? []),
    failed: new Set(status.uncountedTerminatedPods?.failed ?? []),
  };
  const active = owned.filter(isActive);
  const base = { indexed, completions };
  const valid = (p: PodObject): boolean => hasTrackingFinalizer(p) && !uncounted.succeeded.has(p.metadata.uid) && !uncounted.failed.has(p.metadata.uid)
    && (!indexed || validIndex(base, p) !== undefined);
  const newSucceeded = owned.filter((p) => valid(p) && p.status?.phase === 'Succeeded');
  const newFailed = owned.filter((p) => valid(p) && isPodFailed(p, job));
  const counted = newFailed.filter((p) => matchPodFailurePolicy(spec.podFailurePolicy, p).countFailed).length;
  const view: JobView = {
    job, indexed, completions, perIndex, pods: owned, active,
    terminating: owned.filter(isTerminating).length,
    ready: active.filter(isReady).length,
    uncounted, newSucceeded, newFailed,
    succeeded: (status.succeeded ?? 0) + newSucceeded.length + uncounted.succeeded.size,
    failed: (status.failed ?? 0) + counted + uncounted.failed.size,
    prevSucceededIndexes: [],
    succeededIndexes: [],
    delayed: new Map(),
  };
  if (indexed) {
    const n = completions ?? 0;
    view.prevSucceededIndexes = parseIndexes(status.completedIndexes, n);
    const fresh = owned.filter((p) => p.status?.phase === 'Succeeded' && hasTrackingFinalizer(p)).map((p) => validIndex(base, p));
    view.succeededIndexes = withIndexes(view.prevSucceededIndexes, fresh.filter((ix): ix is number => ix !== undefined));
    view.succeeded = countIndexes(view.succeededIndexes);
    if (perIndex) {
      const failedNow = owned.filter((p) => hasTrackingFinalizer(p) && isIndexFailed(job, p)).map((p) => validIndex(base, p));
      view.failedIndexes = withIndexes(parseIndexes(status.failedIndexes, n), failedNow.filter((ix): ix is number => ix !== undefined));
      view.delayed = delayedPerIndex(view);
    }
  }
  return view;
}

/** backoffLimitPerIndex: the pod's index has failed for good (FailIndex, or its failures reached the limit) */
export function isIndexFailed(job: JobObject, pod: PodObject): boolean {
  if (!isPodFailed(pod, job)) return false;
  const m = matchPodFailurePolicy(job.spec.podFailurePolicy, pod);
  if (m.action === 'FailIndex') return true;
  return m.countFailed && indexFailureCount(pod) >= (job.spec.backoffLimitPerIndex ?? 0);
}

/** The failed pod kept per index so its replacement can inherit the index's failure counts. */
function delayedPerIndex(view: JobView): Map<number, PodObject> {
  const activeIdx = new Set(view.active.map(completionIndexOf));
  const out = new Map<number, PodObject>();
  for (const p of view.pods) {
    if (!hasTrackingFinalizer(p) || !isPodFailed(p, view.job)) continue;
    const ix = validIndex(view, p);
    if (ix === undefined || hasIndex(view.succeededIndexes, ix) || hasIndex(view.failedIndexes ?? [], ix) || activeIdx.has(ix)) continue;
    const last = out.get(ix);
    const abs = (q: PodObject): number => indexFailureCount(q) + indexIgnoredFailureCount(q);
    if (!last || (abs(last) <= abs(p) && finishedAt(p) >= finishedAt(last))) out.set(ix, p);
  }
  return out;
}

export type Finishing = 'success' | 'failure' | undefined;

export interface TrackingPlan {
  /** the status to write first, when something new must be recorded; undefined when all is recorded */
  status?: JobStatus;
  /** pods whose finalizer may go now: recorded already, or not counted at all */
  release: PodObject[];
}

/**
 * Steps 1 and 2: what to record and which finalizers may go. `releaseAll` is set while the Job is
 * finishing or being deleted: then every pod's finalizer may go, and (when failing) every pod that
 * did not succeed counts as failed.
 */
export function planTracking(view: JobView, finishing: Finishing, jobDeleting: boolean): TrackingPlan {
  const { job, indexed, uncounted } = view;
  const status: JobStatus = clone(job.status ?? {});
  const addSucceeded: string[] = [];
  const addFailed: string[] = [];
  const release: PodObject[] = [];
  let room = maxUncountedPods - uncounted.succeeded.size - uncounted.failed.size;
  const withFinalizer = view.pods.filter(hasTrackingFinalizer);
  if (indexed) withFinalizer.sort((a, b) => (completionIndexOf(a) ?? -1) - (completionIndexOf(b) ?? -1));
  for (const pod of withFinalizer) {
    if (room <= 0) break;
    const uid = pod.metadata.uid;
    const failedNow = isPodFailed(pod, job);
    if (!(jobDeleting || finishing || pod.status?.phase === 'Succeeded' || (failedNow && !isDelayed(view, pod)))) continue;
    if (uncounted.succeeded.has(uid) || uncounted.failed.has(uid)) {
      release.push(pod);
    } else if (pod.status?.phase === 'Succeeded') {
      const ix = indexed ? validIndex(view, pod) : undefined;
      if (!indexed) {
        addSucceeded.push(uid);
        room--;
      } else if (ix === undefined || hasIndex(view.prevSucceededIndexes, ix)) {
        release.push(pod);
      } else {
        // recorded through status.completedIndexes below
        room--;
      }
    } else if (failedNow || finishing === 'failure') {
      if ((indexed && validIndex(view, pod) === undefined) || !matchPodFailurePolicy(job.spec.podFailurePolicy, pod).countFailed) {
        release.push(pod);
      } else {
        addFailed.push(uid);
        room--;
      }
    } else {
      // still running while the Job finishes or goes away: nothing to count
      release.push(pod);
    }
  }
  let changed = addSucceeded.length > 0 || addFailed.length > 0;
  const u = { succeeded: [...uncounted.succeeded, ...addSucceeded], failed: [...uncounted.failed, ...addFailed] };
  status.uncountedTerminatedPods = compactUncounted(u);
  if (indexed) {
    const completed = formatIndexes(view.succeededIndexes);
    if (completed !== (status.completedIndexes ?? '')) changed = true;
    if (completed) status.completedIndexes = completed;
    else delete status.completedIndexes;
    setCount(status, 'succeeded', countIndexes(view.succeededIndexes));
    if (view.failedIndexes) {
      const failed = formatIndexes(view.failedIndexes);
      if (failed !== status.failedIndexes) changed = true;
      status.failedIndexes = failed;
    }
  }
  return changed ? { status, release: [] } : { release };
}

function isDelayed(view: JobView, pod: PodObject): boolean {
  if (!view.perIndex) return false;
  const ix = completionIndexOf(pod);
  return ix !== undefined && view.delayed.get(ix)?.metadata.uid === pod.metadata.uid;
}

/** counts are left out when 0, as the API server's omitempty does */
function setCount(status: JobStatus, field: 'succeeded' | 'failed', n: number): void {
  if (n) status[field] = n;
  else delete status[field];
}

function compactUncounted(u: { succeeded: string[]; failed: string[] }): NonNullable<JobStatus['uncountedTerminatedPods']> {
  const out: NonNullable<JobStatus['uncountedTerminatedPods']> = {};
  if (u.succeeded.length) out.succeeded = u.succeeded;
  if (u.failed.length) out.failed = u.failed;
  return out;
}

/**
 * Step 3: uids in uncountedTerminatedPods whose pod no longer holds the finalizer (or is gone) move
 * to the totals. Returns the new status, or undefined when nothing moves.
 */
export function planFlush(job: JobObject, owned: PodObject[]): JobStatus | undefined {
  const status: JobStatus = clone(job.status ?? {});
  const holding = new Set(owned.filter(hasTrackingFinalizer).map((p) => p.metadata.uid));
  const succeeded = status.uncountedTerminatedPods?.succeeded ?? [];
  const failed = status.uncountedTerminatedPods?.failed ?? [];
  const keepS = succeeded.filter((uid) => holding.has(uid));
  const keepF = failed.filter((uid) => holding.has(uid));
  if (keepS.length === succeeded.length && keepF.length === failed.length) return undefined;
  setCount(status, 'succeeded', (status.succeeded ?? 0) + succeeded.length - keepS.length);
  setCount(status, 'failed', (status.failed ?? 0) + failed.length - keepF.length);
  status.uncountedTerminatedPods = compactUncounted({ succeeded: keepS, failed: keepF });
  return status;
}
