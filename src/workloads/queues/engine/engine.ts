// Kueue's admission decisions over a snapshot of its objects, with no I/O. The AdmissionEngine keeps
// the state between calls (the controllers feed it what changes, it answers what to admit, whom to
// preempt and why the rest wait); `schedule(snapshot, now)` is the same for one snapshot.
//
// A call runs Kueue's scheduling cycle until it stops changing anything: each cycle takes the head of
// every active ClusterQueue, assigns flavors (and finds preemption targets), orders the heads (no
// borrowing first, then priority, then age; or by fair share), and admits each that still fits
// after the ones before it. Heads that do not fit go back to the queue (StrictFIFO: they stay in
// front and block) or aside until quota frees up (BestEffortFIFO).
import { readClusterQueue, readQuotas, fairWeight } from './config.js';
import { FlavorAssigner, Mode, assignmentMessage, needPreemption, representativeMode, searchCounts, type Assignment, type AssignerContext, type Possibility } from './flavor-assigner.js';
import {
  CohortNode,
  FlavorResources,
  addAll,
  available,
  lowestSubtreeThatFits,
  recomputeStandalone,
  recomputeTree,
  removeAll,
  type FRAmounts,
  type QuotaNode,
} from './hierarchy.js';
import { classicOrder, fairOrder, type Entry } from './order.js';
import { Preemptor, humanReason, type Target } from './preemption.js';
import { formatAmount } from './quantities.js';
import { positionsOf, report } from './report.js';
import { selectorMatches } from './selectors.js';
import { ClusterQueueState, Wl, pendingFlavors, type LastAssignment } from './state.js';
import type {
  AdmissionDecision,
  ClusterQueueLike,
  CohortLike,
  CycleResult,
  EngineOptions,
  EvictionDecision,
  LocalQueueLike,
  NamespaceLike,
  PendingPosition,
  PendingReasonCode,
  PreemptionDecision,
  ResourceFlavorLike,
  Snapshot,
  WorkloadLike,
  WorkloadPriorityClassLike,
} from './types.js';
import {
  Admitted,
  Evicted,
  Finished,
  QuotaReserved,
  Requeued,
  admittedPodSets,
  findCondition,
  hasQuotaReservation,
  isTrue,
  pendingPodSets,
  queueOrderTime,
  resourceValidationError,
  schedulingShape,
  timeMs,
  workloadPriority,
} from './workload-info.js';

const nsKey = (ns: string, name: string): string => `${ns}/${name}`;
const bypassed = 'Bypassed scheduling evaluation because an equivalent workload recently failed';
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function toMs(now: Date | number | string): number {
  if (typeof now === 'number') return now;
  if (typeof now === 'string') return Date.parse(now);
  return now.getTime();
}

export class AdmissionEngine {
  readonly options: EngineOptions;
  private readonly frs = new FlavorResources();
  private readonly flavors = new Map<string, ResourceFlavorLike>();
  private readonly cqObjs = new Map<string, ClusterQueueLike>();
  private readonly cohortObjs = new Map<string, CohortLike>();
  private readonly lqs = new Map<string, LocalQueueLike>();
  private readonly namespaces = new Map<string, NamespaceLike>();
  private readonly classes = new Map<string, WorkloadPriorityClassLike>();
  private readonly wls = new Map<string, Wl>();
  /** workloads fed one by one so far: each new one's place among those of its second */
  private arrivals = 0;
  private cqs = new Map<string, ClusterQueueState>();
  private cqOrder: ClusterQueueState[] = [];
  private cohorts = new Map<string, CohortNode>();
  private dirty = true;
  /** bumped by every change from outside: a parked head is looked at again */
  private world = 0;
  private readonly treeStamps = new Map<QuotaNode, number>();
  /** trees where quota was given back since the last call */
  private readonly requeueTrees = new Set<QuotaNode>();
  /** pending workloads whose verdict this call reached */
  private touched = new Set<Wl>();
  private cycleNo = 0;
  private now = 0;
  // the decisions of the running call
  private admissions: AdmissionDecision[] = [];
  private preemptions: PreemptionDecision[] = [];
  private callCycles = 0;

  constructor(snapshot?: Snapshot, options: EngineOptions = {}) {
    this.options = options;
    if (snapshot) this.load(snapshot);
  }

