// Every request the API server answers, counted and timed under kube-apiserver's metric names, labels
// and buckets (k8s.io/apiserver/pkg/endpoints/metrics): apiserver_request_total,
// apiserver_request_duration_seconds, apiserver_current_inflight_requests and
// apiserver_longrunning_requests, so the API server dashboards and SLO rules written for a cluster
// read Skiff unchanged.
//
// Labels are kube-apiserver's: `verb` is the method made canonical (a GET of a collection is LIST, with
// `?watch` WATCH, a PATCH in apply-patch form APPLY, the streaming subresources log, exec, attach,
// portforward and proxy CONNECT); `scope` is `resource` for a named object or a create, else
// `namespace` or `cluster`; `component` is `apiserver`. A non-resource path is labelled as
// kube-apiserver labels /healthz, the path in `subresource`. The KFP API (/apis/v2beta1) is labelled
// in the same terms with component `ml-pipeline`, the name of KFP's API server: group
// pipelines.kubeflow.org, its path's resource (runs, experiments, pipelines, recurringruns,
// artifacts), a custom method or sub-collection as the subresource. Inference requests are the
// gateway's to count (skiff_serving_*).
//
// Only names the server serves become label values: a request for an unknown resource or path is
// counted with empty labels, so nobody can grow the series by inventing paths.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Discovery } from './kube/discovery.js';
import type { Counter, Gauge, Histogram, MetricsRegistry } from './metrics.js';

export interface RequestLabels {
  verb: string;
  dryRun: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
  /** a watch or a CONNECT: kept out of the in-flight count and tracked in apiserver_longrunning_requests */
  longRunning: boolean;
}

/** what the server serves, the only names that become label values */
export interface ServedApi {
  group(group: string): boolean;
  /** a served group-version's resources, each with its subresources */
  resources(group: string, version: string): Map<string, Set<string>> | undefined;
}

/** the served table read from discovery, built again when it changes */
export function servedApi(discovery: Discovery): ServedApi {
  // group → version → resource → its subresources
  let table: Map<string, Map<string, Map<string, Set<string>>>> | undefined;
  discovery.onChange(() => (table = undefined));
  const get = (): Map<string, Map<string, Map<string, Set<string>>>> => {
    if (table) return table;
    table = new Map();
    for (const g of discovery.groups()) {
      const versions = new Map<string, Map<string, Set<string>>>();
      table.set(g.name, versions);
      for (const v of g.versions) {
        const resources = new Map<string, Set<string>>();
        versions.set(v.version, resources);
        for (const r of v.resources) resources.set(r.resource, new Set((r.subresources ?? []).map((x) => x.name)));
      }
    }
    return table;
  };
  return {
    group: (g) => get().has(g),
    resources: (g, v) => get().get(g)?.get(v),
  };
}

/** the verbs kube-apiserver reports; any other is `other` */
const validVerbs = new Set(['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH', 'WATCHLIST']);
/** subresources whose requests kube-apiserver reports as CONNECT */
const connectSubresources = new Set(['log', 'exec', 'portforward', 'attach', 'proxy']);

/** kube-apiserver's dry_run label: the values deduplicated and sorted, or `invalid` for any but All */
function dryRunLabel(query: string): string {
  if (!query.includes('dryRun')) return '';
  const values = new URLSearchParams(query).getAll('dryRun');
  if (values.some((v) => v !== 'All')) return 'invalid';
  return values.length ? 'All' : '';
}

/** `?watch` with any value but 0 or false, as kube-apiserver's metrics read it */
function watchQuery(query: string): boolean {
  if (!query.includes('watch')) return false;
  const v = new URLSearchParams(query).getAll('watch')[0];
  return v !== undefined && v.toLowerCase() !== '0' && v.toLowerCase() !== 'false';
}

/** what of a query the labels read, as a key */
function queryFacts(query: string): string {
  const ns = query.includes('namespace') && new URLSearchParams(query).get('namespace') ? 'ns' : '';
  return `${watchQuery(query) ? 'watch' : ''}|${dryRunLabel(query)}|${ns}`;
}

