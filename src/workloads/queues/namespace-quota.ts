// The namespace's ResourceQuota as a gate on admission. Kueue leaves ResourceQuota to the API server:
// a Workload it admits whose Pods the namespace's quota then refuses stays admitted, holding the
// ClusterQueue's quota, while its Job keeps failing to create Pods. Skiff asks both before reserving
// quota: a Workload whose usage on top of its namespace's quota status `used` would exceed any of the
// namespace's ResourceQuotas stays pending, QuotaReserved=False with reason Pending (Kueue's reason for
// a workload that simply waits) and kube's own refusal as the message, and is tried again a few
// seconds later, since Pods ending elsewhere in the namespace free the quota without a Kueue event.
import { Kinds } from '../../api/index.js';
import { add, exceeds, podUsage, type ResourceList, type ResourceQuotaObject } from '../../api/resourcequota.js';
import { parseQuantity } from '../../api/quantity.js';
import type { KObject } from '../../api/meta.js';
import type { InformerCache } from '../../control/informer.js';
import type { WorkloadLike } from './engine/index.js';

/** what a Workload's Pods will count against a ResourceQuota once they all exist */
export function workloadQuotaUsage(w: WorkloadLike, now = Date.now()): ResourceList {
  let total: ResourceList = new Map();
  for (const ps of w.spec?.podSets ?? []) {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: ps.name }, spec: ps.template?.spec ?? {} } as KObject;
    const one = podUsage(pod, now);
    const count = ps.count ?? 1;
    const times: ResourceList = new Map([...one].map(([k, v]) => [k, v * count]));
    total = add(total, times);
  }
  return total;
}

/** a quota's status.used as thousandths (kube's quota controller keeps it) */
function usedOf(q: ResourceQuotaObject): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(q.status?.used ?? {})) {
    const n = parseQuantity(v);
    if (n !== undefined) out.set(k, Math.round(n * 1000));
  }
  return out;
}

/**
 * The gate for one scheduling call. The quota's `used` counts only Pods that exist, so the usage of
 * Workloads let through earlier in the same call is added on top: two Workloads that each fit alone
 * are not both admitted into room for one. (Workloads admitted in an earlier call whose Pods are not
 * created yet are not counted: the API server's quota admission still refuses their Pods then.)
 */
export class NamespaceQuotaGate {
  private assumed = new Map<string, ResourceList>();

  constructor(private readonly cache: InformerCache) {}

  /** forgets what the previous call let through: by now their Pods are counted, or soon will be */
  reset(): void {
    this.assumed = new Map();
  }

  check(w: WorkloadLike, now: number): string | undefined {
    // a Pod's own Workload (plain Pods, Notebooks): the gated Pod exists, so the API server's quota
    // admission let it in and the quota's `used` already counts it; adding it again would refuse it twice
    if ((w.metadata as { ownerReferences?: { apiVersion: string; kind: string }[] }).ownerReferences?.some((r) => r.kind === 'Pod' && r.apiVersion === 'v1')) return undefined;
    const ns = w.metadata.namespace ?? '';
    const quotas = this.cache.list(Kinds.ResourceQuota, { namespace: ns }) as ResourceQuotaObject[];
    if (quotas.length === 0) return undefined;
    const usage = workloadQuotaUsage(w, now);
    const extra = this.assumed.get(ns) ?? new Map<string, number>();
    for (const q of quotas) {
      const refusal = exceeds(q, add(usedOf(q), extra), usage);
      if (refusal) return `The namespace's ResourceQuota does not admit the workload: ${refusal}`;
    }
    this.assumed.set(ns, add(extra, usage));
    return undefined;
  }
}
