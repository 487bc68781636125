// Quota and usage along the cohort tree. Every ClusterQueue and Cohort is a node with its own
// quotas; a Cohort's subtree quota is its own plus what its children may lend it (their quota less
// what lendingLimit keeps local), and usage beyond a child's local part is stored in its parent.
// `available` walks up the tree capping by borrowingLimit; this is the rule of Kueue's
// resource_node, which makes the documented team-a/team-b numbers come out.

/** interned (flavor, resource) pairs: quota maps are keyed by small integers */
export class FlavorResources {
  private ids = new Map<string, number>();
  readonly flavor: string[] = [];
  readonly resource: string[] = [];

  id(flavor: string, resource: string): number {
    const k = `${flavor}\u0000${resource}`;
    let id = this.ids.get(k);
    if (id === undefined) {
      id = this.flavor.length;
      this.ids.set(k, id);
      this.flavor.push(flavor);
      this.resource.push(resource);
    }
    return id;
  }

  find(flavor: string, resource: string): number | undefined {
    return this.ids.get(`${flavor}\u0000${resource}`);
  }
}

export interface Quota {
  nominal: number;
  /** undefined: borrow without limit */
  borrowingLimit?: number;
  /** undefined: lend all unused quota */
  lendingLimit?: number;
}

export type FRAmounts = Map<number, number>;

export class QuotaNode {
  parent?: CohortNode;
  quotas = new Map<number, Quota>();
  subtreeQuota: FRAmounts = new Map();
  usage: FRAmounts = new Map();
  fairWeight = 1;

  constructor(
    readonly kind: 'ClusterQueue' | 'Cohort',
    readonly name: string,
  ) {}
}

export class CohortNode extends QuotaNode {
  childCohorts: CohortNode[] = [];
  childCQs: QuotaNode[] = [];
  /** a Cohort object exists (not only named by a ClusterQueue) */
  declared = false;
  parentName?: string;
  inCycle = false;

  constructor(name: string) {
    super('Cohort', name);
  }

  root(): CohortNode {
    return this.parent ? this.parent.root() : this;
  }

  subtreeCQs(out: QuotaNode[] = []): QuotaNode[] {
    out.push(...this.childCQs);
    for (const c of this.childCohorts) c.subtreeCQs(out);
    return out;
  }

  /** the distance to the furthest leaf: how far borrowing through this cohort reaches */
  height(): number {
    let h = Math.min(this.childCohorts.length + this.childCQs.length, 1);
    for (const c of this.childCohorts) h = Math.max(h, c.height() + 1);
    return h;
  }
}

const get = (m: FRAmounts, fr: number): number => m.get(fr) ?? 0;

/** capacity of the node that its parent never sees, held back by lendingLimit */
export function localQuota(n: QuotaNode, fr: number): number {
  const lending = n.quotas.get(fr)?.lendingLimit;
  return lending === undefined ? 0 : Math.max(0, get(n.subtreeQuota, fr) - lending);
}

export function localAvailable(n: QuotaNode, fr: number): number {
  return Math.max(0, localQuota(n, fr) - get(n.usage, fr));
}

/** Capacity left for the node now: local, then what the parent offers within borrowingLimit (may be negative when over-admitted). */
export function available(n: QuotaNode, fr: number): number {
  if (!n.parent) return get(n.subtreeQuota, fr) - get(n.usage, fr);
  let fromParent = available(n.parent, fr);
  const borrowing = n.quotas.get(fr)?.borrowingLimit;
  if (borrowing !== undefined) {
    const lq = localQuota(n, fr);
    const storedInParent = get(n.subtreeQuota, fr) - lq;
    const usedInParent = Math.max(0, get(n.usage, fr) - lq);
    fromParent = Math.min(storedInParent - usedInParent + borrowing, fromParent);
  }
  return localAvailable(n, fr) + fromParent;
}

/** The most the node could ever get with nothing in use: the largest request that can fit at all. */
export function potentialAvailable(n: QuotaNode, fr: number): number {
  if (!n.parent) return get(n.subtreeQuota, fr);
  let avail = localQuota(n, fr) + potentialAvailable(n.parent, fr);
  const borrowing = n.quotas.get(fr)?.borrowingLimit;
  if (borrowing !== undefined) avail = Math.min(get(n.subtreeQuota, fr) + borrowing, avail);
  return avail;
}

export function addUsage(n: QuotaNode, fr: number, v: number): void {
  const la = localAvailable(n, fr);
  n.usage.set(fr, get(n.usage, fr) + v);
  if (n.parent && v > la) addUsage(n.parent, fr, v - la);
}

export function removeUsage(n: QuotaNode, fr: number, v: number): void {
  const storedInParent = get(n.usage, fr) - localQuota(n, fr);
  n.usage.set(fr, get(n.usage, fr) - v);
  if (storedInParent <= 0 || !n.parent) return;
  removeUsage(n.parent, fr, Math.min(v, storedInParent));
}

export function addAll(n: QuotaNode, usage: FRAmounts): void {
  for (const [fr, v] of usage) addUsage(n, fr, v);
}

export function removeAll(n: QuotaNode, usage: FRAmounts): void {
  for (const [fr, v] of usage) removeUsage(n, fr, v);
}

