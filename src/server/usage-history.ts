// CPU and memory of each Pod over the last half hour, for the dashboard's charts. The metrics API
// answers only the latest sample (as metrics-server does); this keeps a short ring of the substrate's
// samples per Pod in memory, bounded in points and in Pods, and streams new ones to whoever watches
// (`GET /skiff/v1/namespaces/<ns>/pods/<pod>/usage?watch=true`), so a page appends live instead of polling.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { UsageSample } from '../api/usage.js';
import type { Client } from '../store/client.js';
import type { PodMetricsSource } from '../substrate/substrate.js';
import { every, type Timer } from '../util/timers.js';
import { send } from './body.js';
import type { ResourceAttributes } from './auth/types.js';

export interface UsageHistoryOptions {
  usage: PodMetricsSource;
  /** how often the substrate's latest samples are read (default 5 s) */
  intervalMs?: number;
  /** how far back a Pod's samples are kept (default 30 min) */
  retentionMs?: number;
  /** at most this many Pods are kept; the one seen longest ago goes first (default 2000) */
  maxPods?: number;
  now?: () => number;
}

interface PodSeries {
  uid: string;
  samples: UsageSample[];
  /** last time the substrate reported the Pod */
  seen: number;
}

type Listener = (s: UsageSample) => void;

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

export type { ContainerSample, UsageSample } from '../api/usage.js';

export class UsageHistory {
  private readonly pods = new Map<string, PodSeries>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly intervalMs: number;
  private readonly retentionMs: number;
  private readonly maxPods: number;
  private readonly now: () => number;
  private timer?: Timer;

  constructor(private readonly opts: UsageHistoryOptions) {
    this.intervalMs = opts.intervalMs ?? 5000;
    this.retentionMs = opts.retentionMs ?? 30 * 60_000;
    this.maxPods = opts.maxPods ?? 2000;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    this.record();
    this.timer = every(this.intervalMs, () => this.record()).unref();
  }

  stop(): void {
    this.timer?.clear();
    this.timer = undefined;
    this.listeners.clear();
  }

  /** reads the substrate's latest samples once: a Pod gets a point when it has a newer one */
  record(): void {
    const now = this.now();
    for (const p of this.opts.usage.podUsage()) {
      if (!p.containers.length) continue;
      const k = key(p.namespace, p.name);
      let series = this.pods.get(k);
      // a new Pod under an old name starts a new history
      if (!series || series.uid !== p.uid) {
        series = { uid: p.uid, samples: [], seen: now };
        this.pods.set(k, series);
      }
      series.seen = now;
      const t = Math.max(...p.containers.map((c) => c.timestamp));
      const last = series.samples[series.samples.length - 1];
      if (last && t <= last.t) continue;
      const sample: UsageSample = {
        t,
        containers: p.containers.map((c) => ({
          name: c.name, ...(c.cpuCores !== undefined ? { cpuCores: c.cpuCores } : {}), memoryBytes: c.memoryWorkingSetBytes,
          ...(c.gpus?.length ? { gpus: c.gpus.map((g) => ({ index: g.index, ...(g.memoryUsedMiB !== undefined ? { memoryMiB: g.memoryUsedMiB } : {}), ...(g.gpuPercent !== undefined ? { gpuPercent: g.gpuPercent } : {}), ...(g.gpuPercentSource ? { gpuPercentSource: g.gpuPercentSource } : {}) })) } : {}),
        })),
      };
      series.samples.push(sample);
      for (const l of this.listeners.get(k) ?? []) l(sample);
    }
    this.prune(now);
  }

  private prune(now: number): void {
    const cutoff = now - this.retentionMs;
    for (const [k, s] of this.pods) {
      let drop = 0;
      while (drop < s.samples.length && (s.samples[drop]?.t ?? 0) < cutoff) drop++;
      if (drop) s.samples.splice(0, drop);
      if (!s.samples.length && s.seen < cutoff) this.pods.delete(k);
    }
    if (this.pods.size > this.maxPods) {
      const oldest = [...this.pods.entries()].sort((a, b) => a[1].seen - b[1].seen).slice(0, this.pods.size - this.maxPods);
      for (const [k] of oldest) this.pods.delete(k);
    }
  }

  /** the samples kept for a Pod, oldest first; `uid` set: only if they are that Pod's */
  history(namespace: string, name: string, uid?: string): UsageSample[] {
    const s = this.pods.get(key(namespace, name));
    if (!s || (uid !== undefined && s.uid !== uid)) return [];
    return [...s.samples];
  }

  /** a Pod is gone: its samples go with it */
  forget(namespace: string, name: string): void {
    this.pods.delete(key(namespace, name));
  }

