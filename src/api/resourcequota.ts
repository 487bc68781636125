// core/v1 ResourceQuota and the arithmetic kube-apiserver's quota admission and kube-controller-manager's
// quota controller share (pkg/quota/v1): what one object uses, what a namespace uses, and whether a
// new object fits. Quantities are kept as integer thousandths so that "100m" + "200m" is exactly "300m".
import type { Pod } from './core-types.js';
import { GpuQuotaName, gpuQuotaUsage } from './gpu-sharing.js';
import type { KObject } from './meta.js';
import { parseQuantity } from './quantity.js';
import type { KindDef } from './registry.js';
import { Validator } from './validation.js';

/** resource name → amount in thousandths of a unit (milli-cores, milli-bytes, milli-objects) */
export type ResourceList = Map<string, number>;

export const ResourceQuotaName = { Pods: 'pods', RequestsStorage: 'requests.storage', PersistentVolumeClaims: 'persistentvolumeclaims' } as const;

export interface ResourceQuotaObject extends KObject {
  spec?: { hard?: Record<string, string | number>; scopes?: string[] };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

const milli = (q: unknown): number | undefined => {
  const v = parseQuantity(q);
  return v === undefined ? undefined : Math.round(v * 1000);
};

/** kube's IsExtendedResourceName: a qualified name outside kubernetes.io that is not itself a quota prefix */
function isExtended(name: string): boolean {
  if (!name.includes('/') || name.startsWith('requests.') || name.startsWith('limits.')) return false;
  const domain = name.slice(0, name.indexOf('/'));
  return domain !== 'kubernetes.io' && !domain.endsWith('.kubernetes.io');
}

/** the legacy object-count names, each an alias of `count/<plural>` */
const legacyCounts: Record<string, string> = {
  services: 'count/services', secrets: 'count/secrets', configmaps: 'count/configmaps',
  persistentvolumeclaims: 'count/persistentvolumeclaims', replicationcontrollers: 'count/replicationcontrollers', resourcequotas: 'count/resourcequotas',
};

/** the compute names a container's requests and limits count under (kube's podComputeUsageHelper) */
function computeUsage(requests: Record<string, unknown>, limits: Record<string, unknown>): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, q] of Object.entries(requests)) {
    const v = milli(q);
    if (v === undefined) continue;
    if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') {
      out.set(k, v);
      out.set(`requests.${k}`, v);
    } else if (k.startsWith('hugepages-')) out.set(`requests.${k}`, v);
    else if (isExtended(k)) out.set(`requests.${k}`, v);
  }
  for (const [k, q] of Object.entries(limits)) {
    const v = milli(q);
    if (v === undefined) continue;
    if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') out.set(`limits.${k}`, v);
  }
  return out;
}

interface ContainerResources {
  name?: string;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}

/** a container's requests with the API server's defaulting applied: a resource with a limit and no request requests its limit */
function containerRequests(c: ContainerResources): { requests: Record<string, unknown>; limits: Record<string, unknown> } {
  const limits = c.resources?.limits ?? {};
  return { requests: { ...limits, ...(c.resources?.requests ?? {}) }, limits };
}

export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

function max(a: ResourceList, b: ResourceList): ResourceList {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, Math.max(out.get(k) ?? 0, v));
  return out;
}

/** keeps only the names in `names` */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const n of names) {
    const v = list.get(n);
    if (v !== undefined) out.set(n, v);
  }
  return out;
}

/** a Pod that no longer holds compute resources: it finished, or its deletion's grace period has passed */
export function podIsTerminal(pod: KObject, now = Date.now()): boolean {
  const phase = pod.status?.phase as string | undefined;
  if (phase === 'Succeeded' || phase === 'Failed') return true;
  const del = pod.metadata.deletionTimestamp;
  if (!del) return false;
  return Date.parse(del) + (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000 < now;
}

/** what counting needs to know beyond the object itself */
export interface UsageContext {
  /** the memory of the node's cards (MiB), for a share asked as a percentage before it has a card */
  gpuCardMemoryMiB?: number;
}

/**
 * What a Pod counts against quota (kube's PodUsageFunc): `count/pods` always; while it is not terminal,
 * `pods` and its compute usage, the containers' sum or the largest init container, whichever is more.
 * HAMi's `limits.nvidia.com/gpumem` and `limits.nvidia.com/gpucores` count, as HAMi's scheduler
 * counts them, the memory and compute of every card share (a container's gpumem times its cards).
 */
export function podUsage(pod: KObject, now = Date.now(), ctx: UsageContext = {}): ResourceList {
  const result: ResourceList = new Map([['count/pods', 1000]]);
  if (podIsTerminal(pod, now)) return result;
  const spec = (pod.spec ?? {}) as { containers?: ContainerResources[]; initContainers?: (ContainerResources & { restartPolicy?: string })[]; overhead?: Record<string, unknown> };
  let sum: ResourceList = new Map();
  for (const c of spec.containers ?? []) {
    const r = containerRequests(c);
    sum = add(sum, computeUsage(r.requests, r.limits));
  }
  // sidecars (restartable init containers) run beside the containers and add to them
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy !== 'Always') continue;
    const r = containerRequests(c);
    sum = add(sum, computeUsage(r.requests, r.limits));
  }
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') continue;
    const r = containerRequests(c);
    sum = max(sum, computeUsage(r.requests, r.limits));
  }
  if (spec.overhead) sum = add(sum, computeUsage(spec.overhead, spec.overhead));
  const shares = Array.isArray(spec.containers) ? gpuQuotaUsage(pod as unknown as Pod, ctx.gpuCardMemoryMiB) : undefined;
  if (shares) {
    sum.set(GpuQuotaName.memory, shares.memoryMiB * 1000);
    sum.set(GpuQuotaName.cores, shares.cores * 1000);
  }
  result.set(ResourceQuotaName.Pods, 1000);
  return add(result, sum);
}

