// A node's allocation as `kubectl describe node` reckons it: the requests and limits of the Pods bound
// to the node and not yet finished, summed per resource, against what the node can allocate. Pure, so
// the nodes page, the cluster overview and their tests share one reckoning.
import { GpuResource } from '../../../../src/api/gpu-sharing';
import { parseQuantity } from '../../../../src/api/quantity';
import type { KObject } from '../../api/types';
import type { GpuCardUsage } from '../../api/workload-types';

export type Amounts = Record<string, number>;

interface ContainerLike {
  name?: string;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}

export interface PodLike extends KObject {
  spec?: { nodeName?: string; containers?: ContainerLike[]; initContainers?: ContainerLike[]; overhead?: Record<string, unknown> };
  status?: { phase?: string; conditions?: { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }[] };
}

export interface NodeLike extends KObject {
  status?: { capacity?: Record<string, unknown>; allocatable?: Record<string, unknown> };
}

export interface PodAmounts {
  requests: Amounts;
  limits: Amounts;
  /** values that are not quantities, by resource: shown to the user rather than counted as 0 */
  invalid: string[];
}

function amountsOf(list: Record<string, unknown> | undefined, invalid: string[], where: string): Amounts {
  const out: Amounts = {};
  for (const [k, v] of Object.entries(list ?? {})) {
    const n = parseQuantity(v);
    if (n === undefined) invalid.push(`${where} ${k}: ${JSON.stringify(v)}`);
    else out[k] = n;
  }
  return out;
}

/**
 * What one Pod asks for: the sum over its containers or its largest init container, whichever is more,
 * plus its overhead. A limit without a request counts as the request, as the API server defaults it.
 */
export function podAmounts(pod: PodLike): PodAmounts {
  const invalid: string[] = [];
  const requests: Amounts = {};
  const limits: Amounts = {};
  const one = (c: ContainerLike): { req: Amounts; lim: Amounts } => {
    const lim = amountsOf(c.resources?.limits, invalid, `container ${c.name ?? '?'} limit`);
    const req = { ...lim, ...amountsOf(c.resources?.requests, invalid, `container ${c.name ?? '?'} request`) };
    return { req, lim };
  };
  for (const c of pod.spec?.containers ?? []) {
    const { req, lim } = one(c);
    for (const [k, v] of Object.entries(req)) requests[k] = (requests[k] ?? 0) + v;
    for (const [k, v] of Object.entries(lim)) limits[k] = (limits[k] ?? 0) + v;
  }
  for (const c of pod.spec?.initContainers ?? []) {
    const { req, lim } = one(c);
    for (const [k, v] of Object.entries(req)) requests[k] = Math.max(requests[k] ?? 0, v);
    for (const [k, v] of Object.entries(lim)) limits[k] = Math.max(limits[k] ?? 0, v);
  }
  const overhead = amountsOf(pod.spec?.overhead, invalid, 'overhead');
  for (const [k, v] of Object.entries(overhead)) {
    requests[k] = (requests[k] ?? 0) + v;
    if (limits[k] !== undefined) limits[k] += v;
  }
  return { requests, limits, invalid };
}

/** a Pod that holds its node's resources: bound to it and not finished */
export function holdsNode(pod: PodLike, node: string): boolean {
  const phase = pod.status?.phase;
  return pod.spec?.nodeName === node && phase !== 'Succeeded' && phase !== 'Failed';
}

export interface ResourceRow {
  resource: string;
  capacity?: number;
  allocatable?: number;
  requests: number;
  limits: number;
  /** from the metrics API, for cpu and memory */
  usage?: number;
  /** requests / allocatable, 0..∞ (over 1 when the node is overcommitted); undefined without allocatable */
  requestsFraction?: number;
  limitsFraction?: number;
}

export interface PodRow {
  namespace: string;
  name: string;
  phase: string;
  requests: Amounts;
  limits: Amounts;
  invalid: string[];
}

