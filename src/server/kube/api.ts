// The Kubernetes REST API: /api and /apis/{group}/{version} over the object client, with watch
// streams, pod logs and exec, and discovery.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import type { KindDef, KindRegistry } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Client, PatchType } from '../../store/client.js';
import type { DeleteOptions } from '../../store/store.js';
import type { PodExecSource, PodLogSource } from '../../substrate/substrate.js';
import { parseBody, readBody, send } from '../body.js';
import { apiGroupList, apiResourceList, apiVersions } from './discovery.js';
import type { ServedGroup } from './discovery.js';
import { servePodExec, servePodLog } from './pods.js';
import { q, qBool, qInt } from './query.js';
import { serveWatch } from './watch.js';

/** the patch media types Skiff applies, in the order kube-apiserver lists them */
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json'];

export interface KubeApiDeps {
  client: Client;
  registry: KindRegistry;
  logs: PodLogSource;
  /** runs `exec` requests; without it they answer 405 */
  exec?: PodExecSource;
  /** periodic bookmark interval for watches that ask for them */
  bookmarkMs?: number;
  /** for `?dryRun=All&render=true`: what storing the object would create (src/server/workloads.ts) */
  dryRender?: (obj: StoredObject) => KObject[];
  /** groups other code serves (metrics.k8s.io), listed in discovery with the registry's */
  served?: ServedGroup[];
}

interface Target {
  def: KindDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

export class KubeApi {
  constructor(private readonly deps: KubeApiDeps) {}

  /**
   * `?dryRun=All&render=true` on a create or update: a `List` of the object as it would be stored,
   * then every object it would create (a training job's replica Pods, their Services, MPI's ConfigMap),
   * as `skiff apply --dry-run=server -o yaml` prints them.
   */
  private rendered(obj: StoredObject): KObject {
    return { apiVersion: 'v1', kind: 'List', metadata: {}, items: [obj, ...(this.deps.dryRender?.(obj) ?? [])] };
  }

