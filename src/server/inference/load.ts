// A revision's load as the gateway sees it (what Knative's queue-proxy reports to its autoscaler):
// requests in flight, integrated over time in one-second buckets, and arrivals per second. The
// autoscaler (src/workloads/serving/autoscaler.ts) reads it through the data plane's interface.

const bucketMs = 1000;

/** One revision's load, sampled in one-second buckets. */
export class LoadTracker {
  private inflight = 0;
  private lastChange: number;
  /** concurrency-milliseconds and arrivals per bucket, newest last */
  private readonly buckets: { start: number; area: number; arrivals: number }[] = [];
  lastArrival = 0;

  constructor(private readonly now: () => number = Date.now) {
    this.lastChange = now();
  }

  private bucket(t: number): { start: number; area: number; arrivals: number } {
    const start = t - (t % bucketMs);
    let b = this.buckets[this.buckets.length - 1];
    if (!b || b.start !== start) {
      b = { start, area: 0, arrivals: 0 };
      this.buckets.push(b);
      if (this.buckets.length > 3700) this.buckets.splice(0, this.buckets.length - 3600);
    }
    return b;
  }

  /** accounts the time since the last change at the old concurrency, across bucket borders */
  private advance(t: number): void {
    let from = this.lastChange;
    while (from < t) {
      const end = Math.min(t, from - (from % bucketMs) + bucketMs);
      this.bucket(from).area += this.inflight * (end - from);
      from = end;
    }
    this.lastChange = t;
  }

  arrive(): void {
    const t = this.now();
    this.advance(t);
    this.inflight++;
    this.bucket(t).arrivals++;
    this.lastArrival = t;
  }

  leave(): void {
    this.advance(this.now());
    this.inflight = Math.max(0, this.inflight - 1);
  }

  get current(): number {
    return this.inflight;
  }

  /** average concurrency and requests per second over the last `ms` */
  window(ms: number): { concurrency: number; rps: number } {
    const t = this.now();
    this.advance(t);
    const from = t - ms;
    let area = 0;
    let arrivals = 0;
    for (let i = this.buckets.length - 1; i >= 0; i--) {
      const b = this.buckets[i] as { start: number; area: number; arrivals: number };
      if (b.start + bucketMs <= from) break;
      area += b.area;
      arrivals += b.arrivals;
    }
    const span = Math.max(ms, 1);
    return { concurrency: area / span, rps: (arrivals * 1000) / span };
  }
}

