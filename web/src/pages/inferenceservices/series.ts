// The charts' data from the gateway's traffic buckets: a fixed window ending now, every bucket in it
// present (quiet ones as zero requests and no latency), rates per second, latencies in milliseconds.
import type { TrafficBucket, TrafficHistoryJson } from '../../api/types';
import { shortRevision } from './model';

/** Puts a new or updated bucket into the history, oldest first, keeping at most `capacity`. */
export function mergeBucket(h: TrafficHistoryJson, b: TrafficBucket): TrafficHistoryJson {
  const buckets = h.buckets.filter((x) => x.t !== b.t);
  buckets.push(b);
  buckets.sort((x, y) => x.t - y.t);
  return { ...h, buckets: buckets.slice(Math.max(0, buckets.length - h.capacity)) };
}

export interface ChartSeries {
  label: string;
  /** a CSS variable or colour */
  color: string;
  values: (number | null)[];
  dash?: boolean;
}

export interface ChartData {
  /** bucket starts, seconds since the epoch (uPlot's time axis) */
  x: number[];
  series: ChartSeries[];
}

export interface TrafficCharts {
  rate: ChartData;
  latency: ChartData;
  totals: { requests: number; errors: number; rejected: number };
  revisions: string[];
}

const REVISION_COLORS = ['--info', '--ok', '--off', '--run'];

/** The window of `windowSeconds` ending at the bucket holding `now` (ms). */
export function trafficCharts(h: TrafficHistoryJson, now: number, windowSeconds = 900): TrafficCharts {
  const step = h.bucketSeconds * 1000;
  const n = Math.max(1, Math.round(windowSeconds / h.bucketSeconds));
  const last = Math.floor(now / step) * step;
  const first = last - (n - 1) * step;
  const byT = new Map(h.buckets.map((b) => [b.t, b]));
  const revisions = [...new Set(h.buckets.filter((b) => b.t >= first).flatMap((b) => Object.keys(b.revisions)))].sort();
  const x: number[] = [];
  const total: number[] = [];
  const errors: number[] = [];
  const rejected: number[] = [];
  const perRev = revisions.map(() => [] as number[]);
  const p50: (number | null)[] = [];
  const p90: (number | null)[] = [];
  const p99: (number | null)[] = [];
  const totals = { requests: 0, errors: 0, rejected: 0 };
  for (let t = first; t <= last; t += step) {
    const b = byT.get(t);
    // the bucket being filled covers only the time so far: its rate would otherwise look like a drop
    const secs = t === last ? Math.max(1, Math.min(h.bucketSeconds, (now - t) / 1000)) : h.bucketSeconds;
    x.push(t / 1000);
    total.push((b?.requests ?? 0) / secs);
    errors.push((b?.errors ?? 0) / secs);
    rejected.push((b?.rejected ?? 0) / secs);
    revisions.forEach((r, i) => perRev[i]?.push((b?.revisions[r]?.requests ?? 0) / secs));
    p50.push(b?.p50 !== undefined ? b.p50 * 1000 : null);
    p90.push(b?.p90 !== undefined ? b.p90 * 1000 : null);
    p99.push(b?.p99 !== undefined ? b.p99 * 1000 : null);
    if (b) {
      totals.requests += b.requests;
      totals.errors += b.errors;
      totals.rejected += b.rejected;
    }
  }
  const rate: ChartSeries[] = [{ label: 'requests/s', color: '--accent', values: total }];
  // one revision's rate would repeat the total
  if (revisions.length > 1) revisions.forEach((r, i) => rate.push({ label: shortRevision(r), color: REVISION_COLORS[i % REVISION_COLORS.length] as string, values: perRev[i] as number[], dash: true }));
  rate.push({ label: '5xx/s', color: '--bad', values: errors }, { label: '4xx/s', color: '--wait', values: rejected, dash: true });
  return {
    rate: { x, series: rate },
    latency: {
      x,
      series: [
        { label: 'p50 ms', color: '--ok', values: p50 },
        { label: 'p90 ms', color: '--wait', values: p90 },
        { label: 'p99 ms', color: '--bad', values: p99 },
      ],
    },
    totals,
    revisions,
  };
}
