// Knative's Pod autoscaler (KPA), reduced to what one machine needs: each revision's in-flight
// requests (queued at the gateway or being served) are integrated over time; the stable window
// (60 s by default, `autoscaling.knative.dev/window`) decides scaling down and the panic window (a
// tenth of it) scaling up, against `scaleTarget` per replica at 70% utilisation (Knative's
// default); `scaleMetric: rps` counts requests per second instead (target 200 by default). A
// revision with `minReplicas: 0` goes to zero after a whole stable window without requests, and back
// to one as soon as a request arrives, which waits at the gateway meanwhile.

export interface ScalePolicy {
  minReplicas: number;
  /** 0: unlimited */
  maxReplicas: number;
  scaleMetric: 'concurrency' | 'rps' | 'cpu' | 'memory';
  scaleTarget?: number;
  containerConcurrency: number;
  windowSeconds: number;
}

/** Knative's target utilisation */
const utilisation = 0.7;

export function targetPerReplica(p: ScalePolicy): number {
  if (p.scaleMetric === 'rps') return (p.scaleTarget ?? 200) * utilisation;
  // cpu and memory are not measured per replica here: they scale on concurrency with the default target
  const base = p.scaleMetric === 'concurrency' && p.scaleTarget ? p.scaleTarget : p.containerConcurrency > 0 ? p.containerConcurrency : 100;
  return Math.max(base * utilisation, 0.01);
}

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

/**
 * The replicas a revision that takes traffic should have. `current` is what it has now; the answer
 * only goes down on the stable window's evidence, and up on the panic window's.
 */
export function desiredReplicas(p: ScalePolicy, load: LoadTracker, current: number, nowMs: number): number {
  const windowMs = Math.max(1, p.windowSeconds) * 1000;
  const target = targetPerReplica(p);
  const metric = (w: { concurrency: number; rps: number }): number => (p.scaleMetric === 'rps' ? w.rps : w.concurrency);
  const stable = Math.ceil(metric(load.window(windowMs)) / target - 1e-9);
  const panic = Math.ceil(metric(load.window(Math.max(1000, windowMs / 10))) / target - 1e-9);
  let want = Math.max(stable, Math.min(panic, Math.max(current, 1) * 2), load.current > 0 ? 1 : 0);
  // scale down only as far as the stable window allows; never below one while requests wait or
  // within a window of the last one
  if (want < current) want = Math.max(want, stable);
  const idle = load.current === 0 && nowMs - load.lastArrival >= windowMs;
  if (want === 0 && !idle) want = 1;
  const max = p.maxReplicas > 0 ? p.maxReplicas : Infinity;
  return Math.min(Math.max(want, p.minReplicas), max);
}