  /** Replaces everything the engine knows with the snapshot. */
  load(s: Snapshot): void {
    this.flavors.clear();
    this.cqObjs.clear();
    this.cohortObjs.clear();
    this.lqs.clear();
    this.namespaces.clear();
    this.classes.clear();
    this.wls.clear();
    for (const f of s.resourceFlavors ?? []) this.flavors.set(f.metadata.name ?? '', f);
    for (const c of s.clusterQueues ?? []) this.cqObjs.set(c.metadata.name ?? '', c);
    for (const c of s.cohorts ?? []) this.cohortObjs.set(c.metadata.name ?? '', c);
    for (const q of s.localQueues ?? []) this.lqs.set(nsKey(q.metadata.namespace ?? '', q.metadata.name ?? ''), q);
    for (const n of s.namespaces ?? []) this.namespaces.set(n.metadata.name ?? '', n);
    for (const c of s.workloadPriorityClasses ?? []) this.classes.set(c.metadata.name ?? '', c);
    for (const w of s.workloads ?? []) {
      const wl = new Wl(w);
      this.wls.set(wl.key, wl);
    }
    this.dirty = true;
  }

  // ---- changes from the controllers ----

  upsertResourceFlavor(o: ResourceFlavorLike): void {
    this.flavors.set(o.metadata.name ?? '', o);
    this.dirty = true;
  }

  deleteResourceFlavor(name: string): void {
    this.dirty = this.flavors.delete(name) || this.dirty;
  }

  upsertClusterQueue(o: ClusterQueueLike): void {
    this.cqObjs.set(o.metadata.name ?? '', o);
    this.dirty = true;
  }

  deleteClusterQueue(name: string): void {
    this.dirty = this.cqObjs.delete(name) || this.dirty;
  }

  upsertCohort(o: CohortLike): void {
    this.cohortObjs.set(o.metadata.name ?? '', o);
    this.dirty = true;
  }

  deleteCohort(name: string): void {
    this.dirty = this.cohortObjs.delete(name) || this.dirty;
  }

  upsertLocalQueue(o: LocalQueueLike): void {
    this.lqs.set(nsKey(o.metadata.namespace ?? '', o.metadata.name ?? ''), o);
    this.dirty = true;
  }

  deleteLocalQueue(namespace: string, name: string): void {
    this.dirty = this.lqs.delete(nsKey(namespace, name)) || this.dirty;
  }

  upsertNamespace(o: NamespaceLike): void {
    this.namespaces.set(o.metadata.name ?? '', o);
    this.dirty = true;
  }

  deleteNamespace(name: string): void {
    this.dirty = this.namespaces.delete(name) || this.dirty;
  }

  upsertWorkloadPriorityClass(o: WorkloadPriorityClassLike): void {
    this.classes.set(o.metadata.name ?? '', o);
    this.dirty = true;
  }

  deleteWorkloadPriorityClass(name: string): void {
    this.dirty = this.classes.delete(name) || this.dirty;
  }

  /** A Workload was created or changed: it is queued, or its quota is accounted, from its status. */
  upsertWorkload(o: WorkloadLike): void {
    const key = nsKey(o.metadata.namespace ?? '', o.metadata.name ?? '');
    const old = this.wls.get(key);
    const wl = new Wl(o);
    // a workload keeps its place in the order of arrival for as long as it lives
    wl.arrival = old && old.uid === wl.uid ? old.arrival : ++this.arrivals;
    if (old) {
      wl.last = old.last;
      if (old.reason !== undefined) wl.reason = old.reason;
      if (old.message !== undefined) wl.message = old.message;
    }
    this.wls.set(key, wl);
    if (this.dirty) return;
    this.world++;
    const before = old?.reservation;
    if (old) this.detach(old);
    this.attach(wl);
    // quota given back (finished, evicted, deleted or shrunk): what was set aside may fit now;
    // a controller writing back the admission it was given changes nothing
    const after = wl.reservation;
    if (before && (!after || after.cq !== before.cq || !sameUsage(before.usage, after.usage))) this.released(before.cq);
  }

  deleteWorkload(namespace: string, name: string): void {
    const key = nsKey(namespace, name);
    const old = this.wls.get(key);
    if (!old) return;
    this.wls.delete(key);
    if (this.dirty) return;
    this.world++;
    const before = old.reservation;
    this.detach(old);
    if (before) this.released(before.cq);
  }

  // ---- state upkeep ----

  private treeOf(cq: QuotaNode): QuotaNode {
    return cq.parent ? cq.parent.root() : cq;
  }

  private stampOf(cq: ClusterQueueState): number {
    return this.world * 1e9 + (this.treeStamps.get(this.treeOf(cq)) ?? 0);
  }

  private bump(cq: ClusterQueueState): void {
    const t = this.treeOf(cq);
    this.treeStamps.set(t, (this.treeStamps.get(t) ?? 0) + 1);
  }

