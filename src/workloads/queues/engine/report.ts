// What a scheduling call reports besides its decisions: for every pending workload its reason in
// Kueue's words and its positions as the visibility API gives them, and the status numbers Kueue's
// ClusterQueue, LocalQueue and Cohort controllers write.
import { drsOf, reportedShare, type CohortNode, type FRAmounts, type FlavorResources } from './hierarchy.js';
import { formatAmount } from './quantities.js';
import { queueBefore } from './pending-queue.js';
import type { ClusterQueueState, Wl } from './state.js';
import type {
  AdmissionDecision,
  ClusterQueueStatus,
  Condition,
  CycleResult,
  EvictionDecision,
  FlavorUsageStatus,
  LocalQueueLike,
  LocalQueueStatus,
  PendingPosition,
  PendingReasonCode,
  PendingWorkload,
  PreemptionDecision,
} from './types.js';
import { QuotaReserved, findCondition } from './workload-info.js';

export interface ReportInput {
  wls: Iterable<Wl>;
  /** report only these pending workloads, without positions or LocalQueue statuses */
  only?: Set<Wl> | undefined;
  cqs: ClusterQueueState[];
  cohorts: Map<string, CohortNode>;
  lqs: Map<string, LocalQueueLike>;
  frs: FlavorResources;
  fairSharing: boolean;
  admissions: AdmissionDecision[];
  preemptions: PreemptionDecision[];
  evictions: EvictionDecision[];
  cycles: number;
}

/** reasons the scheduler writes and the workload controller leaves alone until the next look */
const schedulerReasons = new Set(['WaitingForQuota', 'NoMatchingFlavor', 'ExceedsMaxQuota', 'TopologyPlacementFailed', 'WaitingForPreemptedWorkloads', 'WaitingForPodsReady', 'PendingEvaluation']);

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Pending workloads of a ClusterQueue in the order the visibility API lists them. */
export function queueOrder(cq: ClusterQueueState): Wl[] {
  const front = cq.queue.pinned();
  const rest = cq.queue.all().filter((w) => w !== front);
  rest.sort((a, b) => (queueBefore(a, b) ? -1 : queueBefore(b, a) ? 1 : 0));
  return front ? [front, ...rest] : rest;
}

function flavorUsage(cq: ClusterQueueState, usage: FRAmounts, frs: FlavorResources, withBorrowed: boolean): FlavorUsageStatus[] {
  const out: FlavorUsageStatus[] = [];
  for (const g of cq.resourceGroups) {
    for (const f of g.flavors) {
      const resources = [...g.covered].sort(byName).map((r) => {
        const fr = frs.find(f, r);
        const used = fr === undefined ? 0 : (usage.get(fr) ?? 0);
        const entry: { name: string; total: string; borrowed?: string } = { name: r, total: formatAmount(r, used) };
        if (withBorrowed && cq.parent && fr !== undefined) {
          const borrowed = used - (cq.quotas.get(fr)?.nominal ?? 0);
          if (borrowed > 0) entry.borrowed = formatAmount(r, borrowed);
        }
        return entry;
      });
      out.push({ name: f, resources });
    }
  }
  return out;
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string): Condition {
  return { type, status, reason, message };
}

/** Every ClusterQueue's pending workloads in visibility order, with their positions. */
export function positionsOf(cqs: ClusterQueueState[]): Record<string, PendingPosition[]> {
  const out: Record<string, PendingPosition[]> = {};
  for (const cq of cqs) {
    const perLq = new Map<string, number>();
    out[cq.name] = queueOrder(cq).map((w, i) => {
      const lq = perLq.get(w.lqKey) ?? 0;
      perLq.set(w.lqKey, lq + 1);
      return { ...w.ref(), localQueue: w.queueName, clusterQueue: cq.name, priority: w.priority, positionInClusterQueue: i, positionInLocalQueue: lq };
    });
  }
  return out;
}

/** Why a pending workload waits: its queue's state first, then the scheduler's last verdict. */
function verdict(w: Wl, lq: LocalQueueLike | undefined, cq: ClusterQueueState | undefined): [PendingReasonCode, string] {
  const cond = findCondition(w.obj.status?.conditions, QuotaReserved);
  if (!w.active) return ['Deactivated', 'The workload is deactivated'];
  if (w.onHold && cond) return ['Pending', cond.message ?? ''];
  if (!lq) return ['Misconfigured', `LocalQueue ${w.queueName} doesn't exist`];
  if ((lq.spec?.stopPolicy ?? 'None') !== 'None') return ['Suspended', `LocalQueue ${w.queueName} is inactive`];
  if (!cq) return ['Misconfigured', `ClusterQueue ${lq.spec?.clusterQueue ?? ''} doesn't exist`];
  if (!cq.active()) return ['Suspended', `ClusterQueue ${cq.name} is inactive`];
  if (w.reason !== undefined) return [w.reason, w.message ?? ''];
  if (cond?.status === 'False' && cond.reason && schedulerReasons.has(cond.reason)) return [cond.reason as PendingReasonCode, cond.message ?? ''];
  return ['PendingEvaluation', 'Workload is pending evaluation in the scheduling queue'];
}

