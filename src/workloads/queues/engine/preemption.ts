// Who must leave for a workload to fit. Classic preemption gathers candidates (lower priority in
// the same ClusterQueue; workloads of borrowing ClusterQueues elsewhere in the cohort tree, by the
// reclaim and borrow policies), orders them as Kueue does (already evicted first, other queues
// before one's own, lowest priority, most recently admitted), removes them one by one until the
// preemptor fits, then puts back those it turns out not to need. Fair sharing instead takes from
// the ClusterQueue with the highest dominant resource share while its preemption strategy holds.
import {
  addAll,
  available,
  borrowingWith,
  compareDRS,
  drsOf,
  fitsInQuota,
  removeAll,
  weightedShare,
  withinNominal,
  type CohortNode,
  type DRS,
  type FRAmounts,
  type FlavorResources,
  type QuotaNode,
} from './hierarchy.js';
import type { ClusterQueueState, Wl } from './state.js';
import type { FairSharingStrategy, PreemptedReason } from './types.js';

export interface Target {
  wl: Wl;
  reason: PreemptedReason;
  cq: ClusterQueueState;
}

export interface PreemptionRequest {
  preemptor: Wl;
  cq: ClusterQueueState;
  /** the flavor-resources whose assignment needs preemption */
  frs: Set<number>;
  /** the preemptor's usage */
  usage: FRAmounts;
}

const enum Variant {
  Never,
  WithinCQ,
  HierarchicalReclaim,
  ReclaimWithoutBorrowing,
  ReclaimWhileBorrowing,
}

const reasonOf: Record<Variant, PreemptedReason> = {
  [Variant.Never]: 'InClusterQueue',
  [Variant.WithinCQ]: 'InClusterQueue',
  [Variant.HierarchicalReclaim]: 'InCohortReclamation',
  [Variant.ReclaimWithoutBorrowing]: 'InCohortReclamation',
  [Variant.ReclaimWhileBorrowing]: 'InCohortReclaimWhileBorrowing',
};

interface Candidate {
  wl: Wl;
  /** the cohort below which the candidate's quota must be over nominal for it to be taken */
  lca?: CohortNode;
  variant: Variant;
}

/** the Preempted condition's human words for each reason */
export const humanReason: Record<PreemptedReason, string> = {
  InClusterQueue: 'prioritization in the ClusterQueue',
  InCohortReclamation: 'reclamation within the cohort',
  InCohortFairSharing: 'Fair Sharing within the cohort',
  InCohortReclaimWhileBorrowing: 'reclamation within the cohort while borrowing',
};

export function usesResources(w: Wl, frs: Set<number>): boolean {
  for (const fr of w.reservation?.usage.keys() ?? []) if (frs.has(fr)) return true;
  return false;
}

/** withinClusterQueue / reclaimWithinCohort: may the preemptor take the candidate's place */
export function satisfiesPolicy(preemptor: Wl, candidate: Wl, policy: string): boolean {
  const lower = preemptor.priority > candidate.priority;
  if (policy === 'LowerPriority') return lower;
  if (policy === 'LowerOrNewerEqualPriority') return lower || (preemptor.priority === candidate.priority && preemptor.orderTs < candidate.orderTs);
  return policy === 'Any';
}

function reservedAt(w: Wl, now: number): number {
  return w.reservation?.reservedAt ?? now;
}

