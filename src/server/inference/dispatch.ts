// One revision's side of the gateway: its replicas, the queue of requests waiting for one, dynamic
// batching, `containerConcurrency`, timeouts and the load its autoscaler reads.
//
// A request is queued, then sent when a ready replica has room: without a batcher a replica takes
// up to `containerConcurrency` requests at once (unlimited when 0); with a batcher each replica has
// two batch slots, so one batch is computed while the next is formed, and a batch is the queued
// requests of one kind, up to `maxBatchSize` instances (a request is never split). A batch waits
// for more requests at most `maxLatency` ms, and only while a replica is free — requests queued
// while every slot is busy go out as soon as one frees. With no ready replica (scaled to zero, or
// still loading) requests wait in the queue, up to the component's timeout.
import { Agent, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { RevisionSpec } from '../../api/serving-revision.js';
import { LoadTracker } from './load.js';
import type { LoadReading } from '../../workloads/serving/data-plane.js';
import { MAX_TIMEOUT_MS, after, type Timer } from '../../util/timers.js';

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What a queued request asks for. `weight` is its instance count (1 for unbatched work). */
export interface WorkItem {
  /** requests with the same key may share a batch */
  batchKey?: string;
  weight: number;
  /** runs the request (or, for the first item of a batch, the whole batch) against one replica */
  run: (target: Target, batch: WorkItem[]) => Promise<void>;
  /** ends the request with an error (timeout, no replica, shutdown) */
  fail: (status: number, message: string) => void;
  enqueuedAt: number;
  deadline: number;
  done?: boolean;
}

/** Where a request goes: a replica Pod's address, or the in-process model. */
export interface Target {
  replica?: Replica;
  call(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, timeoutMs: number): Promise<UpstreamResponse>;
}

export class Replica implements Target {
  /** as a Target: the replica is its own */
  readonly replica: Replica = this;
  ready = false;
  inflight = 0;
  batches = 0;
  private probing = false;
  private stopped = false;
  readonly agent: Agent;

  constructor(readonly name: string, readonly ip: string, readonly port: number, private readonly probePath: string | undefined, private readonly onReady: () => void) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 30_000 });
  }

  /** Polls the replica until it answers: a TCP connect, or the readinessProbe's HTTP GET. */
  probe(): void {
    if (this.probing || this.stopped) return;
    this.probing = true;
    const started = Date.now();
    const attempt = (): void => {
      if (this.stopped) return;
      const next = (): void => void after(Date.now() - started < 5000 ? 20 : 250, attempt);
      const ok = (): void => {
        this.probing = false;
        this.ready = true;
        this.onReady();
      };
      if (this.probePath) {
        const req = httpRequest({ host: this.ip, port: this.port, path: this.probePath, method: 'GET', agent: this.agent, timeout: 1000 }, (res) => {
          res.resume();
          if ((res.statusCode ?? 500) < 400) ok();
          else next();
        });
        req.on('error', next);
        req.on('timeout', () => req.destroy());
        req.end();
        return;
      }
      const s = connect({ host: this.ip, port: this.port });
      s.once('connect', () => {
        s.destroy();
        ok();
      });
      s.once('error', () => {
        s.destroy();
        next();
      });
    };
    attempt();
  }

  /** a refused connection: the replica is gone or restarting */
  lost(): void {
    if (!this.ready) return;
    this.ready = false;
    this.probe();
  }

  stop(): void {
    this.stopped = true;
    this.ready = false;
    this.agent.destroy();
  }

  call(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, timeoutMs: number): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      const h: Record<string, string> = { ...headers };
      if (body) h['content-length'] = String(body.length);
      const req = httpRequest({ host: this.ip, port: this.port, path, method, headers: h, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: flatHeaders(res.headers), body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      // a socket's idle timeout has setTimeout's limit; past 24.8 days idle it is the same as forever
      req.setTimeout(Math.min(timeoutMs, MAX_TIMEOUT_MS), () => req.destroy(new TimeoutError(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET') this.lost();
        reject(e);
      });
      req.end(body);
    });
  }
}

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

