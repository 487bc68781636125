// The text `GET /metrics` serves: the gateway's counters and histograms, bound once per label set,
// rendered by prom-client's registry in Prometheus' text format, next to prom-client's process
// metrics. test/metrics.test.ts reads the endpoint of a running server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from './metrics.js';

describe('MetricsRegistry', () => {
  it('renders counters and histograms in the text format, labels in their declared order', async () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const c = m.counter('skiff_serving_requests_total', 'Inference requests by response code', ['namespace', 'code']);
    const h = m.histogram('skiff_serving_batch_size', 'Instances per request sent to a replica', ['namespace'], [1, 2, 4]);
    const ok = c.child(['default', '200']);
    ok.inc();
    ok.inc(2);
    c.inc(['default', '503']);
    const b = h.child(['default']);
    for (const v of [1, 3, 3, 8]) b.observe(v);
    assert.equal(await m.render(), [
      '# HELP skiff_serving_requests_total Inference requests by response code',
      '# TYPE skiff_serving_requests_total counter',
      'skiff_serving_requests_total{namespace="default",code="200"} 3',
      'skiff_serving_requests_total{namespace="default",code="503"} 1',
      '',
      '# HELP skiff_serving_batch_size Instances per request sent to a replica',
      '# TYPE skiff_serving_batch_size histogram',
      'skiff_serving_batch_size_bucket{namespace="default",le="1"} 1',
      'skiff_serving_batch_size_bucket{namespace="default",le="2"} 1',
      'skiff_serving_batch_size_bucket{namespace="default",le="4"} 3',
      'skiff_serving_batch_size_bucket{namespace="default",le="+Inf"} 4',
      'skiff_serving_batch_size_sum{namespace="default"} 15',
      'skiff_serving_batch_size_count{namespace="default"} 4',
      '',
    ].join('\n'));
    assert.equal(c.value(['default', '200']), 3);
    assert.equal(h.count(['default']), 4);
    assert.equal(m.contentType, 'text/plain; version=0.0.4; charset=utf-8');
  });

  it('escapes label values and keeps fractional sums', async () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const h = m.histogram('skiff_serving_request_duration_seconds', 'Inference request latency', ['inferenceservice']);
    h.observe(['a"b\\c\nd'], 0.0007);
    h.observe(['a"b\\c\nd'], 0.25);
    const text = await m.render();
    assert.match(text, /^skiff_serving_request_duration_seconds_bucket\{inferenceservice="a\\"b\\\\c\\nd",le="0.001"\} 1$/m);
    assert.match(text, /^skiff_serving_request_duration_seconds_bucket\{inferenceservice="a\\"b\\\\c\\nd",le="0.25"\} 2$/m);
    assert.match(text, /^skiff_serving_request_duration_seconds_sum\{inferenceservice="a\\"b\\\\c\\nd"\} 0.2507$/m);
  });

  it('refuses label values that do not match the label names, naming the metric', () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const c = m.counter('skiff_x_total', 'x', ['namespace', 'code']);
    assert.throws(() => c.child(['default']), /metric skiff_x_total: 1 label values for labels namespace, code/);
  });

  it('adds prom-client\'s process metrics', async () => {
    const text = await new MetricsRegistry().render();
    const rss = Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]);
    assert.ok(rss > 0, text.slice(0, 2000));
    assert.match(text, /^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
  });
});
