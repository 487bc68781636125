// The reconcile loop: watches turn changes into keys, workers take keys off a queue and call
// reconcile(key), which reads fresh state and takes the next step. A thrown error backs off; a
// `requeueAfter` checks again later; a TerminalError is recorded and not retried.
import { performance } from 'node:perf_hooks';
import type { KindDef } from '../api/registry.js';
import type { ObjectKey, StoredObject } from '../api/meta.js';
import { keyString, parseKeyString } from '../api/meta.js';
import type { Client } from '../store/client.js';
import type { WatchEvent } from '../store/store.js';
import { InformerCache } from './informer.js';
import type { ControlMetrics, ReconcileObserver, ReconcileResult } from './metrics.js';
import { WorkQueue } from './queue.js';

export interface Result {
  /** milliseconds until this key should be looked at again */
  requeueAfter?: number;
}

/** A failure that retrying cannot fix. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export interface WatchSpec {
  kind: KindDef;
  /** keys of the reconciled kind that care about this object */
  map: (obj: StoredObject) => ObjectKey[];
  /** filter before mapping; sees the event type and the object */
  predicate?: (e: WatchEvent) => boolean;
}

export interface ControllerOptions {
  name: string;
  for: KindDef;
  /** kinds whose controlling owner is of the reconciled kind */
  owns?: KindDef[];
  watches?: WatchSpec[];
  predicate?: (e: WatchEvent) => boolean;
  reconcile: (key: ObjectKey) => Promise<Result | void>;
  workers?: number;
  log?: (msg: string) => void;
  /** also log retries after write conflicts and vanished objects, which are routine */
  verbose?: boolean;
}

export class Controller {
  readonly queue = new WorkQueue();
  private readonly stops: { stop(): void }[] = [];
  private readonly running: Promise<void>[] = [];
  private active = 0;
  private readonly observer?: ReconcileObserver;

  /** the informers this controller's watches come from: the Manager's, shared with its other controllers */
  readonly cache: InformerCache;

  constructor(client: Client, readonly opts: ControllerOptions, cache?: InformerCache, metrics?: ControlMetrics) {
    this.cache = cache ?? new InformerCache(client);
    if (metrics) this.observer = metrics.addController(this, this.queue);
  }

  get name(): string {
    return this.opts.name;
  }

  /** how many keys it works on at once */
  get workers(): number {
    return this.opts.workers ?? 1;
  }

  get activeWorkers(): number {
    return this.active;
  }

  enqueue(key: ObjectKey): void {
    this.queue.add(keyString(key));
  }

  start(): void {
    const { opts } = this;
    // A new handler is first given every cached object: that is the full resync at start-up.
    this.stops.push(this.cache.informer(opts.for).addHandler((e) => {
      if (!opts.predicate || opts.predicate(e)) this.enqueue({ namespace: e.object.metadata.namespace, name: e.object.metadata.name });
    }));
    for (const kind of opts.owns ?? []) {
      this.stops.push(this.cache.informer(kind).addHandler((e) => {
        for (const ref of e.object.metadata.ownerReferences ?? []) {
          if (ref.controller && ref.kind === opts.for.kind) {
            this.enqueue({ namespace: opts.for.namespaced ? e.object.metadata.namespace : undefined, name: ref.name });
          }
        }
      }));
    }
    for (const w of opts.watches ?? []) {
      this.stops.push(this.cache.informer(w.kind).addHandler((e) => {
        if (w.predicate && !w.predicate(e)) return;
        for (const key of w.map(e.object)) this.enqueue(key);
      }));
    }
    for (let i = 0; i < this.workers; i++) this.running.push(this.work());
  }

  private async work(): Promise<void> {
    const o = this.observer;
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.active++;
      const started = o ? performance.now() : 0;
      let outcome: ReconcileResult = 'success';
      try {
        const result = await this.opts.reconcile(parseKeyString(key));
        this.queue.forget(key);
        if (result?.requeueAfter !== undefined) {
          this.queue.addAfter(key, Math.max(1, result.requeueAfter));
          outcome = result.requeueAfter > 0 ? 'requeue_after' : 'requeue';
        }
      } catch (e) {
        outcome = 'error';
        if (e instanceof TerminalError) {
          o?.terminalErrors.inc();
          this.opts.log?.(`${this.opts.name}: ${key}: ${e.message} (not retried)`);
          this.queue.forget(key);
        } else {
          const delay = this.queue.addRateLimited(key);
          const msg = (e as Error)?.message ?? String(e);
          if (this.opts.verbose || !/has been modified|not found/.test(msg)) this.opts.log?.(`${this.opts.name}: ${key}: ${msg} (retry in ${delay} ms)`);
        }
      } finally {
        if (o) {
          // as controller-runtime counts them: a terminal error is an error too
          if (outcome === 'error') o.errors.inc();
          o.total[outcome].inc();
          o.time.observe((performance.now() - started) / 1000);
        }
        this.active--;
        this.queue.done(key);
      }
    }
  }

  /** no key queued or in flight (delayed requeues may still be pending) */
  idle(): boolean {
    return this.queue.idle() && this.active === 0;
  }

  async stop(): Promise<void> {
    for (const s of this.stops) s.stop();
    this.queue.shutdown();
    await Promise.all(this.running);
  }
}

/** Work besides the controllers that writes on its own (a clock, a sweep): it runs only while the
 *  controllers do, so on a cluster only on the replica holding the leader Lease. */
export interface Runnable {
  start(): void;
  stop(): Promise<void> | void;
}

/** Starts and stops a set of controllers (and the runnables beside them) together. */
export class Manager {
  private readonly controllers: Controller[] = [];
  private readonly runnables: Runnable[] = [];
  private started = false;
  /** one list+watch per kind for all of this Manager's controllers; reconcilers read through it */
  readonly cache: InformerCache;

  /** `metrics`: where its controllers report reconciles and their queues (controller-runtime's metrics) */
  constructor(private readonly client: Client, private readonly log: (msg: string) => void = () => undefined, private readonly verbose = false, private readonly metrics?: ControlMetrics) {
    this.cache = new InformerCache(client);
  }

  add(opts: ControllerOptions): Controller {
    const c = new Controller(this.client, { log: this.log, verbose: this.verbose, ...opts }, this.cache, this.metrics);
    this.controllers.push(c);
    return c;
  }

  /** started and stopped with the controllers */
  addRunnable(r: Runnable): void {
    this.runnables.push(r);
    if (this.started) r.start();
  }

  /** whether the controllers were started (a standby replica's never are) */
  get running(): boolean {
    return this.started;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const c of this.controllers) c.start();
    for (const r of this.runnables) r.start();
  }

  /** Stops the controllers and runnables; the informers keep serving reads until stop(). */
  async stopControllers(): Promise<void> {
    await Promise.all([...this.controllers.map((c) => c.stop()), ...this.runnables.map(async (r) => r.stop())]);
  }

  async stop(): Promise<void> {
    await this.stopControllers();
    this.cache.stop();
  }
}
