// Longer stories: the engine driven call after call as the controllers will drive it (admissions
// written back, preempted workloads requeued), fungibility between preempting and trying the next
// flavor, two preemptors wanting the same victim, hierarchical cohorts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionEngine, schedule } from './engine.js';
import { T0, admitted, at, clusterQueue, cohort, flavor, workload, world } from './testing.js';
import type { CycleResult, EngineOptions, Snapshot, WorkloadLike } from './types.js';

/** Runs the engine until it decides nothing more, writing its decisions back as the controllers would. */
function settle(s: Snapshot, options: EngineOptions = {}, rounds = 100): { engine: AdmissionEngine; last: CycleResult; preempted: number } {
  const byKey = new Map((s.workloads ?? []).map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w]));
  const engine = new AdmissionEngine(s, options);
  let preempted = 0;
  for (let i = 0; i < rounds; i++) {
    const now = T0 + i * 1000;
    const r = engine.schedule(now);
    if (r.admissions.length === 0 && r.preemptions.length === 0) return { engine, last: r, preempted };
    for (const a of r.admissions) {
      const key = `${a.namespace}/${a.name}`;
      const w = byKey.get(key) as WorkloadLike;
      const next: WorkloadLike = {
        ...w,
        status: {
          admission: a.admission,
          conditions: [
            { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', lastTransitionTime: new Date(now).toISOString() },
            { type: 'Admitted', status: 'True', reason: 'Admitted', lastTransitionTime: new Date(now).toISOString() },
          ],
        },
      };
      byKey.set(key, next);
      engine.upsertWorkload(next);
    }
    for (const p of r.preemptions) {
      preempted++;
      const key = `${p.namespace}/${p.name}`;
      const w = byKey.get(key) as WorkloadLike;
      const next: WorkloadLike = { metadata: w.metadata, spec: w.spec, status: { conditions: [{ type: 'Evicted', status: 'True', reason: 'Preempted', message: p.message, lastTransitionTime: new Date(now).toISOString() }] } };
      byKey.set(key, next);
      engine.upsertWorkload(next);
    }
  }
  throw new Error('the engine did not settle');
}

describe('flavorFungibility and preemption', () => {
  function twoFlavors(whenCanPreempt?: string): Snapshot {
    return world({
      resourceFlavors: [flavor('a'), flavor('b')],
      clusterQueues: [clusterQueue('cq', { a: { cpu: 4 }, b: { cpu: 4 } }, { preemption: { withinClusterQueue: 'LowerPriority' }, ...(whenCanPreempt ? { flavorFungibility: { whenCanPreempt } } : {}) })],
      queues: [['ns', 'cq']],
      workloads: [admitted(workload('ns', 'low', { cpu: 4 }), 'cq', 'a'), workload('ns', 'high', { cpu: 4 }, { priority: 10, created: 1 })],
    });
  }

  it('TryNextFlavor (the default): a free flavor is taken before preempting on the first', () => {
    const r = schedule(twoFlavors(), T0);
    assert.deepEqual(r.preemptions, []);
    assert.equal(r.admissions[0]?.admission.podSetAssignments[0]?.flavors['cpu'], 'b');
  });

  it('MayStopSearch: preempting on the first flavor is good enough', () => {
    const r = schedule(twoFlavors('MayStopSearch'), T0);
    assert.deepEqual(r.preemptions.map((p) => p.name), ['low']);
    assert.deepEqual(r.admissions, []);
  });

  it('v1beta1\'s Preempt means MayStopSearch', () => {
    assert.deepEqual(schedule(twoFlavors('Preempt'), T0).preemptions.map((p) => p.name), ['low']);
  });
});

describe('two preemptors, one victim', () => {
  it('the second waits for the first one\'s preemption instead of issuing its own', () => {
    // x borrows 8 with one workload; y and z each want their 4 back in the same cycle
    const s = world({
      resourceFlavors: [flavor('f')],
      clusterQueues: ['x', 'y', 'z'].map((n) => clusterQueue(n, { f: { cpu: 4 } }, { cohortName: 'co', preemption: { reclaimWithinCohort: 'Any' } })),
      queues: [['nx', 'x'], ['ny', 'y'], ['nz', 'z']],
      workloads: [admitted(workload('nx', 'big', { cpu: 12 }), 'x', 'f'), workload('ny', 'y1', { cpu: 4 }), workload('nz', 'z1', { cpu: 4 }, { created: 1 })],
    });
    const r = schedule(s, T0, { maxCycles: 1 });
    assert.deepEqual(r.preemptions.map((p) => [p.name, p.reason, p.preemptor.name]), [['big', 'InCohortReclamation', 'y1']]);
    const z = r.pending.find((p) => p.name === 'z1');
    assert.deepEqual([z?.reason, z?.message], ['WaitingForPreemptedWorkloads', 'Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete']);
    // both are admitted once the victim is gone
    const { engine } = settle(s);
    const status = engine.schedule(T0 + 100_000).clusterQueues;
    assert.deepEqual([status['y']?.reservingWorkloads, status['z']?.reservingWorkloads], [1, 1]);
  });
});

