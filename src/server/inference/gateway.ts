// The inference gateway: KServe's ingress, activator, queue-proxy and batcher in one place, inside
// the API server's process.
//
// Routing. `/serving/<namespace>/<name>/<path>` and a Host header `<name>.<namespace>.<domain>` (the
// host of the InferenceService's `status.url`; also `<name>.<namespace>.svc[.cluster.local]`) reach
// the InferenceService: its transformer when it has one, else its predictor; `:explain` goes to the
// explainer. `<name>-predictor` (in the path or the host) reaches the predictor directly, which is
// how a transformer calls it. Within a component, a request goes to one of the revisions in the
// component's traffic split, drawn by weight (canaries).
//
// Protocols. Requests to a custom container are proxied as they come. Skiff's own model servers and
// in-process models speak V1 and V2; the gateway also answers Seldon's `/api/v0.1/predictions`
// (`/api/v1.0/predictions`, `/predict`) for them by translating to V1. With a `batcher`, V1
// `:predict` and V2 `/infer` requests are queued and sent in batches (see dispatch.ts); V2 requests
// are batched when their inputs agree on names, datatypes and non-batch dimensions.
//
// Standby. With leader election only the leader's controllers set routes; a standby (`setStandby`)
// knows the cluster's InferenceServices from its informer and passes their requests on to the
// leader (forward.ts), so that any replica behind the Service answers every inference request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RevisionSpec } from '../../api/serving-revision.js';
import type { ComponentName, DataPlaneEvent, LoadReading, Route, ServingDataPlane, TrafficTarget } from '../../workloads/serving/data-plane.js';
import type { Counter, Histogram, MetricsRegistry } from '../metrics.js';
import type { LeaderForwarder } from './forward.js';
import { RevisionDispatcher, flatHeaders } from './dispatch.js';
import { TrafficHistory } from './history.js';
import type { Target, UpstreamResponse, WorkItem } from './dispatch.js';
import { InProcessOnnxServer } from './inprocess.js';
import { encodeSeldonResponse, parseSeldonRequest, seldonError } from './seldon.js';
import type { SeldonRequest } from './seldon.js';
import { ProtocolError, concatRows, splitRows } from './tensor.js';
import type { Tensor } from './tensor.js';
import { batchableInstances } from './v1.js';
import { encodeInferRequest, encodeInferResponse, parseInferRequest, parseInferResponse } from './v2.js';
import type { InferRequest } from './v2.js';

export interface GatewayOptions {
  metrics: MetricsRegistry;
  /** the domain of `status.url` hosts (default example.com, as KServe's) */
  ingressDomain?: string;
  /** largest request body accepted (default 64 MiB) */
  maxBodyBytes?: number;
  log?: (m: string) => void;
}

const defaultTimeoutSeconds = 300;

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

type Protocol = 'v1' | 'v2' | 'seldon' | 'raw';

/** What a replica that may not lead needs: whether it leads now, the cluster's services, the way to the leader. */
export interface StandbyRouting {
  /** whether this replica holds the Lease now (then it serves what its controllers routed) */
  leading(): boolean;
  /** whether the cluster has this InferenceService (from the informer; a standby has no routes) */
  exists(namespace: string, name: string): boolean;
  forwarder: LeaderForwarder;
}

export class Gateway implements ServingDataPlane {
  readonly domain: string;
  /** recent requests per InferenceService, for the dashboard */
  readonly history = new TrafficHistory();
  private readonly routes = new Map<string, Route>();
  private readonly revisions = new Map<string, RevisionDispatcher>();
  private stopped = false;
  private standby: StandbyRouting | undefined;
  private readonly requests: Counter;
  private readonly latency: Histogram;
  private readonly queueTime: Histogram;
  private readonly batchSize: Histogram;
  private readonly maxBody: number;
  private readonly meters = new WeakMap<RevisionDispatcher, Meters>();
  private changed: (revKey: string, why: DataPlaneEvent) => void = () => {};

