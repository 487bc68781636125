// Discovery: what kubectl and the client libraries read to learn the resources Skiff serves. One table
// (the kinds of the registry, their subresources, and groups of resources the store does not hold, such
// as metrics.k8s.io) answers the legacy documents (/api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v}), the
// aggregated discovery document (apidiscovery.k8s.io/v2, asked for by content negotiation on /api and
// /apis), the routing of subresources in api.ts, and the paths of the OpenAPI documents (openapi.ts).
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef, KindRegistry } from '../../api/registry.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface SubresourceInfo {
  /** `status`, `log`, `exec`, … */
  name: string;
  /** what the subresource answers (a Pod for pods/log, PodExecOptions for pods/exec, an autoscaling/v1 Scale for /scale) */
  responseKind: GroupVersionKind;
  verbs: string[];
}

export interface ResourceInfo {
  group: string;
  version: string;
  /** the plural, as it appears in paths */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: SubresourceInfo[];
  /** the registry's kind, for resources the store holds */
  def?: KindDef;
}

/** a group-version of resources that are not stored objects (metrics.k8s.io), served by its own handler */
export interface ExtraGroupVersion {
  group: string;
  version: string;
  resources: Omit<ResourceInfo, 'group' | 'version' | 'def'>[];
  /** answers requests under /apis/{group}/{version}/…; `rest` is the path after the version */
  handle?(req: IncomingMessage, res: ServerResponse, url: URL, rest: string[]): Promise<void>;
}

const objectVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const statusVerbs = ['get', 'patch', 'update'];

/**
 * The subresources served beyond /status, by kind (`group/Kind`): the one list that routing (api.ts
 * resolve()) and every discovery and OpenAPI document read. A subresource added to the server is added
 * here.
 */
export const servedSubresources: Record<string, SubresourceInfo[]> = {
  '/Pod': [
    { name: 'attach', responseKind: { group: '', version: 'v1', kind: 'PodAttachOptions' }, verbs: ['create', 'get'] },
    { name: 'eviction', responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
    { name: 'exec', responseKind: { group: '', version: 'v1', kind: 'PodExecOptions' }, verbs: ['create', 'get'] },
    { name: 'log', responseKind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] },
    { name: 'portforward', responseKind: { group: '', version: 'v1', kind: 'PodPortForwardOptions' }, verbs: ['create', 'get'] },
    { name: 'proxy', responseKind: { group: '', version: 'v1', kind: 'PodProxyOptions' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] },
  ],
  '/Service': [{ name: 'proxy', responseKind: { group: '', version: 'v1', kind: 'ServiceProxyOptions' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
  '/ServiceAccount': [{ name: 'token', responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] }],
  '/Namespace': [{ name: 'finalize', responseKind: { group: '', version: 'v1', kind: 'Namespace' }, verbs: ['update'] }],
};

/** kinds that do not take every verb: kube-apiserver deletes no collection of Namespaces */
const verbExceptions: Record<string, string[]> = {
  '/Namespace': objectVerbs.filter((v) => v !== 'deletecollection'),
};

/** the verbs a stored kind takes */
export function verbsOf(def: KindDef): string[] {
  return verbExceptions[`${def.group}/${def.kind}`] ?? objectVerbs;
}

/**
 * The categories of the kinds that have them (`kubectl get all`, `kubectl get katib`): Kubernetes puts
 * Pods, Services and Jobs in `all`; Katib's CRDs name `all`, `kubeflow` and `katib`. The other
 * Kubeflow CRDs (training-operator's, KServe's, Kueue's, Notebook, Profile) name none.
 */
const katib = ['all', 'kubeflow', 'katib'];
const categories: Record<string, string[]> = {
  '/Pod': ['all'],
  '/Service': ['all'],
  'batch/Job': ['all'],
  'kubeflow.org/Experiment': katib,
  'kubeflow.org/Trial': katib,
  'kubeflow.org/Suggestion': katib,
};

/** the subresources of a stored kind, sorted by name as kube-apiserver lists them */
export function subresourcesOf(def: KindDef): SubresourceInfo[] {
  const out: SubresourceInfo[] = [...(servedSubresources[`${def.group}/${def.kind}`] ?? [])];
  if (def.hasStatus) out.push({ name: 'status', responseKind: { group: def.group, version: def.version, kind: def.kind }, verbs: statusVerbs });
  if (def.scale) out.push({ name: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: statusVerbs });
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** built-in groups first, in kube-apiserver's order; the rest (Kubeflow's, Skiff's) after them by name */
const groupPriority = ['', 'apps', 'events.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io', 'autoscaling', 'batch', 'certificates.k8s.io', 'networking.k8s.io', 'policy', 'rbac.authorization.k8s.io', 'storage.k8s.io', 'apiextensions.k8s.io', 'scheduling.k8s.io', 'coordination.k8s.io', 'node.k8s.io', 'discovery.k8s.io', 'resource.k8s.io', 'flowcontrol.apiserver.k8s.io', 'metrics.k8s.io'];

function groupOrder(a: string, b: string): number {
  const ia = groupPriority.indexOf(a);
  const ib = groupPriority.indexOf(b);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib);
  return a.localeCompare(b);
}

/**
 * Kubernetes' version priority: GA before beta before alpha, higher numbers first, then anything else
 * by name (a group's preferred version is the first).
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return [m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, Number(m[1]), Number(m[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return pa ? -1 : pb ? 1 : a.localeCompare(b);
  return pb[0] - pa[0] || pb[1] - pa[1] || pb[2] - pa[2];
}

interface GroupEntry {
  name: string;
  /** preferred first */
  versions: { version: string; resources: ResourceInfo[] }[];
}

export interface AcceptedType {
  type: string;
  params: Record<string, string>;
  q: number;
}

/** an Accept header's media types, most wanted first (by q, then in the client's order) */
export function parseAccept(header: string | undefined): AcceptedType[] {
  const out: AcceptedType[] = [];
  for (const clause of (header ?? '').split(',')) {
    const [type = '', ...rest] = clause.split(';').map((s) => s.trim());
    if (!type) continue;
    const params: Record<string, string> = {};
    for (const p of rest) {
      const i = p.indexOf('=');
      if (i > 0) params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim().replace(/^"|"$/g, '');
    }
    const q = params.q === undefined ? 1 : Number(params.q);
    out.push({ type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 1 });
  }
  return out.filter((t) => t.q > 0).map((t, i) => ({ t, i })).sort((a, b) => b.t.q - a.t.q || a.i - b.i).map(({ t }) => t);
}

/** which aggregated discovery version an Accept header asks for, if the client prefers it to the legacy documents */
export function aggregatedVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const t of parseAccept(accept)) {
    const json = t.type === 'application/json' || t.type === 'application/*' || t.type === '*/*';
    if (!json) continue;
    if (t.params.g === undefined && t.params.as === undefined) return undefined;
    if (t.params.g === 'apidiscovery.k8s.io' && t.params.as === 'APIGroupDiscoveryList' && (t.params.v === 'v2' || t.params.v === 'v2beta1')) return t.params.v;
  }
  return undefined;
}

