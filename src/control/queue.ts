// A keyed work queue with client-go's guarantees: a key waiting is queued once, a key is never worked
// on twice at once (added while in flight, it runs once more after), delayed adds keep the earliest
// due time, and failures back off per key. Instrumented (ControlMetrics), it keeps client-go's queue
// metrics: adds, how long keys wait and are worked on, retries; depth and work in progress are read
// when collected.

import { performance } from 'node:perf_hooks';
import type { QueueObserver } from './metrics.js';
import { after, type Timer } from '../util/timers.js';

export interface RateLimit {
  baseMs: number;
  maxMs: number;
}

export class WorkQueue {
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  private readonly inFlight = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { due: number; timer: Timer }>();
  private readonly failures = new Map<string, number>();
  private waiters: (() => void)[] = [];
  private closed = false;
  private observer?: QueueObserver;
  /** with an observer: when each waiting key was added, and when each key in flight was taken (ms) */
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();

  constructor(private readonly limit: RateLimit = { baseMs: 5, maxMs: 1000_000 }) {}

  add(key: string): void {
    if (this.closed) return;
    const t = this.timers.get(key);
    if (t) {
      t.timer.clear();
      this.timers.delete(key);
    }
    if (this.inFlight.has(key)) {
      if (this.dirty.has(key)) return;
      this.dirty.add(key);
      this.counted(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.counted(key);
    this.enqueue(key);
  }

  private enqueue(key: string): void {
    this.queued.add(key);
    this.ready.push(key);
    const w = this.waiters.shift();
    w?.();
  }

  /** client-go counts an add when the key becomes waiting (again), not when it already was */
  private counted(key: string): void {
    const o = this.observer;
    if (!o) return;
    o.adds.inc();
    if (!this.addedAt.has(key)) this.addedAt.set(key, performance.now());
  }

  addAfter(key: string, delayMs: number): void {
    if (this.closed) return;
    if (delayMs <= 0) return this.add(key);
    this.observer?.retries.inc();
    const due = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.due <= due) return;
    if (existing) existing.timer.clear();
    // delays of any length: a 40-day Job deadline must not fire after 1 ms
    const timer = after(delayMs, () => {
      this.timers.delete(key);
      this.add(key);
    }).unref();
    this.timers.set(key, { due, timer });
  }

  /** requeue after a failure, with per-key exponential backoff */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.min(this.limit.baseMs * 2 ** n, this.limit.maxMs);
    this.addAfter(key, delay);
    return delay;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  /** the next key, waiting for one; undefined once the queue is shut down */
  async get(): Promise<string | undefined> {
    while (!this.closed) {
      const key = this.ready.shift();
      if (key !== undefined) {
        this.queued.delete(key);
        this.inFlight.add(key);
        if (this.observer) {
          const now = performance.now();
          const added = this.addedAt.get(key);
          if (added !== undefined) {
            this.observer.queueDuration.observe((now - added) / 1000);
            this.addedAt.delete(key);
          }
          this.startedAt.set(key, now);
        }
        return key;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return undefined;
  }

  done(key: string): void {
    if (this.observer) {
      const started = this.startedAt.get(key);
      if (started !== undefined) {
        this.observer.workDuration.observe((performance.now() - started) / 1000);
        this.startedAt.delete(key);
      }
    }
    this.inFlight.delete(key);
    // added while in flight: counted then, queued now
    if (this.dirty.delete(key) && !this.closed) this.enqueue(key);
  }

  get length(): number {
    return this.ready.length;
  }

  /** keys added and not yet taken, those waiting for their own run to finish included (client-go's depth) */
  get depth(): number {
    return this.ready.length + this.dirty.size;
  }

  /** seconds spent so far on the keys in flight, in all and by the longest (with an observer) */
  inProgress(): { total: number; longest: number } {
    const now = performance.now();
    let total = 0;
    let longest = 0;
    for (const t of this.startedAt.values()) {
      const age = (now - t) / 1000;
      total += age;
      if (age > longest) longest = age;
    }
    return { total, longest };
  }

  /** reports into these from now on (ControlMetrics.addQueue) */
  instrument(o: QueueObserver): void {
    this.observer = o;
  }

  /** nothing queued, delayed or in flight */
  idle(): boolean {
    return this.ready.length === 0 && this.inFlight.size === 0;
  }

  shutdown(): void {
    this.closed = true;
    for (const t of this.timers.values()) t.timer.clear();
    this.timers.clear();
    for (const w of this.waiters) w();
    this.waiters = [];
  }
}
