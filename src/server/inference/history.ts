// Recent traffic per InferenceService, for the dashboard's charts: a ring of fixed-width time buckets
// (5 s for 30 min by default), each with its request count, 4xx and 5xx counts and a latency
// histogram on log-spaced bounds from which percentiles are read, for the service as a whole and per
// revision (so a canary can be compared with the revision it replaces). Prometheus' counters answer
// "how many since the start"; this answers "what happened in the last minutes" without a time-series
// database. Subscribers get the bucket being filled at most once a second while requests arrive.

import type { TrafficBucket, TrafficCell, TrafficHistoryJson } from '../../api/serving-traffic.js';

export type { TrafficBucket, TrafficCell, TrafficHistoryJson };

export interface TrafficHistoryOptions {
  bucketSeconds?: number;
  capacity?: number;
  /** how long subscribers wait for more requests before the current bucket is sent (default 1000 ms) */
  flushMs?: number;
  now?: () => number;
}

// 1.2^k from 50 µs: 80 bounds reach past 100 s with under 10% relative error on a percentile
const BOUNDS: number[] = Array.from({ length: 80 }, (_, k) => 5e-5 * 1.2 ** k);

interface Cell {
  requests: number;
  errors: number;
  rejected: number;
  /** counts per BOUNDS index; the last slot holds what exceeds every bound */
  hist: Uint32Array;
}

interface Slot {
  t: number;
  all: Cell;
  revs: Map<string, Cell>;
}

interface Series {
  slots: (Slot | undefined)[];
  subscribers: Set<(b: TrafficBucket) => void>;
  /** buckets changed since subscribers were last told */
  dirty: Set<Slot>;
  timer?: NodeJS.Timeout;
}

function newCell(): Cell {
  return { requests: 0, errors: 0, rejected: 0, hist: new Uint32Array(BOUNDS.length + 1) };
}

function boundIndex(seconds: number): number {
  if (!(seconds > 0)) return 0;
  // binary search for the first bound >= seconds
  let lo = 0;
  let hi = BOUNDS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((BOUNDS[mid] as number) >= seconds) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The q-quantile (0..1) of a histogram on BOUNDS, interpolated geometrically inside its bucket. */
export function quantile(hist: ArrayLike<number>, q: number): number | undefined {
  let total = 0;
  for (let i = 0; i < hist.length; i++) total += hist[i] as number;
  if (total === 0) return undefined;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const c = hist[i] as number;
    if (c === 0) continue;
    if (seen + c >= rank) {
      const upper = BOUNDS[Math.min(i, BOUNDS.length - 1)] as number;
      if (i === 0 || i >= BOUNDS.length) return upper;
      const lower = BOUNDS[i - 1] as number;
      const frac = c ? Math.max(0, Math.min(1, (rank - seen) / c)) : 1;
      return lower * (upper / lower) ** frac;
    }
    seen += c;
  }
  return BOUNDS[BOUNDS.length - 1];
}

function cellJson(c: Cell): TrafficCell {
  const out: TrafficCell = { requests: c.requests, errors: c.errors, rejected: c.rejected };
  const p50 = quantile(c.hist, 0.5);
  if (p50 !== undefined) {
    out.p50 = p50;
    out.p90 = quantile(c.hist, 0.9) as number;
    out.p99 = quantile(c.hist, 0.99) as number;
  }
  return out;
}

function slotJson(s: Slot): TrafficBucket {
  const revisions: Record<string, TrafficCell> = {};
  for (const [k, c] of s.revs) revisions[k] = cellJson(c);
  return { t: s.t, ...cellJson(s.all), revisions };
}

export class TrafficHistory {
  readonly bucketMs: number;
  readonly capacity: number;
  private readonly flushMs: number;
  private readonly now: () => number;
  private readonly series = new Map<string, Series>();

  constructor(opts: TrafficHistoryOptions = {}) {
    this.bucketMs = Math.round((opts.bucketSeconds ?? 5) * 1000);
    this.capacity = opts.capacity ?? 360;
    this.flushMs = opts.flushMs ?? 1000;
    this.now = opts.now ?? Date.now;
    if (!(this.bucketMs > 0) || !(this.capacity > 0)) throw new Error('TrafficHistory: bucketSeconds and capacity must be positive');
  }

  private get(namespace: string, name: string, create: true): Series;
  private get(namespace: string, name: string, create: false): Series | undefined;
  private get(namespace: string, name: string, create: boolean): Series | undefined {
    const key = `${namespace}/${name}`;
    let s = this.series.get(key);
    if (!s && create) {
      s = { slots: new Array<Slot | undefined>(this.capacity), subscribers: new Set(), dirty: new Set() };
      this.series.set(key, s);
    }
    return s;
  }

  /** One answered request: its status and its latency in seconds; `revision` when one was picked. */
  record(namespace: string, name: string, revision: string | undefined, status: number, seconds: number): void {
    const s = this.get(namespace, name, true);
    const start = Math.floor(this.now() / this.bucketMs) * this.bucketMs;
    const i = Math.floor(start / this.bucketMs) % this.capacity;
    let slot = s.slots[i];
    if (!slot || slot.t !== start) {
      slot = { t: start, all: newCell(), revs: new Map() };
      s.slots[i] = slot;
    }
    const b = boundIndex(seconds);
    const add = (c: Cell): void => {
      c.requests++;
      if (status >= 500) c.errors++;
      else if (status >= 400) c.rejected++;
      c.hist[b] = (c.hist[b] as number) + 1;
    };
    add(slot.all);
    if (revision) {
      let c = slot.revs.get(revision);
      if (!c) slot.revs.set(revision, (c = newCell()));
      add(c);
    }
    if (!s.subscribers.size) return;
    s.dirty.add(slot);
    if (!s.timer) {
      const t = setTimeout(() => {
        s.timer = undefined;
        const changed = [...s.dirty].sort((a, b) => a.t - b.t).map(slotJson);
        s.dirty.clear();
        for (const json of changed) for (const fn of s.subscribers) fn(json);
      }, this.flushMs);
      t.unref();
      s.timer = t;
    }
  }

  /** The kept buckets that saw requests, oldest first. */
  snapshot(namespace: string, name: string): TrafficHistoryJson {
    const s = this.get(namespace, name, false);
    const oldest = Math.floor(this.now() / this.bucketMs) * this.bucketMs - (this.capacity - 1) * this.bucketMs;
    const buckets = (s?.slots ?? []).filter((x): x is Slot => !!x && x.t >= oldest).sort((a, b) => a.t - b.t).map(slotJson);
    return { namespace, name, bucketSeconds: this.bucketMs / 1000, capacity: this.capacity, buckets };
  }

  /** Calls `fn` with the bucket being filled, at most once per flush interval while requests arrive. */
  subscribe(namespace: string, name: string, fn: (b: TrafficBucket) => void): () => void {
    const s = this.get(namespace, name, true);
    s.subscribers.add(fn);
    return () => {
      s.subscribers.delete(fn);
      if (!s.subscribers.size && s.timer) {
        clearTimeout(s.timer);
        s.timer = undefined;
        s.dirty.clear();
      }
    };
  }

  /** Forgets a deleted InferenceService (a new one of the same name starts empty); open streams stay. */
  forget(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const s = this.series.get(key);
    if (!s) return;
    s.slots.fill(undefined);
    s.dirty.clear();
    if (s.timer) clearTimeout(s.timer);
    s.timer = undefined;
    if (!s.subscribers.size) this.series.delete(key);
  }
}