/** What a PersistentVolumeClaim counts: one claim and the storage it requests. */
export function pvcUsage(pvc: KObject): ResourceList {
  const out: ResourceList = new Map([[ResourceQuotaName.PersistentVolumeClaims, 1000], ['count/persistentvolumeclaims', 1000]]);
  const storage = milli(pvc.spec?.resources?.requests?.storage);
  if (storage !== undefined) {
    out.set(ResourceQuotaName.RequestsStorage, storage);
    const cls = pvc.spec?.storageClassName as string | undefined;
    if (cls) {
      out.set(`${cls}.storageclass.storage.k8s.io/requests.storage`, storage);
      out.set(`${cls}.storageclass.storage.k8s.io/persistentvolumeclaims`, 1000);
    }
  } else if (pvc.spec?.storageClassName) out.set(`${pvc.spec.storageClassName as string}.storageclass.storage.k8s.io/persistentvolumeclaims`, 1000);
  return out;
}

/** `count/jobs.batch`, `count/pods`: the object-count name of a kind */
export function countName(def: KindDef): string {
  return def.group ? `count/${def.plural}.${def.group}` : `count/${def.plural}`;
}

/** What one object of a kind counts against quota. */
export function usageOf(def: KindDef, obj: KObject, now = Date.now(), ctx: UsageContext = {}): ResourceList {
  if (!def.group && def.kind === 'Pod') return podUsage(obj, now, ctx);
  if (!def.group && def.kind === 'PersistentVolumeClaim') return pvcUsage(obj);
  const count = countName(def);
  const out: ResourceList = new Map([[count, 1000]]);
  for (const [legacy, alias] of Object.entries(legacyCounts)) if (alias === count) out.set(legacy, 1000);
  return out;
}

/**
 * The kind (its `group/plural` storage key) whose objects a quota'd name counts, or undefined for a
 * name nothing in Skiff uses.
 */
export function storageKeyOfResource(name: string): string | undefined {
  const alias = legacyCounts[name];
  if (alias) return storageKeyOfResource(alias);
  if (name.startsWith('count/')) {
    const res = name.slice('count/'.length);
    const dot = res.indexOf('.');
    return dot < 0 ? `/${res}` : `${res.slice(dot + 1)}/${res.slice(0, dot)}`;
  }
  if (name === ResourceQuotaName.RequestsStorage || name.includes('.storageclass.storage.k8s.io/')) return '/persistentvolumeclaims';
  if (name === ResourceQuotaName.Pods || ['cpu', 'memory', 'ephemeral-storage'].includes(name) || name.startsWith('requests.') || name.startsWith('limits.')) return '/pods';
  return undefined;
}

/** The hard limits of a quota, as thousandths; names whose quantity does not parse are left out. */
export function hardOf(q: ResourceQuotaObject): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(q.spec?.hard ?? {})) {
    const m = milli(v);
    if (m !== undefined) out.set(k, m);
  }
  return out;
}

/**
 * Formats thousandths as kube prints a quantity: in the style of the quota's own value for that name
 * (`2Gi` stays binary, `1G` decimal), with the largest suffix that divides it exactly.
 */