/** CanonicalVerb then CleanVerb, as MonitorRequest reports a request */
function reportedVerb(method: string, scope: string, query: string, contentType: string | undefined, connect: boolean): string {
  let verb = method === 'GET' || method === 'HEAD' ? (scope !== 'resource' && scope !== '' ? 'LIST' : 'GET') : method;
  if (method === 'GET' && watchQuery(query)) verb = 'WATCH';
  if (verb === 'PATCH' && contentType !== undefined && contentType.split(';')[0]?.trim().toLowerCase() === 'application/apply-patch+yaml') verb = 'APPLY';
  if (connect) verb = 'CONNECT';
  return validVerbs.has(verb) ? verb : 'other';
}

function decode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const kfpResources = new Set(['pipelines', 'experiments', 'runs', 'recurringruns', 'artifacts']);
/** KFP's custom methods (`/runs/{id}:terminate`), reported as subresources */
const kfpMethods = new Set(['archive', 'unarchive', 'terminate', 'retry', 'enable', 'disable']);

/** the one label value a non-resource path gets: a served path or a template of one, else '' */
function nonResourcePath(segs: string[]): string {
  const [a, b, c, , e] = segs;
  switch (a) {
    case undefined:
      return '/';
    case 'healthz':
    case 'livez':
    case 'readyz':
    case 'version':
    case 'metrics':
    case 'ui':
    case 'kfam':
    case 'openapi.json':
      return `/${a}`;
    case 'openapi':
      return b === 'v2' || b === 'v3' ? `/openapi/${b}` : '';
    case 'notebook':
      return b === '_session' && segs.length === 2 ? '/notebook/_session' : '';
    case 'skiff':
      if (b !== 'v1') return '';
      if (c === 'streams' && segs.length === 3) return '/skiff/v1/streams';
      if (c !== 'namespaces') return '';
      if (e === 'usage' && segs.length === 5) return '/skiff/v1/namespaces/{namespace}/usage';
      if (e === 'pods' && segs[6] === 'usage' && segs.length === 7) return '/skiff/v1/namespaces/{namespace}/pods/{name}/usage';
      if (e === 'inferenceservices' && segs[6] === 'traffic' && segs.length === 7) return '/skiff/v1/namespaces/{namespace}/inferenceservices/{name}/traffic';
      return '';
    default:
      return '';
  }
}

/**
 * The labels of one request, from its method, URL (path and query, as received) and content type;
 * `api` says which groups, resources and subresources are served.
 */
