/**
 * A tiny in-memory Kubernetes-style API server for CLI tests: discovery, CRUD with
 * resourceVersions, label/field selectors, NDJSON watches, pod logs and /version.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KObject } from '../types.js';

export interface FakeResource {
  group: string;
  version: string;
  name: string;
  singularName: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
}

export const FAKE_RESOURCES: FakeResource[] = [
  { group: '', version: 'v1', name: 'pods', singularName: 'pod', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'] },
  { group: '', version: 'v1', name: 'events', singularName: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  { group: '', version: 'v1', name: 'namespaces', singularName: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
  { group: '', version: 'v1', name: 'nodes', singularName: 'node', kind: 'Node', namespaced: false, shortNames: ['no'] },
  { group: '', version: 'v1', name: 'configmaps', singularName: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: 'batch', version: 'v1', name: 'jobs', singularName: 'job', kind: 'Job', namespaced: true, categories: ['all'] },
  { group: 'kubeflow.org', version: 'v1', name: 'pytorchjobs', singularName: 'pytorchjob', kind: 'PyTorchJob', namespaced: true, shortNames: ['ptj'] },
];

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body?: unknown;
}

interface Watcher {
  res: ServerResponse;
  plural: string;
  group: string;
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
}

function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function matchesSelector(obj: KObject, selector: string | undefined, field: boolean): boolean {
  if (!selector) return true;
  for (const term of selector.split(',').filter(Boolean)) {
    const neg = term.includes('!=');
    const [k, v] = term.split(neg ? '!=' : term.includes('==') ? '==' : '=') as [string, string];
    const actual = field ? getPath(obj, k) : obj.metadata?.labels?.[k];
    const equal = String(actual ?? '') === v;
    if (neg ? equal : !equal) return false;
  }
  return true;
}

function status(code: number, reason: string, message: string, details?: Record<string, unknown>): KObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, details };
}

export class FakeServer {
  readonly objects = new Map<string, KObject>();
  readonly requests: RecordedRequest[] = [];
  readonly watchers: Watcher[] = [];
  logs = new Map<string, string>();
  /** Called when a watch connects (after the response headers are sent). */
  onWatch: ((w: { plural: string; query: URLSearchParams }) => void) | undefined;
  private rv = 100;
  private uid = 0;
  private server: Server;
  url = '';

  constructor(readonly resources: FakeResource[] = FAKE_RESOURCES) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(status(500, 'InternalError', String(err))));
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.res.end();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private key(r: FakeResource, ns: string | undefined, name: string): string {
    return `${r.group}/${r.name}/${ns ?? ''}/${name}`;
  }

  private resourceFor(obj: KObject): FakeResource {
    const [g, v] = String(obj.apiVersion).includes('/') ? String(obj.apiVersion).split('/') : ['', obj.apiVersion];
    const r = this.resources.find((x) => x.group === g && x.version === v && x.kind === obj.kind);
    if (!r) throw new Error(`fake server: unknown ${obj.apiVersion} ${obj.kind}`);
    return r;
  }

  /** Stores an object directly (filling metadata), notifying watchers. */
  put(obj: KObject, type: 'ADDED' | 'MODIFIED' = 'ADDED'): KObject {
    const r = this.resourceFor(obj);
    const meta = obj.metadata ?? {};
    const key = this.key(r, r.namespaced ? meta.namespace ?? 'default' : undefined, meta.name ?? '');
    const existing = this.objects.get(key);
    const stored: KObject = {
      ...obj,
      metadata: {
        ...meta,
        namespace: r.namespaced ? meta.namespace ?? 'default' : undefined,
        uid: meta.uid ?? existing?.metadata?.uid ?? `uid-${++this.uid}`,
        creationTimestamp: meta.creationTimestamp ?? existing?.metadata?.creationTimestamp ?? new Date().toISOString(),
        resourceVersion: String(++this.rv),
      },
    };
    this.objects.set(key, stored);
    this.notify(r, existing ? 'MODIFIED' : type, stored);
    return stored;
  }

  remove(obj: KObject): void {
    const r = this.resourceFor(obj);
    const key = this.key(r, r.namespaced ? obj.metadata?.namespace ?? 'default' : undefined, obj.metadata?.name ?? '');
    const existing = this.objects.get(key);
    if (!existing) return;
    this.objects.delete(key);
    this.notify(r, 'DELETED', { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.rv) } });
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): KObject | undefined {
    const r = this.resourceFor({ apiVersion, kind });
    return this.objects.get(this.key(r, r.namespaced ? namespace : undefined, name));
  }

  private notify(r: FakeResource, type: string, obj: KObject): void {
    for (const w of this.watchers) {
      if (w.plural !== r.name || w.group !== r.group) continue;
      if (w.namespace && obj.metadata?.namespace !== w.namespace) continue;
      if (!matchesSelector(obj, w.fieldSelector, true) || !matchesSelector(obj, w.labelSelector, false)) continue;
      w.res.write(`${JSON.stringify({ type, object: obj })}\n`);
    }
  }

  /** Ends every open watch (as a server timeout would). */
  endWatches(): void {
    for (const w of this.watchers.splice(0)) w.res.end();
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private discovery(path: string): unknown {
    if (path === '/api') return { kind: 'APIVersions', versions: ['v1'] };
    if (path === '/apis') {
      const groups = [...new Set(this.resources.filter((r) => r.group).map((r) => r.group))];
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: groups.map((g) => ({
          name: g,
          versions: [{ groupVersion: `${g}/v1`, version: 'v1' }],
          preferredVersion: { groupVersion: `${g}/v1`, version: 'v1' },
        })),
      };
    }
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    if (!m) return undefined;
    const group = m[2] ?? '';
    const version = m[1] ?? m[3] ?? '';
    const rs = this.resources.filter((r) => r.group === group && r.version === version);
    if (rs.length === 0) return undefined;
    const resources = rs.flatMap((r) => [
      { name: r.name, singularName: r.singularName, namespaced: r.namespaced, kind: r.kind, verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'], shortNames: r.shortNames, categories: r.categories },
      { name: `${r.name}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'update'] },
    ]);
    return { kind: 'APIResourceList', groupVersion: group ? `${group}/${version}` : version, resources };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body });
    const path = url.pathname;

    if (path === '/version') return this.send(res, 200, { gitVersion: 'v0.1.0-test', platform: 'linux/amd64' });
    const disc = this.discovery(path);
    if (disc) return this.send(res, 200, disc);

    const m =
      /^\/(?:api\/v1|apis\/([^/]+)\/v1)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(path);
    if (!m) return this.send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
    const group = m[1] ?? '';
    const namespace = m[2] ? decodeURIComponent(m[2]) : undefined;
    const plural = m[3] as string;
    const name = m[4] ? decodeURIComponent(m[4]) : undefined;
    const sub = m[5];
    const r = this.resources.find((x) => x.group === group && x.name === plural);
    if (!r) return this.send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
    const typeName = r.group ? `${r.name}.${r.group}` : r.name;

    if (sub === 'log' && r.kind === 'Pod' && name) {
      const log = this.logs.get(`${namespace}/${name}`);
      if (log === undefined) return this.send(res, 404, status(404, 'NotFound', `pods "${name}" not found`));
      const tail = Number(url.searchParams.get('tailLines') ?? '-1');
      const lines = log.split('\n');
      const text = tail >= 0 ? `${lines.slice(-tail - 1).join('\n')}` : log;
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(text);
      return;
    }

    if (name === undefined) {
      if (req.method === 'GET' && url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
        res.flushHeaders();
        const w: Watcher = {
          res,
          plural,
          group,
          namespace,
          fieldSelector: url.searchParams.get('fieldSelector') ?? undefined,
          labelSelector: url.searchParams.get('labelSelector') ?? undefined,
        };
        this.watchers.push(w);
        res.on('close', () => {
          const i = this.watchers.indexOf(w);
          if (i >= 0) this.watchers.splice(i, 1);
        });
        this.onWatch?.({ plural, query: url.searchParams });
        return;
      }
      if (req.method === 'GET') {
        const items = [...this.objects.values()].filter((o) => {
          if (this.resourceFor(o) !== r) return false;
          if (namespace && o.metadata?.namespace !== namespace) return false;
          return (
            matchesSelector(o, url.searchParams.get('labelSelector') ?? undefined, false) &&
            matchesSelector(o, url.searchParams.get('fieldSelector') ?? undefined, true)
          );
        });
        items.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
        return this.send(res, 200, {
          kind: `${r.kind}List`,
          apiVersion: r.group ? `${r.group}/v1` : 'v1',
          metadata: { resourceVersion: String(this.rv) },
          items: items.map((o) => ({ ...o, apiVersion: undefined, kind: undefined })),
        });
      }
      if (req.method === 'POST') {
        const obj = body as KObject;
        const objName = obj.metadata?.name ?? '';
        if (this.objects.has(this.key(r, namespace, objName))) {
          return this.send(res, 409, status(409, 'AlreadyExists', `${typeName} "${objName}" already exists`, { name: objName, kind: r.kind }));
        }
        const invalid = this.validate(r, obj);
        if (invalid) return this.send(res, 422, invalid);
        return this.send(res, 201, this.put({ ...obj, metadata: { ...obj.metadata, namespace } }));
      }
      return this.send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
    }

    const key = this.key(r, namespace, name);
    const existing = this.objects.get(key);
    if (!existing) return this.send(res, 404, status(404, 'NotFound', `${typeName} "${name}" not found`, { name, kind: r.name }));
    if (req.method === 'GET') return this.send(res, 200, existing);
    if (req.method === 'PUT') {
      const obj = body as KObject;
      if (obj.metadata?.resourceVersion !== existing.metadata?.resourceVersion) {
        return this.send(res, 409, status(409, 'Conflict', `Operation cannot be fulfilled on ${typeName} "${name}": the object has been modified; please apply your changes to the latest version and try again`));
      }
      const invalid = this.validate(r, obj);
      if (invalid) return this.send(res, 422, invalid);
      return this.send(res, 200, this.put(obj));
    }
    if (req.method === 'DELETE') {
      this.remove(existing);
      return this.send(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name, kind: r.name, uid: existing.metadata?.uid } });
    }
    return this.send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
  }

  private validate(r: FakeResource, obj: KObject): KObject | undefined {
    const p = (obj.spec as { parallelism?: number } | undefined)?.parallelism;
    if (r.kind === 'Job' && typeof p === 'number' && p < 0) {
      const name = obj.metadata?.name ?? '';
      return status(422, 'Invalid', `Job.batch "${name}" is invalid: spec.parallelism: Invalid value: ${p}: must be greater than or equal to 0`, {
        name,
        kind: 'Job',
        causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${p}: must be greater than or equal to 0`, field: 'spec.parallelism' }],
      });
    }
    return undefined;
  }
}