export function formatQuantity(m: number, style: string | number | undefined): string {
  if (m % 1000 !== 0) return `${m}m`;
  const n = m / 1000;
  if (n === 0) return '0';
  const binary = typeof style === 'string' && /[KMGTPE]i$/.test(style.trim());
  const steps = binary ? [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const
    : [['E', 1e18], ['P', 1e15], ['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]] as const;
  for (const [suffix, size] of steps) if (Math.abs(n) >= size && n % size === 0) return `${n / size}${suffix}`;
  return String(n);
}

/** `name=quantity,…` sorted by name, as kube's prettyPrint */
function pretty(list: ResourceList, hard: Record<string, string | number>): string {
  return [...list.keys()].sort().map((k) => `${k}=${formatQuantity(list.get(k) ?? 0, hard[k])}`).join(',');
}

/** a quota's status.hard / status.used map, formatted */
export function formatList(list: ResourceList, hard: Record<string, string | number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...list.keys()].sort()) out[k] = formatQuantity(list.get(k) ?? 0, hard[k]);
  return out;
}

/** the names quota admission requires every container to state (kube keeps this for cpu and memory only) */
const mustSpecify = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/**
 * kube's pod Constraints: when a quota limits cpu or memory, every container must request (or limit)
 * it. Returns `must specify limits.cpu for: a,b; requests.cpu for: a`, or undefined.
 */
export function missingRequests(pod: KObject, hard: ResourceList): string | undefined {
  const required = [...hard.keys()].filter((k) => mustSpecify.has(k));
  if (required.length === 0) return undefined;
  const missing = new Map<string, Set<string>>();
  const spec = (pod.spec ?? {}) as { containers?: ContainerResources[]; initContainers?: ContainerResources[] };
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const r = containerRequests(c);
    const has = computeUsage(r.requests, r.limits);
    for (const name of required) {
      if (has.has(name)) continue;
      const set = missing.get(name) ?? new Set<string>();
      set.add(c.name ?? '');
      missing.set(name, set);
    }
  }
  if (missing.size === 0) return undefined;
  return `must specify ${[...missing.keys()].sort().map((k) => `${k} for: ${[...(missing.get(k) ?? [])].sort().join(',')}`).join('; ')}`;
}

/**
 * Whether `requested` fits `quota` on top of `used` (the namespace's usage without the new object).
 * Returns kube's refusal, `exceeded quota: NAME, requested: …, used: …, limited: …`, or undefined.
 */
export function exceeds(quota: ResourceQuotaObject, used: ResourceList, requested: ResourceList): string | undefined {
  const hard = hardOf(quota);
  const asked = mask(requested, hard.keys());
  const over: string[] = [];
  for (const [k, v] of asked) if ((used.get(k) ?? 0) + v > (hard.get(k) ?? 0)) over.push(k);
  if (over.length === 0) return undefined;
  const spec = quota.spec?.hard ?? {};
  const usedOver = new Map(over.map((k) => [k, used.get(k) ?? 0]));
  return `exceeded quota: ${quota.metadata.name ?? ''}, requested: ${pretty(mask(asked, over), spec)}, used: ${pretty(usedOver, spec)}, limited: ${pretty(mask(hard, over), spec)}`;
}

const standardNames = new Set(['cpu', 'memory', 'ephemeral-storage', 'pods', 'requests.storage', ...Object.keys(legacyCounts), 'services.loadbalancers', 'services.nodeports']);

function validResourceName(name: string): boolean {
  if (standardNames.has(name)) return true;
  if (name.startsWith('count/')) return name.length > 'count/'.length;
  for (const prefix of ['requests.', 'limits.']) if (name.startsWith(prefix)) return name.length > prefix.length;
  return name.includes('.storageclass.storage.k8s.io/') || isExtended(name) || name.startsWith('hugepages-');
}

export const ResourceQuotaKind: KindDef = {
  group: '', version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', singular: 'resourcequota', shortNames: ['quota'],
  namespaced: true, hasStatus: true,
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    if (obj.spec === undefined || !v.object('spec', obj.spec)) return v.errors;
    const hard = obj.spec.hard as unknown;
    if (hard !== undefined && v.object('spec.hard', hard)) {
      for (const [k, q] of Object.entries(hard)) {
        const at = `spec.hard[${k}]`;
        if (!validResourceName(k)) v.invalid(at, k, 'must be a standard resource for quota');
        v.quantity(at, q);
        if ((parseQuantity(q) ?? 0) < 0) v.invalid(at, q, 'must be greater than or equal to 0');
      }
    }
    // scoped quotas (BestEffort, Terminating, PriorityClass…) are not enforced here: refuse them rather than ignore them
    for (const f of ['scopes', 'scopeSelector'] as const) {
      const val = obj.spec[f] as unknown;
      if (val !== undefined && val !== null && !(Array.isArray(val) && val.length === 0)) v.add(`spec.${f}`, 'FieldValueForbidden', 'Forbidden: scoped quotas are not supported by Skiff');
    }
    return v.errors;
  },
};
