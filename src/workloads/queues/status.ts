// Writing Kueue's conditions: one condition per type, its lastTransitionTime kept while its status
// stays, as apimachinery's meta.SetStatusCondition does.
import type { Condition } from './engine/index.js';
import { WorkloadConditions as C, WorkloadReasons as R } from '../../api/kueue.js';

export function findCondition(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

export function isTrue(conds: Condition[] | undefined, type: string): boolean {
  return findCondition(conds, type)?.status === 'True';
}

/** sets a condition; returns whether anything changed */
export function setCondition(conds: Condition[], type: string, status: 'True' | 'False', reason: string, message: string, now: string): boolean {
  const old = conds.find((c) => c.type === type);
  if (old && old.status === status && old.reason === reason && old.message === message) return false;
  const next = { type, status, reason, message, lastTransitionTime: old && old.status === status ? old.lastTransitionTime ?? now : now };
  if (old) Object.assign(old, next);
  else conds.push(next);
  return true;
}

interface ReservableStatus {
  conditions?: Condition[];
  admission?: unknown;
}

/**
 * Kueue's workload.UnsetQuotaReservationWithCondition: the admission goes, QuotaReserved turns
 * False with the eviction's message, Admitted False (NoReservation).
 */
export function unsetQuotaReservation(status: ReservableStatus, reason: string, message: string, now: string): void {
  const conds = (status.conditions ??= []);
  setCondition(conds, C.QuotaReserved, 'False', reason, message, now);
  if (findCondition(conds, C.Admitted)) setCondition(conds, C.Admitted, 'False', R.NoReservation, 'The workload has no reservation', now);
  delete status.admission;
}
