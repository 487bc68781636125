// CPU and memory of each Pod over the last half hour, for the dashboard's charts. The metrics API
// answers only the latest sample (as metrics-server does); this keeps a short ring of the substrate's
// samples per Pod in memory, bounded in points and in Pods, and streams new ones to whoever watches
// (`GET /skiff/v1/namespaces/<ns>/pods/<pod>/usage?watch=true`), so a page appends live instead of polling.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { Client } from '../store/client.js';
import type { PodMetricsSource } from '../substrate/substrate.js';
import { every, type Timer } from '../util/timers.js';
import { send } from './body.js';

export interface ContainerSample {
  name: string;
  /** cores used over the window before this sample; absent for a container's first sample */
  cpuCores?: number;
  memoryBytes: number;
}

export interface UsageSample {
  /** ms since the epoch */
  t: number;
  containers: ContainerSample[];
}

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
        containers: p.containers.map((c) => ({ name: c.name, ...(c.cpuCores !== undefined ? { cpuCores: c.cpuCores } : {}), memoryBytes: c.memoryWorkingSetBytes })),
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

/** true for the paths `serveUsage` answers */
export function isUsagePath(path: string): boolean {
  return USAGE_PATH.test(path);
}

/**
 * `GET /skiff/v1/namespaces/<ns>/pods/<pod>/usage`: `{ intervalSeconds, samples }`. With `?watch=true`,
 * NDJSON: every sample kept so far, then each new one as it is taken, one `{ "sample": … }` a line.
 * A Pod that does not exist answers 404 (and its samples are forgotten).
 */
export async function serveUsage(history: UsageHistory, client: Client, req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
  const m = USAGE_PATH.exec(path);
  if (!m) throw new ApiError(StatusReason.NotFound, `no usage history at ${path}`);
  if ((req.method ?? 'GET') !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, `${req.method} is not allowed on ${path}; use GET`);
  const namespace = decodeURIComponent(m[1] ?? '');
  const name = decodeURIComponent(m[2] ?? '');
  let uid: string | undefined;
  try {
    uid = (await client.get(Kinds.Pod, { namespace, name })).metadata.uid;
  } catch (e) {
    if (e instanceof ApiError && e.reason === StatusReason.NotFound) history.forget(namespace, name);
    throw e;
  }
  if (url.searchParams.get('watch') !== 'true') {
    return send(res, 200, { kind: 'PodUsageHistory', namespace, name, intervalSeconds: history.intervalSeconds, samples: history.history(namespace, name, uid) });
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  const write = (s: UsageSample): void => void res.write(`${JSON.stringify({ sample: s })}\n`);
  for (const s of history.history(namespace, name, uid)) write(s);
  // headers out now, so the client sees the stream open even with no sample yet
  if (typeof (res as { flushHeaders?: () => void }).flushHeaders === 'function') res.flushHeaders();
  const unsubscribe = history.subscribe(namespace, name, write);
  await new Promise<void>((resolve) => {
    const done = (): void => {
      unsubscribe();
      resolve();
    };
    req.on('close', done);
    res.on('close', done);
  });
}
