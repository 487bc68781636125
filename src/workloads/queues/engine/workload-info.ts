// What the engine needs to know about one Workload, computed once when it arrives: its pod sets'
// requests as whole numbers (Kubernetes' pod request rules, limits standing in for missing
// requests), its priority and queue-order time, whether it holds quota, and its equivalence key.
import { formatAmount, toAmount } from './quantities.js';
import type { Condition, ContainerLike, PodSpecLike, WorkloadLike, WorkloadPriorityClassLike } from './types.js';

export type Requests = Map<string, number>;

export interface PodSetInfo {
  name: string;
  /** pods counted for quota: the pod set's count less its reclaimable pods */
  count: number;
  minCount?: number;
  /** one pod's requests */
  perPod: Requests;
  /** count × perPod: the pod set's usage */
  total: Requests;
  spec: PodSpecLike | undefined;
  /** for a workload holding quota: the flavor of each resource */
  flavors?: Record<string, string>;
}

export const QuotaReserved = 'QuotaReserved';
export const Admitted = 'Admitted';
export const Evicted = 'Evicted';
export const Finished = 'Finished';
export const Requeued = 'Requeued';
export const PriorityClassLabel = 'kueue.x-k8s.io/priority-class';

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** A QuotaReserved=True condition, or an admission written without any conditions (hand-made objects). */
export function hasQuotaReservation(wl: WorkloadLike): boolean {
  const c = findCondition(wl.status?.conditions, QuotaReserved);
  if (c) return c.status === 'True' && !!wl.status?.admission;
  return !!wl.status?.admission?.clusterQueue;
}

function addTo(into: Requests, from: Requests): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
}

function maxInto(into: Requests, from: Requests): void {
  for (const [k, v] of from) into.set(k, Math.max(into.get(k) ?? 0, v));
}

/** a container's requests, its limits standing in for requests it leaves out */
function containerRequests(c: ContainerLike): Requests {
  const out: Requests = new Map();
  for (const [k, v] of Object.entries(c.resources?.limits ?? {})) out.set(k, toAmount(k, v) ?? 0);
  for (const [k, v] of Object.entries(c.resources?.requests ?? {})) out.set(k, toAmount(k, v) ?? 0);
  return out;
}

/**
 * One pod's requests as Kubernetes computes them: the containers' sum plus running sidecars, or the
 * largest init container (with the sidecars started before it) when that is larger; pod-level
 * resources replace the containers' figures; overhead is added.
 */
export function podRequests(spec: PodSpecLike | undefined): Requests {
  const reqs: Requests = new Map();
  for (const c of spec?.containers ?? []) addTo(reqs, containerRequests(c));
  const sidecars: Requests = new Map();
  const init: Requests = new Map();
  for (const c of spec?.initContainers ?? []) {
    const own = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      addTo(reqs, own);
      addTo(sidecars, own);
      maxInto(init, sidecars);
    } else {
      addTo(own, sidecars);
      maxInto(init, own);
    }
  }
  maxInto(reqs, init);
  const podLevel = spec?.resources;
  if (podLevel) {
    for (const [k, v] of Object.entries(podLevel.limits ?? {})) if (!podLevel.requests?.[k]) reqs.set(k, toAmount(k, v) ?? 0);
    for (const [k, v] of Object.entries(podLevel.requests ?? {})) reqs.set(k, toAmount(k, v) ?? 0);
  }
  for (const [k, v] of Object.entries(spec?.overhead ?? {})) reqs.set(k, (reqs.get(k) ?? 0) + (toAmount(k, v) ?? 0));
  for (const [k, v] of reqs) if (v < 0) reqs.set(k, 0);
  return reqs;
}

function scaled(r: Requests, count: number): Requests {
  const out: Requests = new Map();
  for (const [k, v] of r) out.set(k, v * count);
  return out;
}

/** pod counts after subtracting reclaimable pods, never below zero */
function countsAfterReclaim(wl: WorkloadLike): Map<string, number> {
  const counts = new Map<string, number>();
  for (const ps of wl.spec?.podSets ?? []) counts.set(ps.name, ps.count ?? 1);
  for (const r of wl.status?.reclaimablePods ?? []) {
    const c = counts.get(r.name);
    if (c !== undefined) counts.set(r.name, c - Math.min(r.count, c));
  }
  return counts;
}

/** The pod sets as the queue sees a pending workload: requests from the pod templates. */
export function pendingPodSets(wl: WorkloadLike): PodSetInfo[] {
  const counts = countsAfterReclaim(wl);
  return (wl.spec?.podSets ?? []).map((ps) => {
    const count = counts.get(ps.name) ?? 0;
    const perPod = podRequests(ps.template?.spec);
    const info: PodSetInfo = { name: ps.name, count, perPod, total: scaled(perPod, count), spec: ps.template?.spec };
    if (ps.minCount !== undefined) info.minCount = ps.minCount;
    return info;
  });
}

/** The pod sets of a workload holding quota: what its admission reserved, less reclaimable pods. */
export function admittedPodSets(wl: WorkloadLike): PodSetInfo[] {
  const after = countsAfterReclaim(wl);
  const specs = new Map((wl.spec?.podSets ?? []).map((ps) => [ps.name, ps]));
  return (wl.status?.admission?.podSetAssignments ?? []).map((psa) => {
    const ps = specs.get(psa.name);
    let count = psa.count ?? ps?.count ?? 1;
    const total: Requests = new Map();
    for (const [k, v] of Object.entries(psa.resourceUsage ?? {})) total.set(k, toAmount(k, v) ?? 0);
    const reclaimed = after.get(psa.name);
    if (reclaimed !== undefined && reclaimed < count) {
      // integer division, as Kueue scales a reclaimed pod set down
      for (const [k, v] of total) total.set(k, count === 0 ? 0 : Math.trunc(v / count) * reclaimed);
      count = reclaimed;
    }
    const perPod: Requests = new Map();
    for (const [k, v] of total) perPod.set(k, count === 0 ? 0 : Math.trunc(v / count));
    return { name: psa.name, count, perPod, total, spec: ps?.template?.spec, flavors: { ...(psa.flavors ?? {}) } };
  });
}

