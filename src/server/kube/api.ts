// The Kubernetes REST API: /api and /apis/{group}/{version} over the object client, with watch
// streams, pod logs and exec, and discovery.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { crdTypeErrors } from '../../api/crd-schema.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import { goDecodeError } from '../../api/go-decode.js';
import { isProtobufMediaType } from '../../api/protobuf.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import type { KindDef, KindRegistry } from '../../api/registry.js';
import { retiredTrainingKind } from '../../api/training.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Client, PatchType } from '../../store/client.js';
import { preconditionFailed } from '../../store/store.js';
import type { PodExecSource, PodLogSource } from '../../substrate/substrate.js';
import { parseBody, readBody, send } from '../body.js';
import { allowAll, type Authorizer } from '../auth/types.js';
import { reviewResources, serveReview } from './auth.js';
import { Discovery, verbsOf } from './discovery.js';
import { evictPod } from './eviction.js';
import { checkSelectors } from './field-selectors.js';
import { patchFieldCheck, validateBodyFields } from './fields.js';
import { OpenApi } from './openapi.js';
import { deleteOptions, kubeBool, listOptions, writeOptions } from './options.js';
import type { KubeDeleteOptions, KubeListOptions } from './options.js';
import { recordCreate, recordReplace, servePatch } from './patch.js';
import { servePodExec, servePodLog } from './pods.js';
import { refuseProtobufOnlyAccept } from './protobuf.js';
import { serveScale } from './scale.js';
import { tokenRequest } from './token-request.js';
import type { ServiceAccountTokens } from './tokens.js';
import { isPlainObject } from '../../util/objects.js';
import { eventView, negotiateView, sendViewed, type ResponseView } from './table.js';
import { serveWatch } from './watch.js';

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
  /** answers the access reviews; every caller may do everything without it */
  authorizer?: Authorizer;
}

interface Target {
  def: KindDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

/**
 * The CRD kinds whose checks are written by hand after their operators' webhooks (kubeflow.org's
 * training jobs, Notebook, Profile) rather than run from their schema as Kueue's and KServe's are:
 * their schema's type checks run here first, so that a wrong type is worded as on a cluster.
 */
function handValidatedCrd(def: KindDef): boolean {
  return def.group === 'kubeflow.org';
}

export class KubeApi {
  /** the served resources (add a group of non-stored resources with discovery.addGroup) */
  readonly discovery: Discovery;
  /** /openapi/v2, /openapi/v3 and its group-version documents, built from the same table */
  readonly openapi: OpenApi;
  /** each request's body as it came, for the checks that read the text (repeated JSON fields) */
  private readonly rawBodies = new WeakMap<IncomingMessage, Buffer>();

  /** signs serviceaccounts/token answers; set once the in-cluster endpoint has its key */
  tokens?: ServiceAccountTokens;

