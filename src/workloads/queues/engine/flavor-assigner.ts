// Flavor assignment, as Kueue's flavorassigner decides it: for each pod set, each resource group's
// flavors are tried in the ClusterQueue's order; a flavor must suit the pods (node labels against
// nodeSelector and affinity, taints against tolerations) and fit the quota of every resource it
// covers. Each attempt ends as Fit (maybe borrowing), Preempt (fits once others leave) or NoFit,
// and flavorFungibility says whether to stop there or look further for a better one.
import { available, lowestSubtreeThatFits, potentialAvailable, type FRAmounts, type FlavorResources } from './hierarchy.js';
import { formatAmount } from './quantities.js';
import { flavorMatchesAffinity, taintString, untoleratedTaint } from './selectors.js';
import type { ClusterQueueState, FungibilityConfig, LastAssignment, Wl } from './state.js';
import type { PendingReasonCode, ResourceFlavorLike } from './types.js';
import type { PodSetInfo, Requests } from './workload-info.js';

/** FlavorAssignmentMode, from worst to best */
export const enum Mode {
  NoFit = 0,
  Preempt = 1,
  DeferredFit = 2,
  Fit = 3,
}

/** the assigner's finer view: why preemption is (not) possible, and how far quota is borrowed from */
const enum PMode {
  NoFit = 0,
  NoCandidates = 1,
  Preempt = 2,
  Reclaim = 3,
  Fit = 4,
}

interface Granular {
  p: PMode;
  borrow: number;
}

export type Possibility = 'NoCandidates' | 'Preempt' | 'Reclaim';

/** Asks the preemption algorithm whether evicting others would make `quantity` of fr fit. */
export type PreemptionOracle = (cq: ClusterQueueState, wl: Wl, fr: number, quantity: number) => [Possibility, number];

export interface FlavorChoice {
  flavor: string;
  mode: Mode;
  borrow: number;
  triedIdx: number;
}

export interface PodSetAssignmentResult {
  name: string;
  count: number;
  /** the pod set's usage, with `pods` when the ClusterQueue counts them */
  requests: Requests;
  flavors: Map<string, FlavorChoice>;
  reasons: string[];
  /** worst outcome and most severe no-fit reason seen per flavor tried */
  attempts: Map<string, { mode: Mode; noFitReason: string }>;
}

export interface Assignment {
  podSets: PodSetAssignmentResult[];
  /** height of the smallest cohort subtree that covers it: 0 without borrowing */
  borrowing: number;
  usage: FRAmounts;
  last: LastAssignment;
  noFitReason: string;
  modeOverride?: Mode;
}

const severity: Record<string, number> = { NoMatchingFlavor: 4, ExceedsMaxQuota: 3, WaitingForQuota: 2, TopologyPlacementFailed: 1 };
const sev = (r: string): number => severity[r] ?? 0;
const mostSevere = (a: string, b: string): string => (sev(a) >= sev(b) ? a : b);

function podSetMode(ps: PodSetAssignmentResult): Mode {
  if (ps.reasons.length === 0) return Mode.Fit;
  if (ps.flavors.size === 0) return Mode.NoFit;
  let m = Mode.Fit;
  for (const f of ps.flavors.values()) if (f.mode < m) m = f.mode;
  return m;
}

/** the worst mode among the pod sets */
export function representativeMode(a: Assignment): Mode {
  if (a.modeOverride !== undefined) return a.modeOverride;
  if (a.podSets.length === 0) return Mode.NoFit;
  let m = Mode.Fit;
  for (const ps of a.podSets) m = Math.min(m, podSetMode(ps));
  return m;
}

/** the status message: why each pod set cannot have its flavors now */
export function assignmentMessage(a: Assignment): string {
  const parts: string[] = [];
  for (const ps of a.podSets) {
    if (ps.reasons.length === 0) continue;
    parts.push(`couldn't assign flavors to pod set ${ps.name}: ${[...ps.reasons].sort().join(', ')}`);
  }
  return parts.join('; ');
}