  /** Rebuilds queues and the cohort tree from the objects: after any change that is not a workload's. */
  private rebuild(): void {
    this.world++;
    const cqs = new Map<string, ClusterQueueState>();
    const cohorts = new Map<string, CohortNode>();
    const cohortNamed = (name: string): CohortNode => {
      let c = cohorts.get(name);
      if (!c) cohorts.set(name, (c = new CohortNode(name)));
      return c;
    };
    for (const [name, obj] of this.cohortObjs) {
      const c = cohortNamed(name);
      c.declared = true;
      readQuotas(c, obj.spec?.resourceGroups, this.frs);
      c.fairWeight = fairWeight(obj.spec?.fairSharing);
      if (obj.spec?.parentName) c.parentName = obj.spec.parentName;
    }
    for (const [name, obj] of this.cqObjs) {
      const cq = new ClusterQueueState(name, obj);
      const prev = this.cqs.get(name);
      if (prev) cq.generation = prev.generation + 1;
      readClusterQueue(cq, obj, this.frs, (f) => this.flavors.has(f));
      cqs.set(name, cq);
      if (cq.cohortName) {
        const c = cohortNamed(cq.cohortName);
        cq.parent = c;
        c.childCQs.push(cq);
      }
    }
    // cohort edges, leaving out ancestries that loop
    for (const c of [...cohorts.values()]) {
      if (c.parentName) {
        const p = cohortNamed(c.parentName);
        c.parent = p;
        p.childCohorts.push(c);
      }
    }
    for (const c of cohorts.values()) {
      const seen = new Set<CohortNode>();
      for (let n: CohortNode | undefined = c; n; n = n.parent) {
        if (seen.has(n)) {
          c.inCycle = true;
          break;
        }
        seen.add(n);
      }
    }
    for (const cq of cqs.values()) {
      if (cq.parent?.inCycle) {
        cq.inCycle = true;
        // a loop has no root: the queue is left out, as if alone
        cq.parent.childCQs = cq.parent.childCQs.filter((x) => x !== cq);
        cq.parent = undefined;
      }
    }
    for (const c of cohorts.values()) {
      if (c.inCycle) {
        c.parent = undefined;
        c.childCohorts = [];
      }
    }
    this.requeueTrees.clear();
    this.cqs = cqs;
    this.cohorts = cohorts;
    this.cqOrder = [...cqs.values()].sort((a, b) => byName(a.name, b.name));
    for (const w of this.wls.values()) {
      w.reservation = undefined;
      w.queuedIn = undefined;
    }
    // reservations count at each ClusterQueue first; the cohorts' share follows from the tree
    for (const w of this.wls.values()) this.attach(w, true);
    for (const c of cohorts.values()) if (!c.parent && !c.inCycle) recomputeTree(c);
    for (const cq of cqs.values()) if (!cq.parent) recomputeStandalone(cq);
    this.dirty = false;
  }

  /** the ClusterQueue a pending workload queues in, through its LocalQueue */
  private queueFor(w: Wl): ClusterQueueState | undefined {
    const lq = this.lqs.get(w.lqKey);
    if (!lq || (lq.spec?.stopPolicy ?? 'None') !== 'None') return undefined;
    return this.cqs.get(lq.spec?.clusterQueue ?? '');
  }

  /** Reads a workload's status into the state: its reservation, or its place in a queue. */
  private attach(w: Wl, building = false): void {
    const o = w.obj;
    const conds = o.status?.conditions;
    w.queueName = o.spec?.queueName ?? '';
    if (!w.queueName && this.lqs.has(nsKey(w.namespace, 'default'))) w.queueName = 'default';
    w.lqKey = nsKey(w.namespace, w.queueName);
    w.priority = workloadPriority(o, this.classes);
    w.created = timeMs(o.metadata.creationTimestamp);
    w.orderTs = queueOrderTime(o, this.options.requeuingTimestamp ?? 'Eviction');
    w.active = o.spec?.active !== false;
    w.finished = isTrue(conds, Finished);
    w.evicted = isTrue(conds, Evicted);
    const qr = findCondition(conds, QuotaReserved);
    w.onHold = qr?.status === 'False' && qr.reason === 'OnHold';
    w.requeueBlocked = findCondition(conds, Requeued)?.status === 'False';
    const at = o.status?.requeueState?.requeueAt;
    if (at) w.requeueAt = timeMs(at);
    w.podSets = pendingPodSets(o);
    w.shape = schedulingShape(w.priority, w.podSets);
    const invalid = resourceValidationError(o);
    if (invalid) w.validationError = invalid;
    if (w.finished) return;
    if (hasQuotaReservation(o)) {
      const cq = this.cqs.get(o.status?.admission?.clusterQueue ?? '');
      if (!cq) return;
      const podSets = admittedPodSets(o);
      const usage: FRAmounts = new Map();
      for (const ps of podSets) {
        for (const [res, v] of ps.total) {
          const flavor = ps.flavors?.[res];
          if (!flavor) continue;
          const fr = this.frs.id(flavor, res);
          usage.set(fr, (usage.get(fr) ?? 0) + v);
        }
      }
      const admitted = isTrue(conds, Admitted);
      w.reservation = { cq, usage, reservedAt: timeMs(qr?.lastTransitionTime) || this.now, admitted };
      this.reserve(w, building);
      return;
    }
    if (!w.active || w.onHold || w.requeueBlocked) return;
    const cq = this.queueFor(w);
    if (!cq) return;
    if (w.requeueAt !== undefined && w.requeueAt > this.now) {
      cq.queue.setAside(w);
      w.queuedIn = cq;
      w.backoff = true;
      return;
    }
    cq.queue.push(w);
    w.queuedIn = cq;
    // a look-alike of a workload that did not fit waits with it
    if (cq.queue.shapeAside(w.shape)) this.markBulk(cq, w);
  }

