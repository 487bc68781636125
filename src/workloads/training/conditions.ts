// The training jobs' condition bookkeeping, with the operator's rules: a condition with the same
// type, status and reason is not added again; Running and Restarting replace each other; Succeeded
// and Failed turn Running to False; once Failed is True nothing changes any more. The condition set
// last is the last in the list (the State column of `kubectl get` shows the last one).
import type { Condition } from '../../api/conditions.js';
import type { TrainingJob, TrainingJobStatus } from './types.js';

export const TrainingConditions = {
  Created: 'Created',
  Running: 'Running',
  Restarting: 'Restarting',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Suspended: 'Suspended',
} as const;

export type TrainingConditionType = (typeof TrainingConditions)[keyof typeof TrainingConditions];

/** `PyTorchJobCreated`, `TFJobRestarting`, ... */
export function reasonFor(kind: string, what: 'Created' | 'Running' | 'Restarting' | 'Succeeded' | 'Failed' | 'Suspended' | 'Resumed'): string {
  return `${kind}${what}`;
}

export function conditionOf(status: TrainingJobStatus | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

export function hasTrue(status: TrainingJobStatus | undefined, type: string): boolean {
  return conditionOf(status, type)?.status === 'True';
}

export function isFinished(job: TrainingJob): boolean {
  return hasTrue(job.status, TrainingConditions.Succeeded) || hasTrue(job.status, TrainingConditions.Failed);
}

/**
 * Sets a condition by the operator's rules; returns true when the list changed. `frozenAfterFailed`
 * is the operator's default (MPIJob v1 keeps its own copy without it).
 */
export function updateCondition(
  status: TrainingJobStatus,
  type: TrainingConditionType,
  value: 'True' | 'False',
  reason: string,
  message: string,
  at: string,
  frozenAfterFailed = true,
): boolean {
  const list = status.conditions ?? [];
  if (frozenAfterFailed && list.some((c) => c.type === TrainingConditions.Failed && c.status === 'True')) return false;
  const current = list.find((c) => c.type === type);
  if (current && current.status === value && current.reason === reason) return false;
  // keep the transition time when only the reason or message changes
  const lastTransitionTime = current && current.status === value ? (current.lastTransitionTime ?? at) : at;
  const next: Condition[] = [];
  for (const c of list) {
    if (c.type === type) continue;
    if (type === TrainingConditions.Restarting && c.type === TrainingConditions.Running) continue;
    if (type === TrainingConditions.Running && c.type === TrainingConditions.Restarting) continue;
    if ((type === TrainingConditions.Failed || type === TrainingConditions.Succeeded) && c.type === TrainingConditions.Running && c.status === 'True') {
      next.push({ ...c, status: 'False', lastUpdateTime: at, lastTransitionTime: at });
      continue;
    }
    if (!frozenAfterFailed && (type === TrainingConditions.Failed || type === TrainingConditions.Succeeded) && c.type === TrainingConditions.Failed && c.status === 'True') {
      next.push({ ...c, status: 'False', lastUpdateTime: at, lastTransitionTime: at });
      continue;
    }
    next.push(c);
  }
  next.push({ type, status: value, reason, message, lastUpdateTime: at, lastTransitionTime });
  status.conditions = next;
  return true;
}