function gvString(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export class Discovery {
  private readonly extras: ExtraGroupVersion[] = [];
  private cache?: { groups: GroupEntry[]; aggregated: Map<string, { body: string; etag: string }> };
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly registry: KindRegistry) {}

  /** adds a group-version of resources the store does not hold (metrics.k8s.io/v1beta1), with its handler */
  addGroup(gv: ExtraGroupVersion): void {
    this.extras.push(gv);
    this.cache = undefined;
    for (const l of this.listeners) l();
  }

  /** calls `fn` whenever the table changes (what is built from it, the OpenAPI documents, is stale) */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  /** the handler of a non-stored group-version, if one was added */
  extra(group: string, version: string): ExtraGroupVersion | undefined {
    return this.extras.find((e) => e.group === group && e.version === version);
  }

  /** every group, core ('') first, each with its versions (preferred first) and their resources */
  groups(): GroupEntry[] {
    if (this.cache) return this.cache.groups;
    const byGroup = new Map<string, Map<string, ResourceInfo[]>>();
    const add = (r: ResourceInfo): void => {
      const versions = byGroup.get(r.group) ?? new Map<string, ResourceInfo[]>();
      byGroup.set(r.group, versions);
      const list = versions.get(r.version) ?? [];
      versions.set(r.version, list);
      list.push(r);
    };
    for (const def of this.registry.all()) {
      add({
        group: def.group, version: def.version, resource: def.plural, singular: def.singular, kind: def.kind, namespaced: def.namespaced,
        verbs: verbsOf(def), shortNames: def.shortNames ?? [], categories: categories[`${def.group}/${def.kind}`] ?? [], subresources: subresourcesOf(def), def,
      });
    }
    for (const e of this.extras) for (const r of e.resources) add({ ...r, group: e.group, version: e.version });
    const groups: GroupEntry[] = [...byGroup.entries()]
      .sort(([a], [b]) => groupOrder(a, b))
      .map(([name, versions]) => ({ name, versions: [...versions.entries()].sort(([a], [b]) => compareVersions(a, b)).map(([version, resources]) => ({ version, resources: resources.sort((a, b) => a.resource.localeCompare(b.resource)) })) }));
    this.cache = { groups, aggregated: new Map() };
    return groups;
  }

  /** the resources of one group-version, or undefined when it is not served */
  resources(group: string, version: string): ResourceInfo[] | undefined {
    return this.groups().find((g) => g.name === group)?.versions.find((v) => v.version === version)?.resources;
  }

  /** whether a stored kind serves a subresource */
  hasSubresource(def: KindDef, name: string): boolean {
    return subresourcesOf(def).some((s) => s.name === name);
  }

  apiVersions(): unknown {
    return { kind: 'APIVersions', versions: this.groups().find((g) => g.name === '')?.versions.map((v) => v.version) ?? ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
  }

  private apiGroup(g: GroupEntry): Record<string, unknown> {
    const versions = g.versions.map((v) => ({ groupVersion: gvString(g.name, v.version), version: v.version }));
    return { name: g.name, versions, preferredVersion: versions[0] };
  }

  apiGroupList(): unknown {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.groups().filter((g) => g.name !== '').map((g) => this.apiGroup(g)) };
  }

  apiGroupDoc(name: string): unknown | undefined {
    const g = this.groups().find((e) => e.name === name && name !== '');
    return g ? { kind: 'APIGroup', apiVersion: 'v1', ...this.apiGroup(g) } : undefined;
  }

  apiResourceList(group: string, version: string): unknown | undefined {
    const list = this.resources(group, version);
    if (!list) return undefined;
    const resources: unknown[] = [];
    for (const r of list) {
      resources.push({
        name: r.resource, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: r.verbs,
        ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}), ...(r.categories?.length ? { categories: r.categories } : {}),
      });
      for (const s of r.subresources ?? []) {
        const other = s.responseKind.group !== group || s.responseKind.version !== version;
        resources.push({
          name: `${r.resource}/${s.name}`, singularName: '', namespaced: r.namespaced,
          ...(other ? { group: s.responseKind.group, version: s.responseKind.version } : {}),
          kind: s.responseKind.kind, verbs: s.verbs,
        });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gvString(group, version), resources };
  }

  /** the aggregated document of /api (core) or /apis (every other group) */
  aggregated(core: boolean, version: 'v2' | 'v2beta1'): { body: string; etag: string } {
    this.groups();
    const key = `${core}|${version}`;
    const cached = this.cache?.aggregated.get(key);
    if (cached) return cached;
    const items = this.groups().filter((g) => (g.name === '') === core).map((g) => ({
      metadata: { ...(g.name ? { name: g.name } : {}), creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v.version,
        resources: v.resources.map((r) => ({
          resource: r.resource,
          responseKind: { group: r.group, version: r.version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: r.singular,
          verbs: r.verbs,
          ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}),
          ...(r.categories?.length ? { categories: r.categories } : {}),
          ...(r.subresources?.length ? { subresources: r.subresources.map((s) => ({ subresource: s.name, responseKind: s.responseKind, verbs: s.verbs })) } : {}),
        })),
        freshness: 'Current',
      })),
    }));
    const doc = { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
    const body = JSON.stringify(doc);
    // kube-apiserver's ETag: the SHA-512 of the document, in upper-case hex
    const out = { body, etag: createHash('sha512').update(JSON.stringify(items)).digest('hex').toUpperCase() };
    this.cache?.aggregated.set(key, out);
    return out;
  }

  /**
   * Answers a discovery path (`/api`, `/apis`, `/api/v1`, `/apis/{g}`, `/apis/{g}/{v}`); false for any
   * other path.
   */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    const segs = path.split('/').filter(Boolean);
    if (path === '/api' || path === '/apis') {
      const version = aggregatedVersion(req.headers.accept);
      if (!version) {
        send(res, path === '/api' ? this.apiVersions() : this.apiGroupList());
        return true;
      }
      const { body, etag } = this.aggregated(path === '/api', version);
      const quoted = `"${etag}"`;
      const headers = { ETag: quoted, Vary: 'Accept', 'Cache-Control': 'public' };
      if (req.headers['if-none-match'] === quoted) {
        res.writeHead(304, headers);
        res.end();
        return true;
      }
      res.writeHead(200, { ...headers, 'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return true;
    }
    if (segs[0] === 'apis' && segs.length === 2) {
      const doc = this.apiGroupDoc(decodeURIComponent(segs[1] ?? ''));
      if (!doc) throw new ApiError(StatusReason.NotFound, 'the server could not find the requested resource');
      send(res, doc);
      return true;
    }
    const gv = segs[0] === 'api' && segs.length === 2 ? { group: '', version: segs[1] ?? '' } : segs[0] === 'apis' && segs.length === 3 ? { group: decodeURIComponent(segs[1] ?? ''), version: segs[2] ?? '' } : undefined;
    if (!gv) return false;
    const list = this.apiResourceList(gv.group, gv.version);
    if (!list) throw new ApiError(StatusReason.NotFound, 'the server could not find the requested resource');
    send(res, list);
    return true;
  }
}

function send(res: ServerResponse, doc: unknown): void {
  const body = JSON.stringify(doc);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