export function requestLabels(method: string, url: string, contentType: string | undefined, api: ServedApi): RequestLabels {
  const m = method.toUpperCase();
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const segs: string[] = [];
  for (const s of path.split('/')) if (s !== '') segs.push(decode(s));
  const dryRun = query === '' ? '' : dryRunLabel(query);
  const head = segs[0];
  if (head === 'apis' && segs[1] === 'v2beta1') return kfpLabels(m, segs.slice(2), query, contentType, dryRun) ?? plain(m, query, contentType, dryRun, '');
  if (head === 'notebook' && segs.length >= 3 && segs[1] !== '_session') {
    // a notebook's server, reached as kube's service proxy reaches a service (and authorized so)
    return { verb: 'CONNECT', dryRun, group: 'kubeflow.org', version: 'v1', resource: 'notebooks', subresource: 'proxy', scope: 'resource', component: 'apiserver', longRunning: true };
  }
  if (head !== 'api' && head !== 'apis') return plain(m, query, contentType, dryRun, nonResourcePath(segs));
  // discovery: the aggregated documents at /api and /apis as kube-apiserver labels them, a served
  // group or group-version by its names
  if (segs.length === 1) return plain(m, query, contentType, dryRun, `/${head}`, 'apiserver');
  const legacy = head === 'api';
  const group = legacy ? '' : (segs[1] as string);
  if (!legacy && segs.length === 2) return api.group(group) ? plain(m, query, contentType, dryRun, '', 'apiserver', group) : plain(m, query, contentType, dryRun, '');
  let i = legacy ? 2 : 3;
  const version = segs[i - 1] as string;
  const resources = api.resources(group, version);
  if (!resources) return plain(m, query, contentType, dryRun, '');
  if (segs.length === i) return plain(m, query, contentType, dryRun, '', 'apiserver', group, version);
  // the deprecated /watch/ prefix
  const watchPath = segs[i] === 'watch';
  if (watchPath) i++;
  // /namespaces/{ns}/{plural}/...; /namespaces[/{name}[/status|/finalize]] is the Namespace itself
  let namespaced = false;
  const left = segs.length - i;
  if (segs[i] === 'namespaces' && left >= 3 && !(left === 3 && (segs[i + 2] === 'status' || segs[i + 2] === 'finalize'))) {
    namespaced = true;
    i += 2;
  }
  const resource = segs[i] ?? '';
  const name = segs[i + 1];
  const subresource = segs[i + 2];
  const subresources = resources.get(resource);
  if (segs.length > i + 3 || !subresources || (subresource !== undefined && !subresources.has(subresource))) return plain(m, query, contentType, dryRun, '');
  // as kube-apiserver's installer scopes its routes: a path with a name, or a create, is one object's
  const scope = name !== undefined || m === 'POST' ? 'resource' : namespaced ? 'namespace' : 'cluster';
  const connect = subresource !== undefined && connectSubresources.has(subresource);
  const verb = watchPath ? 'WATCH' : reportedVerb(m, scope, query, contentType, connect);
  return { verb, dryRun, group, version, resource, subresource: subresource ?? '', scope, component: 'apiserver', longRunning: verb === 'WATCH' || verb === 'CONNECT' };
}

/** the labels of a request that names no served resource: a non-resource path, discovery, or nothing served */
function plain(m: string, query: string, contentType: string | undefined, dryRun: string, subresource: string, component = '', group = '', version = ''): RequestLabels {
  return { verb: reportedVerb(m, '', query, contentType, false), dryRun, group, version, resource: '', subresource, scope: '', component, longRunning: false };
}

/** the KFP API's labels; `rest` is the path after /apis/v2beta1; undefined for what it does not serve */
function kfpLabels(m: string, rest: string[], query: string, contentType: string | undefined, dryRun: string): RequestLabels | undefined {
  const base = { dryRun, group: '', version: '', resource: '', scope: '', component: '', longRunning: false };
  const [first] = rest;
  if (first === 'healthz' || first === 'auth') return { ...base, verb: reportedVerb(m, '', query, contentType, false), subresource: `/apis/v2beta1/${first}` };
  if (first === undefined || !kfpResources.has(first)) return undefined;
  // `/runs/{id}:terminate`: the custom method off the last segment
  const segs = [...rest];
  const last = segs[segs.length - 1] as string;
  const colon = last.indexOf(':');
  const method = colon < 0 ? undefined : last.slice(colon + 1);
  if (colon >= 0) segs[segs.length - 1] = last.slice(0, colon);
  let named = segs.length >= 2;
  let subresource = '';
  if (first === 'pipelines' && segs.length === 2 && (segs[1] === 'upload' || segs[1] === 'create' || segs[1] === 'upload_version')) {
    // uploads and creates name no pipeline in the path; a version's upload is one of the versions
    named = false;
    if (segs[1] === 'upload_version') subresource = 'versions';
  } else if (first === 'pipelines' && segs[1] === 'names') {
    if (segs.length !== 3) return undefined;
  } else if (segs.length >= 3) {
    // `/pipelines/{id}/versions[/{vid}]`, `/runs/{id}/artifacts`, `/runs/{id}/nodes/{node}/artifacts/{name}:read`
    if (segs[2] === 'versions' && first === 'pipelines' && segs.length <= 4) subresource = 'versions';
    else if (first === 'runs' && ((segs[2] === 'artifacts' && segs.length === 3) || (segs[2] === 'nodes' && segs[4] === 'artifacts' && segs.length === 6))) subresource = 'artifacts';
    else return undefined;
  }
  if (method !== undefined) {
    if (subresource === '' && kfpMethods.has(method)) subresource = method;
    else if (!(subresource === 'artifacts' && method === 'read')) return undefined;
  }
  const scope = named || m === 'POST' ? 'resource' : new URLSearchParams(query).get('namespace') ? 'namespace' : 'cluster';
  return { ...base, verb: reportedVerb(m, scope, query, contentType, false), group: 'pipelines.kubeflow.org', version: 'v2beta1', resource: first, subresource, scope, component: 'ml-pipeline' };
}