export function report(input: ReportInput): CycleResult {
  const cqByName = new Map(input.cqs.map((c) => [c.name, c]));
  const pendingEntry = (w: Wl): PendingWorkload => {
    const lq = input.lqs.get(w.lqKey);
    const cqName = lq?.spec?.clusterQueue;
    const [reason, message] = verdict(w, lq, cqName === undefined ? undefined : cqByName.get(cqName));
    const p: PendingWorkload = w.uid
      ? { namespace: w.namespace, name: w.name, uid: w.uid, localQueue: w.queueName, reason, message, priority: w.priority }
      : { namespace: w.namespace, name: w.name, localQueue: w.queueName, reason, message, priority: w.priority };
    if (cqName !== undefined) p.clusterQueue = cqName;
    return p;
  };

  // queued workloads in each ClusterQueue's order, with their positions; then the ones no queue holds
  const pending: PendingWorkload[] = [];
  const lqPending = new Map<string, number>();
  const listed = new Set<Wl>();
  if (!input.only) {
    for (const cq of input.cqs) {
      const perLq = new Map<string, number>();
      queueOrder(cq).forEach((w, i) => {
        const lq = perLq.get(w.lqKey) ?? 0;
        perLq.set(w.lqKey, lq + 1);
        lqPending.set(w.lqKey, (lqPending.get(w.lqKey) ?? 0) + 1);
        const p = pendingEntry(w);
        p.positionInClusterQueue = i;
        p.positionInLocalQueue = lq;
        pending.push(p);
        listed.add(w);
      });
    }
  }
  const rest: PendingWorkload[] = [];
  const lqReserving = new Map<string, Wl[]>();
  for (const w of input.only ?? input.wls) {
    if (w.finished || listed.has(w)) continue;
    if (w.reservation) {
      const l = lqReserving.get(w.lqKey) ?? [];
      l.push(w);
      lqReserving.set(w.lqKey, l);
      continue;
    }
    rest.push(pendingEntry(w));
  }
  const key = (p: PendingWorkload): string => `${p.clusterQueue ?? '\uffff'}\u0000${p.namespace}/${p.name}`;
  const keyed = rest.map((p) => [key(p), p] as const).sort(([a], [b]) => byName(a, b));
  for (const [, p] of keyed) pending.push(p);

  const clusterQueues: Record<string, ClusterQueueStatus> = {};
  for (const cq of input.cqs) {
    const a = cq.activeCondition();
    const status: ClusterQueueStatus = {
      pendingWorkloads: cq.pendingCount(),
      reservingWorkloads: cq.reserving.size,
      admittedWorkloads: cq.admittedCount,
      flavorsReservation: flavorUsage(cq, cq.usage, input.frs, true),
      flavorsUsage: flavorUsage(cq, cq.admittedUsage, input.frs, true),
      conditions: [condition('Active', a.status, a.reason, a.message)],
    };
    if (input.fairSharing) status.fairSharing = { weightedShare: reportedShare(drsOf(cq, input.frs)) };
    clusterQueues[cq.name] = status;
  }

  const localQueues: Record<string, LocalQueueStatus> = {};
  for (const [key, lq] of input.only ? [] : input.lqs) {
    const cq = cqByName.get(lq.spec?.clusterQueue ?? '');
    const reserving = lqReserving.get(key) ?? [];
    const reserved: FRAmounts = new Map();
    const admitted: FRAmounts = new Map();
    let admittedCount = 0;
    for (const w of reserving) {
      const r = w.reservation;
      if (!r) continue;
      for (const [fr, v] of r.usage) reserved.set(fr, (reserved.get(fr) ?? 0) + v);
      if (r.admitted) {
        admittedCount++;
        for (const [fr, v] of r.usage) admitted.set(fr, (admitted.get(fr) ?? 0) + v);
      }
    }
    let cond: Condition;
    if ((lq.spec?.stopPolicy ?? 'None') !== 'None') cond = condition('Active', 'False', 'Stopped', 'LocalQueue is stopped');
    else if (!cq) cond = condition('Active', 'False', 'ClusterQueueDoesNotExist', "Can't submit new workloads to clusterQueue");
    else if (!cq.active()) cond = condition('Active', 'False', 'ClusterQueueIsInactive', "Can't submit new workloads to clusterQueue");
    else cond = condition('Active', 'True', 'Ready', 'Can submit new workloads to localQueue');
    localQueues[key] = {
      pendingWorkloads: lqPending.get(key) ?? 0,
      reservingWorkloads: reserving.length,
      admittedWorkloads: admittedCount,
      flavorsReservation: cq ? flavorUsage(cq, reserved, input.frs, false) : [],
      flavorsUsage: cq ? flavorUsage(cq, admitted, input.frs, false) : [],
      conditions: [cond],
    };
  }

  const cohorts: CycleResult['cohorts'] = {};
  for (const [name, c] of input.cohorts) cohorts[name] = input.fairSharing ? { fairSharing: { weightedShare: reportedShare(drsOf(c, input.frs)) } } : {};

  return { admissions: input.admissions, preemptions: input.preemptions, evictions: input.evictions, pending, clusterQueues, localQueues, cohorts, cycles: input.cycles };
}
