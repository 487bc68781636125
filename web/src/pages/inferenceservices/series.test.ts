import { describe, expect, it } from 'vitest';
import type { TrafficHistoryJson } from '../../api/types';
import { mergeBucket, trafficCharts } from './series';

const h = (buckets: TrafficHistoryJson['buckets'], capacity = 10): TrafficHistoryJson => ({ namespace: 'ns', name: 'a', bucketSeconds: 5, capacity, buckets });
const cell = { requests: 0, errors: 0, rejected: 0 };

describe('traffic chart series', () => {
  it('fills the window with quiet buckets and turns counts into rates and latencies into ms', () => {
    const hist = h([
      { t: 10_000, requests: 10, errors: 5, rejected: 0, p50: 0.01, p90: 0.02, p99: 0.05, revisions: { 'a-predictor-00001': { ...cell, requests: 10 } } },
      { t: 0, requests: 99, errors: 0, rejected: 0, revisions: {} },
    ]);
    const c = trafficCharts(hist, 15_000, 15);
    expect(c.rate.x).toEqual([5, 10, 15]);
    expect(c.rate.series.map((s) => s.label)).toEqual(['requests/s', '5xx/s', '4xx/s']);
    expect(c.rate.series[0]?.values).toEqual([0, 2, 0]);
    expect(c.rate.series[1]?.values).toEqual([0, 1, 0]);
    expect(c.latency.series.map((s) => s.values)).toEqual([[null, 10, null], [null, 20, null], [null, 50, null]]);
    // the bucket at t=0 is outside the window
    expect(c.totals).toEqual({ requests: 10, errors: 5, rejected: 0 });
  });

  it('adds a line per revision when more than one took traffic', () => {
    const c = trafficCharts(h([{ t: 0, requests: 10, errors: 0, rejected: 1, revisions: { 'a-predictor-00002': { ...cell, requests: 2 }, 'a-predictor-00001': { ...cell, requests: 7 } } }]), 5000, 10);
    expect(c.revisions).toEqual(['a-predictor-00001', 'a-predictor-00002']);
    expect(c.rate.series.map((s) => [s.label, s.values[0]])).toEqual([['requests/s', 2], ['r1', 1.4], ['r2', 0.4], ['5xx/s', 0], ['4xx/s', 0.2]]);
  });

  it('rates the bucket being filled over the time it has covered so far', () => {
    const hist = h([{ t: 5000, ...cell, requests: 4, revisions: {} }, { t: 10000, ...cell, requests: 4, revisions: {} }]);
    // 2 s into the current bucket: 4 requests are 2/s; the full bucket before is 4 in 5 s
    expect(trafficCharts(hist, 12_000, 10).rate.series[0]?.values).toEqual([0.8, 2]);
    // under a second in: counted as one second, not as a spike
    expect(trafficCharts(hist, 10_100, 10).rate.series[0]?.values).toEqual([0.8, 4]);
  });

  it('merges a streamed bucket by its start time and keeps the capacity', () => {
    let x = h([{ t: 0, ...cell, revisions: {} }], 2);
    x = mergeBucket(x, { t: 5000, ...cell, requests: 1, revisions: {} });
    x = mergeBucket(x, { t: 5000, ...cell, requests: 3, revisions: {} });
    expect(x.buckets.map((b) => [b.t, b.requests])).toEqual([[0, 0], [5000, 3]]);
    x = mergeBucket(x, { t: 10000, ...cell, requests: 1, revisions: {} });
    expect(x.buckets.map((b) => b.t)).toEqual([5000, 10000]);
  });
});
