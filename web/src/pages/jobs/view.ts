// What a Job's pages show, from the Job and its Pods: progress, the Pods in index order, and where
// the Job stands against its failure budget (backoffLimit, per-index limits, the pod failure policy).
import type { Job, Pod, PodFailurePolicyRule } from '../../api/workload-types';
import { between } from '../../components/time';

const INDEX = 'batch.kubernetes.io/job-completion-index';
const UID = 'batch.kubernetes.io/controller-uid';
const LEGACY_UID = 'controller-uid';

export function jobState(job: Job): string {
  const conds = job.status?.conditions ?? [];
  const on = (t: string): boolean => conds.some((c) => c.type === t && c.status === 'True');
  if (on('Failed')) return 'Failed';
  if (on('Complete')) return 'Complete';
  if (on('FailureTarget')) return 'Failing';
  if (on('SuccessCriteriaMet')) return 'Completing';
  if (job.spec?.suspend || on('Suspended')) return 'Suspended';
  if ((job.status?.active ?? 0) > 0) return 'Running';
  return 'Pending';
}

/** "3/4": succeeded of the completions wanted; a Job without completions is done at its first success */
export function completions(job: Job): string {
  const want = job.spec?.completions;
  return `${job.status?.succeeded ?? 0}/${want ?? 1}`;
}

export function duration(job: Job, now = Date.now()): string {
  return job.status?.startTime ? between(job.status.startTime, job.status.completionTime, now) : '—';
}

/** the Job's Pods (by its controller uid), by completion index, then oldest first */
export function jobPods(job: Job, pods: Pod[]): Pod[] {
  const uid = job.metadata?.uid;
  const mine = pods.filter((p) => {
    const l = p.metadata?.labels ?? {};
    return (uid && (l[UID] === uid || l[LEGACY_UID] === uid)) || p.metadata?.ownerReferences?.some((r) => r.uid === uid);
  });
  const idx = (p: Pod): number => Number(p.metadata?.labels?.[INDEX] ?? Number.MAX_SAFE_INTEGER);
  return mine.sort((a, b) => idx(a) - idx(b) || (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? ''));
}

export function podIndex(p: Pod): string | undefined {
  return p.metadata?.labels?.[INDEX];
}

export function ruleText(r: PodFailurePolicyRule): string {
  const parts: string[] = [];
  if (r.onExitCodes) parts.push(`exit code ${r.onExitCodes.operator === 'In' ? 'in' : 'not in'} [${r.onExitCodes.values.join(', ')}]${r.onExitCodes.containerName ? ` (container ${r.onExitCodes.containerName})` : ''}`);
  for (const c of r.onPodConditions ?? []) parts.push(`Pod condition ${c.type}=${c.status ?? 'True'}`);
  const what: Record<string, string> = { FailJob: 'fail the Job', FailIndex: 'fail the index', Ignore: 'ignore (not counted)', Count: 'count toward backoffLimit' };
  return `${parts.join(' or ') || 'any failure'} → ${what[r.action] ?? r.action}`;
}

export interface Budget {
  /** "1 of 6": failures counted of backoffLimit */
  text: string;
  /** failures reached the limit */
  exhausted: boolean;
  perIndex?: string;
  failedIndexes?: string;
  completedIndexes?: string;
  rules: string[];
}

export function failureBudget(job: Job): Budget {
  const limit = job.spec?.backoffLimit ?? 6;
  const failed = job.status?.failed ?? 0;
  return {
    text: `${failed} of ${limit}`,
    exhausted: failed > limit,
    ...(job.spec?.backoffLimitPerIndex !== undefined ? { perIndex: `${job.spec.backoffLimitPerIndex} per index${job.spec.maxFailedIndexes !== undefined ? `, at most ${job.spec.maxFailedIndexes} failed indexes` : ''}` } : {}),
    ...(job.status?.failedIndexes ? { failedIndexes: job.status.failedIndexes } : {}),
    ...(job.status?.completedIndexes ? { completedIndexes: job.status.completedIndexes } : {}),
    rules: (job.spec?.podFailurePolicy?.rules ?? []).map(ruleText),
  };
}