export interface UsageSummary {
  /** each pod set's usage, in quantities: requests times the pods counted */
  podSets: { name: string; count: number; requests: Record<string, string> }[];
  /** the whole workload's requests */
  total: Record<string, string>;
  /** for a workload holding quota: its usage by flavor and resource */
  flavors: Record<string, Record<string, string>>;
}

function formatRequests(r: Requests): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of [...r].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = formatAmount(k, v);
  return out;
}

/**
 * What a workload counts against quota: Σ over pod sets of requests × count (limits used where
 * requests are missing), from its admission when it holds quota. The reserved `pods` resource is
 * added by the ClusterQueue that covers it, so it does not appear here.
 */
export function usageOf(wl: WorkloadLike): UsageSummary {
  const podSets = hasQuotaReservation(wl) ? admittedPodSets(wl) : pendingPodSets(wl);
  const total: Requests = new Map();
  const byFlavor = new Map<string, Requests>();
  for (const ps of podSets) {
    addTo(total, ps.total);
    if (!ps.flavors) continue;
    for (const [res, v] of ps.total) {
      const flavor = ps.flavors[res];
      if (!flavor) continue;
      const m = byFlavor.get(flavor) ?? new Map<string, number>();
      m.set(res, (m.get(res) ?? 0) + v);
      byFlavor.set(flavor, m);
    }
  }
  const flavors: Record<string, Record<string, string>> = {};
  for (const [f, r] of byFlavor) flavors[f] = formatRequests(r);
  return {
    podSets: podSets.map((ps) => ({ name: ps.name, count: ps.count, requests: formatRequests(ps.total) })),
    total: formatRequests(total),
    flavors,
  };
}

/**
 * The workload's priority: spec.priority as Kueue's job controllers set it, or, when it is unset,
 * the value of the WorkloadPriorityClass its priorityClassRef (or v1beta1 priorityClassName) names;
 * 0 otherwise.
 */
export function workloadPriority(wl: WorkloadLike, classes?: Map<string, WorkloadPriorityClassLike>): number {
  if (typeof wl.spec?.priority === 'number') return wl.spec.priority;
  const ref = wl.spec?.priorityClassRef;
  let name: string | undefined;
  if (ref?.name && (ref.kind === undefined || ref.kind === 'WorkloadPriorityClass')) name = ref.name;
  else if (wl.spec?.priorityClassName && wl.spec.priorityClassSource === 'kueue.x-k8s.io/workloadpriorityclass') name = wl.spec.priorityClassName;
  else name = wl.metadata.labels?.[PriorityClassLabel];
  const value = name !== undefined ? classes?.get(name)?.value : undefined;
  return typeof value === 'number' ? value : 0;
}

export function timeMs(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * The time that orders a pending workload in its queue: its creation, or when it was evicted by a
 * PodsReady timeout (with the Eviction requeuing timestamp) or by an admission check.
 */
export function queueOrderTime(wl: WorkloadLike, requeuing: 'Eviction' | 'Creation'): number {
  const ev = findCondition(wl.status?.conditions, Evicted);
  if (ev?.status === 'True') {
    if ((ev.reason === 'PodsReadyTimeout' && requeuing === 'Eviction') || ev.reason === 'AdmissionCheck') return timeMs(ev.lastTransitionTime);
  }
  return timeMs(wl.metadata.creationTimestamp);
}

/** Requests above limits, as Kueue's admissibility check words it; undefined when all are valid. */
export function resourceValidationError(wl: WorkloadLike): string | undefined {
  const errs: string[] = [];
  const check = (path: string, c: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }): void => {
    const over: string[] = [];
    for (const [k, v] of Object.entries(c.resources?.requests ?? {})) {
      const lim = c.resources?.limits?.[k];
      if (lim === undefined) continue;
      const r = toAmount(k, v as string);
      const l = toAmount(k, lim as string);
      if (r !== undefined && l !== undefined && r > l) over.push(k);
    }
    if (over.length) errs.push(`${path}: Invalid value: ${JSON.stringify(over.sort())}: requests must not exceed its limits`);
  };
  (wl.spec?.podSets ?? []).forEach((ps, i) => {
    const base = `spec.podSets[${i}].template.spec`;
    (ps.template?.spec?.initContainers ?? []).forEach((c, j) => check(`${base}.initContainers[${j}]`, c));
    (ps.template?.spec?.containers ?? []).forEach((c, j) => check(`${base}.containers[${j}]`, c));
    if (ps.template?.spec?.resources) check(`${base}.resources`, { resources: ps.template.spec.resources });
  });
  if (errs.length === 0) return undefined;
  return `resources validation failed: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`;
}

/**
 * The scheduling shape two workloads share when one's failure to fit means the other's: priority
 * and, per pod set, its count, requests and placement constraints. Kueue's equivalence hashing
 * moves such look-alikes aside together.
 */
export function schedulingShape(priority: number, podSets: PodSetInfo[]): string {
  return JSON.stringify([
    priority,
    podSets.map((ps) => [
      ps.name,
      ps.count,
      ps.minCount ?? null,
      [...ps.perPod].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      ps.spec?.nodeSelector ?? null,
      ps.spec?.tolerations ?? null,
      ps.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null,
    ]),
  ]);
}
