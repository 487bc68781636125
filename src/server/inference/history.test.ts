import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TrafficHistory, quantile } from './history.js';
import type { TrafficBucket } from './history.js';

describe('traffic history', () => {
  it('counts requests, 4xx and 5xx per bucket and per revision', () => {
    let now = 1_000_000;
    const h = new TrafficHistory({ bucketSeconds: 5, capacity: 10, now: () => now });
    h.record('ns', 'a', 'a-predictor-00001', 200, 0.01);
    h.record('ns', 'a', 'a-predictor-00002', 500, 0.02);
    h.record('ns', 'a', undefined, 404, 0.001);
    now += 5000;
    h.record('ns', 'a', 'a-predictor-00001', 200, 0.01);
    h.record('ns', 'other', 'x', 200, 0.01);
    const s = h.snapshot('ns', 'a');
    assert.equal(s.bucketSeconds, 5);
    assert.deepEqual(s.buckets.map((b) => [b.t, b.requests, b.errors, b.rejected]), [[1_000_000, 3, 1, 1], [1_005_000, 1, 0, 0]]);
    const first = s.buckets[0] as TrafficBucket;
    assert.deepEqual(Object.keys(first.revisions).sort(), ['a-predictor-00001', 'a-predictor-00002']);
    assert.equal(first.revisions['a-predictor-00002']?.errors, 1);
    assert.equal(first.revisions['a-predictor-00001']?.requests, 1);
    assert.equal(h.snapshot('ns', 'none').buckets.length, 0);
    // deleted, then made again under the same name: it starts empty
    h.forget('ns', 'a');
    assert.equal(h.snapshot('ns', 'a').buckets.length, 0);
    assert.equal(h.snapshot('ns', 'other').buckets.length, 1);
  });

  it('reads percentiles within the bounds\' 20% resolution', () => {
    const h = new TrafficHistory({ now: () => 0 });
    // 1..100 ms: p50 ≈ 50 ms, p90 ≈ 90 ms, p99 ≈ 99 ms
    for (let i = 1; i <= 100; i++) h.record('ns', 'a', 'r', 200, i / 1000);
    const b = h.snapshot('ns', 'a').buckets[0] as TrafficBucket;
    for (const [got, want] of [[b.p50, 0.05], [b.p90, 0.09], [b.p99, 0.099]] as const) {
      assert.ok(got !== undefined && Math.abs(got - want) / want < 0.2, `${got} vs ${want}`);
    }
    assert.ok((b.p50 as number) <= (b.p90 as number) && (b.p90 as number) <= (b.p99 as number));
    assert.equal(quantile([0, 0, 0], 0.5), undefined);
  });

  it('keeps only the last `capacity` buckets, reusing ring slots', () => {
    let now = 0;
    const h = new TrafficHistory({ bucketSeconds: 1, capacity: 3, now: () => now });
    for (let i = 0; i < 5; i++) {
      now = i * 1000;
      h.record('ns', 'a', 'r', 200, 0.01);
      h.record('ns', 'a', 'r', 200, 0.01);
    }
    assert.deepEqual(h.snapshot('ns', 'a').buckets.map((b) => [b.t, b.requests]), [[2000, 2], [3000, 2], [4000, 2]]);
    // time passes with no requests: old buckets age out of the snapshot
    now = 6000;
    assert.deepEqual(h.snapshot('ns', 'a').buckets.map((b) => b.t), [4000]);
  });

  it('tells subscribers about changed buckets once per flush, and stops after unsubscribe', async () => {
    let now = 0;
    const h = new TrafficHistory({ bucketSeconds: 1, capacity: 10, flushMs: 20, now: () => now });
    const got: TrafficBucket[] = [];
    const stop = h.subscribe('ns', 'a', (b) => got.push(b));
    h.record('ns', 'a', 'r', 200, 0.01);
    h.record('ns', 'a', 'r', 200, 0.01);
    now = 1000;
    h.record('ns', 'a', 'r', 503, 0.01);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(got.map((b) => [b.t, b.requests, b.errors]), [[0, 2, 0], [1000, 1, 1]]);
    stop();
    h.record('ns', 'a', 'r', 200, 0.01);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(got.length, 2);
  });

  it('refuses a zero bucket width', () => {
    assert.throws(() => new TrafficHistory({ bucketSeconds: 0 }), /positive/);
  });
});
