// Reading ClusterQueue and Cohort specs into the engine's state: quotas as integers per
// (flavor, resource), policies with Kueue's defaults (and v1beta1's spellings where they differ).
import type { FlavorResources, Quota, QuotaNode } from './hierarchy.js';
import { toAmount } from './quantities.js';
import type { ClusterQueueState } from './state.js';
import type { ClusterQueueLike, Quantity, ResourceGroupLike } from './types.js';
import { parseQuantity } from '../../../api/quantity.js';

/** Reads resource groups' quotas into a node; returns the groups as flavor lists. */
export function readQuotas(node: QuotaNode, groups: ResourceGroupLike[] | undefined, frs: FlavorResources): { covered: string[]; flavors: string[] }[] {
  node.quotas = new Map();
  const out: { covered: string[]; flavors: string[] }[] = [];
  for (const g of groups ?? []) {
    out.push({ covered: [...(g.coveredResources ?? [])], flavors: (g.flavors ?? []).map((f) => f.name) });
    for (const f of g.flavors ?? []) {
      for (const r of f.resources ?? []) {
        const q: Quota = { nominal: Math.max(0, toAmount(r.name, r.nominalQuota ?? 0) ?? 0) };
        const b = r.borrowingLimit === null || r.borrowingLimit === undefined ? undefined : toAmount(r.name, r.borrowingLimit);
        const l = r.lendingLimit === null || r.lendingLimit === undefined ? undefined : toAmount(r.name, r.lendingLimit);
        if (b !== undefined) q.borrowingLimit = b;
        if (l !== undefined) q.lendingLimit = l;
        node.quotas.set(frs.id(f.name, r.name), q);
      }
    }
  }
  return out;
}

/** fairSharing.weight: 1 when unset */
export function fairWeight(fs: { weight?: Quantity } | undefined): number {
  if (fs?.weight === undefined) return 1;
  const w = parseQuantity(fs.weight);
  return w === undefined || w < 0 ? 1 : w;
}

const policy = (p: string | undefined): string => p ?? 'Never';

const fungible = (v: string | undefined, def: 'MayStopSearch' | 'TryNextFlavor'): 'MayStopSearch' | 'TryNextFlavor' => {
  if (v === 'TryNextFlavor') return 'TryNextFlavor';
  if (v === 'MayStopSearch' || v === 'Borrow' || v === 'Preempt') return 'MayStopSearch';
  return def;
};

/** Applies a ClusterQueue's spec to its state; flavors it names that do not exist are noted. */
export function readClusterQueue(cq: ClusterQueueState, obj: ClusterQueueLike, frs: FlavorResources, flavorExists: (name: string) => boolean): void {
  const spec = obj.spec ?? {};
  cq.obj = obj;
  const cohort = spec.cohortName ?? spec.cohort;
  if (cohort) cq.cohortName = cohort;
  else cq.cohortName = undefined;
  cq.resourceGroups = readQuotas(cq, spec.resourceGroups, frs);
  cq.rgByResource = new Map();
  cq.resourceGroups.forEach((g, i) => {
    for (const r of g.covered) if (!cq.rgByResource.has(r)) cq.rgByResource.set(r, i);
  });
  const missing = new Set<string>();
  for (const g of cq.resourceGroups) for (const f of g.flavors) if (!flavorExists(f)) missing.add(f);
  cq.missingFlavors = [...missing].sort();
  cq.namespaceSelector = spec.namespaceSelector;
  cq.strategy = spec.queueingStrategy === 'StrictFIFO' ? 'StrictFIFO' : 'BestEffortFIFO';
  const p = spec.preemption ?? {};
  cq.preemption = { withinClusterQueue: policy(p.withinClusterQueue), reclaimWithinCohort: policy(p.reclaimWithinCohort) };
  if (p.borrowWithinCohort) {
    const b: { policy: string; maxPriorityThreshold?: number } = { policy: policy(p.borrowWithinCohort.policy) };
    if (typeof p.borrowWithinCohort.maxPriorityThreshold === 'number') b.maxPriorityThreshold = p.borrowWithinCohort.maxPriorityThreshold;
    cq.preemption.borrowWithinCohort = b;
  }
  const f = spec.flavorFungibility ?? {};
  cq.fungibility = {
    whenCanBorrow: fungible(f.whenCanBorrow, 'MayStopSearch'),
    whenCanPreempt: fungible(f.whenCanPreempt, 'TryNextFlavor'),
    preference: f.preference === 'PreemptionOverBorrowing' ? 'PreemptionOverBorrowing' : 'BorrowingOverPreemption',
  };
  cq.fairWeight = fairWeight(spec.fairSharing);
  cq.stopPolicy = spec.stopPolicy === 'Hold' || spec.stopPolicy === 'HoldAndDrain' ? spec.stopPolicy : 'None';
  const checks = spec.admissionChecksStrategy?.admissionChecks?.map((c) => (c.onFlavors?.length ? { name: c.name, onFlavors: [...c.onFlavors] } : { name: c.name }));
  cq.admissionChecks = checks ?? (spec.admissionChecks ?? []).map((name) => ({ name }));
}