function preferred(a: Granular, b: Granular, f: FungibilityConfig): boolean {
  if (a.p === PMode.NoFit) return false;
  if (b.p === PMode.NoFit) return true;
  const aNone = a.p === PMode.NoCandidates;
  const bNone = b.p === PMode.NoCandidates;
  if (aNone !== bNone) return !aNone;
  if (f.preference === 'PreemptionOverBorrowing') {
    if (a.borrow !== b.borrow) return a.borrow < b.borrow;
    return a.p > b.p;
  }
  if (a.p !== b.p) return a.p > b.p;
  return a.borrow < b.borrow;
}

function tryNext(m: Granular, f: FungibilityConfig): boolean {
  if (m.p === PMode.NoFit || m.p === PMode.NoCandidates) return true;
  if ((m.p === PMode.Preempt || m.p === PMode.Reclaim) && f.whenCanPreempt === 'TryNextFlavor') return true;
  return m.borrow !== 0 && f.whenCanBorrow === 'TryNextFlavor';
}

const toMode = (p: PMode): Mode => (p === PMode.NoFit ? Mode.NoFit : p === PMode.Fit ? Mode.Fit : Mode.Preempt);

export interface AssignerContext {
  frs: FlavorResources;
  flavors: Map<string, ResourceFlavorLike>;
  oracle: PreemptionOracle;
  fairSharing: boolean;
  cycle: number;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class FlavorAssigner {
  /**
   * `pin`, per pod set and resource, holds a recomputation to the flavors first nominated, so a
   * workload re-evaluated within a cycle does not jump to another flavor.
   */
  constructor(
    private readonly ctx: AssignerContext,
    private readonly wl: Wl,
    private readonly cq: ClusterQueueState,
    private readonly pin?: Map<number, Map<string, string>>,
  ) {}

  private canPreemptWhileBorrowing(): boolean {
    const b = this.cq.preemption.borrowWithinCohort;
    return (!!b && b.policy !== 'Never') || (this.ctx.fairSharing && this.cq.preemption.reclaimWithinCohort !== 'Never');
  }

  private fitsQuota(fr: number, assumed: number, request: number, reasons: string[]): [PMode, number, string] {
    const { cq } = this;
    const res = this.ctx.frs.resource[fr] as string;
    const flavor = this.ctx.frs.flavor[fr] as string;
    const avail = Math.max(0, available(cq, fr));
    const max = potentialAvailable(cq, fr);
    const val = assumed + request;
    if (val > max) {
      reasons.push(
        `insufficient quota for ${res} in flavor ${flavor}, previously considered podsets requests (${formatAmount(res, assumed)}) + current podset request (${formatAmount(res, request)}) > maximum capacity (${formatAmount(res, max)})`,
      );
      return [PMode.NoFit, 0, 'ExceedsMaxQuota'];
    }
    const [borrow, mayReclaim] = lowestSubtreeThatFits(cq, fr, val);
    if (val <= avail) return [PMode.Fit, borrow, ''];
    reasons.push(`insufficient unused quota for ${res} in flavor ${flavor}, ${formatAmount(res, val - avail)} more needed`);
    const nominal = cq.quotas.get(fr)?.nominal ?? 0;
    if (nominal >= val || mayReclaim || this.canPreemptWhileBorrowing()) {
      const [possibility, after] = this.ctx.oracle(cq, this.wl, fr, val);
      const p = possibility === 'NoCandidates' ? PMode.NoCandidates : possibility === 'Preempt' ? PMode.Preempt : PMode.Reclaim;
      return [p, after, ''];
    }
    return [PMode.NoFit, borrow, 'WaitingForQuota'];
  }

  /** why the flavor cannot host these pods at all, or undefined */
  private flavorMismatch(flavorName: string, ps: PodSetInfo): string | undefined {
    const flavor = this.ctx.flavors.get(flavorName);
    if (!flavor) return `flavor ${flavorName} not found`;
    const spec = ps.spec;
    const taint = untoleratedTaint(flavor.spec?.nodeTaints, [...(spec?.tolerations ?? []), ...(flavor.spec?.tolerations ?? [])]);
    if (taint) return `untolerated taint ${taintString(taint)} in flavor ${flavorName}`;
    if (!flavorMatchesAffinity(spec, flavor.spec?.nodeLabels)) return `flavor ${flavorName} doesn't match node affinity`;
    return undefined;
  }

  /** Finds the flavor of resName's group for one pod set; the other resources of the group get the same. */
  private findFlavor(psIndex: number, ps: PodSetInfo, requests: Requests, resName: string, usage: FRAmounts, out: PodSetAssignmentResult, status: string[]): Map<string, FlavorChoice> | undefined {
    const groupIdx = this.cq.rgByResource.get(resName);
    if (groupIdx === undefined) {
      status.push(`resource ${resName} unavailable in ClusterQueue`);
      return undefined;
    }
    const group = this.cq.resourceGroups[groupIdx] as { covered: string[]; flavors: string[] };
    const covered = [...requests.keys()].filter((r) => group.covered.includes(r)).sort(byName);
    const reasons: string[] = [];
    let best: Map<string, FlavorChoice> | undefined;
    let bestMode: Granular = { p: PMode.NoFit, borrow: Number.MAX_SAFE_INTEGER };
    let attempted = -1;
    const start = (this.wl.last?.tried[psIndex]?.get(resName) ?? -1) + 1;
    for (let idx = start; idx < group.flavors.length; idx++) {
      attempted = idx;
      const fName = group.flavors[idx] as string;
      if (this.pin && this.pin.get(psIndex)?.get(resName) !== fName) {
        reasons.push(`skipping flavor ${fName} as it is not found in the nomination mapping for resource ${resName}`);
        continue;
      }
      const mismatch = this.flavorMismatch(fName, ps);
      if (mismatch) {
        reasons.push(mismatch);
        noteAttempt(out, fName, Mode.NoFit, 'NoMatchingFlavor');
        continue;
      }
      const choices = new Map<string, FlavorChoice>();
      let rep: Granular = { p: PMode.Fit, borrow: 0 };
      let flavorNoFit = '';
      for (const r of covered) {
        const fr = this.ctx.frs.id(fName, r);
        const [p, borrow, noFit] = this.fitsQuota(fr, usage.get(fr) ?? 0, requests.get(r) ?? 0, reasons);
        flavorNoFit = mostSevere(flavorNoFit, noFit);
        const m: Granular = { p, borrow };
        if (preferred(rep, m, this.cq.fungibility)) rep = m;
        if (rep.p === PMode.NoFit) continue;
        choices.set(r, { flavor: fName, mode: toMode(p), borrow, triedIdx: 0 });
      }
      noteAttempt(out, fName, toMode(rep.p), rep.p === PMode.NoFit ? flavorNoFit : '');
      if (!tryNext(rep, this.cq.fungibility)) {
        best = choices;
        bestMode = rep;
        break;
      }
      if (preferred(rep, bestMode, this.cq.fungibility)) {
        best = choices;
        bestMode = rep;
      }
    }
    for (const c of best?.values() ?? []) c.triedIdx = attempted === group.flavors.length - 1 ? -1 : attempted;
    if (bestMode.p !== PMode.Fit) status.push(...reasons);
    return best;
  }

  /**
   * Assigns flavors to every pod set, with `counts` pods each when given (partial admission),
   * stopping at the first pod set that gets none.
   */
  assign(counts?: number[]): Assignment {
    const { cq, wl } = this;
    const a: Assignment = {
      podSets: [],
      borrowing: 0,
      usage: new Map(),
      last: { tried: [], generation: cq.generation, cycle: this.ctx.cycle, shape: wl.shape },
      noFitReason: '',
    };
    const countsPods = cq.rgByResource.has('pods');
    for (let i = 0; i < wl.podSets.length; i++) {
      const ps = wl.podSets[i] as PodSetInfo;
      const count = counts ? (counts[i] as number) : ps.count;
      const requests: Requests = new Map();
      for (const [k, v] of ps.perPod) requests.set(k, counts ? v * count : (ps.total.get(k) ?? 0));
      if (countsPods) requests.set('pods', count);
      const out: PodSetAssignmentResult = { name: ps.name, count, requests, flavors: new Map(), reasons: [], attempts: new Map() };
      let group: Map<string, FlavorChoice> | undefined = new Map();
      for (const res of [...requests.keys()].sort(byName)) {
        if (!cq.rgByResource.has(res) && (requests.get(res) ?? 0) === 0) continue;
        if (group.has(res)) continue;
        const status: string[] = [];
        const found = this.findFlavor(i, ps, requests, res, a.usage, out, status);
        if (!found || (found.size === 0 && requests.size > 0)) {
          // a group without a flavor fails the pod set: its reasons are the ones to tell
          group = undefined;
          out.reasons = status;
          break;
        }
        for (const [k, v] of found) group.set(k, v);
        out.reasons.push(...status);
      }
      if (group) for (const [k, v] of group) if (requests.has(k)) out.flavors.set(k, v);
      a.podSets.push(out);
      const tried = new Map<string, number>();
      for (const [res, choice] of out.flavors) {
        a.borrowing = Math.max(a.borrowing, choice.borrow);
        const fr = this.ctx.frs.id(choice.flavor, res);
        a.usage.set(fr, (a.usage.get(fr) ?? 0) + (requests.get(res) ?? 0));
        tried.set(res, choice.triedIdx);
      }
      a.last.tried.push(tried);
      if (requests.size > 0 && out.flavors.size === 0) {
        a.noFitReason = noFitReason(a, cq);
        return a;
      }
    }
    if (representativeMode(a) === Mode.NoFit) a.noFitReason = noFitReason(a, cq);
    return a;
  }
}

function noteAttempt(out: PodSetAssignmentResult, flavor: string, mode: Mode, reason: string): void {
  const prev = out.attempts.get(flavor);
  if (!prev) out.attempts.set(flavor, { mode, noFitReason: reason });
  else out.attempts.set(flavor, { mode: Math.min(prev.mode, mode), noFitReason: mostSevere(prev.noFitReason, reason) });
}

/**
 * The QuotaReserved reason for an assignment that fits nowhere: within a resource group the least
 * severe blocker among its flavors (another flavor might free up), across groups and pod sets the
 * most severe.
 */
function noFitReason(a: Assignment, cq: ClusterQueueState): PendingReasonCode | '' {
  let overall = '';
  for (const ps of a.podSets) {
    if (podSetMode(ps) !== Mode.NoFit) continue;
    if (ps.attempts.size === 0) {
      overall = mostSevere(overall, 'NoMatchingFlavor');
      continue;
    }
    const perGroup = new Map<number, string>();
    let i = 0;
    for (const [flavor, att] of ps.attempts) {
      i++;
      if (att.mode !== Mode.NoFit) continue;
      const groups = cq.resourceGroups.flatMap((g, gi) => (g.flavors.includes(flavor) ? [gi] : []));
      for (const gi of groups.length ? groups : [-i]) {
        const existing = perGroup.get(gi);
        if (existing === undefined || sev(att.noFitReason) < sev(existing)) perGroup.set(gi, att.noFitReason);
      }
    }
    // no flavor was even tried for the group that failed (a resource no group covers)
    let psReason = perGroup.size === 0 ? 'NoMatchingFlavor' : '';
    for (const r of perGroup.values()) psReason = mostSevere(psReason, r);
    overall = mostSevere(overall, psReason);
  }
  return overall as PendingReasonCode | '';
}

/** the flavor-resources whose assignment needs preemption */
export function needPreemption(a: Assignment, frs: FlavorResources): Set<number> {
  const out = new Set<number>();
  for (const ps of a.podSets) for (const [res, c] of ps.flavors) if (c.mode === Mode.Preempt) out.add(frs.id(c.flavor, res));
  return out;
}

/**
 * Partial admission: the largest pod counts between each pod set's minCount and count that fit,
 * found by bisection over the total reduction as Kueue's PodSetReducer does.
 */
export function searchCounts<R>(w: Wl, fits: (counts: number[]) => R | undefined): R | undefined {
  const full = w.podSets.map((ps) => ps.count);
  const deltas = w.podSets.map((ps) => ps.count - (ps.minCount ?? ps.count));
  const total = deltas.reduce((s, d) => s + d, 0);
  if (total === 0) return undefined;
  const countsAt = (i: number): number[] => full.map((c, j) => c - Math.trunc(((deltas[j] as number) * i) / total));
  let lo = 0;
  let hi = total + 1;
  let best: R | undefined;
  let bestIdx = -1;
  // the smallest reduction i in [0, total] that fits (fit is monotone in the reduction)
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const r = fits(countsAt(mid));
    if (r !== undefined) {
      best = r;
      bestIdx = mid;
      hi = mid;
    } else lo = mid + 1;
  }
  return bestIdx === lo ? best : undefined;
}