  constructor(private readonly opts: GatewayOptions) {
    this.domain = opts.ingressDomain ?? 'example.com';
    this.maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
    const labels = ['namespace', 'inferenceservice', 'component', 'revision'];
    this.requests = opts.metrics.counter('skiff_serving_requests_total', 'Inference requests by response code', [...labels, 'code']);
    this.latency = opts.metrics.histogram('skiff_serving_request_duration_seconds', 'Inference request latency at the gateway, queueing included', labels);
    this.queueTime = opts.metrics.histogram('skiff_serving_queue_duration_seconds', 'Time requests waited at the gateway for a replica or a batch', labels);
    this.batchSize = opts.metrics.histogram('skiff_serving_batch_size', 'Instances per request sent to a replica', labels, [1, 2, 4, 8, 16, 32, 64, 128, 256]);
  }

  onChange(fn: (revKey: string, why: DataPlaneEvent) => void): void {
    this.changed = fn;
  }

  /** leader election: while this replica does not lead, its inference requests go to the leader */
  setStandby(s: StandbyRouting): void {
    this.standby = s;
  }

  stop(): void {
    this.stopped = true;
    this.standby?.forwarder.stop();
    for (const d of this.revisions.values()) {
      d.close('the server is stopping');
      void (d.inProcess as InProcessOnnxServer | undefined)?.close();
    }
    this.revisions.clear();
  }

  // ---- state pushed by the controllers ----

  setRoute(route: Route): void {
    this.routes.set(`${route.namespace}/${route.name}`, route);
  }

  removeRoute(namespace: string, name: string): void {
    this.routes.delete(`${namespace}/${name}`);
    this.history.forget(namespace, name);
  }

  setRevision(revKey: string, spec: RevisionSpec): void {
    this.revision(revKey, spec);
  }

  private revision(revKey: string, spec: RevisionSpec): RevisionDispatcher {
    let d = this.revisions.get(revKey);
    if (!d) {
      d = new RevisionDispatcher(spec, revKey, () => this.changed(revKey, 'demand'), () => this.changed(revKey, 'readiness'));
      // a reconcile still running while the server stops gets a closed dispatcher: nothing new
      // probes a replica (a probe loop would keep the process alive) or waits for one
      if (this.stopped) {
        d.close('the server is stopping');
        return d;
      }
      this.revisions.set(revKey, d);
    } else d.spec = spec;
    return d;
  }

  removeRevision(revKey: string): void {
    const d = this.revisions.get(revKey);
    if (!d) return;
    d.close(`revision ${revKey} was deleted`);
    void (d.inProcess as InProcessOnnxServer | undefined)?.close();
    this.revisions.delete(revKey);
  }

  setReplicas(revKey: string, pods: { name: string; ip?: string }[]): void {
    this.revisions.get(revKey)?.setReplicas(pods);
  }

  setFailure(revKey: string, message: string | undefined): void {
    this.revisions.get(revKey)?.setFailure(message);
  }

  replicaReady(revKey: string, pod: string): boolean {
    return this.revisions.get(revKey)?.replicas.get(pod)?.ready ?? false;
  }

  load(revKey: string): LoadReading | undefined {
    return this.revisions.get(revKey)?.reading;
  }

  /** Loads or unloads an in-process model; load errors are returned for the revision's status. */
  async ensureInProcess(revKey: string, spec: RevisionSpec, want: boolean, modelPath: string | undefined): Promise<void> {
    const d = this.revision(revKey, spec);
    if (!want) {
      const m = d.inProcess as InProcessOnnxServer | undefined;
      if (m) {
        d.setInProcess(undefined);
        await m.close();
      }
      return;
    }
    if (d.inProcess || !modelPath) return;
    const m = await InProcessOnnxServer.load(spec.modelName, modelPath);
    if (this.revisions.get(revKey) !== d) {
      await m.close();
      return;
    }
    d.setInProcess(m);
  }

  // ---- requests ----