  private reserve(w: Wl, building: boolean): void {
    const r = w.reservation;
    if (!r) return;
    r.cq.reserving.set(w.key, w);
    if (building) for (const [fr, v] of r.usage) r.cq.usage.set(fr, (r.cq.usage.get(fr) ?? 0) + v);
    else addAll(r.cq, r.usage);
    if (r.admitted) {
      r.cq.admittedCount++;
      for (const [fr, v] of r.usage) r.cq.admittedUsage.set(fr, (r.cq.admittedUsage.get(fr) ?? 0) + v);
    }
    this.bump(r.cq);
  }

  /** Takes a workload's old state out: its quota back, or its place in the queue. */
  private detach(w: Wl): void {
    w.queuedIn?.dequeue(w.key);
    w.queuedIn = undefined;
    const r = w.reservation;
    if (!r) return;
    w.reservation = undefined;
    r.cq.reserving.delete(w.key);
    removeAll(r.cq, r.usage);
    if (r.admitted) {
      r.cq.admittedCount--;
      for (const [fr, v] of r.usage) r.cq.admittedUsage.set(fr, (r.cq.admittedUsage.get(fr) ?? 0) - v);
    }
    this.bump(r.cq);
  }

  /**
   * Quota freed up: the workloads set aside in the cohort tree get another look, at the start of
   * the next call, so that many releases between two calls cost one pass (Kueue batches these
   * requeues too).
   */
  private released(cq: ClusterQueueState): void {
    cq.generation++;
    this.requeueTrees.add(this.treeOf(cq));
  }

  private requeueInadmissible(tree: QuotaNode): void {
    const members = tree instanceof CohortNode ? (tree.subtreeCQs() as ClusterQueueState[]) : [tree as ClusterQueueState];
    for (const m of members) {
      m.bulkMoved.clear();
      const matches = new Map<string, boolean>();
      m.queue.requeue((w) => {
        let ok = matches.get(w.namespace);
        if (ok === undefined) matches.set(w.namespace, (ok = this.namespaceMatches(m, w)));
        return !ok || (w.requeueAt !== undefined && w.requeueAt > this.now);
      });
    }
  }

  private namespaceMatches(cq: ClusterQueueState, w: Wl): boolean {
    const ns = this.namespaces.get(w.namespace);
    return !!ns && selectorMatches(cq.namespaceSelector, ns.metadata.labels);
  }

  private markBulk(cq: ClusterQueueState, w: Wl): void {
    w.reason = cq.bulkMoved.get(w.shape) ?? 'PendingEvaluation';
    w.message = bypassed;
  }

  // ---- scheduling ----

  /**
   * Runs scheduling cycles until nothing changes, and reports the decisions and every queue's state.
   * With `report: 'decisions'` the pending list holds only the workloads whose verdict this call
   * reached, without positions, and LocalQueue statuses are left out: a call then costs the
   * workloads it looked at, not every pending one (ask `positions()` when they are needed).
   */
  schedule(now: Date | number | string = Date.now(), opts: { report?: 'full' | 'decisions' } = {}): CycleResult {
    this.now = toMs(now);
    if (this.dirty) this.rebuild();
    this.admissions = [];
    this.preemptions = [];
    this.callCycles = 0;
    this.touched = new Set();
    for (const t of this.requeueTrees) this.requeueInadmissible(t);
    this.requeueTrees.clear();
    // backoffs that ended
    for (const cq of this.cqOrder) {
      for (const w of [...cq.queue.aside.values()]) {
        if (w.backoff && (w.requeueAt ?? 0) <= this.now) {
          w.backoff = false;
          cq.queue.push(w, true);
        }
      }
    }
    let pending = 0;
    for (const cq of this.cqOrder) pending += cq.pendingCount();
    const max = this.options.maxCycles ?? pending * 4 + this.cqOrder.length + 16;
    while (this.callCycles < max) {
      const [heads, progress] = this.cycle();
      if (heads === 0 || !progress) break;
    }
    const evictions = this.drain();
    return report({
      evictions,
      wls: this.wls.values(),
      only: opts.report === 'decisions' ? this.touched : undefined,
      cqs: this.cqOrder,
      cohorts: this.cohorts,
      lqs: this.lqs,
      frs: this.frs,
      fairSharing: !!this.options.fairSharing,
      admissions: this.admissions,
      preemptions: this.preemptions,
      cycles: this.callCycles,
    });
  }

