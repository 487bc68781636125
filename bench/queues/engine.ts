// The admission decision alone, without the store or the controllers: how fast the queue engine
// (src/workloads/queues/engine) turns pending Workloads into admissions.
//   a. waves: N pending Workloads in one ClusterQueue whose quota admits about a fifteenth of them at
//      a time; each wave finishes and frees its quota, the next call admits the next wave. Timed:
//      every engine call, from the first (which builds the queues) to the last. BestEffortFIFO and
//      StrictFIFO, the sizes of Kueue's scheduler performance test (70% 1 CPU, 20% 5, 10% 20).
//   b. from freed quota to the next admission: with the queue full and N-1 waiting, one running
//      Workload finishes; the time of the call that admits the next.
//   c. Kueue's baseline configuration (test/performance/scheduler/configs/baseline): 5 cohorts of 6
//      ClusterQueues, nominal 20 and borrowingLimit 100 per queue, reclaimWithinCohort Any and
//      withinClusterQueue LowerPriority; per queue 350 small (1 unit, 200 ms), 100 medium (5, 500 ms)
//      and 50 large (20, 1 s) workloads = 15,000, run in simulated time: the engine's own time for
//      every decision, and the simulated time to admit them all (Kueue reports 351 s for the whole
//      system on a cluster; this is the decision part alone).
import { AdmissionEngine } from '../../src/workloads/queues/engine/index.js';
import type { ClusterQueueLike, Snapshot, WorkloadLike } from '../../src/workloads/queues/engine/index.js';
import { fmtMs, median, nowMs } from '../stats.js';

type Row = (label: string, value: string, note?: string) => void;

export interface QueuesEngineBenchOptions {
  /** pending workloads in the waves and freed-quota scenarios */
  workloads: number;
  /** samples of the freed-quota latency */
  freedSamples: number;
  /** run Kueue's baseline configuration too */
  baseline: boolean;
}

export interface QueuesEngineBenchResult {
  admissionsPerSecond: Record<string, number>;
  freedToAdmissionMs: number;
  baseline?: { admissions: number; engineSeconds: number; simulatedSeconds: number };
}

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** a deterministic size in CPUs: 70% 1, 20% 5, 10% 20, spread evenly */
const sizeOf = (i: number): number => {
  const m = i % 10;
  return m < 7 ? 1 : m < 9 ? 5 : 20;
};

function job(ns: string, name: string, cpu: number, created: number, queue = 'lq'): WorkloadLike {
  return {
    metadata: { namespace: ns, name, uid: name, creationTimestamp: new Date(T0 + created).toISOString() },
    spec: { queueName: queue, podSets: [{ name: 'main', count: 1, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: String(cpu) } } }] } } }] },
  };
}

function finished(w: WorkloadLike): WorkloadLike {
  return { ...w, status: { ...w.status, conditions: [...(w.status?.conditions ?? []), { type: 'Finished', status: 'True', reason: 'Succeeded', message: 'Job finished successfully' }] } };
}

function oneQueue(n: number, strategy: 'BestEffortFIFO' | 'StrictFIFO', quota: number): { snapshot: Snapshot; workloads: WorkloadLike[] } {
  const workloads = Array.from({ length: n }, (_, i) => job('bench', `w-${i}`, sizeOf(i), i));
  const cq: ClusterQueueLike = {
    metadata: { name: 'cq' },
    spec: { namespaceSelector: {}, queueingStrategy: strategy, resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'default', resources: [{ name: 'cpu', nominalQuota: quota }] }] }] },
  };
  return {
    workloads,
    snapshot: {
      resourceFlavors: [{ metadata: { name: 'default' } }],
      clusterQueues: [cq],
      localQueues: [{ metadata: { namespace: 'bench', name: 'lq' }, spec: { clusterQueue: 'cq' } }],
      namespaces: [{ metadata: { name: 'bench' } }],
      workloads,
    },
  };
}

