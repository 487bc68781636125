// Status conditions, changed only through these helpers so lastTransitionTime stays honest.
import { now } from './meta.js';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string;
  lastUpdateTime?: string;
  observedGeneration?: number;
}

export function findCondition(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

export function isTrue(conds: Condition[] | undefined, type: string): boolean {
  return findCondition(conds, type)?.status === 'True';
}

/** Sets a condition on `status.conditions`; returns true when something changed. */
export function setCondition(status: { conditions?: Condition[] }, cond: Condition, at = now()): boolean {
  const list = (status.conditions ??= []);
  const message = cond.message && cond.message.length > 32768 ? cond.message.slice(0, 32765) + '...' : cond.message;
  const existing = list.find((c) => c.type === cond.type);
  if (!existing) {
    list.push({ ...cond, message, lastTransitionTime: cond.lastTransitionTime ?? at });
    return true;
  }
  let changed = false;
  if (existing.status !== cond.status) {
    existing.status = cond.status;
    existing.lastTransitionTime = cond.lastTransitionTime ?? at;
    changed = true;
  }
  for (const f of ['reason', 'message', 'observedGeneration'] as const) {
    const v = f === 'message' ? message : cond[f];
    if (v !== undefined && existing[f] !== v) {
      (existing as any)[f] = v;
      changed = true;
    }
  }
  return changed;
}

export function removeCondition(status: { conditions?: Condition[] }, type: string): boolean {
  const before = status.conditions?.length ?? 0;
  status.conditions = status.conditions?.filter((c) => c.type !== type);
  return (status.conditions?.length ?? 0) !== before;
}