  /** calls `fn` with each new sample of the Pod until the returned function is called */
  subscribe(namespace: string, name: string, fn: Listener): () => void {
    const k = key(namespace, name);
    let set = this.listeners.get(k);
    if (!set) {
      set = new Set();
      this.listeners.set(k, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (!set.size) this.listeners.delete(k);
    };
  }

  get podCount(): number {
    return this.pods.size;
  }

  get intervalSeconds(): number {
    return this.intervalMs / 1000;
  }
}

const USAGE_PATH = /^\/skiff\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/usage$/;
const MANY_PATH = /^\/skiff\/v1\/namespaces\/([^/]+)\/usage$/;

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // a malformed escape names no Pod: checked as written, it matches nothing a role names
    return s;
  }
}

/**
 * What a usage request reads, in RBAC's terms: a Pod's samples are a view of that Pod, so they are
 * asked as `get pods/<pod>` (or `list pods` for several at once, `watch` with `?watch=true`) in its
 * namespace, which every role that shows a namespace's Pods grants. Undefined for other paths.
 */
export function usageAttributes(method: string, url: string): ResourceAttributes | undefined {
  const u = new URL(url, 'http://skiff.local');
  const path = u.pathname.replace(/\/+$/, '');
  const watch = u.searchParams.get('watch');
  const watching = watch !== null && watch !== 'false' && watch !== '0';
  const one = USAGE_PATH.exec(path);
  const verb = method === 'GET' || method === 'HEAD' ? (watching ? 'watch' : undefined) : method.toLowerCase();
  if (one) return { verb: verb ?? 'get', apiGroup: '', resource: 'pods', namespace: decoded(one[1] as string), name: decoded(one[2] as string) };
  const many = MANY_PATH.exec(path);
  if (many) return { verb: verb ?? 'list', apiGroup: '', resource: 'pods', namespace: decoded(many[1] as string) };
  return undefined;
}

/** true for the paths `serveUsage` answers */
export function isUsagePath(path: string): boolean {
  return USAGE_PATH.test(path) || MANY_PATH.test(path);
}

/**
 * `GET /skiff/v1/namespaces/<ns>/pods/<pod>/usage`: `{ intervalSeconds, samples }`; a Pod that does not
 * exist answers 404 (and its samples are forgotten). `GET /skiff/v1/namespaces/<ns>/usage?pod=a&pod=b`:
 * several Pods at once, `{ intervalSeconds, pods: { a: [...], b: [...] } }`, Pods that do not exist
 * left out. With `?watch=true` either streams NDJSON instead: every sample kept so far, then each new
 * one as it is taken, one `{ "pod": …, "sample": … }` a line. One stream for all the Pods of a job
 * matters: a browser opens at most six connections to a server, and every live list holds one.
 */
export async function serveUsage(history: UsageHistory, client: Client, req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
  if ((req.method ?? 'GET') !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, `${req.method} is not allowed on ${path}; use GET`);
  const one = USAGE_PATH.exec(path);
  const many = one ? undefined : MANY_PATH.exec(path);
  if (!one && !many) throw new ApiError(StatusReason.NotFound, `no usage history at ${path}`);
  const namespace = decodeURIComponent((one ?? many)?.[1] ?? '');
  const names = one ? [decodeURIComponent(one[2] ?? '')] : [...new Set(url.searchParams.getAll('pod').flatMap((p) => p.split(',')).filter(Boolean))];
  if (many && !names.length) throw new ApiError(StatusReason.BadRequest, 'name the Pods: ?pod=<name>&pod=<name>');
  if (names.length > 200) throw new ApiError(StatusReason.BadRequest, `at most 200 Pods at once, not ${names.length}`);
  const uids = new Map<string, string>();
  for (const name of names) {
    try {
      uids.set(name, (await client.get(Kinds.Pod, { namespace, name })).metadata.uid);
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
      history.forget(namespace, name);
      if (one) throw e;
    }
  }
  if (url.searchParams.get('watch') !== 'true') {
    if (one) return send(res, 200, { kind: 'PodUsageHistory', namespace, name: names[0], intervalSeconds: history.intervalSeconds, samples: history.history(namespace, names[0] ?? '', uids.get(names[0] ?? '')) });
    return send(res, 200, { kind: 'PodUsageHistoryList', namespace, intervalSeconds: history.intervalSeconds, pods: Object.fromEntries([...uids].map(([name, uid]) => [name, history.history(namespace, name, uid)])) });
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  const write = (pod: string, s: UsageSample): void => void res.write(`${JSON.stringify({ pod, sample: s })}\n`);
  for (const [name, uid] of uids) for (const s of history.history(namespace, name, uid)) write(name, s);
  // headers out now, so the client sees the stream open even with no sample yet
  res.flushHeaders();
  const offs = [...uids.keys()].map((name) => history.subscribe(namespace, name, (s) => write(name, s)));
  await new Promise<void>((resolve) => {
    const done = (): void => {
      for (const off of offs) off();
      resolve();
    };
    req.on('close', done);
    res.on('close', done);
  });
}
