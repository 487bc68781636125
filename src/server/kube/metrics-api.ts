// The resource metrics API, metrics.k8s.io/v1beta1, as metrics-server serves it: NodeMetrics and
// PodMetrics, read-only, from the substrate's latest samples (kept in memory, never stored). It is
// what `kubectl top` reads, and what a HorizontalPodAutoscaler would.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Client } from '../../store/client.js';
import { parseFieldSelector } from '../../store/selectors.js';
import type { ContainerUsage, PodMetricsSource } from '../../substrate/substrate.js';
import { send } from '../body.js';
import type { ExtraGroupVersion } from './discovery.js';
import { q, qBool } from './query.js';

export const metricsGroupName = 'metrics.k8s.io';
const version = 'v1beta1';
const apiVersion = `${metricsGroupName}/${version}`;

/** the group as discovery lists it: what metrics-server registers */
export const metricsGroup: ExtraGroupVersion = {
  group: metricsGroupName,
  version,
  resources: [
    { resource: 'nodes', singular: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { resource: 'pods', singular: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

/** CPU in cores as a canonical decimal quantity of nanocores: "123456n", "250m", "2" */
export function cpuQuantity(cores: number): string {
  let amount = BigInt(Math.max(0, Math.round(cores * 1e9)));
  if (amount === 0n) return '0';
  let exp = -9;
  while (amount % 10n === 0n) {
    amount /= 10n;
    exp++;
  }
  // the exponent goes down to a multiple of three, the suffixes' steps
  while (((exp % 3) + 3) % 3 !== 0) {
    amount *= 10n;
    exp--;
  }
  const suffix: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
  return `${amount}${suffix[exp] ?? `e${exp}`}`;
}

/** bytes as a canonical binary quantity: "12345Ki", "100Mi", or plain bytes when not a multiple of 1024 */
export function memoryQuantity(bytes: number): string {
  let amount = Math.max(0, Math.round(bytes));
  if (amount < 1024) return String(amount);
  let exp = 0;
  while (amount % 1024 === 0 && exp < 6) {
    amount /= 1024;
    exp++;
  }
  return `${amount}${['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][exp]}`;
}

/** a span in Go's Duration notation, as metav1.Duration writes it: "5s", "10.25s", "1m0.5s", "750ms" */
export function goDuration(ms: number): string {
  const total = Math.round(ms);
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const rest = total % 60_000;
  const frac = rest % 1000;
  let out = `${Math.floor(rest / 1000)}${frac ? `.${String(frac).padStart(3, '0').replace(/0+$/, '')}` : ''}s`;
  if (h || m) out = `${m}m${out}`;
  if (h) out = `${h}h${out}`;
  return out;
}

/** metav1.Time: RFC 3339 in whole seconds */
function time(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

interface Usage {
  cpu: string;
  memory: string;
}

interface MetricsItem {
  apiVersion?: string;
  metadata: { name: string; namespace?: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  usage?: Usage;
  containers?: { name: string; usage: Usage }[];
}

/** an item and its usage as numbers (a Pod's summed over its containers), for tables */
interface Built {
  item: MetricsItem;
  cores: number;
  bytes: number;
}

export interface MetricsApiDeps {
  client: Client;
  usage: PodMetricsSource;
}

export class MetricsApi {
  constructor(private readonly deps: MetricsApiDeps) {}

  /** a request under /apis/metrics.k8s.io (path without a trailing slash) */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    const segs = path.split('/').filter(Boolean).map(decodeURIComponent).slice(2);
    if (segs.length === 0) return this.read(method, () => send(res, 200, apiGroup()));
    if (segs[0] !== version) throw new ApiError(StatusReason.NotFound, 'the server could not find the requested resource');
    const rest = segs.slice(1);
    if (rest.length === 0) return this.read(method, () => send(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersion, resources: metricsGroup.resources.map((r) => ({ name: r.resource, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: r.verbs })) }));
    let namespace: string | undefined;
    let parts = rest;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      parts = rest.slice(2);
    }
    const [resource, name, ...extra] = parts;
    const known = resource === 'pods' || (resource === 'nodes' && namespace === undefined);
    if (!known || extra.length) throw new ApiError(StatusReason.NotFound, 'the server could not find the requested resource');
    if (method !== 'GET' && method !== 'HEAD') throw notAllowed();
    if (qBool(url, 'watch') && url.searchParams.has('watch')) {
      throw new ApiError(StatusReason.MethodNotAllowed, `watch is not supported on resources of kind "${resource === 'pods' ? 'podmetrics' : 'nodemetrics'}.${metricsGroupName}"`, { group: metricsGroupName, kind: resource === 'pods' ? 'podmetrics' : 'nodemetrics' });
    }
    const table = wantsTable(req.headers.accept);
    if (resource === 'nodes') {
      const items = name === undefined ? await this.nodeMetrics(url) : [await this.nodeMetric(name)];
      return this.reply(res, req, name !== undefined, 'NodeMetrics', items, table);
    }
    const items = name === undefined ? await this.podMetrics(url, namespace) : [await this.podMetric(namespace ?? '', name)];
    return this.reply(res, req, name !== undefined, 'PodMetrics', items, table);
  }

  private read(method: string, answer: () => void): void {
    if (method !== 'GET' && method !== 'HEAD') throw notAllowed();
    answer();
  }

  private reply(res: ServerResponse, req: IncomingMessage, single: boolean, kind: string, built: Built[], table: string | undefined): void {
    if (table) return send(res, 200, toTable(table, built));
    if (single) return send(res, 200, { kind, apiVersion, ...built[0]?.item }, req.headers.accept);
    send(res, 200, { kind: `${kind}List`, apiVersion, metadata: {}, items: built.map((b) => b.item) }, req.headers.accept);
  }

  private async nodeMetrics(url: URL): Promise<Built[]> {
    const nodes = await this.deps.client.listAll(Kinds.Node, { labelSelector: q(url, 'labelSelector'), fieldSelector: metaFieldSelector(q(url, 'fieldSelector')) });
    return nodes.flatMap((n) => this.nodeItem(n) ?? []).sort((a, b) => a.item.metadata.name.localeCompare(b.item.metadata.name));
  }

  private async nodeMetric(name: string): Promise<Built> {
    const node = await this.deps.client.find(Kinds.Node, { name });
    if (!node) throw new ApiError(StatusReason.NotFound, `nodes "${name}" not found`, { name, kind: 'nodes' });
    const item = this.nodeItem(node);
    if (!item) throw new ApiError(StatusReason.NotFound, `nodemetrics.${metricsGroupName} "${name}" not found`, { name, group: metricsGroupName, kind: 'nodemetrics' });
    return item;
  }

  private nodeItem(node: StoredObject): Built | undefined {
    const u = this.deps.usage.nodeUsage();
    if (!u || u.name !== node.metadata.name || u.cpuCores === undefined || u.windowMs === undefined) return undefined;
    const item: MetricsItem = {
      metadata: { name: node.metadata.name, creationTimestamp: time(Date.now()), ...(node.metadata.labels ? { labels: node.metadata.labels } : {}) },
      timestamp: time(u.timestamp),
      window: goDuration(u.windowMs),
      usage: { cpu: cpuQuantity(u.cpuCores), memory: memoryQuantity(u.memoryWorkingSetBytes) },
    };
    return { item, cores: u.cpuCores, bytes: u.memoryWorkingSetBytes };
  }

  private async podMetrics(url: URL, namespace: string | undefined): Promise<Built[]> {
    const pods = await this.deps.client.listAll(Kinds.Pod, { namespace, labelSelector: q(url, 'labelSelector'), fieldSelector: metaFieldSelector(q(url, 'fieldSelector')) });
    const usage = this.usageByUid();
    return pods
      .flatMap((p) => podItem(p, usage.get(p.metadata.uid)) ?? [])
      .sort((a, b) => (a.item.metadata.namespace ?? '').localeCompare(b.item.metadata.namespace ?? '') || a.item.metadata.name.localeCompare(b.item.metadata.name));
  }

  private async podMetric(namespace: string, name: string): Promise<Built> {
    const pod = await this.deps.client.find(Kinds.Pod, { namespace, name });
    if (!pod) throw new ApiError(StatusReason.NotFound, `pods "${name}" not found`, { name, kind: 'pods' });
    const item = podItem(pod, this.usageByUid().get(pod.metadata.uid));
    if (!item) throw new ApiError(StatusReason.NotFound, `podmetrics.${metricsGroupName} "${namespace}/${name}" not found`, { name: `${namespace}/${name}`, group: metricsGroupName, kind: 'podmetrics' });
    return item;
  }

  private usageByUid(): Map<string, ContainerUsage[]> {
    return new Map(this.deps.usage.podUsage().map((p) => [p.uid, p.containers]));
  }
}

/** a Pod's metrics once every container it runs has a rate, as metrics-server reports them */
function podItem(pod: StoredObject, containers: ContainerUsage[] | undefined): Built | undefined {
  if (!containers?.length || containers.some((c) => c.cpuCores === undefined || c.windowMs === undefined)) return undefined;
  const spec = pod.spec as { initContainers?: { name: string }[]; containers?: { name: string }[] } | undefined;
  const order = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => c.name);
  const sorted = [...containers].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  // the pod's time is its earliest container sample's, with that sample's window
  const earliest = sorted.reduce((a, b) => (b.timestamp < a.timestamp ? b : a));
  const item: MetricsItem = {
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace ?? 'default', creationTimestamp: time(Date.now()), ...(pod.metadata.labels ? { labels: pod.metadata.labels } : {}) },
    timestamp: time(earliest.timestamp),
    window: goDuration(earliest.windowMs ?? 0),
    containers: sorted.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.cpuCores ?? 0), memory: memoryQuantity(c.memoryWorkingSetBytes) } })),
  };
  return { item, cores: sorted.reduce((a, c) => a + (c.cpuCores ?? 0), 0), bytes: sorted.reduce((a, c) => a + c.memoryWorkingSetBytes, 0) };
}

