// The delay before a failed Pod is replaced: base · 2^(failures-1), capped, counted from the last
// failure. Kubernetes keeps the failure record in memory; here it is derived from the Pods every
// time, so a restart neither forgets it nor needs it saved.
import type { Pod } from '../../api/core-types.js';
import { finishedAt, hasTrackingFinalizer, indexFailureCount, indexIgnoredFailureCount } from './pods.js';

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/** ms still to wait after `failures` failures, the last one at `lastFailureMs`; 0 when none */
export function remainingBackoff(failures: number, lastFailureMs: number, nowMs: number, opts: BackoffOptions): number {
  if (failures <= 0) return 0;
  let delay = opts.baseMs;
  for (let i = 1; i < failures; i++) {
    delay *= 2;
    if (delay >= opts.maxMs) {
      delay = opts.maxMs;
      break;
    }
  }
  delay = Math.min(delay, opts.maxMs);
  const elapsed = nowMs - lastFailureMs;
  return elapsed >= delay ? 0 : delay - elapsed;
}

/**
 * Failures since the last success among a Job's finished pods. Pods the controller itself deleted
 * (released first, then deleted: suspend, scale-down) are not failures, as in Kubernetes.
 */
export function failuresAfterLastSuccess(pods: Pod[], isFailed: (p: Pod) => boolean): { count: number; lastFailureMs: number } {
  let lastSuccess = -Infinity;
  const failures: number[] = [];
  for (const p of pods) {
    if (p.status?.phase === 'Succeeded') lastSuccess = Math.max(lastSuccess, finishedAt(p));
    else if (isFailed(p) && !(p.metadata.deletionTimestamp && !hasTrackingFinalizer(p))) failures.push(finishedAt(p));
  }
  const after = failures.filter((t) => t > lastSuccess);
  return { count: after.length, lastFailureMs: after.length ? Math.max(...after) : 0 };
}

/** ms to wait before replacing the last failed pod of one index (backoffLimitPerIndex) */
export function remainingIndexBackoff(lastFailed: Pod | undefined, nowMs: number, opts: BackoffOptions): number {
  if (!lastFailed) return 0;
  const failures = indexFailureCount(lastFailed) + indexIgnoredFailureCount(lastFailed) + 1;
  return remainingBackoff(failures, finishedAt(lastFailed), nowMs, opts);
}