  /**
   * HoldAndDrain: the admitted workloads of a stopped LocalQueue or ClusterQueue are evicted, as
   * Kueue's workload controller does (the LocalQueue's stop checked first).
   */
  private drain(): EvictionDecision[] {
    const out: EvictionDecision[] = [];
    const drainingLqs = new Set<string>();
    for (const [key, lq] of this.lqs) if (lq.spec?.stopPolicy === 'HoldAndDrain') drainingLqs.add(key);
    for (const cq of this.cqOrder) {
      if (cq.stopPolicy !== 'HoldAndDrain' && drainingLqs.size === 0) continue;
      for (const w of cq.reserving.values()) {
        if (w.evicted || !w.reservation?.admitted) continue;
        let d: EvictionDecision | undefined;
        if (drainingLqs.has(w.lqKey)) d = { ...w.ref(), clusterQueue: cq.name, reason: 'LocalQueueStopped', message: 'The LocalQueue is stopped' };
        else if (cq.stopPolicy === 'HoldAndDrain') d = { ...w.ref(), clusterQueue: cq.name, reason: 'ClusterQueueStopped', message: 'The ClusterQueue is stopped' };
        if (!d) continue;
        w.evicted = true;
        this.bump(cq);
        out.push(d);
      }
    }
    return out;
  }

  /** The pending workloads of every ClusterQueue in queue order, as Kueue's visibility API lists them. */
  positions(): Record<string, PendingPosition[]> {
    if (this.dirty) this.rebuild();
    return positionsOf(this.cqOrder);
  }

  private preemptor(): Preemptor {
    const fs = this.options.fairSharing;
    const strategies = fs ? (fs.preemptionStrategies?.length ? fs.preemptionStrategies : ['LessThanOrEqualToFinalShare', 'LessThanInitialShare'] as const) : undefined;
    return new Preemptor(this.frs, strategies ? [...strategies] : undefined, this.now);
  }

  private assignerContext(p: Preemptor): AssignerContext {
    const oracle = (cq: ClusterQueueState, wl: Wl, fr: number, quantity: number): [Possibility, number] => {
      const targets = p.targets({ preemptor: wl, cq, frs: new Set([fr]), usage: new Map([[fr, quantity]]) });
      if (targets.length === 0) return ['NoCandidates', lowestSubtreeThatFits(cq, fr, quantity)[0]];
      for (const t of targets) if (t.wl.reservation) removeAll(t.wl.reservation.cq, t.wl.reservation.usage);
      const [after] = lowestSubtreeThatFits(cq, fr, quantity);
      for (const t of targets) if (t.wl.reservation) addAll(t.wl.reservation.cq, t.wl.reservation.usage);
      return [targets.some((t) => t.cq === cq) ? 'Preempt' : 'Reclaim', after];
    };
    return { frs: this.frs, flavors: this.flavors, oracle, fairSharing: !!this.options.fairSharing, cycle: this.cycleNo };
  }

  private outdated(last: LastAssignment, w: Wl, cq: ClusterQueueState): boolean {
    if (last.shape !== w.shape) return true;
    if (this.cycleNo - last.cycle <= 1) return false;
    return cq.generation > last.generation;
  }

  /** The flavors and the preemption targets for a workload, trying smaller pod sets when it allows. */
  private assignments(w: Wl, cq: ClusterQueueState, p: Preemptor, pin?: Map<number, Map<string, string>>): [Assignment, Target[]] {
    if (w.last && this.outdated(w.last, w, cq)) w.last = undefined;
    const assigner = new FlavorAssigner(this.assignerContext(p), w, cq, pin);
    const full = assigner.assign();
    const mode = representativeMode(full);
    if (mode === Mode.Fit) return [full, []];
    const targetsFor = (a: Assignment): Target[] => p.targets({ preemptor: w, cq, frs: needPreemption(a, this.frs), usage: a.usage });
    if (mode === Mode.Preempt) {
      const t = targetsFor(full);
      if (t.length) return [full, t];
    }
    if (this.options.partialAdmission !== false && w.podSets.some((ps) => ps.minCount !== undefined && ps.count > ps.minCount)) {
      const found = searchCounts(w, (counts): [Assignment, Target[]] | undefined => {
        const a = assigner.assign(counts);
        const m = representativeMode(a);
        if (m === Mode.Fit) return [a, []];
        if (m === Mode.Preempt) {
          const t = targetsFor(a);
          if (t.length) return [a, t];
        }
        return undefined;
      });
      if (found) return found;
    }
    return [full, []];
  }