function apiGroup(): unknown {
  const gv = { groupVersion: apiVersion, version };
  return { kind: 'APIGroup', apiVersion: 'v1', name: metricsGroupName, versions: [gv], preferredVersion: gv };
}

function notAllowed(): ApiError {
  return new ApiError(StatusReason.MethodNotAllowed, 'the server does not allow this method on the requested resource');
}

/** metrics-server selects by the object's metadata fields only, as kube-apiserver's default conversion */
function metaFieldSelector(s: string | undefined): string | undefined {
  for (const r of parseFieldSelector(s)) {
    if (r.key !== 'metadata.name' && r.key !== 'metadata.namespace') {
      throw new ApiError(StatusReason.BadRequest, `"${r.key}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
    }
  }
  return s;
}

/** the Table version asked for (`application/json;as=Table;v=v1;g=meta.k8s.io`), if any */
function wantsTable(accept: string | undefined): string | undefined {
  for (const part of (accept ?? '').split(',')) {
    const params = new Map(part.split(';').slice(1).map((p) => p.trim().split('=') as [string, string]));
    if (params.get('as') === 'Table' && params.get('g') === 'meta.k8s.io' && ['v1', 'v1beta1'].includes(params.get('v') ?? '')) return params.get('v');
  }
  return undefined;
}

/** metrics-server's table: the name, each resource's usage (a Pod's summed over containers), the window */
function toTable(v: string, built: Built[]): unknown {
  const columnDefinitions = [
    { name: 'Name', type: 'string', format: 'name', description: 'Name of the resource', priority: 0 },
    { name: 'cpu', type: 'string', format: 'quantity', description: '', priority: 0 },
    { name: 'memory', type: 'string', format: 'quantity', description: '', priority: 0 },
    { name: 'Window', type: 'string', format: 'duration', description: '', priority: 0 },
  ];
  const rows = built.map(({ item, cores, bytes }) => ({
    cells: [item.metadata.name, cpuQuantity(cores), memoryQuantity(bytes), item.window],
    object: { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${v}`, metadata: item.metadata },
  }));
  return { kind: 'Table', apiVersion: `meta.k8s.io/${v}`, metadata: {}, columnDefinitions, rows };
}
