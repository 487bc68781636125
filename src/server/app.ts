// The API server: Kubernetes-style REST over the object client, watch streams, pod logs, discovery.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../api/errors.js';
import type { KObject, StoredObject } from '../api/meta.js';
import type { KindDef, KindRegistry } from '../api/registry.js';
import type { ArtifactStore } from '../artifacts/store.js';
import { apiVersionOf } from '../api/registry.js';
import type { Client, PatchType } from '../store/client.js';
import type { Readable } from 'node:stream';
import type { DeleteOptions } from '../store/store.js';
import type { PodExecSource, PodLogOptions, PodLogSource } from '../substrate/substrate.js';
import { parseBody, readBody, send, sendError } from './body.js';
import { after, type Timer } from '../util/timers.js';
import { apiGroupList, apiResourceList, apiVersions, openApi } from './discovery.js';
import { KfpApi } from './kfp/api.js';
import type { MetricsRegistry } from './metrics.js';
import type { Gateway } from './inference/gateway.js';

/** the patch media types Skiff applies, in the order kube-apiserver lists them */
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json'];

/** The framing of an exec response (content type EXEC_CONTENT_TYPE): frames of one channel byte, a
 *  big-endian uint32 length and that many bytes. Channel 1 is stdout, 2 stderr; the last frame is
 *  channel 3, a JSON `{exitCode, signal?}`, or channel 4, a JSON Status for a failure after the start. */
export const ExecChannel = { stdout: 1, stderr: 2, exit: 3, error: 4 } as const;
export const EXEC_CONTENT_TYPE = 'application/vnd.skiff.exec.v1';

