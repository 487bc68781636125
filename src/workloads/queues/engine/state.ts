// The engine's live state: one record per Workload and per ClusterQueue, kept between cycles so a
// cycle costs the heads it looks at, not the size of the queues. A ClusterQueue is a node of the
// cohort tree (its quota and usage) and a queue (a heap of pending workloads in Kueue's order, the
// inadmissible ones set aside, the workloads holding its quota).
import { QuotaNode, type FRAmounts } from './hierarchy.js';
import { PendingQueue } from './pending-queue.js';
import type { PodSetInfo } from './workload-info.js';
import type { ClusterQueueLike, LabelSelector, PendingReasonCode, WorkloadLike } from './types.js';

/** Where a flavor scan stopped for each pod set and resource, so the next attempt resumes after it. */
export interface LastAssignment {
  tried: Map<string, number>[];
  generation: number;
  cycle: number;
  shape: string;
}

export function pendingFlavors(last: LastAssignment | undefined): boolean {
  return !!last && last.tried.some((m) => [...m.values()].some((i) => i !== -1));
}

export interface Reservation {
  cq: ClusterQueueState;
  usage: FRAmounts;
  /** when QuotaReserved became true (ms): the most recently admitted are preempted first */
  reservedAt: number;
  admitted: boolean;
}

export class Wl {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  queueName = '';
  lqKey = '';
  priority = 0;
  created = 0;
  orderTs = 0;
  /**
   * the engine's count when it first saw this workload (0: loaded with a snapshot): the informer
   * delivers creations in the store's order, so among workloads of the same second it is their
   * creation order
   */
  arrival = 0;
  podSets: PodSetInfo[] = [];
  shape = '';
  validationError?: string;
  /** spec.active is not false */
  active = true;
  finished = false;
  /** QuotaReserved=False with reason OnHold */
  onHold = false;
  /** holding quota in a ClusterQueue */
  reservation?: Reservation;
  /** an Evicted=True condition (or a preemption this engine issued): quota is being released */
  evicted = false;
  /** the backoff after a PodsReady timeout: not requeued before then */
  requeueAt?: number;
  /** set aside until requeueAt */
  backoff = false;
  /** Requeued=False: kept out of the queue */
  requeueBlocked = false;
  last?: LastAssignment;
  /** the latest verdict for a pending workload */
  reason?: PendingReasonCode;
  message?: string;
  /** the ClusterQueue whose queue holds it */
  queuedIn?: ClusterQueueState;

  constructor(public obj: WorkloadLike) {
    this.namespace = obj.metadata.namespace ?? '';
    this.name = obj.metadata.name ?? '';
    this.key = `${this.namespace}/${this.name}`;
    this.uid = obj.metadata.uid ?? '';
  }

  ref(): { namespace: string; name: string; uid?: string } {
    return this.uid ? { namespace: this.namespace, name: this.name, uid: this.uid } : { namespace: this.namespace, name: this.name };
  }
}

export type Mode = 'None' | 'Hold' | 'HoldAndDrain';

export interface ResourceGroupState {
  covered: string[];
  flavors: string[];
}

export interface PreemptionConfig {
  withinClusterQueue: string;
  reclaimWithinCohort: string;
  borrowWithinCohort?: { policy: string; maxPriorityThreshold?: number };
}

export interface FungibilityConfig {
  whenCanBorrow: 'MayStopSearch' | 'TryNextFlavor';
  whenCanPreempt: 'MayStopSearch' | 'TryNextFlavor';
  preference: 'BorrowingOverPreemption' | 'PreemptionOverBorrowing';
}

export class ClusterQueueState extends QuotaNode {
  obj: ClusterQueueLike;
  cohortName?: string;
  resourceGroups: ResourceGroupState[] = [];
  rgByResource = new Map<string, number>();
  namespaceSelector: LabelSelector | null | undefined;
  strategy: 'StrictFIFO' | 'BestEffortFIFO' = 'BestEffortFIFO';
  preemption: PreemptionConfig = { withinClusterQueue: 'Never', reclaimWithinCohort: 'Never' };
  fungibility: FungibilityConfig = { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor', preference: 'BorrowingOverPreemption' };
  stopPolicy: Mode = 'None';
  admissionChecks: { name: string; onFlavors?: string[] }[] = [];
  /** flavors the resource groups name that do not exist */
  missingFlavors: string[] = [];
  /** its cohort's ancestry loops: Kueue leaves it out of scheduling */
  inCycle = false;
  /** bumped when quota frees up or the groups change: an older flavor scan is stale */
  generation = 1;

  /** pending workloads: queued in Kueue's order, or set aside until quota frees up */
  readonly queue = new PendingQueue<Wl>();
  /** shapes set aside since the last requeue, with the reason */
  readonly bulkMoved = new Map<string, PendingReasonCode>();
  /** workloads holding quota here */
  readonly reserving = new Map<string, Wl>();
  admittedUsage: FRAmounts = new Map();
  admittedCount = 0;
  /** a blocked head that cannot change until something in its cohort tree does */
  parked?: { key: string; stamp: number };

  constructor(name: string, obj: ClusterQueueLike) {
    super('ClusterQueue', name);
    this.obj = obj;
  }

  active(): boolean {
    return this.stopPolicy === 'None' && this.missingFlavors.length === 0;
  }

  /** the Active condition as Kueue's ClusterQueue controller writes it */
  activeCondition(): { status: 'True' | 'False'; reason: string; message: string } {
    if (this.active()) return { status: 'True', reason: 'Ready', message: 'Can admit new workloads' };
    const reasons: string[] = [];
    const messages: string[] = [];
    if (this.stopPolicy !== 'None') {
      reasons.push('Stopped');
      messages.push('is stopped');
    }
    if (this.missingFlavors.length) {
      reasons.push('FlavorNotFound');
      messages.push(`references missing ResourceFlavor(s): ${this.missingFlavors.join(',')}`);
    }
    return { status: 'False', reason: reasons[0] ?? 'Unknown', message: `Can't admit new workloads: ${messages.join(', ')}.` };
  }

  pendingCount(): number {
    return this.queue.size;
  }

  /** Takes a pending workload out of this queue, wherever it is. */
  dequeue(key: string): void {
    this.queue.remove(key);
    if (this.parked?.key === key) this.parked = undefined;
  }
}
