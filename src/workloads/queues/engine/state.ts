// The engine's live state: one record per Workload and per ClusterQueue, kept between cycles so a
// cycle costs the heads it looks at, not the size of the queues. A ClusterQueue is a node of the
// cohort tree (its quota and usage) and a queue (a heap of pending workloads in Kueue's order, the
// inadmissible ones set aside, the workloads holding its quota).
import { KeyedHeap } from './heap.js';
import { QuotaNode, type FRAmounts } from './hierarchy.js';
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
  /** set aside with look-alikes, its verdict is its equivalent's */
  bulk = false;
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

/** Kueue's queue order: the sticky preemptor, then priority, then queue-order time, then uid. */
export function queueLess(sticky: () => string | undefined): (a: Wl, b: Wl) => boolean {
  return (a, b) => {
    const s = sticky();
    if (s !== undefined) {
      const as = a.key === s;
      const bs = b.key === s;
      if (as !== bs) return as;
    }
    if (a.priority !== b.priority) return a.priority > b.priority;
    if (a.orderTs !== b.orderTs) return a.orderTs < b.orderTs;
    if (a.uid !== b.uid) return a.uid < b.uid;
    return a.key < b.key;
  };
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

  /** the workload that issued preemptions and waits for them; BestEffortFIFO keeps it at the head */
  sticky?: string;
  stickyPinned = false;
  readonly heap: KeyedHeap<Wl>;
  readonly inadmissible = new Map<string, Wl>();
  /** pending workloads in the heap by scheduling shape (BestEffortFIFO), to set look-alikes aside together */
  readonly shapes = new Map<string, Set<string>>();
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
    this.heap = new KeyedHeap<Wl>((w) => w.key, queueLess(() => (this.stickyPinned ? this.sticky : undefined)));
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
    return this.heap.size + this.inadmissible.size;
  }

  pushActive(w: Wl): void {
    this.inadmissible.delete(w.key);
    this.heap.push(w);
    w.queuedIn = this;
    if (this.strategy === 'BestEffortFIFO') {
      let set = this.shapes.get(w.shape);
      if (!set) this.shapes.set(w.shape, (set = new Set()));
      set.add(w.key);
    }
  }

  /** Queues many workloads at once (quota came back and the set-aside ones return). */
  pushAllActive(ws: Wl[]): void {
    for (const w of ws) {
      this.inadmissible.delete(w.key);
      w.queuedIn = this;
      if (this.strategy === 'BestEffortFIFO') {
        let set = this.shapes.get(w.shape);
        if (!set) this.shapes.set(w.shape, (set = new Set()));
        set.add(w.key);
      }
    }
    this.heap.pushMany(ws);
  }

  /** Sets aside every queued workload of a shape; returns them. */
  setAsideShape(shape: string): Wl[] {
    const keys = this.shapes.get(shape);
    if (!keys) return [];
    this.shapes.delete(shape);
    const out = this.heap.removeMany(keys);
    for (const w of out) this.inadmissible.set(w.key, w);
    return out;
  }

  setAside(w: Wl): void {
    this.removeFromHeap(w.key);
    this.inadmissible.set(w.key, w);
    w.queuedIn = this;
  }

  removeFromHeap(key: string): Wl | undefined {
    const w = this.heap.remove(key);
    if (w) this.forgetShape(w);
    return w;
  }

  popHead(): Wl | undefined {
    const w = this.heap.pop();
    if (w) this.forgetShape(w);
    return w;
  }

  private forgetShape(w: Wl): void {
    const set = this.shapes.get(w.shape);
    if (!set) return;
    set.delete(w.key);
    if (set.size === 0) this.shapes.delete(w.shape);
  }

  /** Takes a pending workload out of this queue, wherever it is. */
  dequeue(key: string): void {
    this.removeFromHeap(key);
    this.inadmissible.delete(key);
    if (this.sticky === key) {
      this.sticky = undefined;
      this.stickyPinned = false;
    }
    if (this.parked?.key === key) this.parked = undefined;
  }
}