export function flatHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export interface InProcessModel {
  /** calls the in-process server; same shape as a replica's answer */
  call(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined): Promise<UpstreamResponse>;
}

export class RevisionDispatcher {
  readonly load = new LoadTracker();
  readonly replicas = new Map<string, Replica>();
  inProcess: InProcessModel | undefined;
  private readonly queue: WorkItem[] = [];
  private batchTimer: Timer | undefined;
  /** closed by close(): takes no replicas and no requests */
  private closed = false;
  private readonly inProcessTarget: Target & { inflight: number; batches: number };

  /** the load the autoscaler reads: the tracker's, with the queue's length */
  readonly reading: LoadReading;

  constructor(public spec: RevisionSpec, readonly key: string, private readonly onDemand: () => void, private readonly onReadyChange: () => void) {
    const { load, queue } = this;
    this.reading = {
      get current() { return load.current; },
      get queued() { return queue.length; },
      get lastArrival() { return load.lastArrival; },
      window: (ms) => load.window(ms),
    };
    this.inProcessTarget = {
      inflight: 0,
      batches: 0,
      call: (method, path, headers, body) => {
        if (!this.inProcess) return Promise.reject(new Error('the model is not loaded'));
        return this.inProcess.call(method, path, headers, body);
      },
    };
  }

  get readyCount(): number {
    if (this.spec.serverKind === 'in-process') return this.inProcess ? 1 : 0;
    let n = 0;
    for (const r of this.replicas.values()) if (r.ready) n++;
    return n;
  }

  /** the replicas the revision controller found: Running Pods with an address */
  setReplicas(pods: { name: string; ip?: string }[]): void {
    if (this.closed) return;
    const seen = new Set<string>();
    for (const p of pods) {
      seen.add(p.name);
      const have = this.replicas.get(p.name);
      // a Pod whose address is not (or no longer) in this view of it keeps the replica it had
      if (have && (have.ip === p.ip || !p.ip)) continue;
      if (!p.ip) continue;
      have?.stop();
      // Skiff's model server answers its model's V1 readiness once the model is loaded; a custom
      // container is probed as its readinessProbe says, or by connecting to its port
      const probe = (this.spec.podTemplate?.spec.containers[0] as { readinessProbe?: { httpGet?: { path?: string } } } | undefined)?.readinessProbe;
      const path = this.spec.serverKind === 'skiff' ? `/v1/models/${encodeURIComponent(this.spec.modelName)}` : probe?.httpGet?.path;
      const r = new Replica(p.name, p.ip, this.spec.port, path, () => {
        this.onReadyChange();
        this.pump();
      });
      this.replicas.set(p.name, r);
      r.probe();
    }
    for (const [name, r] of this.replicas) {
      if (!seen.has(name)) {
        r.stop();
        this.replicas.delete(name);
        this.onReadyChange();
      }
    }
  }

  setInProcess(model: InProcessModel | undefined): void {
    this.inProcess = model;
    this.onReadyChange();
    this.pump();
  }

  /** why the revision cannot load its model; requests fail at once with it while nothing is ready */
  failure: string | undefined;