/** Recomputes subtree quotas and stored usage of a cohort tree from its ClusterQueues' own figures. */
export function recomputeTree(root: CohortNode): void {
  const visit = (c: CohortNode): void => {
    c.subtreeQuota = new Map();
    c.usage = new Map();
    for (const [fr, q] of c.quotas) c.subtreeQuota.set(fr, q.nominal);
    const absorb = (child: QuotaNode): void => {
      for (const [fr, sq] of child.subtreeQuota) c.subtreeQuota.set(fr, get(c.subtreeQuota, fr) + sq - localQuota(child, fr));
      for (const [fr, u] of child.usage) {
        const d = Math.max(0, u - localQuota(child, fr));
        c.usage.set(fr, get(c.usage, fr) + d);
      }
    };
    for (const child of c.childCohorts) {
      visit(child);
      absorb(child);
    }
    for (const child of c.childCQs) {
      child.subtreeQuota = new Map();
      for (const [fr, q] of child.quotas) child.subtreeQuota.set(fr, q.nominal);
      absorb(child);
    }
  };
  visit(root);
}

/** Sets a ClusterQueue's subtree quota when it stands alone, outside any cohort. */
export function recomputeStandalone(n: QuotaNode): void {
  n.subtreeQuota = new Map();
  for (const [fr, q] of n.quotas) n.subtreeQuota.set(fr, q.nominal);
}

/** Whether the requests fit in the node's subtree, and what of them its local quota cannot cover. */
export function fitsInQuota(n: QuotaNode, requests: FRAmounts): [boolean, FRAmounts] {
  let fits = true;
  const remaining: FRAmounts = new Map();
  for (const [fr, v] of requests) {
    if (get(n.subtreeQuota, fr) < get(n.usage, fr) + v) fits = false;
    remaining.set(fr, Math.max(0, v - localAvailable(n, fr)));
  }
  return [fits, remaining];
}

export function withinNominal(n: QuotaNode, frs: Iterable<number>): boolean {
  for (const fr of frs) if (get(n.subtreeQuota, fr) < get(n.usage, fr)) return false;
  return true;
}

/** a ClusterQueue borrows when its usage (plus v) passes its nominal quota; a Cohort when it passes its subtree quota */
export function borrowingWith(n: QuotaNode, fr: number, v = 0): boolean {
  const limit = n.kind === 'ClusterQueue' ? (n.quotas.get(fr)?.nominal ?? 0) : get(n.subtreeQuota, fr);
  return limit < get(n.usage, fr) + v;
}

/**
 * The height of the lowest subtree around the ClusterQueue whose quota covers `val` more of fr
 * (0: the ClusterQueue's own nominal quota does), and whether that subtree is smaller than the
 * whole tree, which leaves room to reclaim from the rest of the hierarchy.
 */
export function lowestSubtreeThatFits(cq: QuotaNode, fr: number, val: number): [number, boolean] {
  if (!borrowingWith(cq, fr, val) || !cq.parent) return [0, !!cq.parent];
  let remaining = val - localAvailable(cq, fr);
  for (let node: CohortNode | undefined = cq.parent; node; node = node.parent) {
    if (!borrowingWith(node, fr, remaining)) return [node.height(), !!node.parent];
    remaining -= localAvailable(node, fr);
  }
  return [cq.parent.root().height(), false];
}

/** Dominant resource share of a node (fair sharing): usage above quota over what the cohort can lend, per resource, divided by weight. */
export interface DRS {
  weight: number;
  /** ×1000, as Kueue scales it */
  ratio: number;
  dominantResource: string;
  borrowing: boolean;
  borrowedFRs: number[];
}

export function drsOf(n: QuotaNode, frs: FlavorResources, extra?: FRAmounts): DRS {
  const drs: DRS = { weight: n.fairWeight, ratio: 0, dominantResource: '', borrowing: false, borrowedFRs: [] };
  if (!n.parent) return drs;
  const borrowed = new Map<string, number>();
  for (const [fr, quota] of n.subtreeQuota) {
    const b = (extra?.get(fr) ?? 0) + get(n.usage, fr) - quota;
    if (b > 0) {
      const res = frs.resource[fr] as string;
      borrowed.set(res, (borrowed.get(res) ?? 0) + b);
      drs.borrowedFRs.push(fr);
    }
  }
  if (borrowed.size === 0) return drs;
  drs.borrowing = true;
  // what the parent could lend at most, per resource, over every flavor the tree knows
  const lendable = new Map<string, number>();
  const root = n.parent.root();
  for (const fr of root.subtreeQuota.keys()) {
    const res = frs.resource[fr] as string;
    lendable.set(res, (lendable.get(res) ?? 0) + potentialAvailable(n.parent, fr));
  }
  for (const [res, b] of borrowed) {
    const l = lendable.get(res) ?? 0;
    if (l <= 0) continue;
    const ratio = (b * 1000) / l;
    if (ratio > drs.ratio || (ratio === drs.ratio && res < drs.dominantResource)) {
      drs.ratio = ratio;
      drs.dominantResource = res;
    }
  }
  return drs;
}

export function weightedShare(d: DRS): number {
  if (d.ratio === 0) return 0;
  if (d.weight === 0) return Infinity;
  return d.ratio / d.weight;
}

const zeroWeightBorrows = (d: DRS): boolean => d.weight === 0 && d.ratio !== 0;

/** lower is preferred for admission, higher for preemption */
export function compareDRS(a: DRS, b: DRS): number {
  const za = zeroWeightBorrows(a);
  const zb = zeroWeightBorrows(b);
  if (za && zb) return Math.sign(a.ratio - b.ratio);
  if (za) return 1;
  if (zb) return -1;
  const wa = weightedShare(a);
  const wb = weightedShare(b);
  return wa < wb ? -1 : wa > wb ? 1 : 0;
}

/** status.fairSharing.weightedShare: the share rounded up, the largest int64 when infinite */
export function reportedShare(d: DRS): number {
  const s = weightedShare(d);
  return s === Infinity ? Number.MAX_SAFE_INTEGER : Math.ceil(s);
}