  /** a request under /api or /apis (path without a trailing slash) */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (path === '/api') return send(res, 200, apiVersions());
    if (path === '/apis') return send(res, 200, apiGroupList(this.deps.registry, this.deps.served));
    const { registry } = this.deps;
    const segs = path.split('/').filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 2) {
      group = '';
      version = segs[1] ?? '';
      rest = segs.slice(2);
    } else if (segs[0] === 'apis' && segs.length >= 3) {
      group = segs[1] ?? '';
      version = segs[2] ?? '';
      rest = segs.slice(3);
    } else if (segs[0] === 'apis' && segs.length === 2) {
      const versions = registry.groups().get(segs[1] ?? '');
      if (!versions) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: API group "${segs[1]}" is not served`);
      return send(res, 200, { kind: 'APIGroup', apiVersion: 'v1', name: segs[1], versions: versions.map((v) => ({ groupVersion: `${segs[1]}/${v}`, version: v })), preferredVersion: { groupVersion: `${segs[1]}/${versions[0]}`, version: versions[0] } });
    } else {
      throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource (${method} ${path})`);
    }
    if (rest.length === 0) {
      const list = apiResourceList(registry, group, version);
      if (!list) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: ${group ? group + '/' : ''}${version} is not served`);
      return send(res, 200, list);
    }
    const target = this.resolve(group, version, rest);
    return this.serve(req, res, url, method, target);
  }

  private resolve(group: string, version: string, rest: string[]): Target {
    const { registry } = this.deps;
    const unknown = (plural: string): ApiError =>
      new ApiError(StatusReason.NotFound, `the server could not find the requested resource: no resource "${plural}" in ${group ? group + '/' : ''}${version}`);
    let namespace: string | undefined;
    let parts = rest;
    // /namespaces/{ns}/{plural}/... addresses namespaced kinds; /namespaces[/{name}[/status]] the Namespace itself
    if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && ['status', 'finalize'].includes(rest[2] ?? ''))) {
      namespace = rest[1];
      parts = rest.slice(2);
    }
    const [plural = '', name, sub, ...extra] = parts;
    const def = registry.forResource(group, version, plural);
    if (!def) throw unknown(plural);
    if (extra.length) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: /${rest.join('/')}`);
    if (namespace !== undefined && !def.namespaced) throw unknown(plural);
    if (name !== undefined && def.namespaced && namespace === undefined) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: ${def.plural} are namespaced; use /namespaces/{namespace}/${def.plural}/${name}`);
    if (sub !== undefined && !(sub === 'status' && def.hasStatus) && !((sub === 'log' || sub === 'exec') && def.kind === 'Pod') && !(sub === 'finalize' && def.kind === 'Namespace')) {
      throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: ${def.plural}/${sub}`);
    }
    return { def, namespace, name, sub };
  }

  private async body(req: IncomingMessage): Promise<unknown> {
    return parseBody(await readBody(req), req.headers['content-type']);
  }

  private async objectBody(req: IncomingMessage, t: Target): Promise<KObject> {
    const obj = (await this.body(req)) as KObject;
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ApiError(StatusReason.BadRequest, 'the request body must be a single object');
    if (obj.metadata !== undefined && (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata))) {
      throw ApiError.invalid(t.def.kind, t.def.group, '', [{ field: 'metadata', type: 'FieldValueTypeInvalid', message: 'Invalid value: expected object' }]);
    }
    obj.metadata ??= {};
    // a body may leave apiVersion/kind out; they come from the path
    obj.apiVersion ??= apiVersionOf(t.def);
    obj.kind ??= t.def.kind;
    if (obj.apiVersion !== apiVersionOf(t.def) || obj.kind !== t.def.kind) {
      throw new ApiError(StatusReason.BadRequest, `the body is a ${obj.apiVersion}/${obj.kind} but the path is for ${apiVersionOf(t.def)}/${t.def.kind}`);
    }
    if (t.def.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== t.namespace) {
        throw new ApiError(StatusReason.BadRequest, `the namespace of the provided object (${obj.metadata.namespace}) does not match the namespace sent on the request (${t.namespace})`);
      }
      obj.metadata.namespace = t.namespace;
    }
    if (t.name !== undefined) {
      if (obj.metadata.name !== undefined && obj.metadata.name !== t.name) {
        throw new ApiError(StatusReason.BadRequest, `the name of the object (${obj.metadata.name}) does not match the name on the URL (${t.name})`);
      }
      obj.metadata.name = t.name;
    }
    return obj;
  }

  private async serve(req: IncomingMessage, res: ServerResponse, url: URL, method: string, t: Target): Promise<void> {
    const { client } = this.deps;
    const accept = req.headers.accept;
    const key = { namespace: t.namespace, name: t.name ?? '' };
    const dryRun = q(url, 'dryRun') === 'All';
    if (t.name === undefined) {
      if (t.def.namespaced && t.namespace === undefined && method !== 'GET') {
        throw new ApiError(StatusReason.MethodNotAllowed, `${method} needs a namespace: use /namespaces/{namespace}/${t.def.plural}`);
      }
      switch (method) {
        case 'GET':
          if (qBool(url, 'watch') && url.searchParams.has('watch')) return serveWatch(this.deps.client, req, res, url, t, this.deps.bookmarkMs);
          return this.list(res, url, t, accept);
        case 'POST': {
          const obj = await this.objectBody(req, t);
          const created = await client.create(obj, { dryRun });
          return send(res, 201, dryRun && qBool(url, 'render') ? this.rendered(created) : created, accept);
        }
        case 'DELETE':
          return this.deleteCollection(res, url, t, accept);
      }
      throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on ${t.def.plural}`);
    }
    if (t.sub === 'log') {
      if (method !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, 'pod logs are read with GET');
      return servePodLog(this.deps.logs, await client.get(t.def, key), req, res, url);
    }
    if (t.sub === 'exec') {
      if (method !== 'POST' && method !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, 'exec is POST (or GET) /api/v1/namespaces/{ns}/pods/{name}/exec?command=...');
      return servePodExec(this.deps.exec, await client.get(t.def, key), req, res, url);
    }
    const subresource = t.sub === 'status' ? 'status' as const : undefined;
    switch (method) {
      case 'GET':
        return send(res, 200, await client.get(t.def, key), accept);
      case 'PUT': {
        const obj = await this.objectBody(req, t);
        if (subresource) return send(res, 200, await client.updateStatus(obj), accept);
        if (t.sub === 'finalize') {
          const live = await client.get(t.def, key);
          return send(res, 200, await client.update({ ...live, spec: { ...live.spec, finalizers: obj.spec?.finalizers ?? [] } }), accept);
        }
        const updated = await client.update(obj, { dryRun });
        return send(res, 200, dryRun && qBool(url, 'render') ? this.rendered(updated) : updated, accept);
      }
      case 'PATCH': {
        const ct = (req.headers['content-type'] ?? '').toLowerCase();
        // strategic merge merges lists by key, which a JSON merge patch would replace: refused, as
        // kube-apiserver refuses it for custom resources, until Skiff merges by key; so is server-side apply
        if (ct.includes('strategic-merge-patch') || ct.includes('apply-patch')) {
          throw new ApiError(StatusReason.UnsupportedMediaType, `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`);
        }
        const type: PatchType = ct.includes('json-patch') ? 'json' : 'merge';
        const patch = await this.body(req);
        return send(res, 200, await client.patch(t.def, key, patch, type, { subresource, dryRun }), accept);
      }
      case 'DELETE': {
        const opts = await this.deleteOptions(req, url);
        const out = await client.delete(t.def, key, opts);
        return send(res, 200, out, accept);
      }
    }
    throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on ${t.def.plural}/{name}${t.sub ? '/' + t.sub : ''}`);
  }

  private async deleteOptions(req: IncomingMessage, url: URL): Promise<DeleteOptions> {
    const opts: DeleteOptions = {};
    const raw = await readBody(req);
    const body = raw.length ? (parseBody(raw, req.headers['content-type']) as any) : {};
    const grace = body?.gracePeriodSeconds ?? qInt(url, 'gracePeriodSeconds');
    if (grace !== undefined) opts.gracePeriodSeconds = Number(grace);
    const policy = body?.propagationPolicy ?? q(url, 'propagationPolicy');
    if (policy !== undefined) {
      if (!['Background', 'Foreground', 'Orphan'].includes(policy)) throw new ApiError(StatusReason.BadRequest, `propagationPolicy ${JSON.stringify(policy)} is not one of Background, Foreground, Orphan`);
      opts.propagationPolicy = policy;
    }
    if (body?.orphanDependents === true) opts.propagationPolicy = 'Orphan';
    if (body?.preconditions?.uid) opts.uid = body.preconditions.uid;
    if (body?.preconditions?.resourceVersion) opts.resourceVersion = body.preconditions.resourceVersion;
    return opts;
  }

  private async list(res: ServerResponse, url: URL, t: Target, accept?: string): Promise<void> {
    const out = await this.deps.client.list(t.def, {
      namespace: t.namespace,
      labelSelector: q(url, 'labelSelector'),
      fieldSelector: q(url, 'fieldSelector'),
      limit: qInt(url, 'limit'),
      continue: q(url, 'continue'),
    });
    const metadata: Record<string, unknown> = { resourceVersion: out.resourceVersion };
    if (out.continue) metadata.continue = out.continue;
    if (out.remainingItemCount !== undefined) metadata.remainingItemCount = out.remainingItemCount;
    send(res, 200, { apiVersion: apiVersionOf(t.def), kind: `${t.def.kind}List`, metadata, items: out.items }, accept);
  }

  private async deleteCollection(res: ServerResponse, url: URL, t: Target, accept?: string): Promise<void> {
    const items = await this.deps.client.listAll(t.def, { namespace: t.namespace, labelSelector: q(url, 'labelSelector'), fieldSelector: q(url, 'fieldSelector') });
    const deleted: StoredObject[] = [];
    for (const o of items) {
      try {
        deleted.push(await this.deps.client.delete(t.def, { namespace: o.metadata.namespace, name: o.metadata.name }));
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
      }
    }
    send(res, 200, { apiVersion: apiVersionOf(t.def), kind: `${t.def.kind}List`, metadata: {}, items: deleted }, accept);
  }
}
