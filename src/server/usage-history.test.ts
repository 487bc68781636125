import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PodMetricsSource, PodUsage } from '../substrate/substrate.js';
import { UsageHistory, usageAttributes } from './usage-history.js';

/** a substrate whose latest samples the test sets */
function source(): PodMetricsSource & { pods: PodUsage[] } {
  const s = { pods: [] as PodUsage[], podUsage: () => s.pods, nodeUsage: () => undefined };
  return s;
}

const pod = (name: string, uid: string, t: number, cpuCores: number | undefined, memory: number): PodUsage => ({
  uid, namespace: 'ns', name,
  containers: [{ name: 'main', startedAt: '2026-01-01T00:00:00Z', timestamp: t, cpuSeconds: 1, ...(cpuCores !== undefined ? { cpuCores } : {}), memoryWorkingSetBytes: memory }],
});

test('keeps one point per new substrate sample, oldest first, and streams each to subscribers', () => {
  let now = 1000;
  const src = source();
  const h = new UsageHistory({ usage: src, now: () => now });
  const seen: number[] = [];
  const off = h.subscribe('ns', 'a', (s) => seen.push(s.t));
  src.pods = [pod('a', 'u1', 1000, undefined, 10)];
  h.record();
  h.record(); // the substrate has nothing newer: no duplicate
  now = 6000;
  src.pods = [pod('a', 'u1', 6000, 0.5, 20)];
  h.record();
  assert.deepEqual(h.history('ns', 'a').map((s) => [s.t, s.containers[0]?.cpuCores, s.containers[0]?.memoryBytes]), [[1000, undefined, 10], [6000, 0.5, 20]]);
  assert.deepEqual(seen, [1000, 6000]);
  off();
  now = 11000;
  src.pods = [pod('a', 'u1', 11000, 0.25, 30)];
  h.record();
  assert.deepEqual(seen, [1000, 6000], 'no sample after unsubscribing');
  assert.equal(h.history('ns', 'a').length, 3);
});

test('drops points past the retention and Pods with none left, keeps a finished Pod until then', () => {
  let now = 0;
  const src = source();
  const h = new UsageHistory({ usage: src, retentionMs: 10_000, now: () => now });
  for (let t = 0; t <= 8000; t += 2000) {
    now = t;
    src.pods = [pod('a', 'u1', t, 1, 1)];
    h.record();
  }
  // the Pod's containers end: the substrate stops reporting it
  src.pods = [];
  now = 12_000;
  h.record();
  assert.deepEqual(h.history('ns', 'a').map((s) => s.t), [2000, 4000, 6000, 8000]);
  now = 30_000;
  h.record();
  assert.deepEqual(h.history('ns', 'a'), []);
  assert.equal(h.podCount, 0);
});

test('a new Pod under an old name starts afresh; a uid that does not match reads nothing', () => {
  let now = 0;
  const src = source();
  const h = new UsageHistory({ usage: src, now: () => now });
  src.pods = [pod('a', 'u1', 0, 1, 1)];
  h.record();
  now = 5000;
  src.pods = [pod('a', 'u2', 5000, 2, 2)];
  h.record();
  assert.deepEqual(h.history('ns', 'a').map((s) => s.t), [5000]);
  assert.deepEqual(h.history('ns', 'a', 'u1'), []);
  h.forget('ns', 'a');
  assert.deepEqual(h.history('ns', 'a'), []);
});

test('holds at most maxPods, dropping the one seen longest ago', () => {
  let now = 0;
  const src = source();
  const h = new UsageHistory({ usage: src, maxPods: 2, now: () => now });
  for (const [i, name] of ['a', 'b', 'c'].entries()) {
    now = i * 1000;
    src.pods = [pod(name, name, now, 1, 1)];
    h.record();
  }
  assert.equal(h.podCount, 2);
  assert.deepEqual(h.history('ns', 'a'), []);
  assert.equal(h.history('ns', 'c').length, 1);
});

test('a usage request is authorized as reading the Pods it charts', () => {
  assert.deepEqual(usageAttributes('GET', '/skiff/v1/namespaces/team-a/pods/train-0/usage'), { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'team-a', name: 'train-0' });
  assert.deepEqual(usageAttributes('GET', '/skiff/v1/namespaces/team-a/pods/train-0/usage/?watch=true'), { verb: 'watch', apiGroup: '', resource: 'pods', namespace: 'team-a', name: 'train-0' });
  assert.deepEqual(usageAttributes('GET', '/skiff/v1/namespaces/team-a/usage?pod=a&pod=b'), { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'team-a' });
  assert.deepEqual(usageAttributes('GET', '/skiff/v1/namespaces/team-a/usage?pod=a&watch=1'), { verb: 'watch', apiGroup: '', resource: 'pods', namespace: 'team-a' });
  // a method the handler does not answer is still asked as what it would do, never as a read
  assert.equal(usageAttributes('DELETE', '/skiff/v1/namespaces/team-a/pods/p/usage')?.verb, 'delete');
  assert.equal(usageAttributes('GET', '/skiff/v1/namespaces/team-a/pods/%zz/usage')?.name, '%zz');
  assert.equal(usageAttributes('GET', '/skiff/v1/streams'), undefined);
  assert.equal(usageAttributes('GET', '/api/v1/namespaces/team-a/pods/p'), undefined);
});

test("keeps a container's GPU use with its sample, per card, and none for a container without a card", () => {
  const src = source();
  const h = new UsageHistory({ usage: src, now: () => 1000 });
  const p = pod('g', 'u1', 1000, 0.5, 10);
  const main = p.containers[0];
  assert.ok(main);
  main.gpus = [{ index: 1, uuid: 'GPU-1', modelName: 'NVIDIA H100', memoryUsedMiB: 2048, gpuPercent: 37, gpuPercentSource: 'process' }, { index: 0, uuid: 'GPU-0', modelName: 'NVIDIA H100' }];
  p.containers.push({ name: 'side', startedAt: 'x', timestamp: 1000, cpuSeconds: 0, memoryWorkingSetBytes: 1 });
  src.pods = [p];
  h.record();
  const [s] = h.history('ns', 'g');
  assert.deepEqual(s?.containers[0]?.gpus, [{ index: 1, memoryMiB: 2048, gpuPercent: 37, gpuPercentSource: 'process' }, { index: 0 }]);
  assert.equal(s?.containers[1]?.gpus, undefined);
});