  /** One scheduling cycle; returns how many heads it looked at and whether anything changed. */
  private cycle(): [number, boolean] {
    this.cycleNo++;
    this.callCycles++;
    const heads: Entry[] = [];
    for (const cq of this.cqOrder) {
      if (!cq.active()) continue;
      const top = cq.queue.peek();
      if (!top) continue;
      const stamp = this.stampOf(cq);
      if (cq.parked && cq.parked.key === top.key && cq.parked.stamp === stamp) continue;
      cq.queue.pop();
      heads.push({ wl: top, cq, targets: [], nominated: false, skipped: false, assumed: false, message: '', reason: '', requeue: '', reserved: false, issued: 0, stamp });
    }
    if (heads.length === 0) return [0, false];
    const p = this.preemptor();
    const entries: Entry[] = [];
    for (const e of heads) {
      const { wl: w, cq } = e;
      const ns = this.namespaces.get(w.namespace);
      if (cq.inCycle) {
        e.message = `ClusterQueue ${cq.name} is inactive`;
        e.reason = 'Suspended';
      } else if (!ns) {
        e.message = `workload namespace "${w.namespace}" does not exist: namespaces "${w.namespace}" not found`;
        e.reason = 'Misconfigured';
      } else if (!selectorMatches(cq.namespaceSelector, ns.metadata.labels)) {
        e.message = "workload namespace doesn't match ClusterQueue selector";
        e.reason = 'Misconfigured';
        e.requeue = 'NamespaceMismatch';
      } else if (w.validationError) {
        e.message = w.validationError;
        e.reason = 'Misconfigured';
      } else {
        const [a, t] = this.assignments(w, cq, p);
        e.assignment = a;
        e.targets = t;
        e.message = assignmentMessage(a);
        w.last = a.last;
        e.nominated = true;
        entries.push(e);
      }
    }
    const preempted = new Map<string, Wl>();
    const usedCohorts = new Set<CohortNode>();
    const cycleReserved: [ClusterQueueState, FRAmounts][] = [];
    for (const e of this.options.fairSharing ? fairOrder(entries, this.frs) : classicOrder(entries)) {
      this.process(e, p, preempted, usedCohorts, cycleReserved);
    }
    // usage held for entries that were not admitted only counts within the cycle
    for (const [cq, usage] of cycleReserved) removeAll(cq, usage);
    let progress = false;
    for (const e of heads) {
      if (e.assumed) {
        progress = true;
        continue;
      }
      if (this.requeue(e) || e.issued > 0) progress = true;
    }
    return [heads.length, progress];
  }

