// The "manage" rung (Kubernetes' manageJob): delete surplus pods, or create the missing ones —
// never both in one pass, deletions first — after the failure backoff has passed.
import { failuresAfterLastSuccess, remainingBackoff, remainingIndexBackoff } from './backoff.js';
import type { BackoffOptions } from './backoff.js';
import type { JobActions } from './actions.js';
import { maxPodChangesPerSync } from './actions.js';
import type { Pass } from './pass.js';
import { firstPendingIndexes, mergeIndexes, withIndexes } from './indexes.js';
import type { PodObject, PodPlan } from './pods.js';
import { completionIndexOf, indexFailureCount, indexIgnoredFailureCount, isTerminating, sortForRemoval } from './pods.js';
import { matchPodFailurePolicy } from './failure-policy.js';
import type { JobView } from './tracking.js';
import { isPodFailed, onlyReplaceFailedPods } from './tracking.js';

export async function manageRung(pass: Pass, actions: JobActions, backoff: BackoffOptions): Promise<boolean> {
  const { job, view } = pass;
  const spec = job.spec;
  // a suspended Job's pods are deleted by the suspend rung, and none are created
  if (spec.suspend) return false;
  const parallelism = spec.parallelism ?? 1;
  const active = view.active.length;
  let want: number;
  if (spec.completions === undefined) want = view.succeeded > 0 ? active : parallelism;
  else want = Math.max(0, Math.min(spec.completions - view.succeeded, parallelism));

  const surplus = podsForRemoval(view, Math.max(0, active - want));
  if (surplus.length) {
    await actions.deletePods(job, surplus, true);
    return true;
  }

  const terminating = onlyReplaceFailedPods(job) ? view.terminating : 0;
  let diff = Math.min(want - terminating - active, maxPodChangesPerSync);
  if (diff <= 0) return false;
  const nowMs = pass.now.getTime();
  if (!view.perIndex) {
    const f = failuresAfterLastSuccess(view.pods, (p) => isPodFailed(p, job));
    const wait = remainingBackoff(f.count, f.lastFailureMs, nowMs, backoff);
    if (wait > 0) {
      pass.wakes.push(wait);
      return false;
    }
  }
  let plans: PodPlan[] = [];
  if (!view.indexed) {
    plans = Array.from({ length: diff }, () => ({}));
  } else {
    let taken = withIndexes(view.succeededIndexes, indexesOf(view.active));
    if (onlyReplaceFailedPods(job)) taken = withIndexes(taken, indexesOf(view.pods.filter(isTerminating)));
    if (view.failedIndexes) taken = mergeIndexes(taken, view.failedIndexes);
    const pending = firstPendingIndexes(taken, diff, spec.completions ?? 0);
    if (!view.perIndex) {
      plans = pending.map((index) => ({ index }));
    } else {
      // each index waits out its own backoff; the replacement inherits the index's failure counts
      const waits: number[] = [];
      for (const index of pending) {
        const last = view.delayed.get(index);
        const wait = remainingIndexBackoff(last, nowMs, backoff);
        if (wait > 0) waits.push(wait);
        else plans.push({ index, ...inheritedCounts(view, last) });
      }
      if (!plans.length && waits.length) pass.wakes.push(Math.min(...waits));
    }
    diff = plans.length;
  }
  if (diff <= 0) return false;
  await actions.createPods(job, plans);
  return true;
}

function indexesOf(pods: PodObject[]): number[] {
  return pods.map(completionIndexOf).filter((ix): ix is number => ix !== undefined);
}

function inheritedCounts(view: JobView, replaced: PodObject | undefined): Pick<PodPlan, 'failureCount' | 'ignoredFailureCount'> {
  if (!replaced) return { failureCount: 0 };
  let failureCount = indexFailureCount(replaced);
  let ignoredFailureCount = indexIgnoredFailureCount(replaced);
  if (matchPodFailurePolicy(view.job.spec.podFailurePolicy, replaced).countFailed) failureCount++;
  else ignoredFailureCount++;
  return { failureCount, ignoredFailureCount };
}

/**
 * Active pods to delete: for Indexed Jobs first those with no valid index, beyond completions, or
 * repeating an index (keeping the most advanced of each), then the least advanced until `atLeast`.
 */
function podsForRemoval(view: JobView, atLeast: number): PodObject[] {
  const rm: PodObject[] = [];
  let left: PodObject[] = view.active;
  if (view.indexed) {
    left = [];
    const byIndex = new Map<number, PodObject[]>();
    for (const p of view.active) {
      const ix = completionIndexOf(p);
      if (ix === undefined || ix >= (view.completions ?? 0)) rm.push(p);
      else byIndex.set(ix, [...(byIndex.get(ix) ?? []), p]);
    }
    for (const group of byIndex.values()) {
      const sorted = sortForRemoval(group);
      rm.push(...sorted.slice(0, -1));
      left.push(...sorted.slice(-1));
    }
  }
  if (rm.length < atLeast) rm.push(...sortForRemoval(left).slice(0, atLeast - rm.length));
  return rm;
}