/**
 * apiserver_current_inflight_requests' value: the most requests in flight at once in about the last
 * second, as kube-apiserver's max-in-flight filter samples its watermark each second.
 */
class Watermark {
  current = 0;
  private second = 0;
  private max = 0;
  private previous = 0;

  private roll(now: number): void {
    const s = Math.floor(now / 1000);
    if (s === this.second) return;
    // a second with no change held the current level throughout
    this.previous = s === this.second + 1 ? this.max : this.current;
    this.second = s;
    this.max = this.current;
  }

  inc(now: number): void {
    this.roll(now);
    if (++this.current > this.max) this.max = this.current;
  }

  dec(now: number): void {
    this.roll(now);
    this.current--;
  }

  read(now: number): number {
    this.roll(now);
    return Math.max(this.previous, this.max);
  }
}

/** one label set's series, bound once, and how its requests count in flight */
interface Series {
  values: string[];
  duration: { observe(v: number): void };
  codes: Map<number, { inc(): void }>;
  /** a long-running request's apiserver_longrunning_requests series; else the in-flight count it is in */
  running?: { inc(): void; dec(): void };
  inflight?: Watermark;
}

/** how many recent request lines keep their series at hand */
const recentLines = 256;

export class RequestMetrics {
  private readonly total: Counter;
  private readonly duration: Histogram;
  private readonly longRunning: Gauge;
  private readonly readOnly = new Watermark();
  private readonly mutating = new Watermark();
  /** upgrade requests, counted when their socket closes; one that falls back to a plain answer is not counted twice */
  private readonly upgrades = new WeakSet<IncomingMessage>();
  /** each label set's series, by its labels */
  private readonly series = new Map<string, Series>();
  /**
   * the series of recent request lines, by method (and a PATCH's content type), then URL: clients
   * repeat the same reads, which then cost one lookup instead of reading the path
   */
  private readonly recent = new Map<string, Map<string, Series>>();
  private readonly api: ServedApi;