  private process(e: Entry, p: Preemptor, preempted: Map<string, Wl>, usedCohorts: Set<CohortNode>, cycleReserved: [ClusterQueueState, FRAmounts][]): void {
    const { cq, wl: w } = e;
    let a = e.assignment as Assignment;
    // another entry's preemptions already cover some of these targets: see what fits once they are gone
    if (e.targets.some((t) => preempted.has(t.wl.key))) {
      const victims = [...preempted.values()];
      for (const v of victims) if (v.reservation) removeAll(v.reservation.cq, v.reservation.usage);
      w.last = undefined;
      const pin = new Map<number, Map<string, string>>();
      a.podSets.forEach((ps, i) => pin.set(i, new Map([...ps.flavors].map(([r, c]) => [r, c.flavor]))));
      const [na, nt] = this.assignments(w, cq, p, pin);
      for (const v of victims) if (v.reservation) addAll(v.reservation.cq, v.reservation.usage);
      if (representativeMode(na) === Mode.Fit) na.modeOverride = Mode.DeferredFit;
      a = e.assignment = na;
      e.targets = nt;
      e.message = assignmentMessage(na);
      w.last = na.last;
    }
    const mode = representativeMode(a);
    if (mode === Mode.NoFit) {
      e.requeue = 'NoFit';
      e.reason = (a.noFitReason || 'Pending') as PendingReasonCode;
      return;
    }
    if (mode === Mode.Preempt && e.targets.length === 0) {
      e.requeue = 'PreemptionNoCandidates';
      e.reason = 'WaitingForQuota';
      // without a sure way to reclaim its nominal quota, hold what it may use so that lower
      // workloads elsewhere in the cohort do not take it first
      if (cq.preemption.reclaimWithinCohort !== 'Any') {
        const hold = toReserve(a, cq);
        addAll(cq, hold);
        cycleReserved.push([cq, hold]);
        e.reserved = true;
      }
      return;
    }
    if (mode === Mode.DeferredFit) {
      e.message = 'Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete';
      e.reason = 'WaitingForPreemptedWorkloads';
      e.requeue = 'PendingPreemption';
      w.last = undefined;
      addAll(cq, a.usage);
      cycleReserved.push([cq, a.usage]);
      e.reserved = true;
      return;
    }
    if (e.targets.some((t) => preempted.has(t.wl.key))) {
      this.skip(e, 'Workload has overlapping preemption targets with another workload');
      return;
    }
    if (!this.fitsAfter(cq, a.usage, preempted, e.targets)) {
      this.skip(e, 'Workload no longer fits after processing another workload');
      return;
    }
    if (this.options.oneBorrowingAdmissionPerCohort && cq.parent) {
      const root = cq.parent.root();
      if (usedCohorts.has(root) && (a.borrowing > 0 || root.subtreeCQs().some((x) => [...x.usage].some(([fr, v]) => v > (x.quotas.get(fr)?.nominal ?? 0))))) {
        this.skip(e, 'other workloads in the cohort were prioritized');
        return;
      }
      usedCohorts.add(root);
    }
    const refusal = this.options.admissionGate?.(w.obj, this.now);
    if (refusal !== undefined) {
      // nothing in the quota tree changes when the gate's own limit frees (a namespace's Pods end), so
      // the workload waits out a short backoff instead of waiting for quota to be released
      e.message = refusal;
      e.reason = 'Pending';
      w.requeueAt = this.now + (this.options.gateRetryMs ?? 5_000);
      return;
    }
    for (const t of e.targets) preempted.set(t.wl.key, t.wl);
    addAll(cq, a.usage);
    if (mode === Mode.Preempt) {
      cycleReserved.push([cq, a.usage]);
      e.reserved = true;
      e.reason = 'WaitingForPreemptedWorkloads';
      this.issuePreemptions(e);
      e.requeue = 'PendingPreemption';
      e.message += `. Pending the preemption of ${e.targets.length} workload(s)`;
      w.last = undefined;
      return;
    }
    this.admit(e, a);
  }

  private skip(e: Entry, message: string): void {
    e.skipped = true;
    e.message = message;
    e.reason = 'WaitingForQuota';
  }

  /** whether the usage fits once the victims of this cycle's preemptions and its own targets are gone */
  private fitsAfter(cq: ClusterQueueState, usage: FRAmounts, preempted: Map<string, Wl>, targets: Target[]): boolean {
    const gone = new Map(preempted);
    for (const t of targets) gone.set(t.wl.key, t.wl);
    for (const v of gone.values()) if (v.reservation) removeAll(v.reservation.cq, v.reservation.usage);
    let fits = true;
    for (const [fr, v] of usage) {
      if (Math.max(0, available(cq, fr)) < v) {
        fits = false;
        break;
      }
    }
    for (const v of gone.values()) if (v.reservation) addAll(v.reservation.cq, v.reservation.usage);
    return fits;
  }

  private cqPath(cq: ClusterQueueState): string {
    const parts = [cq.name];
    for (let n = cq.parent; n; n = n.parent) parts.unshift(n.name);
    return `/${parts.join('/')}`;
  }

  private issuePreemptions(e: Entry): void {
    const w = e.wl;
    const jobUID = w.obj.metadata.labels?.['kueue.x-k8s.io/job-uid'] || 'UNKNOWN';
    for (const t of e.targets) {
      if (t.wl.evicted) continue;
      const message = `Preempted to accommodate a workload (UID: ${w.uid || 'UNKNOWN'}, JobUID: ${jobUID}) due to ${humanReason[t.reason]}; preemptor path: ${this.cqPath(e.cq)}; preemptee path: ${this.cqPath(t.cq)}`;
      t.wl.evicted = true;
      this.bump(t.cq);
      e.issued++;
      this.preemptions.push({ ...t.wl.ref(), clusterQueue: t.cq.name, reason: t.reason, message, preemptor: w.ref(), cycle: this.callCycles });
    }
  }