export interface NodeAllocation {
  node: string;
  resources: ResourceRow[];
  pods: PodRow[];
  /** the Pods counted against the node's `pods` allocatable */
  podCount: number;
  invalid: string[];
}

const FIRST = ['cpu', 'memory', 'nvidia.com/gpu'];
/** resources a node reports that Pods do not request in a way worth a bar */
const QUIET = new Set(['pods', 'ephemeral-storage']);

function order(a: string, b: string): number {
  const ia = FIRST.indexOf(a);
  const ib = FIRST.indexOf(b);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  return a.localeCompare(b);
}

/**
 * The per-resource sums for one node. Resources listed: cpu, memory and nvidia.com/gpu always, then
 * every extended resource the node offers or a Pod requests; `pods` as a count.
 */
export function nodeAllocation(node: NodeLike, pods: PodLike[], usage?: Record<string, unknown>): NodeAllocation {
  const name = node.metadata?.name ?? '';
  const invalid: string[] = [];
  const allocatable = amountsOf(node.status?.allocatable, invalid, 'node allocatable');
  const capacity = amountsOf(node.status?.capacity, invalid, 'node capacity');
  const used = usage ? amountsOf(usage, invalid, 'usage') : {};
  const req: Amounts = {};
  const lim: Amounts = {};
  const rows: PodRow[] = [];
  for (const p of pods) {
    if (!holdsNode(p, name)) continue;
    const a = podAmounts(p);
    for (const [k, v] of Object.entries(a.requests)) req[k] = (req[k] ?? 0) + v;
    for (const [k, v] of Object.entries(a.limits)) lim[k] = (lim[k] ?? 0) + v;
    rows.push({ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', phase: p.status?.phase ?? 'Pending', requests: a.requests, limits: a.limits, invalid: a.invalid });
  }
  const names = new Set<string>(FIRST);
  for (const k of [...Object.keys(allocatable), ...Object.keys(req), ...Object.keys(lim)]) if (!QUIET.has(k)) names.add(k);
  const resources: ResourceRow[] = [...names].sort(order).map((resource) => {
    const al = allocatable[resource];
    const r = req[resource] ?? 0;
    const l = lim[resource] ?? 0;
    return {
      resource,
      capacity: capacity[resource],
      allocatable: al,
      requests: r,
      limits: l,
      usage: used[resource],
      requestsFraction: al ? r / al : undefined,
      limitsFraction: al ? l / al : undefined,
    };
  });
  if (allocatable.pods !== undefined) {
    resources.push({ resource: 'pods', capacity: capacity.pods, allocatable: allocatable.pods, requests: rows.length, limits: rows.length, requestsFraction: rows.length / allocatable.pods, limitsFraction: rows.length / allocatable.pods });
  }
  rows.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { node: name, resources, pods: rows, podCount: rows.length, invalid };
}

/**
 * A node's allocation with HAMi's share resources reckoned on its cards (GET
 * /skiff/v1/nodes/<node>/gpus), as HAMi's scheduler reckons them: a node advertises only
 * `nvidia.com/gpu` (cards x shares per card), and memory and compute are offered per card, so the
 * node offers the sum of its cards' MiB (`nvidia.com/gpumem`) and cores (`nvidia.com/gpucores`, 100
 * a card). What is taken is what placement gave each share, which a Pod's limits do not say: a
 * limit is per card (times `nvidia.com/gpu`), and a share stating no memory takes its whole card.
 * `nvidia.com/gpumem-percentage` is another way to ask for memory, counted in gpumem once placed,
 * and `nvidia.com/priority` no amount at all: neither gets a row. Without cards, nothing changes.
 */
export function withGpuShares(a: NodeAllocation, cards: GpuCardUsage[] | undefined): NodeAllocation {
  if (!cards?.length) return a;
  const sum = (f: (c: GpuCardUsage) => number): number => cards.reduce((n, c) => n + f(c), 0);
  const offered: Record<string, { total: number; used: number }> = {
    [GpuResource.memory]: { total: sum((c) => c.memoryMiB), used: sum((c) => c.used.memoryMiB) },
    [GpuResource.cores]: { total: sum((c) => c.cores), used: sum((c) => c.used.cores) },
  };
  const dropped = new Set<string>([GpuResource.memoryPercentage, GpuResource.priority]);
  const rows = a.resources.filter((r) => !dropped.has(r.resource) && !offered[r.resource]);
  const cardRows: ResourceRow[] = Object.entries(offered).map(([resource, { total, used }]) => ({
    resource, capacity: total, allocatable: total, requests: used, limits: used,
    requestsFraction: total ? used / total : undefined, limitsFraction: total ? used / total : undefined,
  }));
  // after nvidia.com/gpu, before the other extended resources and pods
  const at = rows.findIndex((r) => r.resource === GpuResource.count) + 1;
  return { ...a, resources: [...rows.slice(0, at), ...cardRows, ...rows.slice(at)] };
}

/** an amount as a person reads it: cpu in cores or millicores, memory in binary units, counts plain */
export function formatAmount(resource: string, v: number | undefined): string {
  if (v === undefined) return '—';
  // HAMi states a share's memory in MiB
  if (resource === GpuResource.memory) return `${Number.isInteger(v) ? v : Math.round(v)} MiB`;
  if (resource === 'cpu') {
    if (v === 0) return '0';
    const milli = Math.round(v * 1000);
    return milli % 1000 === 0 ? String(milli / 1000) : milli < 1000 ? `${milli}m` : String(parseFloat((milli / 1000).toFixed(2)));
  }
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) {
    if (v === 0) return '0';
    for (const [suffix, size] of [['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
      if (v >= size) {
        const n = v / size;
        return `${Number.isInteger(n) ? n : n.toFixed(1)}${suffix}`;
      }
    }
    return `${v}B`;
  }
  return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
}

export function formatPercent(f: number | undefined): string {
  return f === undefined ? '—' : `${Math.round(f * 100)}%`;
}

export interface PendingPod {
  namespace: string;
  name: string;
  /** the PodScheduled condition's reason (Unschedulable), or what else keeps it from running */
  reason: string;
  message: string;
  since?: string;
}

/**
 * Pods that are not running yet and why: unscheduled ones with the scheduler's reason, bound ones still
 * starting (ContainerCreating and the like) with what their containers wait on.
 */
export function pendingPods(pods: PodLike[]): PendingPod[] {
  const out: PendingPod[] = [];
  for (const p of pods) {
    if (p.status?.phase && p.status.phase !== 'Pending') continue;
    if (p.metadata?.deletionTimestamp) continue;
    const sched = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const base = { namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '' };
    if (!p.spec?.nodeName && sched?.status !== 'True') {
      out.push({ ...base, reason: sched?.reason ?? 'NotScheduled', message: sched?.message ?? 'waiting for the scheduler', since: sched?.lastTransitionTime ?? p.metadata?.creationTimestamp });
      continue;
    }
    const st = p.status as { containerStatuses?: { name?: string; state?: { waiting?: { reason?: string; message?: string } } }[] } | undefined;
    const waiting = st?.containerStatuses?.map((c) => ({ c, w: c.state?.waiting })).find((x) => x.w);
    out.push({ ...base, reason: waiting?.w?.reason ?? 'Starting', message: waiting?.w?.message ?? (waiting ? `container ${waiting.c.name} is waiting` : `bound to ${p.spec?.nodeName}, starting`), since: p.metadata?.creationTimestamp });
  }
  return out.sort((a, b) => (a.since ?? '').localeCompare(b.since ?? ''));
}

/** Pods by phase, in the order a person scans them */
export function phaseCounts(pods: PodLike[]): { phase: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const p of pods) {
    const ph = p.status?.phase ?? 'Pending';
    counts.set(ph, (counts.get(ph) ?? 0) + 1);
  }
  const known = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
  return [...known.map((phase) => ({ phase, count: counts.get(phase) ?? 0 })), ...[...counts].filter(([k]) => !known.includes(k)).map(([phase, count]) => ({ phase, count }))];
}