  setFailure(message: string | undefined): void {
    this.failure = message;
    if (message && this.readyCount === 0) for (const it of this.queue.splice(0)) it.fail(503, message);
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Queues a request; it runs when a replica has room. */
  submit(item: WorkItem): void {
    if (this.failure && this.readyCount === 0) return item.fail(503, this.failure);
    this.load.arrive();
    const fail = item.fail;
    item.fail = (status, message) => {
      if (item.done) return;
      item.done = true;
      this.load.leave();
      fail(status, message);
    };
    if (this.closed) {
      item.fail(503, 'the server is stopping');
      return;
    }
    // the common case: nothing waits and a replica has room (no batcher to fill): straight out
    if (this.queue.length === 0 && !this.spec.batcher) {
      const t = this.pick(item.weight);
      if (t) {
        this.send(t, [item], item.weight);
        return;
      }
    }
    this.queue.push(item);
    const wait = item.deadline - Date.now();
    const timer = after(Math.max(0, wait), () => {
      const i = this.queue.indexOf(item);
      if (i >= 0) {
        this.queue.splice(i, 1);
        item.fail(504, `no replica answered within ${Math.round((item.deadline - item.enqueuedAt) / 1000)} s`);
      }
    }).unref();
    const settle = (): void => timer.clear();
    const run = item.run;
    item.run = async (t, b) => {
      settle();
      await run(t, b);
    };
    if (this.readyCount === 0) this.onDemand();
    this.pump();
  }

  /** marks a request finished (the load tracker counts it out) */
  finish(item: WorkItem): void {
    if (item.done) return;
    item.done = true;
    this.load.leave();
  }

  private pick(weight: number): (Target & { inflight: number; batches: number }) | undefined {
    const batching = this.spec.batcher !== undefined;
    const cc = this.spec.containerConcurrency;
    const fits = (t: { inflight: number; batches: number }): boolean =>
      batching ? t.batches < 2 && (cc <= 0 || t.inflight + Math.min(weight, cc) <= cc || t.inflight === 0) : cc <= 0 || t.inflight < cc;
    if (this.spec.serverKind === 'in-process') return this.inProcess && fits(this.inProcessTarget) ? this.inProcessTarget : undefined;
    let best: Replica | undefined;
    for (const r of this.replicas.values()) {
      if (!r.ready || !fits(r)) continue;
      if (!best || r.inflight < best.inflight) best = r;
    }
    return best;
  }

  /** Sends what can be sent. */
  pump(): void {
    const batcher = this.spec.batcher;
    while (this.queue.length > 0) {
      const head = this.queue[0] as WorkItem;
      const target = this.pick(head.weight);
      if (!target) return;
      if (batcher && head.batchKey !== undefined) {
        // a partial batch may wait for company while a replica is free, up to maxLatency
        let weight = 0;
        for (const it of this.queue) if (it.batchKey === head.batchKey) weight += it.weight;
        const age = Date.now() - head.enqueuedAt;
        if (weight < batcher.maxBatchSize && age < batcher.maxLatencyMs) {
          if (!this.batchTimer) {
            this.batchTimer = after(batcher.maxLatencyMs - age, () => {
              this.batchTimer = undefined;
              this.pump();
            });
          }
          return;
        }
        const cc = this.spec.containerConcurrency;
        const cap = Math.min(batcher.maxBatchSize, cc > 0 ? Math.max(1, cc - target.inflight) : Infinity);
        const batch: WorkItem[] = [];
        let w = 0;
        for (let i = 0; i < this.queue.length && w < cap; ) {
          const it = this.queue[i] as WorkItem;
          if (it.batchKey === head.batchKey && (batch.length === 0 || w + it.weight <= cap)) {
            batch.push(it);
            w += it.weight;
            this.queue.splice(i, 1);
          } else i++;
        }
        this.send(target, batch, w);
      } else {
        this.queue.shift();
        this.send(target, [head], head.weight);
      }
    }
  }

  private send(target: Target & { inflight: number; batches: number }, batch: WorkItem[], weight: number): void {
    const live = batch.length === 1 ? (batch[0]?.done ? [] : batch) : batch.filter((b) => !b.done);
    if (live.length === 0) return;
    target.inflight += weight;
    target.batches++;
    void this.exec(target, live, weight);
  }

  private async exec(target: Target & { inflight: number; batches: number }, live: WorkItem[], weight: number): Promise<void> {
    try {
      await (live[0] as WorkItem).run(target, live);
    } catch (e) {
      for (const b of live) b.fail(e instanceof TimeoutError ? 504 : 502, (e as Error).message);
    } finally {
      target.inflight -= weight;
      target.batches--;
      for (const b of live) this.finish(b);
      this.pump();
    }
  }

  /** Ends every waiting request (the revision went away). */
  close(message: string): void {
    this.closed = true;
    for (const it of this.queue.splice(0)) it.fail(503, message);
    for (const r of this.replicas.values()) r.stop();
    this.replicas.clear();
    this.batchTimer?.clear();
  }
}
