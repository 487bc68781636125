// The controllers' metrics as controller-runtime names and shapes them, rendered by the server's
// registry: reconciles by result, errors, the reconcile-time histogram's buckets, workers, and each
// controller's work queue counted as client-go counts it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kinds, defaultRegistry } from '../api/index.js';
import { MetricsRegistry } from '../server/metrics.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { Manager, TerminalError } from './controller.js';
import { ControlMetrics, queueDurationBuckets, reconcileTimeBuckets, type QueueObserver } from './metrics.js';
import { WorkQueue } from './queue.js';

/** the value of the one sample line `name{labels} value` */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function until(what: string, fn: () => boolean | Promise<boolean>): Promise<void> {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function recordingObserver(): QueueObserver & { counts: { adds: number; retries: number; queued: number[]; worked: number[] } } {
  const counts = { adds: 0, retries: 0, queued: [] as number[], worked: [] as number[] };
  return {
    counts,
    adds: { inc: () => void counts.adds++ },
    retries: { inc: () => void counts.retries++ },
    queueDuration: { observe: (v) => void counts.queued.push(v) },
    workDuration: { observe: (v) => void counts.worked.push(v) },
  };
}

describe('work queue metrics', () => {
  it('counts an add when a key starts waiting, as client-go does, and times the wait and the work', async () => {
    const q = new WorkQueue();
    const o = recordingObserver();
    q.instrument(o);
    q.add('a');
    q.add('a');
    assert.equal(o.counts.adds, 1, 'a key already waiting is not added again');
    assert.equal(q.depth, 1);
    assert.equal(await q.get(), 'a');
    assert.equal(q.depth, 0);
    assert.equal(o.counts.queued.length, 1);
    // added again while in flight: it waits for its run to end, counted now and in the depth
    q.add('a');
    q.add('a');
    assert.equal(o.counts.adds, 2);
    assert.equal(q.depth, 1);
    await new Promise((r) => setTimeout(r, 20));
    const busy = q.inProgress();
    assert.ok(busy.longest >= 0.015 && busy.total === busy.longest, JSON.stringify(busy));
    q.done('a');
    assert.equal(o.counts.worked.length, 1);
    assert.ok((o.counts.worked[0] as number) >= 0.015);
    assert.equal(o.counts.adds, 2, 'queued again after its run without another add');
    assert.equal(q.length, 1);
    assert.equal(await q.get(), 'a');
    assert.ok((o.counts.queued[1] as number) >= 0.015, 'waited from the add during the run');
    q.done('a');
    assert.deepEqual(q.inProgress(), { total: 0, longest: 0 });
    q.addAfter('b', 60_000);
    q.addRateLimited('c');
    assert.equal(o.counts.retries, 2);
    assert.equal(q.depth, 0, 'a delayed key is not in the queue yet');
    q.shutdown();
  });

  it('uses Prometheus\' ExponentialBuckets(10e-9, 10, 12)', () => {
    assert.deepEqual(queueDurationBuckets, [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000]);
    assert.equal(reconcileTimeBuckets.length, 40);
    assert.equal(reconcileTimeBuckets[0], 0.005);
    assert.equal(reconcileTimeBuckets[39], 60);
  });
});

describe('controller-runtime metrics', () => {
  it('counts reconciles by result and errors per controller, times them, and reports its queue and workers', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    const client = new Client(store, defaultRegistry());
    const registry = new MetricsRegistry({ processMetrics: false });
    const metrics = new ControlMetrics(registry);
    const mgr = new Manager(client, () => undefined, false, metrics);
    const seen = new Map<string, number>();
    const ctl = mgr.add({
      name: 'configmap', for: Kinds.ConfigMap, workers: 3,
      reconcile: async ({ name }) => {
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        if (name === 'later') return n === 1 ? { requeueAfter: 60_000 } : undefined;
        if (name === 'again') return n === 1 ? { requeueAfter: 0 } : undefined;
        if (name === 'flaky' && n === 1) throw new Error('try again');
        if (name === 'broken') throw new TerminalError('cannot be fixed');
        return undefined;
      },
    });
    try {
      const before = await registry.render();
      for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
        assert.equal(sample(before, `controller_runtime_reconcile_total{controller="configmap",result="${result}"}`), 0, result);
      }
      assert.equal(sample(before, 'controller_runtime_max_concurrent_reconciles{controller="configmap"}'), 3);
      assert.doesNotMatch(before, /^controller_runtime_reconcile_time_seconds_count/m, 'the time histogram\'s series comes with the first reconcile');
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
      mgr.start();
      for (const name of ['ok', 'later', 'again', 'flaky', 'broken']) await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
      await until('every reconcile', () => seen.get('again') === 2 && seen.get('flaky') === 2 && seen.get('broken') === 1 && seen.get('later') === 1 && seen.get('ok') === 1);
      await until('the workers to finish', () => ctl.idle());
      const text = await registry.render();
      const c = (result: string): number | undefined => sample(text, `controller_runtime_reconcile_total{controller="configmap",result="${result}"}`);
      assert.equal(c('success'), 3, text);
      assert.equal(c('error'), 2);
      assert.equal(c('requeue'), 1);
      assert.equal(c('requeue_after'), 1);
      assert.equal(sample(text, 'controller_runtime_reconcile_errors_total{controller="configmap"}'), 2, 'a terminal error is an error too');
      assert.equal(sample(text, 'controller_runtime_terminal_reconcile_errors_total{controller="configmap"}'), 1);
      assert.equal(sample(text, 'controller_runtime_reconcile_time_seconds_count{controller="configmap"}'), 7);
      const buckets = text.split('\n').filter((l) => l.startsWith('controller_runtime_reconcile_time_seconds_bucket{controller="configmap",'));
      assert.equal(buckets.length, 41, 'the 40 upstream buckets and +Inf');
      assert.equal(sample(text, 'controller_runtime_reconcile_time_seconds_bucket{controller="configmap",le="+Inf"}'), 7);
      assert.equal(sample(text, 'controller_runtime_active_workers{controller="configmap"}'), 0);
      const q = '{name="configmap",controller="configmap"}';
      assert.equal(sample(text, `workqueue_depth{name="configmap",controller="configmap",priority=""}`), 0);
      // five creations, the requeue and the retry after the error
      assert.equal(sample(text, `workqueue_adds_total${q}`), 7);
      // the requeue, the requeue after a minute and the rate-limited retry: each an add with a delay
      assert.equal(sample(text, `workqueue_retries_total${q}`), 3);
      assert.equal(sample(text, `workqueue_queue_duration_seconds_count${q}`), 7);
      assert.equal(sample(text, `workqueue_work_duration_seconds_count${q}`), 7);
      assert.equal(sample(text, `workqueue_queue_duration_seconds_bucket{name="configmap",controller="configmap",le="1e-8"}`) !== undefined, true, text.slice(0, 4000));
      assert.equal(sample(text, `workqueue_unfinished_work_seconds${q}`), 0);
      assert.equal(sample(text, `workqueue_longest_running_processor_seconds${q}`), 0);
      // one HELP and one TYPE per family
      const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
      assert.equal(new Set(types).size, types.length);
      assert.deepEqual(types.filter((l) => /controller_runtime|workqueue/.test(l)).sort(), [
        '# TYPE controller_runtime_active_workers gauge',
        '# TYPE controller_runtime_max_concurrent_reconciles gauge',
        '# TYPE controller_runtime_reconcile_errors_total counter',
        '# TYPE controller_runtime_reconcile_time_seconds histogram',
        '# TYPE controller_runtime_reconcile_total counter',
        '# TYPE controller_runtime_terminal_reconcile_errors_total counter',
        '# TYPE workqueue_adds_total counter',
        '# TYPE workqueue_depth gauge',
        '# TYPE workqueue_longest_running_processor_seconds gauge',
        '# TYPE workqueue_queue_duration_seconds histogram',
        '# TYPE workqueue_retries_total counter',
        '# TYPE workqueue_unfinished_work_seconds gauge',
        '# TYPE workqueue_work_duration_seconds histogram',
      ]);
    } finally {
      await mgr.stop();
      await store.close();
    }
  });

  it('shows a reconcile in progress as an active worker and unfinished work', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    const client = new Client(store, defaultRegistry());
    const registry = new MetricsRegistry({ processMetrics: false });
    const mgr = new Manager(client, () => undefined, false, new ControlMetrics(registry));
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (release = r));
    let started = false;
    mgr.add({ name: 'slow', for: Kinds.ConfigMap, reconcile: async () => { started = true; await held; } });
    mgr.start();
    try {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } });
      await until('the reconcile to start', () => started);
      await new Promise((r) => setTimeout(r, 30));
      const text = await registry.render();
      assert.equal(sample(text, 'controller_runtime_active_workers{controller="slow"}'), 1);
      assert.ok((sample(text, 'workqueue_longest_running_processor_seconds{name="slow",controller="slow"}') ?? 0) >= 0.025, text);
      assert.ok((sample(text, 'workqueue_unfinished_work_seconds{name="slow",controller="slow"}') ?? 0) >= 0.025);
    } finally {
      release();
      await mgr.stop();
      await store.close();
    }
  });

  it('refuses a second controller of the same name, as controller-runtime does', () => {
    const store = new SqliteStore({ file: ':memory:' });
    const client = new Client(store, defaultRegistry());
    const mgr = new Manager(client, () => undefined, false, new ControlMetrics(new MetricsRegistry({ processMetrics: false })));
    mgr.add({ name: 'twice', for: Kinds.ConfigMap, reconcile: async () => undefined });
    assert.throws(() => mgr.add({ name: 'twice', for: Kinds.Secret, reconcile: async () => undefined }), /controller with name twice already exists/);
    void store.close();
  });
});
