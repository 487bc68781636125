// `GET /metrics` of a running server: Prometheus' text format, the inference gateway's metrics
// declared under their names (their series appear with the first request, see serving.test.ts),
// and the process's own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer } from './harness.js';

describe('GET /metrics', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
  });

  it('serves the text format with the gateway metrics and the process metrics', async () => {
    const res = await fetch(`${s.url}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    for (const [name, type] of [
      ['skiff_serving_requests_total', 'counter'],
      ['skiff_serving_request_duration_seconds', 'histogram'],
      ['skiff_serving_queue_duration_seconds', 'histogram'],
      ['skiff_serving_batch_size', 'histogram'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
    ]) assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), text.slice(0, 3000));
    assert.ok(Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]) > 0);
    // a request to no InferenceService is not counted (no series for it)
    await fetch(`${s.url}/serving/default/nothing/v1/models/nothing:predict`, { method: 'POST', body: '{}' });
    assert.doesNotMatch(await (await fetch(`${s.url}/metrics`)).text(), /inferenceservice="nothing"/);
  });
});