  constructor(metrics: MetricsRegistry, discovery: Discovery) {
    this.api = servedApi(discovery);
    // what a path means changes with what is served
    discovery.onChange(() => this.recent.clear());
    this.total = metrics.counter('apiserver_request_total', 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code']);
    this.duration = metrics.histogram('apiserver_request_duration_seconds', 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'], requestDurationBuckets);
    metrics.collected('apiserver_current_inflight_requests', 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.', ['request_kind'], 'gauge', () => {
      const now = performance.now();
      return [{ labels: ['readOnly'], value: this.readOnly.read(now) }, { labels: ['mutating'], value: this.mutating.read(now) }];
    });
    this.longRunning = metrics.gauge('apiserver_longrunning_requests', 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component']);
  }

  /** the labels of a request, from its method, URL and (for a PATCH) content type */
  labels(req: IncomingMessage): RequestLabels {
    const method = req.method ?? 'GET';
    return requestLabels(method, req.url ?? '/', method === 'PATCH' ? req.headers['content-type'] : undefined, this.api);
  }

  /** counts a request of node:http's request handler once its response is done (or abandoned) */
  track(req: IncomingMessage, res: ServerResponse): void {
    if (this.upgrades.has(req)) return;
    const started = performance.now();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    // the query matters to the labels only for a watch, a dry run and a KFP list's namespace
    const line = q < 0 ? url : `${url.slice(0, q)} ${queryFacts(url.slice(q + 1))}`;
    const kind = method === 'PATCH' ? `PATCH ${req.headers['content-type'] ?? ''}` : method;
    let lines = this.recent.get(kind);
    if (!lines) {
      if (this.recent.size >= 16) this.recent.clear();
      this.recent.set(kind, (lines = new Map()));
    }
    let s = lines.get(line);
    if (!s) {
      s = this.seriesOf(this.labels(req));
      if (lines.size >= recentLines) lines.clear();
      lines.set(line, s);
    }
    this.begin(s, started);
    const series = s;
    // a response closes once, finished or abandoned
    res.on('close', () => this.end(series, started, res.headersSent ? res.statusCode : 0));
  }

  /**
   * counts an upgrade request (exec, attach, port-forward, the dashboard's and notebooks' WebSockets)
   * when its connection closes, with the status its first bytes answered (101 once switched)
   */
  trackUpgrade(req: IncomingMessage, socket: Duplex): void {
    this.upgrades.add(req);
    const started = performance.now();
    const series = this.seriesOf({ ...this.labels(req), longRunning: true });
    this.begin(series, started);
    let code = 0;
    const peek = (chunk: unknown): void => {
      if (code !== 0) return;
      const text = typeof chunk === 'string' ? chunk.slice(0, 16) : Buffer.isBuffer(chunk) ? chunk.subarray(0, 16).toString('latin1') : '';
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      code = m ? Number(m[1]) : -1;
    };
    // the answer's status line is the first thing written, by write() or by end()
    const s = socket as unknown as { write: (...a: unknown[]) => boolean; end: (...a: unknown[]) => unknown };
    const write = s.write;
    const end = s.end;
    s.write = function (this: unknown, ...a: unknown[]): boolean {
      peek(a[0]);
      s.write = write;
      return write.apply(this, a);
    };
    s.end = function (this: unknown, ...a: unknown[]): unknown {
      if (typeof a[0] !== 'function') peek(a[0]);
      s.end = end;
      return end.apply(this, a);
    };
    socket.once('close', () => this.end(series, started, Math.max(code, 0)));
  }

  private seriesOf(l: RequestLabels): Series {
    const key = `${l.verb}\u0000${l.dryRun}\u0000${l.group}\u0000${l.version}\u0000${l.resource}\u0000${l.subresource}\u0000${l.scope}\u0000${l.component}\u0000${l.longRunning}`;
    let s = this.series.get(key);
    if (!s) {
      const values = [l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, l.component];
      s = { values, duration: this.duration.child(values), codes: new Map() };
      // kube-apiserver's max-in-flight filter: get, list and watch are read-only, the rest mutate
      if (l.longRunning) s.running = this.longRunning.child([l.verb, l.group, l.version, l.resource, l.subresource, l.scope, l.component]);
      else s.inflight = l.verb === 'GET' || l.verb === 'LIST' || l.verb === 'WATCH' ? this.readOnly : this.mutating;
      this.series.set(key, s);
    }
    return s;
  }

  /** in flight from now */
  private begin(s: Series, started: number): void {
    s.running?.inc();
    s.inflight?.inc(started);
  }

  /** ended: counted with its code, timed, no longer in flight */
  private end(s: Series, started: number, code: number): void {
    const now = performance.now();
    s.running?.dec();
    s.inflight?.dec(now);
    let count = s.codes.get(code);
    if (!count) {
      count = this.total.child([...s.values, String(code)]);
      s.codes.set(code, count);
    }
    count.inc();
    s.duration.observe((now - started) / 1000);
  }
}

/** apiserver_request_duration_seconds' buckets */
export const requestDurationBuckets: readonly number[] = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