  private admit(e: Entry, a: Assignment): void {
    const { cq, wl: w } = e;
    cq.dequeue(w.key);
    w.queuedIn = undefined;
    const podSetAssignments = a.podSets.map((ps) => {
      const flavors: Record<string, string> = {};
      const resourceUsage: Record<string, string> = {};
      for (const [res, choice] of [...ps.flavors].sort(([x], [y]) => byName(x, y))) {
        flavors[res] = choice.flavor;
        resourceUsage[res] = formatAmount(res, ps.requests.get(res) ?? 0);
      }
      return { name: ps.name, flavors, resourceUsage, count: ps.count };
    });
    const used = new Set(podSetAssignments.flatMap((ps) => Object.values(ps.flavors)));
    const checks = cq.admissionChecks.filter((c) => !c.onFlavors || c.onFlavors.some((f) => used.has(f))).map((c) => c.name);
    const admitted = checks.length === 0;
    // the usage is already in the tree: process() added it before admitting
    w.reservation = { cq, usage: a.usage, reservedAt: this.now, admitted };
    w.evicted = false;
    w.reason = undefined;
    w.message = undefined;
    w.last = undefined;
    cq.reserving.set(w.key, w);
    if (admitted) {
      cq.admittedCount++;
      for (const [fr, v] of a.usage) cq.admittedUsage.set(fr, (cq.admittedUsage.get(fr) ?? 0) + v);
    }
    this.bump(cq);
    e.assumed = true;
    const queued = timeMs(findCondition(w.obj.status?.conditions, Requeued)?.lastTransitionTime) || w.created;
    this.admissions.push({
      ...w.ref(),
      clusterQueue: cq.name,
      localQueue: w.queueName,
      admission: { clusterQueue: cq.name, podSetAssignments },
      borrowing: a.borrowing > 0,
      admissionChecks: checks,
      message: `Quota reserved in ClusterQueue ${cq.name}, wait time since queued was ${Math.max(0, Math.round((this.now - queued) / 1000))}s`,
      cycle: this.callCycles,
    });
  }

  /** Puts a head that was not admitted back: in front (retry now) or aside (until quota frees). Returns whether that changed anything. */
  private requeue(e: Entry): boolean {
    const { cq, wl: w } = e;
    let reason = e.requeue;
    if (e.nominated && e.skipped && reason === '') reason = 'FailedAfterNomination';
    w.reason = (e.reason || 'Pending') as PendingReasonCode;
    w.message = e.message;
    this.touched.add(w);
    let immediate: boolean;
    if (cq.strategy === 'StrictFIFO') immediate = reason !== 'NamespaceMismatch';
    else immediate = reason === 'FailedAfterNomination' || reason === 'PendingPreemption';
    const waiting = w.requeueAt !== undefined && w.requeueAt > this.now;
    const scanLeft = pendingFlavors(w.last);
    w.queuedIn = cq;
    if (!waiting && (immediate || scanLeft)) {
      // a preemptor waiting for its victims keeps the head of a BestEffortFIFO queue
      if (reason === 'PendingPreemption' && cq.strategy === 'BestEffortFIFO') cq.queue.pushFront(w);
      else cq.queue.push(w, true);
      if (scanLeft) return true;
      if (!e.reserved) cq.parked = { key: w.key, stamp: e.stamp };
      return false;
    }
    w.backoff = waiting;
    if (!waiting && cq.strategy === 'BestEffortFIFO' && (reason === 'NoFit' || reason === 'PreemptionNoCandidates')) {
      // every queued look-alike would fail the same way: they wait together
      cq.bulkMoved.set(w.shape, w.reason);
      for (const o of cq.queue.setAsideShape(w)) this.markBulk(cq, o);
    } else cq.queue.setAside(w);
    return true;
  }

}

function sameUsage(a: FRAmounts, b: FRAmounts): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** What a preempting head without candidates holds back in a cycle: up to its nominal quota, or its borrowing limit when it borrows. */
function toReserve(a: Assignment, cq: ClusterQueueState): FRAmounts {
  const out: FRAmounts = new Map();
  for (const [fr, v] of a.usage) {
    const q = cq.quotas.get(fr);
    const nominal = q?.nominal ?? 0;
    const used = cq.usage.get(fr) ?? 0;
    if (a.borrowing > 0) out.set(fr, q?.borrowingLimit === undefined ? v : Math.min(v, nominal + q.borrowingLimit - used));
    else out.set(fr, Math.max(0, Math.min(v, nominal - used)));
  }
  return out;
}

/** The pending workloads' positions in a snapshot, per ClusterQueue, without scheduling anything. */
export function positions(snapshot: Snapshot, options: EngineOptions = {}): Record<string, PendingPosition[]> {
  return new AdmissionEngine(snapshot, options).positions();
}

/** One call: the decisions for a snapshot at `now`. */
export function schedule(snapshot: Snapshot, now: Date | number | string = Date.now(), options: EngineOptions = {}): CycleResult {
  return new AdmissionEngine(snapshot, options).schedule(now);
}