  /** Which InferenceService a request is for, or undefined when it is not an inference request. */
  match(req: IncomingMessage): { route: Route; component?: ComponentName; path: string } | undefined {
    const url = req.url ?? '/';
    if (url.startsWith('/serving/')) {
      const m = /^\/serving\/([^/]+)\/([^/?]+)(.*)$/.exec(url);
      if (!m) return undefined;
      const found = this.lookup(m[1] as string, m[2] as string);
      return found ? { ...found, path: m[3] || '/' } : undefined;
    }
    const host = req.headers.host;
    if (!host || (this.routes.size === 0 && !this.standby)) return undefined;
    const h = host.replace(/:\d+$/, '').toLowerCase();
    const parts = h.split('.');
    if (parts.length < 2) return undefined;
    const rest = parts.slice(2).join('.');
    if (rest !== this.domain && rest !== 'svc' && rest !== 'svc.cluster.local' && rest !== '') return undefined;
    const found = this.lookup(parts[1] as string, parts[0] as string);
    return found ? { ...found, path: url } : undefined;
  }

  private lookup(namespace: string, name: string): { route: Route; component?: ComponentName } | undefined {
    const direct = this.routes.get(`${namespace}/${name}`) ?? this.unrouted(namespace, name);
    if (direct) return { route: direct };
    const m = /^(.+)-(predictor|transformer|explainer)$/.exec(name);
    if (!m) return undefined;
    const route = this.routes.get(`${namespace}/${m[1]}`) ?? this.unrouted(namespace, m[1] as string);
    return route ? { route, component: m[2] as ComponentName } : undefined;
  }

  /**
   * With leader election, an InferenceService the cluster has and this gateway has no route for: a
   * standby forwards its requests; the leader answers 503 until its controller routes it (just after
   * it took the Lease, or just after the service was made).
   */
  private unrouted(namespace: string, name: string): Route | undefined {
    if (!this.standby?.exists(namespace, name)) return undefined;
    return { namespace, name, components: {}, latest: {}, failure: `InferenceService ${namespace}/${name} has no route on this replica yet: the serving controller has not reconciled it since this replica became the leader of Lease ${this.standby.forwarder.lease}` };
  }