/** Kueue's candidate order; negative when a goes first */
export function candidateOrder(a: Wl, b: Wl, cqName: string, now: number): number {
  if (a.evicted !== b.evicted) return a.evicted ? -1 : 1;
  const aHere = a.reservation?.cq.name === cqName;
  const bHere = b.reservation?.cq.name === cqName;
  if (aHere !== bHere) return aHere ? 1 : -1;
  if (a.priority !== b.priority) return a.priority - b.priority;
  const ta = reservedAt(a, now);
  const tb = reservedAt(b, now);
  if (ta !== tb) return tb - ta;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

function ancestors(cq: QuotaNode): CohortNode[] {
  const out: CohortNode[] = [];
  for (let n = cq.parent; n; n = n.parent) out.push(n);
  return out;
}

export class Preemptor {
  constructor(
    private readonly frTable: FlavorResources,
    private readonly strategies: FairSharingStrategy[] | undefined,
    private readonly now: number,
  ) {}

  targets(req: PreemptionRequest): Target[] {
    return this.strategies ? this.fair(req, this.strategies) : this.classic(req);
  }

  private remove(w: Wl): void {
    const r = w.reservation;
    if (r) removeAll(r.cq, r.usage);
  }

  private restore(w: Wl): void {
    const r = w.reservation;
    if (r) addAll(r.cq, r.usage);
  }

  private fits(req: PreemptionRequest, allowBorrowing: boolean): boolean {
    for (const [fr, v] of req.usage) {
      if (!allowBorrowing && borrowingWith(req.cq, fr, v)) return false;
      if (v > Math.max(0, available(req.cq, fr))) return false;
    }
    return true;
  }

  private order(list: Candidate[], cqName: string): Candidate[] {
    return list.sort((a, b) => candidateOrder(a.wl, b.wl, cqName, this.now));
  }

  private classify(req: PreemptionRequest, w: Wl, advantage: boolean): Variant {
    if (!usesResources(w, req.frs)) return Variant.Never;
    const here = w.reservation?.cq === req.cq;
    const policy = here ? req.cq.preemption.withinClusterQueue : req.cq.preemption.reclaimWithinCohort;
    if (!satisfiesPolicy(req.preemptor, w, policy)) return Variant.Never;
    if (here) return Variant.WithinCQ;
    if (advantage) return Variant.HierarchicalReclaim;
    const bwc = req.cq.preemption.borrowWithinCohort;
    if (!bwc || bwc.policy === 'Never') return Variant.ReclaimWithoutBorrowing;
    // a candidate at or above the preemptor's priority, or above the threshold, may only be taken
    // if the preemptor would then not borrow
    if (w.priority >= req.preemptor.priority) return Variant.ReclaimWithoutBorrowing;
    if (bwc.maxPriorityThreshold !== undefined && w.priority > bwc.maxPriorityThreshold) return Variant.ReclaimWithoutBorrowing;
    return Variant.ReclaimWhileBorrowing;
  }

  private fromCQ(req: PreemptionRequest, cq: ClusterQueueState, lca: CohortNode | undefined, advantage: boolean, out: Candidate[]): void {
    for (const w of cq.reserving.values()) {
      const variant = this.classify(req, w, advantage);
      if (variant !== Variant.Never) out.push(lca ? { wl: w, lca, variant } : { wl: w, variant });
    }
  }

  /** ClusterQueues over nominal quota in the subtree, skipping the part already searched */
  private inSubtree(req: PreemptionRequest, cohort: CohortNode, subtreeRoot: CohortNode, skip: CohortNode | undefined, advantage: boolean, out: Candidate[]): void {
    for (const child of cohort.childCohorts) {
      if (child === skip || withinNominal(child, req.frs)) continue;
      this.inSubtree(req, child, subtreeRoot, skip, advantage, out);
    }
    for (const child of cohort.childCQs) {
      if (child === req.cq || withinNominal(child, req.frs)) continue;
      this.fromCQ(req, child as ClusterQueueState, subtreeRoot, advantage, out);
    }
  }

  private valid(req: PreemptionRequest, c: Candidate, allowBorrowing: boolean): boolean {
    const cq = c.wl.reservation?.cq;
    if (!cq || cq === req.cq) return true;
    if (allowBorrowing && c.variant === Variant.ReclaimWithoutBorrowing) return false;
    if (withinNominal(cq, req.frs)) return false;
    for (let n = cq.parent; n && n !== c.lca; n = n.parent) if (withinNominal(n, req.frs)) return false;
    return true;
  }

  private fillBack(req: PreemptionRequest, targets: Target[], allowBorrowing: boolean): Target[] {
    for (let i = targets.length - 2; i >= 0; i--) {
      const t = targets[i] as Target;
      this.restore(t.wl);
      if (this.fits(req, allowBorrowing)) {
        targets[i] = targets[targets.length - 1] as Target;
        targets.pop();
      } else {
        this.remove(t.wl);
      }
    }
    return targets;
  }

  private classic(req: PreemptionRequest): Target[] {
    const { cq } = req;
    const same: Candidate[] = [];
    if (cq.preemption.withinClusterQueue !== 'Never') this.fromCQ(req, cq, undefined, false, same);
    const hierarchy: Candidate[] = [];
    const priority: Candidate[] = [];
    if (cq.parent && cq.preemption.reclaimWithinCohort !== 'Never') {
      let [advantage, remaining] = fitsInQuota(cq, req.usage);
      let previous: CohortNode | undefined;
      for (const node of ancestors(cq)) {
        this.inSubtree(req, node, node, previous, advantage, advantage ? hierarchy : priority);
        const [fits, rest] = fitsInQuota(node, remaining);
        remaining = rest;
        advantage = advantage || fits;
        previous = node;
      }
    }
    const split = (l: Candidate[]): [Candidate[], Candidate[]] => {
      const sorted = this.order(l, cq.name);
      const i = sorted.findIndex((c) => !c.wl.evicted);
      return i < 0 ? [sorted, []] : [sorted.slice(0, i), sorted.slice(i)];
    };
    const [eh, nh] = split(hierarchy);
    const [ep, np] = split(priority);
    const [es, ns] = split(same);
    const all = [...eh, ...ep, ...es, ...nh, ...np, ...ns];
    const noneFromOthers = hierarchy.length === 0 && priority.length === 0;
    const bwc = cq.preemption.borrowWithinCohort;
    const borrowForbidden = !bwc || bwc.policy === 'Never';
    let attempts: boolean[];
    if (noneFromOthers || (borrowForbidden && !this.underNominal(req))) attempts = [true];
    else if (borrowForbidden && hierarchy.length === 0) attempts = [false, true];
    else attempts = [true, false];
    for (const allowBorrowing of attempts) {
      let targets: Target[] = [];
      for (const c of all) {
        if (!this.valid(req, c, allowBorrowing)) continue;
        this.remove(c.wl);
        targets.push({ wl: c.wl, reason: reasonOf[c.variant], cq: c.wl.reservation?.cq as ClusterQueueState });
        if (this.fits(req, allowBorrowing)) {
          targets = this.fillBack(req, targets, allowBorrowing);
          for (const t of targets) this.restore(t.wl);
          return targets;
        }
      }
      for (const t of targets) this.restore(t.wl);
    }
    return [];
  }

  /** usage strictly below nominal quota for every contested flavor-resource */
  private underNominal(req: PreemptionRequest): boolean {
    for (const fr of req.frs) if ((req.cq.quotas.get(fr)?.nominal ?? 0) <= (req.cq.usage.get(fr) ?? 0)) return false;
    return true;
  }

  // ---- fair sharing ----

  private fair(req: PreemptionRequest, strategies: FairSharingStrategy[]): Target[] {
    const { cq } = req;
    const candidates: Wl[] = [];
    if (cq.preemption.withinClusterQueue !== 'Never') {
      for (const w of cq.reserving.values()) if (satisfiesPolicy(req.preemptor, w, cq.preemption.withinClusterQueue) && usesResources(w, req.frs)) candidates.push(w);
    }
    if (cq.parent && cq.preemption.reclaimWithinCohort !== 'Never') {
      for (const other of cq.parent.root().subtreeCQs() as ClusterQueueState[]) {
        if (other === cq || !cqBorrowing(other, req.frs)) continue;
        for (const w of other.reserving.values()) if (satisfiesPolicy(req.preemptor, w, cq.preemption.reclaimWithinCohort) && usesResources(w, req.frs)) candidates.push(w);
      }
    }
    if (candidates.length === 0) return [];
    candidates.sort((a, b) => candidateOrder(a, b, cq.name, this.now));
    // shares are measured with the preemptor admitted
    addAll(cq, req.usage);
    const fitsFS = (): boolean => {
      removeAll(cq, req.usage);
      const ok = this.fits(req, true);
      addAll(cq, req.usage);
      return ok;
    };
    const first = this.firstStrategy(req, candidates, strategies[0] as FairSharingStrategy, fitsFS);
    let [fits, targets] = first;
    if (!fits && strategies.length > 1) [fits, targets] = this.secondStrategy(req, first[2], targets, fitsFS);
    removeAll(cq, req.usage);
    if (!fits) {
      for (const t of targets) this.restore(t.wl);
      return [];
    }
    targets = this.fillBack(req, targets, true);
    for (const t of targets) this.restore(t.wl);
    return targets;
  }

  private firstStrategy(req: PreemptionRequest, candidates: Wl[], strategy: FairSharingStrategy, fits: () => boolean): [boolean, Target[], Wl[]] {
    const ordering = new TargetOrdering(req.cq, candidates, this.frTable, this.now);
    const targets: Target[] = [];
    const retry: Wl[] = [];
    // a preemptor within its nominal quota for the contested resources is owed them regardless of shares
    let withinNominal = true;
    for (const fr of req.frs) if (borrowingWith(req.cq, fr)) withinNominal = false;
    for (let t = ordering.next(); t; t = ordering.next()) {
      if (t === req.cq || withinNominal) {
        const w = ordering.pop(t);
        this.remove(w);
        targets.push({ wl: w, reason: t === req.cq ? 'InClusterQueue' : 'InCohortReclamation', cq: t });
        if (fits()) return [true, targets, []];
        continue;
      }
      const [preemptorNew, targetOld] = ordering.shares(t);
      if (weightedShare(preemptorNew) === Infinity && weightedShare(targetOld) !== Infinity) {
        // no candidate here can pass either strategy; keep them for the second one
        while (ordering.has(t)) retry.push(ordering.pop(t));
        continue;
      }
      while (ordering.has(t)) {
        const w = ordering.pop(t);
        const targetNew = ordering.shareAfterRemoval(t, w);
        const passed = strategy === 'LessThanOrEqualToFinalShare' ? compareDRS(preemptorNew, targetNew) <= 0 : compareDRS(preemptorNew, targetOld) < 0;
        if (!passed) {
          retry.push(w);
          continue;
        }
        this.remove(w);
        targets.push({ wl: w, reason: 'InCohortFairSharing', cq: t });
        if (fits()) return [true, targets, []];
        // shares moved: pick the ClusterQueue again
        break;
      }
    }
    return [false, targets, retry];
  }

  private secondStrategy(req: PreemptionRequest, retry: Wl[], targets: Target[], fits: () => boolean): [boolean, Target[]] {
    const ordering = new TargetOrdering(req.cq, retry, this.frTable, this.now);
    for (let t = ordering.next(); t; t = ordering.next()) {
      const [preemptorNew, targetOld] = ordering.shares(t);
      const w = ordering.pop(t);
      if (compareDRS(preemptorNew, targetOld) < 0) {
        this.remove(w);
        targets.push({ wl: w, reason: 'InCohortFairSharing', cq: t });
        if (fits()) return [true, targets];
      }
      ordering.drop(t);
    }
    return [false, targets];
  }
}

function cqBorrowing(cq: ClusterQueueState, frs: Set<number>): boolean {
  if (!cq.parent) return false;
  for (const fr of frs) if (borrowingWith(cq, fr)) return true;
  return false;
}

const negativeDRS = (): DRS => ({ weight: 1, ratio: -1, dominantResource: '', borrowing: false, borrowedFRs: [] });

/**
 * The ClusterQueues to take from under fair sharing, most unfair first: from the root, the child
 * (ClusterQueue or Cohort) with the highest share that still borrows and has candidates, down to a
 * ClusterQueue. Nodes that cannot yield more are pruned; the root pruned ends the walk.
 */
class TargetOrdering {
  private readonly byCQ = new Map<ClusterQueueState, Wl[]>();
  private readonly prunedCQs = new Set<QuotaNode>();
  private readonly prunedCohorts = new Set<CohortNode>();
  private readonly onPath = new Set<CohortNode>();

  constructor(
    private readonly preemptorCq: ClusterQueueState,
    candidates: Wl[],
    private readonly frs: FlavorResources,
    private readonly now: number,
  ) {
    for (const a of ancestors(preemptorCq)) this.onPath.add(a);
    for (const c of candidates) {
      const cq = c.reservation?.cq;
      if (!cq) continue;
      const l = this.byCQ.get(cq) ?? [];
      l.push(c);
      this.byCQ.set(cq, l);
    }
  }

  has(cq: ClusterQueueState): boolean {
    return (this.byCQ.get(cq)?.length ?? 0) > 0;
  }

  pop(cq: ClusterQueueState): Wl {
    return (this.byCQ.get(cq) as Wl[]).shift() as Wl;
  }

  drop(cq: ClusterQueueState): void {
    this.prunedCQs.add(cq);
  }

  next(): ClusterQueueState | undefined {
    const cq = this.preemptorCq;
    if (!cq.parent) return !this.prunedCQs.has(cq) && this.has(cq) ? cq : undefined;
    const root = cq.parent.root();
    while (!this.prunedCohorts.has(root)) {
      const t = this.nextIn(root);
      if (t) return t;
    }
    return undefined;
  }

  private nextIn(cohort: CohortNode): ClusterQueueState | undefined {
    let bestCq: ClusterQueueState | undefined;
    let bestCqDrs = negativeDRS();
    for (const child of cohort.childCQs as ClusterQueueState[]) {
      if (this.prunedCQs.has(child)) continue;
      const drs = drsOf(child, this.frs);
      if ((!drs.borrowing && child !== this.preemptorCq) || !this.has(child)) {
        this.prunedCQs.add(child);
        continue;
      }
      const c = compareDRS(drs, bestCqDrs);
      if (c === 0 && bestCq) {
        const a = (this.byCQ.get(child) as Wl[])[0] as Wl;
        const b = (this.byCQ.get(bestCq) as Wl[])[0] as Wl;
        if (candidateOrder(a, b, this.preemptorCq.name, this.now) < 0) bestCq = child;
      } else if (c === 1) {
        bestCq = child;
        bestCqDrs = drs;
      }
    }
    let bestCohort: CohortNode | undefined;
    let bestCohortDrs = negativeDRS();
    for (const child of cohort.childCohorts) {
      if (this.prunedCohorts.has(child)) continue;
      const drs = drsOf(child, this.frs);
      if (!drs.borrowing && !this.onPath.has(child)) this.prunedCohorts.add(child);
      else if (compareDRS(drs, bestCohortDrs) >= 0) {
        bestCohort = child;
        bestCohortDrs = drs;
      }
    }
    if (!bestCohort && !bestCq) {
      this.prunedCohorts.add(cohort);
      return undefined;
    }
    if (bestCohort && compareDRS(bestCohortDrs, bestCqDrs) >= 0) return this.nextIn(bestCohort);
    return bestCq;
  }

  /** the nodes just below the lowest cohort the two share: their shares are what fairness compares */
  private almostLCAs(target: ClusterQueueState): [QuotaNode, QuotaNode] {
    let lca: CohortNode | undefined;
    for (const a of ancestors(target)) {
      if (this.onPath.has(a)) {
        lca = a;
        break;
      }
    }
    const below = (cq: QuotaNode): QuotaNode => {
      let n: QuotaNode = cq;
      for (const a of ancestors(cq)) {
        if (a === lca) return n;
        n = a;
      }
      return n;
    };
    return [below(this.preemptorCq), below(target)];
  }

  shares(target: ClusterQueueState): [DRS, DRS] {
    const [p, t] = this.almostLCAs(target);
    return [drsOf(p, this.frs), drsOf(t, this.frs)];
  }

  shareAfterRemoval(target: ClusterQueueState, w: Wl): DRS {
    const r = w.reservation;
    if (r) removeAll(r.cq, r.usage);
    const [, t] = this.almostLCAs(target);
    const drs = drsOf(t, this.frs);
    if (r) addAll(r.cq, r.usage);
    return drs;
  }
}
