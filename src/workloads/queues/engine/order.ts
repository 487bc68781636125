// The order in which a cycle looks at the heads it took: Kueue's classic order (no borrowing first,
// then priority, then age) or, with fair sharing, a tournament up the cohort tree where at each
// cohort the child whose share would be lowest after admitting its head goes first.
import type { Assignment } from './flavor-assigner.js';
import { addAll, compareDRS, drsOf, removeAll, type CohortNode, type DRS, type FRAmounts, type FlavorResources } from './hierarchy.js';
import type { Target } from './preemption.js';
import type { ClusterQueueState, Wl } from './state.js';
import type { PendingReasonCode } from './types.js';

export type RequeueReason = '' | 'FailedAfterNomination' | 'NamespaceMismatch' | 'PendingPreemption' | 'NoFit' | 'PreemptionNoCandidates';

/** a head in a scheduling cycle, and what became of it */
export interface Entry {
  wl: Wl;
  cq: ClusterQueueState;
  assignment?: Assignment;
  targets: Target[];
  /** went through nomination to processing (not turned away before assigning flavors) */
  nominated: boolean;
  skipped: boolean;
  assumed: boolean;
  message: string;
  reason: PendingReasonCode | '';
  requeue: RequeueReason;
  /** its usage was added to the cycle's view without admitting it */
  reserved: boolean;
  /** preemptions this entry issued now */
  issued: number;
  stamp: number;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function borrowsOn(d: DRS, requested: FRAmounts | undefined): boolean {
  return d.borrowedFRs.some((fr) => (requested?.get(fr) ?? 0) > 0);
}

/** the classic order: no borrowing first, then higher priority, then older (then arrived first) */
export function classicOrder(entries: Entry[]): Entry[] {
  return entries.sort((x, y) => {
    const bx = (x.assignment as Assignment).borrowing;
    const by = (y.assignment as Assignment).borrowing;
    if (bx !== by) return bx - by;
    if (x.wl.priority !== y.wl.priority) return y.wl.priority - x.wl.priority;
    if (x.wl.orderTs !== y.wl.orderTs) return x.wl.orderTs - y.wl.orderTs;
    // created in the same second: the one that arrived first, as within a queue
    if (x.wl.arrival !== y.wl.arrival) return x.wl.arrival - y.wl.arrival;
    return byName(x.cq.name, y.cq.name);
  });
}

/** Fair sharing's order, one entry at a time: the tournament is rerun as usage changes. */
export function* fairOrder(entries: Entry[], frs: FlavorResources): Generator<Entry> {
  const left = new Map<ClusterQueueState, Entry>();
  for (const e of entries) left.set(e.cq, e);
  while (left.size > 0) {
    const first = [...left.keys()].sort((a, b) => byName(a.name, b.name))[0] as ClusterQueueState;
    if (!first.parent) {
      const e = left.get(first) as Entry;
      left.delete(first);
      yield e;
      continue;
    }
    const root = first.parent.root();
    const drs = new Map<string, DRS>();
    const requested = new Map<string, FRAmounts>();
    for (const cq of root.subtreeCQs() as ClusterQueueState[]) {
      const e = left.get(cq);
      if (!e) continue;
      const usage = (e.assignment as Assignment).usage;
      addAll(cq, usage);
      requested.set(e.wl.key, usage);
      let d = drsOf(cq, frs);
      for (let anc = cq.parent; anc; anc = anc.parent) {
        drs.set(`${anc.name}\u0000${e.wl.key}`, d);
        d = drsOf(anc, frs);
      }
      removeAll(cq, usage);
    }
    const less = (x: Entry, y: Entry, cohort: CohortNode): boolean => {
      const dx = drs.get(`${cohort.name}\u0000${x.wl.key}`) as DRS;
      const dy = drs.get(`${cohort.name}\u0000${y.wl.key}`) as DRS;
      const bx = borrowsOn(dx, requested.get(x.wl.key));
      const by = borrowsOn(dy, requested.get(y.wl.key));
      if (bx !== by) return !bx;
      const c = compareDRS(dx, dy);
      if (c !== 0) return c < 0;
      if (x.wl.priority !== y.wl.priority) return x.wl.priority > y.wl.priority;
      if (x.wl.orderTs !== y.wl.orderTs) return x.wl.orderTs < y.wl.orderTs;
      return x.wl.arrival < y.wl.arrival;
    };
    const tournament = (c: CohortNode): Entry | undefined => {
      const candidates: Entry[] = [];
      for (const child of c.childCohorts) {
        const winner = tournament(child);
        if (winner) candidates.push(winner);
      }
      for (const child of c.childCQs) {
        const e = left.get(child as ClusterQueueState);
        if (e) candidates.push(e);
      }
      let best = candidates[0];
      for (const x of candidates.slice(1)) if (best && less(x, best, c)) best = x;
      return best;
    };
    const winner = tournament(root) as Entry;
    left.delete(winner.cq);
    yield winner;
  }
}