  /** Serves an inference request matched by `match`. */
  handle(req: IncomingMessage, res: ServerResponse, m: { route: Route; component?: ComponentName; path: string }): void {
    const started = process.hrtime.bigint();
    const proto = protocolOf(m.path);
    if (this.standby && !this.standby.leading()) {
      this.standby.forwarder.forward(req, res, (status, message) => reply(res, errorFor(proto, status, message)));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (c: Buffer) => {
      if (refused) return;
      size += c.length;
      if (size > this.maxBody) {
        refused = true;
        reply(res, errorFor(proto, 413, `request body exceeds ${this.maxBody} bytes`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (refused) return;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      this.serve(req, res, m, proto, body, started).catch((e: Error) => {
        const status = e instanceof HttpError || e instanceof ProtocolError ? e.status : 500;
        // refused before a revision answered: counted for the service, not for a revision
        if (!m.component) this.history.record(m.route.namespace, m.route.name, undefined, status, Number(process.hrtime.bigint() - started) / 1e9);
        reply(res, errorFor(proto, status, e.message));
      });
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse, m: { route: Route; component?: ComponentName; path: string }, proto: Protocol, body: Buffer, started: bigint): Promise<void> {
    const { route } = m;
    const component: ComponentName = m.component ?? (/:explain$|%3Aexplain$/.test(m.path.split('?')[0] ?? '') && route.components.explainer ? 'explainer' : route.components.transformer || route.latest.transformer ? 'transformer' : 'predictor');
    const revKey = pickRevision(route.components[component]) ?? route.latest[component];
    if (!revKey) throw new HttpError(503, route.failure ?? `InferenceService ${route.namespace}/${route.name} has no ready ${component}`);
    const d = this.revisions.get(revKey);
    if (!d) throw new HttpError(503, route.failure ?? `InferenceService ${route.namespace}/${route.name} is not ready`);
    const spec = d.spec;
    if (spec.failure) throw new HttpError(503, `${spec.failure.reason}: ${spec.failure.message}`);
    const meters = this.metersFor(d, route, component, revKey);
    const method = req.method ?? 'GET';
    const ours = spec.serverKind !== 'custom';
    const now = Date.now();
    const deadline = now + (spec.timeoutSeconds || defaultTimeoutSeconds) * 1000;
    // a transformer's own calls to its predictor (`<name>-predictor`) are not the service's requests
    const revName = m.component ? undefined : revKey.slice(revKey.indexOf('/') + 1);
    const finish = (r: UpstreamResponse): void => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      meters.code(r.status).inc();
      meters.latency.observe(seconds);
      if (revName) this.history.record(route.namespace, route.name, revName, r.status, seconds);
      reply(res, r);
    };
    const fail = (status: number, message: string): void => finish(errorFor(proto, status, message));
    const timeoutMs = (): number => Math.max(1, deadline - Date.now());
    const queued = (item: WorkItem): void => meters.queue.observe((Date.now() - item.enqueuedAt) / 1000);
    // every field a work item will get, set now: objects that keep their shape stay fast
    const base: Pick<WorkItem, 'fail' | 'enqueuedAt' | 'deadline' | 'done'> = { fail, enqueuedAt: now, deadline, done: false };

    if (method === 'POST' && proto === 'seldon' && ours) {
      const sreq = parseSeldonRequest(body, req.headers['content-type'], new URL(m.path, 'http://x').searchParams);
      const item: SeldonItem = { ...base, weight: Math.max(1, sreq.rows.length), sreq, batchKey: spec.batcher ? 'v1' : undefined, run: (t, batch) => this.runV1Batch(spec, t, batch as V1Like[], meters, queued) } as SeldonItem;
      item.instances = sreq.rows;
      item.respond = (r) => {
        if (r.status !== 200) return finish(seldonFrom(r));
        finish({ status: 200, headers: { 'content-type': 'application/json' }, body: encodeSeldonResponse(sreq, r.predictions ?? []) });
      };
      d.submit(item);
      return;
    }
    const batchable = method === 'POST' && proto === 'v1' && spec.batcher && /:predict$|%3Apredict$/.test(m.path.split('?')[0] ?? '') ? batchableInstances(body) : undefined;
    if (batchable) {
      const instances = batchable;
      const item = { ...base, weight: Math.max(1, instances.length), batchKey: `v1 ${m.path}`, instances, path: m.path } as V1Like;
      item.respond = (r) => finish(r.status === 200 ? jsonResponse(200, { predictions: r.predictions }) : r.raw ?? jsonResponse(r.status, { error: r.error }));
      item.run = (t, batch) => this.runV1Batch(spec, t, batch as V1Like[], meters, queued);
      d.submit(item);
      return;
    }
    if (method === 'POST' && proto === 'v2' && ours && spec.batcher && /\/infer$/.test(m.path.split('?')[0] ?? '')) {
      const ireq = parseInferRequest(body, { 'content-type': req.headers['content-type'], 'inference-header-content-length': header(req, 'inference-header-content-length') });
      const rows = ireq.inputs[0]?.shape[0] ?? 1;
      const item = { ...base, weight: Math.max(1, rows), batchKey: v2BatchKey(m.path, ireq), ireq, path: m.path } as V2Item;
      item.respond = finish;
      item.run = (t, batch) => this.runV2Batch(spec, t, batch as V2Item[], meters, queued);
      d.submit(item);
      return;
    }
    // everything else goes through as it came
    d.submit({
      ...base,
      weight: 1,
      run: async (t) => {
        queued(base as WorkItem);
        meters.batch.observe(1);
        // an in-process model reads only the content headers; a replica gets what the client sent
        const headers = t.replica ? forwardHeaders(req) : contentHeaders(req);
        finish(await t.call(method, m.path, headers, method === 'GET' || method === 'HEAD' ? undefined : body, timeoutMs()));
      },
    });
  }

  private async runV1Batch(spec: RevisionSpec, t: Target, batch: V1Like[], meters: Meters, queued: (i: WorkItem) => void): Promise<void> {
    const instances: unknown[] = [];
    for (const b of batch) {
      queued(b);
      instances.push(...b.instances);
    }
    meters.batch.observe(instances.length);
    const path = batch[batch.length - 1]?.path ?? `/v1/models/${spec.modelName}:predict`;
    const first = batch[0] as V1Like;
    const r = await t.call('POST', path.startsWith('/v1/') ? path : `/v1/models/${spec.modelName}:predict`, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ instances })), Math.max(1, first.deadline - Date.now()));
    if (r.status !== 200) {
      const error = errorText(r);
      for (const b of batch) b.respond({ status: r.status, error, raw: r });
      return;
    }
    let predictions: unknown;
    try {
      predictions = (JSON.parse(r.body.toString('utf8')) as { predictions?: unknown }).predictions;
    } catch {
      predictions = undefined;
    }
    if (!Array.isArray(predictions) || predictions.length !== instances.length) {
      for (const b of batch) b.respond({ status: 500, error: 'size of prediction is not equal to the size of instances' });
      return;
    }
    let at = 0;
    for (const b of batch) {
      b.respond({ status: 200, predictions: predictions.slice(at, at + b.instances.length) });
      at += b.instances.length;
    }
  }

  private async runV2Batch(spec: RevisionSpec, t: Target, batch: V2Item[], meters: Meters, queued: (i: WorkItem) => void): Promise<void> {
    const first = batch[0] as V2Item;
    for (const b of batch) queued(b);
    const rows = batch.map((b) => b.ireq.inputs[0]?.shape[0] ?? 1);
    meters.batch.observe(rows.reduce((a, b) => a + b, 0));
    const inputs: Tensor[] = batch.length === 1 ? first.ireq.inputs : first.ireq.inputs.map((inp, i) => concatRows(batch.map((b) => b.ireq.inputs[i] as Tensor)));
    const sent: InferRequest = { id: first.ireq.id ?? randomUUID(), inputs, ...(first.ireq.outputs ? { outputs: first.ireq.outputs.map((o) => ({ name: o.name, parameters: { binary_data: true } })) } : {}), ...(first.ireq.parameters ? { parameters: first.ireq.parameters } : {}) };
    const enc = encodeInferRequest(sent, { binary: true });
    const r = await t.call('POST', first.path, { ...enc.headers, accept: 'application/octet-stream' }, enc.body, Math.max(1, first.deadline - Date.now()));
    if (r.status !== 200) {
      for (const b of batch) b.respond(r);
      return;
    }
    const resp = parseInferResponse(r.body, { 'content-type': r.headers['content-type'], 'inference-header-content-length': r.headers['inference-header-content-length'] });
    const total = rows.reduce((a, b) => a + b, 0);
    const parts: Tensor[][] = batch.map(() => []);
    for (const out of resp.outputs) {
      if (batch.length === 1) {
        (parts[0] as Tensor[]).push(out);
        continue;
      }
      if (out.shape[0] !== total) {
        for (const b of batch) b.respond(jsonResponse(500, { error: `output "${out.name}" has ${out.shape[0]} rows for a batch of ${total}` }));
        return;
      }
      splitRows(out, rows).forEach((piece, i) => (parts[i] as Tensor[]).push(piece));
    }
    batch.forEach((b, i) => {
      const enc2 = encodeInferResponse({ model_name: resp.model_name || spec.modelName, ...(resp.model_version ? { model_version: resp.model_version } : {}), id: b.ireq.id ?? randomUUID(), outputs: parts[i] as Tensor[] }, b.ireq);
      b.respond({ status: 200, headers: enc2.headers, body: enc2.body });
    });
  }

  /** a revision's metric series, made once (a revision serves one component of one InferenceService) */
  private metersFor(d: RevisionDispatcher, route: Route, component: ComponentName, revKey: string): Meters {
    const have = this.meters.get(d);
    if (have) return have;
    const labels = [route.namespace, route.name, component, revKey.slice(revKey.indexOf('/') + 1)];
    const codes = new Map<number, { inc(by?: number): void }>();
    const m: Meters = {
      latency: this.latency.child(labels),
      queue: this.queueTime.child(labels),
      batch: this.batchSize.child(labels),
      code: (status) => {
        let c = codes.get(status);
        if (!c) {
          c = this.requests.child([...labels, String(status)]);
          codes.set(status, c);
        }
        return c;
      },
    };
    this.meters.set(d, m);
    return m;
  }

  readyReplicas(revKey: string): number {
    return this.revisions.get(revKey)?.readyCount ?? 0;
  }
}

interface Meters {
  latency: { observe(v: number): void };
  queue: { observe(v: number): void };
  batch: { observe(v: number): void };
  code(status: number): { inc(by?: number): void };
}

interface V1Like extends WorkItem {
  instances: unknown[];
  path: string;
  respond: (r: { status: number; predictions?: unknown[]; error?: string; raw?: UpstreamResponse }) => void;
}
interface SeldonItem extends V1Like {
  sreq: SeldonRequest;
}
interface V2Item extends WorkItem {
  ireq: InferRequest;
  path: string;
  respond: (r: UpstreamResponse) => void;
}

function v2BatchKey(path: string, r: InferRequest): string {
  const inputs = r.inputs.map((t) => `${t.name}:${t.datatype}:${t.shape.slice(1).join('x')}`).join(',');
  const outputs = (r.outputs ?? []).map((o) => o.name).join(',');
  return `v2 ${path} ${inputs} ${outputs} ${JSON.stringify(r.parameters ?? {})}`;
}

function pickRevision(traffic: TrafficTarget[] | undefined): string | undefined {
  if (!traffic || traffic.length === 0) return undefined;
  const total = traffic.reduce((a, t) => a + Math.max(0, t.percent), 0);
  if (total <= 0) return undefined;
  let r = Math.random() * total;
  for (const t of traffic) {
    r -= Math.max(0, t.percent);
    if (r < 0) return t.revision;
  }
  return traffic[traffic.length - 1]?.revision;
}

function protocolOf(path: string): Protocol {
  const p = path.split('?')[0] ?? path;
  if (p.startsWith('/v1/')) return 'v1';
  if (p.startsWith('/v2')) return 'v2';
  if (p === '/api/v0.1/predictions' || p === '/api/v1.0/predictions' || p === '/predict') return 'seldon';
  return 'raw';
}

function jsonResponse(status: number, v: unknown): UpstreamResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(v)) };
}