export function execFrame(channel: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(5);
  head.writeUInt8(channel, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

export interface AppDeps {
  client: Client;
  registry: KindRegistry;
  logs: PodLogSource;
  /** runs `exec` requests; without it they answer 405 */
  exec?: PodExecSource;
  version: string;
  ready: () => boolean;
  /** periodic bookmark interval for watches that ask for them */
  bookmarkMs?: number;
  /** the run controller's default pipeline root, for the KFP API's artifact read-back */
  pipelineRoot?: string;
  /** where the KFP API reads artifacts back from */
  artifacts?: ArtifactStore;
  /** inference requests (by path `/serving/...` or by an InferenceService's host) go here */
  gateway?: Gateway;
  /** Prometheus metrics on `GET /metrics` */
  metrics?: MetricsRegistry;
  /** for `?dryRun=All&render=true`: what storing the object would create (src/server/workloads.ts) */
  dryRender?: (obj: StoredObject) => KObject[];
}

interface Target {
  def: KindDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

function q(url: URL, name: string): string | undefined {
  return url.searchParams.get(name) ?? undefined;
}

function qInt(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new ApiError(StatusReason.BadRequest, `query parameter ${name}=${JSON.stringify(v)} must be a non-negative integer`);
  return n;
}

function qBool(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  return v === 'true' || v === '1' || v === '';
}

export class App {
  private readonly openapiDoc: unknown;
  private readonly kfp: KfpApi;

  /**
   * `?dryRun=All&render=true` on a create or update: a `List` of the object as it would be stored,
   * then every object it would create (a training job's replica Pods, their Services, MPI's ConfigMap),
   * as `skiff apply --dry-run=server -o yaml` prints them.
   */
  private rendered(obj: StoredObject): KObject {
    return { apiVersion: 'v1', kind: 'List', metadata: {}, items: [obj, ...(this.deps.dryRender?.(obj) ?? [])] };
  }

  constructor(private readonly deps: AppDeps) {
    this.openapiDoc = openApi(deps.registry, deps.version);
    this.kfp = new KfpApi({ client: deps.client, version: deps.version, pipelineRoot: deps.pipelineRoot, ...(deps.artifacts ? { artifacts: deps.artifacts } : {}) });
  }

  /** node:http request listener */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const inference = this.deps.gateway?.match(req);
    if (inference) return this.deps.gateway?.handle(req, res, inference);
    this.route(req, res).catch((e) => sendError(res, e));
  };

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://skiff.local');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const { registry } = this.deps;
    switch (path) {
      case '/healthz':
      case '/livez':
        return this.text(res, 200, 'ok');
      case '/readyz':
        return this.deps.ready() ? this.text(res, 200, 'ok') : this.text(res, 503, 'starting');
      case '/version':
        return send(res, 200, { gitVersion: `v${this.deps.version}`, platform: `${process.platform}/${process.arch}`, skiff: this.deps.version, nodeVersion: process.version });
      case '/api':
        return send(res, 200, apiVersions());
      case '/apis':
        return send(res, 200, apiGroupList(registry));
      case '/openapi/v3':
      case '/openapi.json':
        return send(res, 200, this.openapiDoc);
      case '/metrics': {
        if (!this.deps.metrics) break;
        const text = await this.deps.metrics.render();
        res.writeHead(200, { 'content-type': this.deps.metrics.contentType });
        return void res.end(text);
      }
    }
    // the KFP v2beta1 REST API (kfp.Client) before the Kubernetes-style /apis/{group}/{version}
    if (path === '/apis/v2beta1' || path.startsWith('/apis/v2beta1/')) return this.kfp.handle(req, res, url, path);
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

  private text(res: ServerResponse, code: number, body: string): void {
    res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(body);
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
          if (qBool(url, 'watch') && url.searchParams.has('watch')) return this.watch(req, res, url, t);
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
      return this.podLog(req, res, url, t);
    }
    if (t.sub === 'exec') {
      if (method !== 'POST' && method !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, 'exec is POST (or GET) /api/v1/namespaces/{ns}/pods/{name}/exec?command=...');
      return this.podExec(req, res, url, t);
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

  private watch(req: IncomingMessage, res: ServerResponse, url: URL, t: Target): void {
    const timeout = qInt(url, 'timeoutSeconds');
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    let closed = false;
    const timers: Timer[] = [];
    let handle: { stop(): void } | undefined;
    const close = (): void => {
      if (closed) return;
      closed = true;
      handle?.stop();
      for (const tm of timers) tm.clear();
      res.end();
    };
    req.on('close', close);
    res.on('close', close);
    try {
      handle = this.deps.client.watch(t.def, {
        namespace: t.namespace,
        labelSelector: q(url, 'labelSelector'),
        fieldSelector: q(url, 'fieldSelector'),
        resourceVersion: q(url, 'resourceVersion'),
      }, (e) => {
        if (!closed) res.write(JSON.stringify(e) + '\n');
      });
    } catch (e) {
      // as Kubernetes does, a watch that cannot start answers 200 with one ERROR event (410 for an old version)
      const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, String((e as Error)?.message ?? e));
      res.write(JSON.stringify({ type: 'ERROR', object: err.toStatus() }) + '\n');
      close();
      return;
    }
    if (timeout !== undefined) timers.push(after(timeout * 1000, close));
    if (qBool(url, 'allowWatchBookmarks') && url.searchParams.has('allowWatchBookmarks')) {
      const every = this.deps.bookmarkMs ?? 15_000;
      const tick = (): void => {
        if (closed) return;
        res.write(JSON.stringify({ type: 'BOOKMARK', object: { apiVersion: apiVersionOf(t.def), kind: t.def.kind, metadata: { resourceVersion: this.deps.client.store.resourceVersion() } } }) + '\n');
        timers.push(after(every, tick).unref());
      };
      timers.push(after(every, tick).unref());
    }
  }

  private async podLog(req: IncomingMessage, res: ServerResponse, url: URL, t: Target): Promise<void> {
    const pod = await this.deps.client.get(t.def, { namespace: t.namespace, name: t.name ?? '' });
    const opts: PodLogOptions = {
      container: q(url, 'container'),
      follow: qBool(url, 'follow') && url.searchParams.has('follow'),
      previous: qBool(url, 'previous') && url.searchParams.has('previous'),
      tailLines: qInt(url, 'tailLines'),
      timestamps: qBool(url, 'timestamps') && url.searchParams.has('timestamps'),
      sinceSeconds: qInt(url, 'sinceSeconds'),
      limitBytes: qInt(url, 'limitBytes'),
    };
    const abort = new AbortController();
    req.on('close', () => abort.abort());
    res.on('close', () => abort.abort());
    const chunks = await this.deps.logs.logs(pod, opts, abort.signal);
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    let sent = 0;
    for await (const chunk of chunks) {
      if (abort.signal.aborted) break;
      if (opts.limitBytes !== undefined) {
        const room = opts.limitBytes - sent;
        if (room <= 0) break;
        const buf = Buffer.from(chunk);
        res.write(buf.subarray(0, room));
        sent += Math.min(room, buf.length);
      } else res.write(chunk);
    }
    res.end();
  }

  /**
   * POST /api/v1/namespaces/{ns}/pods/{name}/exec?command=A&command=B[&container=C][&stdin=true]:
   * runs the command in the container and streams its output in EXEC_CONTENT_TYPE frames, ending
   * with its exit status. With stdin=true the request body is the command's standard input. The
   * command is killed when the client goes away.
   */
  private async podExec(req: IncomingMessage, res: ServerResponse, url: URL, t: Target): Promise<void> {
    const source = this.deps.exec;
    if (!source) throw new ApiError(StatusReason.MethodNotAllowed, 'this server cannot run commands in pods');
    const command = url.searchParams.getAll('command');
    if (command.length === 0) throw new ApiError(StatusReason.BadRequest, 'you must specify at least one command for the container (query parameter command)');
    const pod = await this.deps.client.get(t.def, { namespace: t.namespace, name: t.name ?? '' });
    const stdin = qBool(url, 'stdin') && url.searchParams.has('stdin');
    const session = await source.exec(pod, { container: q(url, 'container'), command, stdin });
    let finished = false;
    const onClose = (): void => {
      if (!finished) session.kill();
    };
    res.on('close', onClose);
    if (session.stdin) {
      const input = session.stdin;
      input.on('error', () => { /* the command closed its stdin early */ });
      req.pipe(input);
    } else {
      req.resume();
    }
    res.writeHead(200, { 'content-type': EXEC_CONTENT_TYPE, 'cache-control': 'no-store', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const pump = (stream: Readable, channel: number): Promise<void> => new Promise((resolve) => {
      stream.on('data', (chunk: Buffer) => {
        if (!res.write(execFrame(channel, chunk))) {
          stream.pause();
          res.once('drain', () => stream.resume());
        }
      });
      stream.once('end', resolve);
      stream.once('error', () => resolve());
      stream.once('close', resolve);
    });
    const [status] = await Promise.all([session.done, pump(session.stdout, ExecChannel.stdout), pump(session.stderr, ExecChannel.stderr)]);
    finished = true;
    res.off('close', onClose);
    res.end(execFrame(ExecChannel.exit, JSON.stringify(status)));
  }
}
