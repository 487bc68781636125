// The queue controllers' benchmark: the real queue manager and Job integration on a SQLite store, no
// Pods run (the Jobs are marked Complete by the benchmark, as the Job controller would once their Pods
// ended). Measures (1) admission throughput: N suspended Jobs through one ClusterQueue whose quota
// admits `wave` at a time, every admission written (Workload QuotaReserved/Admitted, Job unsuspended
// with the flavor's node labels), then the wave finished and the next admitted; and (2) the time from
// a freed quota (a Job's Complete written) to the next Job unsuspended, on a full queue.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kinds, defaultRegistry } from '../../src/api/index.js';
import type { StoredObject } from '../../src/api/meta.js';
import { Manager } from '../../src/control/controller.js';
import type { EventType, Recorder } from '../../src/control/events.js';
import { Client } from '../../src/store/client.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { addQueueJobController } from '../../src/workloads/queues/jobs.js';
import { QueueManager } from '../../src/workloads/queues/manager.js';

export interface QueuesControllersOptions {
  jobs: number;
  wave: number;
  freedSamples: number;
}

const quiet: Recorder = { event(_o: StoredObject, _t: EventType, _r: string, _m: string): void {} };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function queuesControllersBench(row: (label: string, v: string, note?: string) => void, opts: QueuesControllersOptions): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-queues-'));
  const store = new SqliteStore({ file: join(dir, 'skiff.db') });
  const client = new Client(store, defaultRegistry());
  const mgr = new Manager(client);
  const qm = new QueueManager({ client, cache: mgr.cache, recorder: quiet });
  qm.register(mgr);
  addQueueJobController(mgr, { client, cache: mgr.cache, recorder: quiet });
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'big-node' }, spec: { nodeLabels: { 'skiff.dev/pool': 'big' } } });
    await client.create({
      apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'cq' },
      spec: { namespaceSelector: {}, resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'big-node', resources: [{ name: 'cpu', nominalQuota: String(opts.wave) }] }] }] },
    });
    await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: 'bench', name: 'lq' }, spec: { clusterQueue: 'cq' } });
    const job = (i: number) => ({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: `j${String(i).padStart(5, '0')}`, namespace: 'bench', labels: { 'kueue.x-k8s.io/queue-name': 'lq' } },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['true'], resources: { requests: { cpu: '1' } } }] } } },
    });
    // the Jobs exist before the controllers start: the benchmark measures admission, not creation
    let t = performance.now();
    for (let i = 0; i < opts.jobs; i++) await client.create(job(i));
    row('queues: create suspended Jobs', `${((performance.now() - t) / 1000).toFixed(1)} s`, `${opts.jobs} Jobs, ${(opts.jobs / ((performance.now() - t) / 1000)).toFixed(0)}/s`);
    const running = (): StoredObject[] => mgr.cache.list(Kinds.Job, { namespace: 'bench' }).filter((j) => j.spec.suspend === false && !j.status?.conditions?.length);
    const finish = async (jobs: StoredObject[]): Promise<void> => {
      const at = new Date().toISOString();
      for (const j of jobs) {
        await client.updateStatus({ ...j, status: { ...j.status, conditions: [{ type: 'Complete', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods', lastTransitionTime: at }] } });
      }
    };
    t = performance.now();
    mgr.start();
    let admitted = 0;
    let finishMs = 0;
    const freedLatencies: number[] = [];
    // (1) waves: admit, finish, admit the next
    // the last waves are left for (2): a full queue with at least freedSamples Jobs still pending
    while (opts.jobs - admitted - opts.wave >= opts.wave + opts.freedSamples) {
      const want = opts.wave;
      for (;;) {
        if (running().length >= want) break;
        await sleep(2);
      }
      admitted += want;
      const f = performance.now();
      await finish(running());
      finishMs += performance.now() - f;
    }
    const wall = (performance.now() - t) / 1000;
    const controllers = wall - finishMs / 1000;
    row('queues: admissions, in waves', `${admitted}`, `wave ${opts.wave} (the ClusterQueue's quota)`);
    row('queues: admission throughput, controllers', `${(admitted / controllers).toFixed(0)} /s`, `${controllers.toFixed(1)} s with the benchmark's own Complete writes (${(finishMs / 1000).toFixed(1)} s) taken out; ${(admitted / wall).toFixed(0)}/s wall`);
    // (2) a full queue: one Job completes, how long until the next runs
    for (;;) {
      if (running().length >= opts.wave) break;
      await sleep(2);
    }
    for (let i = 0; i < opts.freedSamples; i++) {
      const before = new Set(running().map((j) => j.metadata.name));
      const victim = running()[0];
      if (!victim) break;
      const s = performance.now();
      await finish([victim]);
      for (;;) {
        const now = running();
        if (now.some((j) => !before.has(j.metadata.name))) break;
        await sleep(0.5);
      }
      freedLatencies.push(performance.now() - s);
    }
    freedLatencies.sort((a, b) => a - b);
    const p50 = freedLatencies[Math.floor(freedLatencies.length / 2)] ?? NaN;
    const p95 = freedLatencies[Math.floor(freedLatencies.length * 0.95)] ?? NaN;
    row('queues: freed quota to next admission (p50)', `${p50.toFixed(1)} ms`, `p95 ${p95.toFixed(1)} ms over ${freedLatencies.length} samples, ${opts.jobs} Workloads in the store`);
    const kueueRate = 15_000 / 351;
    row('queues: published: Kueue\'s baseline (not measured here)', `${kueueRate.toFixed(0)} /s`, '15,000 workloads in 351 s end to end on a cluster, quota-bound (research a.10)');
    row('queues: ratio, controllers here / Kueue published', `${((admitted / controllers) / kueueRate).toFixed(1)}x`, 'different work: Kueue\'s figure includes running the workloads');
    return { admitted, admissionsPerSecond: admitted / controllers, wallAdmissionsPerSecond: admitted / wall, freedP50Ms: p50, freedP95Ms: p95 };
  } finally {
    qm.stop();
    await mgr.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
