// A keyed work queue with client-go's guarantees: a key waiting is queued once, a key is never worked
// on twice at once (added while in flight, it runs once more after), delayed adds keep the earliest
// due time, and failures back off per key.

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

  constructor(private readonly limit: RateLimit = { baseMs: 5, maxMs: 1000_000 }) {}

  add(key: string): void {
    if (this.closed) return;
    const t = this.timers.get(key);
    if (t) {
      t.timer.clear();
      this.timers.delete(key);
    }
    if (this.inFlight.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
    const w = this.waiters.shift();
    w?.();
  }

  addAfter(key: string, delayMs: number): void {
    if (this.closed) return;
    if (delayMs <= 0) return this.add(key);
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
        return key;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return undefined;
  }

  done(key: string): void {
    this.inFlight.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  get length(): number {
    return this.ready.length;
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
