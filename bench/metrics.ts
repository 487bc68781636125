// What the gateway's metrics cost per inference request: one latency observation and one counter
// increment, into a series bound once per revision (src/server/metrics.ts, what the gateway uses)
// and into prom-client's own labelled children (which hash their labels on every call).
// Usage: node dist/bench/metrics.js [iterations]
import { Counter as PromCounter, Histogram as PromHistogram, Registry } from 'prom-client';
import { MetricsRegistry, latencyBuckets } from '../src/server/metrics.js';

const n = Number(process.argv[2] ?? 2_000_000);
const labels = ['namespace', 'inferenceservice', 'component', 'revision'];
const values = ['default', 'sklearn-iris', 'predictor', 'sklearn-iris-predictor-00001'];

const ours = new MetricsRegistry({ processMetrics: false });
const boundLatency = ours.histogram('skiff_serving_request_duration_seconds', 'latency', labels).child(values);
const boundCount = ours.counter('skiff_serving_requests_total', 'requests', [...labels, 'code']).child([...values, '200']);

const registry = new Registry();
const promLatency = new PromHistogram({ name: 'skiff_serving_request_duration_seconds', help: 'latency', labelNames: labels, buckets: latencyBuckets, registers: [registry] }).labels(...values);
const promCount = new PromCounter({ name: 'skiff_serving_requests_total', help: 'requests', labelNames: [...labels, 'code'], registers: [registry] }).labels(...values, '200');

function time(f: (v: number) => void): number {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f((i % 100) / 1000);
  return Number(process.hrtime.bigint() - t) / n;
}

for (let round = 1; round <= 3; round++) {
  const bound = time((v) => {
    boundLatency.observe(v);
    boundCount.inc();
  });
  const prom = time((v) => {
    promLatency.observe(v);
    promCount.inc();
  });
  console.log(`round ${round}: observe + inc per request: bound series ${bound.toFixed(0)} ns, prom-client labelled children ${prom.toFixed(0)} ns`);
}