function errorFor(proto: Protocol, status: number, message: string): UpstreamResponse {
  if (proto === 'seldon') {
    const e = seldonError(status, message);
    return { status: e.status, headers: e.headers, body: e.body };
  }
  return jsonResponse(status, { error: message });
}

function errorText(r: UpstreamResponse): string {
  try {
    const v = JSON.parse(r.body.toString('utf8')) as { error?: string };
    if (typeof v.error === 'string') return v.error;
  } catch {
    // not JSON: the text itself
  }
  return r.body.toString('utf8').slice(0, 2000) || `HTTP ${r.status}`;
}

function seldonFrom(r: { status: number; error?: string; raw?: UpstreamResponse }): UpstreamResponse {
  const e = seldonError(r.status, r.error ?? (r.raw ? errorText(r.raw) : `HTTP ${r.status}`));
  return { status: e.status, headers: e.headers, body: e.body };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length']);

function contentHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  const ct = header(req, 'content-type');
  if (ct) out['content-type'] = ct;
  const ihcl = header(req, 'inference-header-content-length');
  if (ihcl) out['inference-header-content-length'] = ihcl;
  return out;
}

function forwardHeaders(req: IncomingMessage): Record<string, string> {
  const out = flatHeaders(req.headers);
  for (const k of Object.keys(out)) if (hopByHop.has(k)) delete out[k];
  return out;
}

function reply(res: ServerResponse, r: UpstreamResponse): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (!hopByHop.has(k)) headers[k] = v;
  headers['content-length'] = String(r.body.length);
  res.writeHead(r.status, headers);
  res.end(r.body);
}
