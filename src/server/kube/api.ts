// The Kubernetes REST API: /api and /apis/{group}/{version} over the object client, with watch
// streams, pod logs and exec, and discovery.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import { isProtobufMediaType } from '../../api/protobuf.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import type { KindDef, KindRegistry } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Client, PatchType } from '../../store/client.js';
import type { DeleteOptions } from '../../store/store.js';
import type { PodExecSource, PodLogSource } from '../../substrate/substrate.js';
import { parseBody, readBody, send } from '../body.js';
import { Discovery, verbsOf } from './discovery.js';
import { patchFieldCheck, validateBodyFields } from './fields.js';
import { OpenApi } from './openapi.js';
import { servePodExec, servePodLog } from './pods.js';
import { refuseProtobufOnlyAccept } from './protobuf.js';
import { q, qBool, qInt } from './query.js';
import { eventView, negotiateView, sendViewed, type ResponseView } from './table.js';
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
}

interface Target {
  def: KindDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

export class KubeApi {
  /** the served resources (add a group of non-stored resources with discovery.addGroup) */
  readonly discovery: Discovery;
  /** /openapi/v2, /openapi/v3 and its group-version documents, built from the same table */
  readonly openapi: OpenApi;
  /** each request's body as it came, for the checks that read the text (repeated JSON fields) */
  private readonly rawBodies = new WeakMap<IncomingMessage, Buffer>();

  constructor(private readonly deps: KubeApiDeps) {
    this.discovery = new Discovery(deps.registry);
    this.openapi = new OpenApi(this.discovery);
  }

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
    if (this.discovery.serve(req, res, path)) return;
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
    } else {
      throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource (${method} ${path})`);
    }
    const extra = this.discovery.extra(group, version);
    if (extra?.handle) return extra.handle(req, res, url, rest);
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
    if (sub !== undefined && !this.discovery.hasSubresource(def, sub)) {
      throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: ${def.plural}/${sub}`);
    }
    return { def, namespace, name, sub };
  }

  private async body(req: IncomingMessage, t?: Target): Promise<unknown> {
    const raw = await readBody(req);
    const ct = req.headers['content-type'];
    if (isProtobufMediaType(ct)) {
      // a patch has no protobuf form; an object's protobuf body has no JSON text to check for repeated fields
      if (!t) throw new ApiError(StatusReason.UnsupportedMediaType, `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`);
      return parseBody(raw, ct, { apiVersion: apiVersionOf(t.def), kind: t.def.kind });
    }
    this.rawBodies.set(req, raw);
    return parseBody(raw, ct);
  }

  private async objectBody(req: IncomingMessage, t: Target): Promise<KObject> {
    const obj = (await this.body(req, t)) as KObject;
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
    refuseProtobufOnlyAccept(accept, t.def, t.sub);
    if (t.name === undefined) {
      if (t.def.namespaced && t.namespace === undefined && method !== 'GET') {
        throw new ApiError(StatusReason.MethodNotAllowed, `${method} needs a namespace: use /namespaces/{namespace}/${t.def.plural}`);
      }
      switch (method) {
        case 'GET': {
          const view = negotiateView(accept);
          if (qBool(url, 'watch') && url.searchParams.has('watch')) return serveWatch(this.deps.client, req, res, url, t, this.deps.bookmarkMs, eventView(t.def, view, url));
          return this.list(res, url, t, accept, view);
        }
        case 'POST': {
          const obj = await this.objectBody(req, t);
          validateBodyFields(res, url, t.def, obj, this.rawBodies.get(req), 'CreateOptions', req.headers['content-type']);
          const created = await client.create(obj, { dryRun });
          return send(res, 201, dryRun && qBool(url, 'render') ? this.rendered(created) : created, accept);
        }
        case 'DELETE':
          if (!verbsOf(t.def).includes('deletecollection')) throw new ApiError(StatusReason.MethodNotAllowed, 'the server does not allow this method on the requested resource');
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
      case 'GET': {
        const view = negotiateView(accept);
        return sendViewed(res, t.def, await client.get(t.def, key), url, view, accept);
      }
      case 'PUT': {
        const obj = await this.objectBody(req, t);
        validateBodyFields(res, url, t.def, obj, this.rawBodies.get(req), 'UpdateOptions', req.headers['content-type']);
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
        const check = patchFieldCheck(res, url, t.def, this.rawBodies.get(req));
        return send(res, 200, await client.patch(t.def, key, patch, type, { subresource, dryRun, check }), accept);
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

  private async list(res: ServerResponse, url: URL, t: Target, accept?: string, view?: ResponseView): Promise<void> {
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
    sendViewed(res, t.def, { apiVersion: apiVersionOf(t.def), kind: `${t.def.kind}List`, metadata, items: out.items }, url, view, accept);
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
