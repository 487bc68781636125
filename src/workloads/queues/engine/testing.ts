// Builders for the engine's tests: Kueue objects in their v1beta2 shape, short to write.
import type {
  ClusterQueueLike,
  CohortLike,
  Condition,
  LocalQueueLike,
  NamespaceLike,
  PodSetLike,
  Quantity,
  ResourceFlavorLike,
  Snapshot,
  Taint,
  Toleration,
  WorkloadLike,
} from './types.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

export function flavor(name: string, spec: ResourceFlavorLike['spec'] = {}): ResourceFlavorLike {
  return { metadata: { name }, spec };
}

/** quotas as { flavor: { resource: nominal | [nominal, borrowingLimit?, lendingLimit?] } }, one group covering all resources named */
export type Quotas = Record<string, Record<string, Quantity | [Quantity, Quantity | null, (Quantity | null)?]>>;

export function groups(...gs: Quotas[]): NonNullable<ClusterQueueLike['spec']>['resourceGroups'] {
  return gs.map((q) => {
    const covered = [...new Set(Object.values(q).flatMap((r) => Object.keys(r)))];
    return {
      coveredResources: covered,
      flavors: Object.entries(q).map(([name, res]) => ({
        name,
        resources: Object.entries(res).map(([r, v]) => {
          if (!Array.isArray(v)) return { name: r, nominalQuota: v };
          const out: { name: string; nominalQuota: Quantity; borrowingLimit?: Quantity; lendingLimit?: Quantity } = { name: r, nominalQuota: v[0] };
          if (v[1] !== null && v[1] !== undefined) out.borrowingLimit = v[1];
          if (v[2] !== null && v[2] !== undefined) out.lendingLimit = v[2];
          return out;
        }),
      })),
    };
  });
}

export function clusterQueue(name: string, quotas: Quotas | Quotas[], spec: Partial<NonNullable<ClusterQueueLike['spec']>> = {}): ClusterQueueLike {
  const q = Array.isArray(quotas) ? quotas : [quotas];
  return { metadata: { name }, spec: { namespaceSelector: {}, resourceGroups: groups(...q), ...spec } };
}

export function cohort(name: string, spec: CohortLike['spec'] = {}): CohortLike {
  return { metadata: { name }, spec };
}

export function localQueue(namespace: string, name: string, clusterQueue: string, spec: Partial<NonNullable<LocalQueueLike['spec']>> = {}): LocalQueueLike {
  return { metadata: { namespace, name }, spec: { clusterQueue, ...spec } };
}

export function namespace(name: string, labels: Record<string, string> = {}): NamespaceLike {
  return { metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } };
}

export interface PodSetOpts {
  name?: string;
  count?: number;
  minCount?: number;
  requests?: Record<string, Quantity>;
  limits?: Record<string, Quantity>;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

export function podSet(o: PodSetOpts = {}): PodSetLike {
  const resources: { requests?: Record<string, Quantity>; limits?: Record<string, Quantity> } = {};
  if (o.requests) resources.requests = o.requests;
  if (o.limits) resources.limits = o.limits;
  const spec: NonNullable<NonNullable<PodSetLike['template']>['spec']> = { containers: [{ name: 'c', resources }] };
  if (o.nodeSelector) spec.nodeSelector = o.nodeSelector;
  if (o.tolerations) spec.tolerations = o.tolerations;
  const ps: PodSetLike = { name: o.name ?? 'main', count: o.count ?? 1, template: { spec } };
  if (o.minCount !== undefined) ps.minCount = o.minCount;
  return ps;
}

export interface WorkloadOpts {
  queue?: string;
  priority?: number;
  created?: number;
  podSets?: PodSetLike[];
  uid?: string;
  labels?: Record<string, string>;
}

/** a pending Workload; `requests` makes one pod set "main" of one pod */
export function workload(namespace: string, name: string, requests: Record<string, Quantity> | PodSetLike[], o: WorkloadOpts = {}): WorkloadLike {
  const podSets = Array.isArray(requests) ? requests : [podSet({ requests })];
  const w: WorkloadLike = {
    metadata: { namespace, name, uid: o.uid ?? `uid-${name}`, creationTimestamp: at(o.created ?? 0) },
    spec: { queueName: o.queue ?? 'lq', podSets },
  };
  if (o.labels) w.metadata.labels = o.labels;
  if (o.priority !== undefined) (w.spec as NonNullable<WorkloadLike['spec']>).priority = o.priority;
  return w;
}

/** the same Workload, holding quota in `cq` with every resource of every pod set in `flavorName` */
export function admitted(w: WorkloadLike, cq: string, flavorName: string, reservedAt = 0): WorkloadLike {
  const podSetAssignments = (w.spec?.podSets ?? []).map((ps) => {
    const count = ps.count ?? 1;
    const req = ps.template?.spec?.containers?.[0]?.resources?.requests ?? {};
    const resourceUsage: Record<string, Quantity> = {};
    const flavors: Record<string, string> = {};
    for (const [r, v] of Object.entries(req)) {
      const n = typeof v === 'number' ? v : Number.parseFloat(v);
      const unit = typeof v === 'string' ? v.replace(/^[0-9.]+/, '') : '';
      resourceUsage[r] = `${n * count}${unit}`;
      flavors[r] = flavorName;
    }
    return { name: ps.name, flavors, resourceUsage, count };
  });
  const conditions: Condition[] = [
    { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: `Quota reserved in ClusterQueue ${cq}`, lastTransitionTime: at(reservedAt) },
    { type: 'Admitted', status: 'True', reason: 'Admitted', message: 'The workload is admitted', lastTransitionTime: at(reservedAt) },
  ];
  return { ...w, status: { admission: { clusterQueue: cq, podSetAssignments }, conditions } };
}

export function taint(key: string, value: string, effect: Taint['effect'] = 'NoSchedule'): Taint {
  return { key, value, effect };
}

/** a snapshot with namespace `ns` (all labels) and LocalQueue `ns/lq` for each ClusterQueue given by [ns, cq] */
export function world(s: Snapshot & { queues?: [string, string, string?][] }): Snapshot {
  const namespaces = new Map((s.namespaces ?? []).map((n) => [n.metadata.name ?? '', n]));
  const lqs = [...(s.localQueues ?? [])];
  for (const [ns, cq, name] of s.queues ?? []) {
    if (!namespaces.has(ns)) namespaces.set(ns, namespace(ns));
    lqs.push(localQueue(ns, name ?? 'lq', cq));
  }
  const out: Snapshot = { ...s, namespaces: [...namespaces.values()], localQueues: lqs };
  delete (out as { queues?: unknown }).queues;
  return out;
}