/** Admits every workload in waves; returns admissions per second of engine time. */
function waves(n: number, strategy: 'BestEffortFIFO' | 'StrictFIFO', row: Row): number {
  const average = 0.7 * 1 + 0.2 * 5 + 0.1 * 20;
  const quota = Math.round((n / 15) * average);
  const { snapshot, workloads } = oneQueue(n, strategy, quota);
  const byName = new Map(workloads.map((w) => [w.metadata.name as string, w]));
  const engine = new AdmissionEngine(snapshot);
  let admitted = 0;
  let calls = 0;
  let engineMs = 0;
  let now = T0;
  const perWave: number[] = [];
  while (admitted < n) {
    const t0 = nowMs();
    const r = engine.schedule(now, { report: 'decisions' });
    const dt = nowMs() - t0;
    engineMs += dt;
    perWave.push(dt);
    calls++;
    if (r.admissions.length === 0) throw new Error(`${strategy}: no admission in call ${calls} with ${n - admitted} pending`);
    admitted += r.admissions.length;
    now += 1000;
    // the wave runs and finishes: its quota comes back
    const t1 = nowMs();
    for (const a of r.admissions) {
      const w = byName.get(a.name) as WorkloadLike;
      engine.upsertWorkload(finished({ ...w, status: { admission: a.admission, conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', lastTransitionTime: new Date(now).toISOString() }] } }));
    }
    engineMs += nowMs() - t1;
  }
  const rate = admitted / (engineMs / 1000);
  row(`${strategy}: ${n.toLocaleString('en')} in waves of ~${Math.round(n / 15)}`, `${Math.round(rate).toLocaleString('en')}/s`, `${calls} calls, ${fmtMs(engineMs)} in the engine; first call ${fmtMs(perWave[0] ?? 0)} (builds the queues), median call ${fmtMs(median(perWave))}; aim >= 1,000/s`);
  return rate;
}

/** With the queue full and n-1 waiting, one running workload finishes: the time of the call that admits the next. */
function freedToAdmission(n: number, samples: number, row: Row): number {
  const running = Array.from({ length: 100 }, (_, i) => job('bench', `run-${i}`, 1, -1000 + i));
  const { snapshot } = oneQueue(n - 1, 'BestEffortFIFO', 100);
  const admittedRunning = running.map((w) => ({
    ...w,
    status: {
      admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', flavors: { cpu: 'default' }, resourceUsage: { cpu: '1' }, count: 1 }] },
      conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', lastTransitionTime: new Date(T0).toISOString() }],
    },
  }));
  // every pending workload asks for 1 CPU so each freed CPU admits exactly one
  const pending = (snapshot.workloads ?? []).map((w, i) => job('bench', w.metadata.name as string, 1, i));
  const engine = new AdmissionEngine({ ...snapshot, workloads: [...admittedRunning, ...pending] });
  const first = engine.schedule(T0, { report: 'decisions' });
  if (first.admissions.length !== 0) throw new Error('the queue should start full');
  const times: number[] = [];
  for (let i = 0; i < Math.min(samples, running.length); i++) {
    const t0 = nowMs();
    engine.upsertWorkload(finished(admittedRunning[i] as WorkloadLike));
    const r = engine.schedule(T0 + (i + 1) * 1000, { report: 'decisions' });
    times.push(nowMs() - t0);
    if (r.admissions.length !== 1) throw new Error(`expected one admission after a release, got ${r.admissions.length}`);
  }
  const m = median(times);
  row(`freed quota -> next admission (${(n - 1).toLocaleString('en')} waiting)`, fmtMs(m), `median of ${times.length}; max ${fmtMs(Math.max(...times))}; the call that admits it, release included`);
  return m;
}

/** Kueue's baseline scheduler performance configuration, in simulated time. */
function baseline(row: Row): { admissions: number; engineSeconds: number; simulatedSeconds: number } {
  // per ClusterQueue: how many, how often one arrives, how long it runs, its priority and size
  const classes = [
    { name: 'small', count: 350, everyMs: 100, ms: 200, priority: 50, cpu: 1 },
    { name: 'medium', count: 100, everyMs: 500, ms: 500, priority: 100, cpu: 5 },
    { name: 'large', count: 50, everyMs: 1200, ms: 1000, priority: 200, cpu: 20 },
  ];
  const clusterQueues: ClusterQueueLike[] = [];
  const localQueues: NonNullable<Snapshot['localQueues']> = [];
  const namespaces: NonNullable<Snapshot['namespaces']> = [];
  const arrivals: WorkloadLike[] = [];
  const duration = new Map<string, number>();
  const cls = new Map<string, string>();
  for (let c = 0; c < 5; c++) {
    for (let q = 0; q < 6; q++) {
      const name = `cq-${c}-${q}`;
      clusterQueues.push({
        metadata: { name },
        spec: {
          cohortName: `cohort-${c}`,
          namespaceSelector: {},
          preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' },
          resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'default', resources: [{ name: 'cpu', nominalQuota: 20, borrowingLimit: 100 }] }] }],
        },
      });
      namespaces.push({ metadata: { name } });
      localQueues.push({ metadata: { namespace: name, name: 'lq' }, spec: { clusterQueue: name } });
      for (const k of classes) {
        for (let i = 0; i < k.count; i++) {
          const w = job(name, `${k.name}-${i}`, k.cpu, i * k.everyMs);
          (w.spec as { priority?: number }).priority = k.priority;
          arrivals.push(w);
          duration.set(`${name}/${k.name}-${i}`, k.ms);
          cls.set(`${name}/${k.name}-${i}`, k.name);
        }
      }
    }
  }
  arrivals.sort((a, b) => Date.parse(a.metadata.creationTimestamp as string) - Date.parse(b.metadata.creationTimestamp as string));
  const total = arrivals.length;
  const byKey = new Map<string, WorkloadLike>();
  const engine = new AdmissionEngine({ resourceFlavors: [{ metadata: { name: 'default' } }], clusterQueues, localQueues, namespaces });
  const finishing = new Map<number, Set<string>>();
  const running = new Map<string, number>();
  let now = T0;
  let next = 0;
  let done = 0;
  let admissions = 0;
  let preemptions = 0;
  let engineMs = 0;
  let calls = 0;
  let lastAdmission = T0;
  const waits = new Map<string, number[]>();
  const timed = <R>(f: () => R): R => {
    const t0 = nowMs();
    const r = f();
    engineMs += nowMs() - t0;
    return r;
  };
  while (done < total) {
    // arrivals due by now
    while (next < total && Date.parse(arrivals[next]?.metadata.creationTimestamp as string) <= now) {
      const w = arrivals[next++] as WorkloadLike;
      byKey.set(`${w.metadata.namespace}/${w.metadata.name}`, w);
      timed(() => engine.upsertWorkload(w));
    }
    const r = timed(() => engine.schedule(now, { report: 'decisions' }));
    calls++;
    for (const a of r.admissions) {
      const key = `${a.namespace}/${a.name}`;
      const end = now + (duration.get(key) ?? 0);
      const set = finishing.get(end) ?? new Set<string>();
      set.add(key);
      finishing.set(end, set);
      running.set(key, end);
      const w = byKey.get(key) as WorkloadLike;
      const k = cls.get(key) as string;
      const l = waits.get(k) ?? [];
      l.push((now - Date.parse(w.metadata.creationTimestamp as string)) / 1000);
      waits.set(k, l);
      byKey.set(key, { ...w, status: { admission: a.admission, conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', lastTransitionTime: new Date(now).toISOString() }] } });
      admissions++;
      lastAdmission = now;
    }
    // a preempted workload's quota comes back at once and it queues again
    for (const p of r.preemptions) {
      const key = `${p.namespace}/${p.name}`;
      const end = running.get(key);
      if (end !== undefined) finishing.get(end)?.delete(key);
      running.delete(key);
      preemptions++;
      const w = byKey.get(key) as WorkloadLike;
      const evicted: WorkloadLike = { metadata: w.metadata, spec: w.spec, status: { conditions: [{ type: 'Evicted', status: 'True', reason: 'Preempted', lastTransitionTime: new Date(now).toISOString() }] } };
      byKey.set(key, evicted);
      timed(() => engine.upsertWorkload(evicted));
    }
    if (r.preemptions.length) continue;
    const nextFinish = Math.min(...[...finishing.entries()].filter(([, s]) => s.size > 0).map(([t]) => t));
    const nextArrival = next < total ? Date.parse(arrivals[next]?.metadata.creationTimestamp as string) : Infinity;
    const t = Math.min(nextFinish, nextArrival);
    if (!Number.isFinite(t)) throw new Error(`baseline: stuck with ${total - done} not finished`);
    if (t === nextFinish) {
      for (const key of finishing.get(t) ?? []) {
        timed(() => engine.upsertWorkload(finished(byKey.get(key) as WorkloadLike)));
        running.delete(key);
        done++;
      }
      finishing.delete(t);
    }
    now = t;
  }
  const simulated = (lastAdmission - T0) / 1000;
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  row('Kueue baseline (5 cohorts x 6 queues, 15,000)', `${Math.round(admissions / (engineMs / 1000)).toLocaleString('en')}/s`, `${admissions} admissions (${preemptions} preempted and readmitted) in ${calls} calls, ${fmtMs(engineMs)} in the engine`);
  row('  simulated time to the last admission', `${simulated.toFixed(1)} s`, `mean wait small ${mean(waits.get('small') ?? []).toFixed(1)} s, medium ${mean(waits.get('medium') ?? []).toFixed(1)} s, large ${mean(waits.get('large') ?? []).toFixed(1)} s; Kueue's whole system: 351 s (16.5/76.8/215 s waits, large/medium/small)`);
  return { admissions, engineSeconds: engineMs / 1000, simulatedSeconds: simulated };
}

export async function queuesEngineBench(row: Row, opts: QueuesEngineBenchOptions): Promise<QueuesEngineBenchResult> {
  console.log(`\nqueues: the admission engine's decisions (${opts.workloads.toLocaleString('en')} pending workloads)`);
  const admissionsPerSecond: Record<string, number> = {};
  for (const s of ['BestEffortFIFO', 'StrictFIFO'] as const) admissionsPerSecond[s] = waves(opts.workloads, s, row);
  const freedToAdmissionMs = freedToAdmission(opts.workloads, opts.freedSamples, row);
  const out: QueuesEngineBenchResult = { admissionsPerSecond, freedToAdmissionMs };
  if (opts.baseline) out.baseline = baseline(row);
  return out;
}