  constructor(private readonly deps: KubeApiDeps) {
    this.discovery = new Discovery(deps.registry);
    // the access reviews kubectl auth can-i / whoami send: groups of resources nothing stores
    for (const gv of new Set(reviewResources.map((r) => `${r.group}/${r.version}`))) {
      const [group = '', version = ''] = gv.split('/');
      this.discovery.addGroup({
        group, version,
        resources: reviewResources.filter((r) => r.group === group && r.version === version)
          .map((r) => ({ resource: r.plural, singular: r.kind.toLowerCase(), kind: r.kind, namespaced: r.namespaced ?? false, verbs: ['create'] })),
        handle: (req, res, url, rest) => serveReview(req, res, url, group, version, rest, deps.authorizer ?? allowAll),
      });
    }
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
    const unknown = (plural: string): ApiError => {
      const retired = retiredTrainingKind(group, plural);
      return new ApiError(StatusReason.NotFound, `the server could not find the requested resource: no resource "${plural}" in ${group ? group + '/' : ''}${version}${retired ? ` (${retired})` : ''}`);
    };
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

  /** a request body; `into` is the kind a protobuf body must hold (none: a patch, which has no protobuf form) */
  private async body(req: IncomingMessage, into?: { apiVersion: string; kind: string }): Promise<unknown> {
    const raw = await readBody(req);
    const ct = req.headers['content-type'];
    if (isProtobufMediaType(ct)) {
      if (!into) throw new ApiError(StatusReason.UnsupportedMediaType, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
      // an object's protobuf body has no JSON text to check for repeated fields: rawBodies is not set
      return parseBody(raw, ct, into);
    }
    this.rawBodies.set(req, raw);
    return parseBody(raw, ct);
  }

  private async objectBody(req: IncomingMessage, t: Target): Promise<KObject> {
    const obj = (await this.body(req, { apiVersion: apiVersionOf(t.def), kind: t.def.kind })) as KObject;
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ApiError(StatusReason.BadRequest, 'the request body must be a single object');
    // a value whose JSON type does not fit: a built-in kind's Go decoder refuses the body (400), a
    // CRD's schema the object (422), as kube-apiserver answers each
    const decodeError = goDecodeError(t.def.group, t.def.version, t.def.kind, obj);
    if (decodeError) throw new ApiError(StatusReason.BadRequest, `${t.def.kind} in version "${t.def.version}" cannot be handled as a ${t.def.kind}: ${decodeError}`);
    if (handValidatedCrd(t.def)) {
      const typeErrs = crdTypeErrors(t.def.group, t.def.version, t.def.kind, obj);
      const name = isPlainObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : t.name ?? '';
      if (typeErrs.length) throw ApiError.invalid(t.def.kind, t.def.group, name, typeErrs);
    }
    if (obj.metadata !== undefined && (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata))) {
      throw ApiError.invalid(t.def.kind, t.def.group, '', [{ field: 'metadata', type: 'FieldValueTypeInvalid', message: 'Invalid value: expected object' }]);
    }
    obj.metadata ??= {};
    // a body may leave apiVersion/kind out; they come from the path
    obj.apiVersion ??= apiVersionOf(t.def);
    obj.kind ??= t.def.kind;
    if (obj.apiVersion !== apiVersionOf(t.def)) {
      throw new ApiError(StatusReason.BadRequest, `the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(t.def)})`);
    }
    if (obj.kind !== t.def.kind) {
      throw new ApiError(StatusReason.BadRequest, `the body is a ${obj.apiVersion}/${obj.kind} but the path is for ${apiVersionOf(t.def)}/${t.def.kind}`);
    }
    if (t.def.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== t.namespace) {
        // kube-apiserver's two wordings: an update's name check, a create's namespace check
        throw new ApiError(StatusReason.BadRequest, t.name !== undefined
          ? `the namespace of the object (${obj.metadata.namespace}) does not match the namespace on the request (${t.namespace})`
          : 'the namespace of the provided object does not match the namespace sent on the request');
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
    refuseProtobufOnlyAccept(accept, t.def, t.sub);
    if (t.name === undefined) {
      if (t.def.namespaced && t.namespace === undefined && method !== 'GET') {
        throw new ApiError(StatusReason.MethodNotAllowed, `${method} needs a namespace: use /namespaces/{namespace}/${t.def.plural}`);
      }
      switch (method) {
        case 'GET': {
          const view = negotiateView(accept);
          const lo = listOptions(url);
          checkSelectors(t.def, lo);
          if (lo.watch) return serveWatch(this.deps.client, req, res, lo, t, this.deps.bookmarkMs, eventView(t.def, view, url));
          return this.list(res, url, lo, t, accept, view);
        }
        case 'POST': {
          const { dryRun } = writeOptions(url, 'CreateOptions');
          const obj = await this.objectBody(req, t);
          validateBodyFields(res, url, t.def, obj, this.rawBodies.get(req), 'CreateOptions', req.headers['content-type']);
          recordCreate(t.def, obj, req, url);
          const created = await client.create(obj, { dryRun });
          return send(res, 201, dryRun && kubeBool(url, 'render') ? this.rendered(created) : created, accept);
        }
        case 'DELETE':
          if (!verbsOf(t.def).includes('deletecollection')) throw new ApiError(StatusReason.MethodNotAllowed, 'the server does not allow this method on the requested resource');
          return this.deleteCollection(req, res, url, t, accept);
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
    if (t.sub === 'portforward') {
      await client.get(t.def, key);
      // an upgrade request never gets here (see upgrade.ts): this one asked for neither protocol
      throw new ApiError(StatusReason.BadRequest, 'unable to upgrade: missing upgrade headers in request (pods/portforward needs a WebSocket, or Upgrade: SPDY/3.1)');
    }
    if (t.sub === 'attach') {
      await client.get(t.def, key);
      throw new ApiError(StatusReason.BadRequest, 'Upgrade request required');
    }
    if (t.sub === 'scale') {
      const patchType: PatchType = (req.headers['content-type'] ?? '').toLowerCase().includes('json-patch') ? 'json' : 'merge';
      return send(res, 200, await serveScale(client, t.def, key, method, () => this.body(req, method === 'PUT' ? { apiVersion: 'autoscaling/v1', kind: 'Scale' } : undefined), patchType), accept);
    }
    if (t.sub === 'token') {
      if (method !== 'POST') throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on serviceaccounts/token: POST an authentication.k8s.io/v1 TokenRequest`);
      const sa = await client.get(t.def, key);
      return send(res, 201, tokenRequest(this.tokens, sa, await this.body(req, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest' })), accept);
    }
    if (t.sub === 'eviction') {
      if (method !== 'POST') throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on pods/eviction: POST a policy/v1 Eviction`);
      return send(res, 201, await evictPod(client, t.def, t.namespace, t.name, await this.body(req, { apiVersion: 'policy/v1', kind: 'Eviction' }), url.searchParams.getAll('dryRun')), accept);
    }
    const subresource = t.sub === 'status' ? 'status' as const : undefined;
    switch (method) {
      case 'GET': {
        // a watch of one object by its path (deprecated, still served by kube-apiserver)
        if (subresource === undefined && t.sub === undefined && kubeBool(url, 'watch')) return this.watchOne(req, res, url, t, negotiateView(accept));
        const view = negotiateView(accept);
        return sendViewed(res, t.def, await client.get(t.def, key), url, view, accept);
      }
      case 'PUT': {
        const { dryRun } = writeOptions(url, 'UpdateOptions');
        const obj = await this.objectBody(req, t);
        validateBodyFields(res, url, t.def, obj, this.rawBodies.get(req), 'UpdateOptions', req.headers['content-type']);
        if (subresource) {
          // a dry run writes nothing, the status subresource's included
          if (dryRun) return send(res, 200, { ...(await client.get(t.def, key)), status: obj.status }, accept);
          return send(res, 200, await client.updateStatus(obj), accept);
        }
        if (t.sub === 'finalize') {
          const live = await client.get(t.def, key);
          return send(res, 200, await client.update({ ...live, spec: { ...live.spec, finalizers: obj.spec?.finalizers ?? [] } }), accept);
        }
        await recordReplace(client, t.def, key, obj, req, url);
        const updated = await client.update(obj, { dryRun });
        return send(res, 200, dryRun && kubeBool(url, 'render') ? this.rendered(updated) : updated, accept);
      }
      case 'PATCH': {
        const { dryRun } = writeOptions(url, 'PatchOptions', (req.headers['content-type'] ?? '').toLowerCase());
        const out = await servePatch(client, t.def, key, req, url, { subresource, dryRun, fieldCheck: (raw) => patchFieldCheck(res, url, t.def, raw) });
        return send(res, out.code, out.object, accept);
      }
      case 'DELETE': {
        const opts = await this.deleteOptions(req, url);
        const out = await this.deleteOne(t.def, key, opts);
        // as kube-apiserver: an object that waits (finalizers, a Pod's grace period) comes back as it
        // now is; one deleted at once is answered with a Success Status naming it
        const still = opts.dryRun ? out : await client.find(t.def, key);
        if (still?.metadata.uid === out.metadata.uid) return send(res, 200, still, accept);
        const details: Record<string, unknown> = { name: out.metadata.name, kind: t.def.plural, uid: out.metadata.uid };
        if (t.def.group) details.group = t.def.group;
        return send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, accept);
      }
    }
    throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on ${t.def.plural}/{name}${t.sub ? '/' + t.sub : ''}`);
  }

  /** DeleteOptions from the body when there is one, else from the query */
  private async deleteOptions(req: IncomingMessage, url: URL): Promise<KubeDeleteOptions> {
    const raw = await readBody(req);
    const ct = req.headers['content-type'];
    return deleteOptions(url, raw.length ? parseBody(raw, ct) : undefined);
  }

  /** a delete; under dryRun, the object as the delete would leave it, after the same preconditions */
  private async deleteOne(def: KindDef, key: { namespace?: string; name: string }, opts: KubeDeleteOptions): Promise<StoredObject> {
    const { dryRun, ...storeOpts } = opts;
    if (!dryRun) return this.deps.client.delete(def, key, storeOpts);
    const live = await this.deps.client.get(def, key);
    if (opts.uid && opts.uid !== live.metadata.uid) {
      throw preconditionFailed(def, key.namespace, key.name, 'UID', opts.uid, live.metadata.uid);
    }
    if (opts.resourceVersion && opts.resourceVersion !== live.metadata.resourceVersion) {
      throw preconditionFailed(def, key.namespace, key.name, 'ResourceVersion', opts.resourceVersion, live.metadata.resourceVersion);
    }
    return live;
  }

  private watchOne(req: IncomingMessage, res: ServerResponse, url: URL, t: Target, view: ResponseView | undefined): void {
    const lo = listOptions(url);
    const byName = `metadata.name=${t.name}`;
    if (lo.fieldSelector && lo.fieldSelector.replace(/==/, '=') !== byName) {
      throw new ApiError(StatusReason.BadRequest, "fieldSelector metadata.name doesn't match requested name");
    }
    serveWatch(this.deps.client, req, res, { ...lo, fieldSelector: byName }, t, this.deps.bookmarkMs, eventView(t.def, view, url));
  }

  private async list(res: ServerResponse, url: URL, lo: KubeListOptions, t: Target, accept?: string, view?: ResponseView): Promise<void> {
    const out = await this.deps.client.list(t.def, {
      namespace: t.namespace,
      labelSelector: lo.labelSelector,
      fieldSelector: lo.fieldSelector,
      // as kube-apiserver's watch cache: a list at resourceVersion "0" is served whole, without pages
      limit: lo.limit > 0 && lo.resourceVersion !== '0' ? lo.limit : undefined,
      continue: lo.continue || undefined,
      resourceVersion: lo.resourceVersion || undefined,
      resourceVersionMatch: (lo.resourceVersionMatch || undefined) as 'NotOlderThan' | 'Exact' | undefined,
    });
    const metadata: Record<string, unknown> = { resourceVersion: out.resourceVersion };
    if (out.continue) metadata.continue = out.continue;
    if (out.remainingItemCount !== undefined) metadata.remainingItemCount = out.remainingItemCount;
    sendViewed(res, t.def, { apiVersion: apiVersionOf(t.def), kind: `${t.def.kind}List`, metadata, items: out.items }, url, view ?? negotiateView(accept), accept);
  }

  /** DELETE on a collection: what the list options select, each deleted with the delete options */
  private async deleteCollection(req: IncomingMessage, res: ServerResponse, url: URL, t: Target, accept?: string): Promise<void> {
    const lo = listOptions(url);
    checkSelectors(t.def, lo);
    const opts = await this.deleteOptions(req, url);
    const items = await this.deps.client.listAll(t.def, { namespace: t.namespace, labelSelector: lo.labelSelector, fieldSelector: lo.fieldSelector });
    const deleted: StoredObject[] = [];
    for (const o of items) {
      try {
        deleted.push(await this.deleteOne(t.def, { namespace: o.metadata.namespace, name: o.metadata.name }, opts));
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
      }
    }
    send(res, 200, { apiVersion: apiVersionOf(t.def), kind: `${t.def.kind}List`, metadata: { resourceVersion: this.deps.client.store.resourceVersion() }, items: deleted }, accept);
  }
}
