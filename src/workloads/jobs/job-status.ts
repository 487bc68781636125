// A Job's conditions and the question "should it finish now, and how?", as Kubernetes 1.31+ answers
// it: an interim condition (SuccessCriteriaMet / FailureTarget) first, the terminal one
// (Complete / Failed) only once no pod is left terminating or uncounted.
import type { JobStatus } from '../../api/batch.js';
import type { Condition } from '../../api/conditions.js';
import { findCondition, isTrue, setCondition } from '../../api/conditions.js';
import { matchPodFailurePolicy } from './failure-policy.js';
import { countIndexes } from './indexes.js';
import type { JobObject, PodObject } from './pods.js';
import { hasTrackingFinalizer } from './pods.js';
import type { Finishing, JobView } from './tracking.js';
import { isPodFailed } from './tracking.js';

export const JobConditionTypes = {
  Complete: 'Complete',
  Failed: 'Failed',
  FailureTarget: 'FailureTarget',
  SuccessCriteriaMet: 'SuccessCriteriaMet',
  Suspended: 'Suspended',
} as const;

export const JobReasons = {
  BackoffLimitExceeded: 'BackoffLimitExceeded',
  DeadlineExceeded: 'DeadlineExceeded',
  PodFailurePolicy: 'PodFailurePolicy',
  MaxFailedIndexesExceeded: 'MaxFailedIndexesExceeded',
  FailedIndexes: 'FailedIndexes',
  CompletionsReached: 'CompletionsReached',
  JobSuspended: 'JobSuspended',
  JobResumed: 'JobResumed',
} as const;

export const JobMessages = {
  BackoffLimitExceeded: 'Job has reached the specified backoff limit',
  DeadlineExceeded: 'Job was active longer than specified deadline',
  MaxFailedIndexesExceeded: 'Job has exceeded the specified maximal number of failed indexes',
  FailedIndexes: 'Job has failed indexes',
  CompletionsReached: 'Reached expected number of succeeded pods',
} as const;

/** RFC 3339 to the second, as the API server stores times */
export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Complete=True or Failed=True */
export function terminalCondition(job: JobObject): Condition | undefined {
  const conds = job.status?.conditions;
  return [JobConditionTypes.Complete, JobConditionTypes.Failed].map((t) => findCondition(conds, t)).find((c) => c?.status === 'True');
}

/** The interim condition already recorded, and so how the Job is finishing. */
export function interimCondition(job: JobObject): { finishing: NonNullable<Finishing>; cond: Condition } | undefined {
  const conds = job.status?.conditions;
  const success = findCondition(conds, JobConditionTypes.SuccessCriteriaMet);
  if (success?.status === 'True') return { finishing: 'success', cond: success };
  const failure = findCondition(conds, JobConditionTypes.FailureTarget);
  if (failure?.status === 'True') return { finishing: 'failure', cond: failure };
  return undefined;
}

export function isSuspended(job: JobObject): boolean {
  return job.spec.suspend === true;
}

export function wasSuspended(job: JobObject): boolean {
  return isTrue(job.status?.conditions, JobConditionTypes.Suspended);
}

/** Sets a condition as Kubernetes' ensureJobConditionStatus does: a False condition is never added. */
export function ensureCondition(status: JobStatus, type: string, st: 'True' | 'False', reason: string, message: string, at: string): boolean {
  if (st === 'False' && !findCondition(status.conditions, type)) return false;
  const changed = setCondition(status, { type, status: st, reason, message }, at);
  const c = findCondition(status.conditions, type);
  if (changed && c) c.lastProbeTime = at;
  return changed;
}

export interface FinishVerdict {
  /** the interim condition to record now */
  cond?: { type: string; reason: string; message: string };
  /** ms until activeDeadlineSeconds runs out */
  wakeAfterMs?: number;
}

/** Should a Job that has no interim condition yet start finishing? (the order is Kubernetes') */
export function evaluateFinish(view: JobView, nowMs: number): FinishVerdict {
  const { job } = view;
  const spec = job.spec;
  const out: FinishVerdict = {};
  const failure = (reason: keyof typeof JobMessages): FinishVerdict['cond'] => ({ type: JobConditionTypes.FailureTarget, reason, message: JobMessages[reason] });
  const failJob = failJobMessage(job, view.pods);
  if (failJob) return { cond: { type: JobConditionTypes.FailureTarget, reason: JobReasons.PodFailurePolicy, message: failJob } };
  if (view.failed > (spec.backoffLimit ?? 6) || pastBackoffLimitOnFailure(job, view.pods)) return { cond: failure('BackoffLimitExceeded') };
  const deadline = deadlineRemainingMs(job, nowMs);
  if (deadline !== undefined && deadline <= 0) return { cond: failure('DeadlineExceeded') };
  if (deadline !== undefined) out.wakeAfterMs = deadline;
  if (view.perIndex && view.failedIndexes) {
    const failedIx = countIndexes(view.failedIndexes);
    if (spec.maxFailedIndexes !== undefined && failedIx > spec.maxFailedIndexes) return { ...out, cond: failure('MaxFailedIndexesExceeded') };
    if (failedIx > 0 && failedIx + countIndexes(view.succeededIndexes) >= (spec.completions ?? 0)) return { ...out, cond: failure('FailedIndexes') };
  }
  const active = view.active.length;
  const done = spec.completions === undefined ? view.succeeded > 0 && active === 0 : view.succeeded >= spec.completions && active === 0;
  if (done) out.cond = { type: JobConditionTypes.SuccessCriteriaMet, reason: JobReasons.CompletionsReached, message: JobMessages.CompletionsReached };
  return out;
}

/**
 * The message of the first FailJob rule a failed pod matches. Only pods not yet accounted for (still
 * holding the finalizer) are looked at: a counted pod was looked at before it was let go, and a pod
 * the controller deleted itself (suspend, scale-down) is no failure of the workload.
 */
function failJobMessage(job: JobObject, pods: PodObject[]): string | undefined {
  if (!job.spec.podFailurePolicy) return undefined;
  for (const p of pods) {
    if (!hasTrackingFinalizer(p) || !isPodFailed(p, job)) continue;
    const m = matchPodFailurePolicy(job.spec.podFailurePolicy, p);
    if (m.message) return m.message;
  }
  return undefined;
}

/** restartPolicy OnFailure: restarts of running containers count against backoffLimit */
function pastBackoffLimitOnFailure(job: JobObject, pods: PodObject[]): boolean {
  if (job.spec.template.spec.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    for (const s of [...(p.status.initContainerStatuses ?? []), ...(p.status.containerStatuses ?? [])]) restarts += s.restartCount ?? 0;
  }
  const limit = job.spec.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/** ms left before activeDeadlineSeconds, counted from status.startTime; undefined when not running against one */
export function deadlineRemainingMs(job: JobObject, nowMs: number): number | undefined {
  const ads = job.spec.activeDeadlineSeconds;
  const start = Date.parse(job.status?.startTime ?? '');
  if (ads === undefined || Number.isNaN(start) || isSuspended(job)) return undefined;
  return ads * 1000 - (nowMs - start);
}