describe('hierarchical cohorts', () => {
  it('a queue within its quota reclaims from a borrower in another subtree (InCohortReclamation)', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      cohorts: [cohort('root'), cohort('left', { parentName: 'root' }), cohort('right', { parentName: 'root' })],
      clusterQueues: [clusterQueue('a', { f: { cpu: 4 } }, { cohortName: 'left', preemption: { reclaimWithinCohort: 'Any' } }), clusterQueue('b', { f: { cpu: 4 } }, { cohortName: 'right' })],
      queues: [['na', 'a'], ['nb', 'b']],
      workloads: [admitted(workload('nb', 'b-big', { cpu: 8 }, { priority: 100 }), 'b', 'f'), workload('na', 'a1', { cpu: 4 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.preemptions.map((p) => [p.name, p.reason]), [['b-big', 'InCohortReclamation']]);
    assert.match(r.preemptions[0]?.message ?? '', /preemptor path: \/root\/left\/a; preemptee path: \/root\/right\/b$/);
  });

  it('fair sharing with weighted cohorts (0.75 and 0.25) settles at 9 and 3 of 12 shared CPUs', () => {
    const ws: WorkloadLike[] = [];
    for (let i = 0; i < 12; i++) {
      ws.push(workload('imp', `imp-${i}`, { cpu: 1 }, { created: i }));
      ws.push(workload('reg', `reg-${i}`, { cpu: 1 }, { created: i }));
    }
    const s = world({
      resourceFlavors: [flavor('f')],
      cohorts: [
        cohort('root-cohort', { resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'f', resources: [{ name: 'cpu', nominalQuota: 12 }] }] }] }),
        cohort('important-org', { parentName: 'root-cohort', fairSharing: { weight: '0.75' } }),
        cohort('regular-org', { parentName: 'root-cohort', fairSharing: { weight: '0.25' } }),
      ],
      clusterQueues: [
        clusterQueue('imp-cq', { f: { cpu: 0 } }, { cohortName: 'important-org', preemption: { reclaimWithinCohort: 'Any' } }),
        clusterQueue('reg-cq', { f: { cpu: 0 } }, { cohortName: 'regular-org', preemption: { reclaimWithinCohort: 'Any' } }),
      ],
      queues: [['imp', 'imp-cq'], ['reg', 'reg-cq']],
      workloads: ws,
    });
    const { last, preempted } = settle(s, { fairSharing: {} });
    assert.deepEqual([last.clusterQueues['imp-cq']?.reservingWorkloads, last.clusterQueues['reg-cq']?.reservingWorkloads], [9, 3]);
    assert.ok(preempted > 0);
    assert.ok((last.cohorts['important-org']?.fairSharing?.weightedShare ?? 0) > 0);
  });
});

describe('cycles and cohorts', () => {
  it('with the rule of old Kueue, a cohort admits one borrowing workload per cycle', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      clusterQueues: [clusterQueue('a', { f: { cpu: 2 } }, { cohortName: 'co' }), clusterQueue('b', { f: { cpu: 2 } }, { cohortName: 'co' }), clusterQueue('c', { f: { cpu: 8 } }, { cohortName: 'co' })],
      queues: [['na', 'a'], ['nb', 'b']],
      workloads: [workload('na', 'a1', { cpu: 3 }), workload('nb', 'b1', { cpu: 3 })],
    });
    assert.deepEqual(schedule(s, T0, { maxCycles: 1 }).admissions.map((a) => a.name), ['a1', 'b1']);
    const old = schedule(s, T0, { maxCycles: 1, oneBorrowingAdmissionPerCohort: true });
    assert.deepEqual(old.admissions.map((a) => a.name), ['a1']);
    assert.equal(old.pending[0]?.message, 'other workloads in the cohort were prioritized');
    assert.deepEqual(schedule(s, T0, { oneBorrowingAdmissionPerCohort: true }).admissions.map((a) => [a.name, a.cycle]), [['a1', 1], ['b1', 2]]);
  });

  it('a namespace\'s LocalQueue named default takes workloads that name no queue', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      clusterQueues: [clusterQueue('cq', { f: { cpu: 2 } })],
      queues: [['ns', 'cq', 'default']],
      workloads: [workload('ns', 'w', { cpu: 1 }, { queue: '' })],
    });
    assert.deepEqual(schedule(s, T0).admissions.map((a) => [a.name, a.localQueue]), [['w', 'default']]);
  });

  it('a ClusterQueue in a cohort whose parents loop is left out', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      cohorts: [cohort('c1', { parentName: 'c2' }), cohort('c2', { parentName: 'c1' })],
      clusterQueues: [clusterQueue('cq', { f: { cpu: 2 } }, { cohortName: 'c1' })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'w', { cpu: 1 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions, []);
    assert.equal(r.pending[0]?.message, 'ClusterQueue cq is inactive');
  });

  it('the queued-wait time in the QuotaReserved message counts from creation', () => {
    const s = world({ resourceFlavors: [flavor('f')], clusterQueues: [clusterQueue('cq', { f: { cpu: 2 } })], queues: [['ns', 'cq']], workloads: [workload('ns', 'w', { cpu: 1 }, { created: -42 })] });
    assert.equal(schedule(s, at(0)).admissions[0]?.message, 'Quota reserved in ClusterQueue cq, wait time since queued was 42s');
  });
});
