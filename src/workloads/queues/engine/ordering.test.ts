// Queue order and queueing strategies: priority then creation time, StrictFIFO's blocking head
// against BestEffortFIFO's setting aside, and the positions the visibility API reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionEngine, positions, schedule } from './engine.js';
import { T0, admitted, clusterQueue, flavor, localQueue, workload, world } from './testing.js';
import type { Snapshot, WorkloadLike } from './types.js';

function oneQueue(strategy: 'StrictFIFO' | 'BestEffortFIFO', workloads: WorkloadLike[], extra: Partial<Snapshot> = {}): Snapshot {
  return world({
    resourceFlavors: [flavor('default-flavor')],
    clusterQueues: [clusterQueue('cq', { 'default-flavor': { cpu: 10 } }, { queueingStrategy: strategy })],
    queues: [['ns', 'cq']],
    workloads,
    ...extra,
  });
}

const running = admitted(workload('ns', 'running', { cpu: 6 }, { created: -100 }), 'cq', 'default-flavor');

describe('queueing strategies', () => {
  it('BestEffortFIFO sets aside a head that does not fit and admits the next', () => {
    const r = schedule(oneQueue('BestEffortFIFO', [running, workload('ns', 'big', { cpu: 6 }, { created: 1 }), workload('ns', 'small', { cpu: 2 }, { created: 2 })]), T0);
    assert.deepEqual(r.admissions.map((a) => a.name), ['small']);
    const big = r.pending.find((p) => p.name === 'big');
    assert.equal(big?.reason, 'WaitingForQuota');
    assert.equal(big?.message, "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed");
  });

  it('StrictFIFO: the head that does not fit blocks younger ones that would', () => {
    const r = schedule(oneQueue('StrictFIFO', [running, workload('ns', 'big', { cpu: 6 }, { created: 1 }), workload('ns', 'small', { cpu: 2 }, { created: 2 })]), T0);
    assert.deepEqual(r.admissions, []);
    const [big, small] = r.pending;
    assert.deepEqual([big?.name, big?.positionInClusterQueue, big?.reason], ['big', 0, 'WaitingForQuota']);
    assert.deepEqual([small?.name, small?.positionInClusterQueue, small?.reason, small?.message], ['small', 1, 'PendingEvaluation', 'Workload is pending evaluation in the scheduling queue']);
  });

  it('StrictFIFO admits in order while the quota lasts', () => {
    const ws = [1, 2, 3, 4, 5, 6].map((i) => workload('ns', `w${i}`, { cpu: 3 }, { created: i }));
    const r = schedule(oneQueue('StrictFIFO', ws), T0);
    assert.deepEqual(r.admissions.map((a) => a.name), ['w1', 'w2', 'w3']);
    assert.deepEqual(r.pending.map((p) => [p.name, p.positionInClusterQueue]), [['w4', 0], ['w5', 1], ['w6', 2]]);
  });

  it('a namespace mismatch never blocks a StrictFIFO queue', () => {
    const s = oneQueue('StrictFIFO', [workload('other', 'foreign', { cpu: 1 }, { created: 0 }), workload('ns', 'mine', { cpu: 1 }, { created: 1 })], {
      localQueues: [localQueue('ns', 'lq', 'cq'), localQueue('other', 'lq', 'cq')],
      namespaces: [{ metadata: { name: 'ns', labels: { team: 'a' } } }, { metadata: { name: 'other', labels: { team: 'b' } } }],
    });
    (s.clusterQueues?.[0]?.spec as { namespaceSelector?: unknown }).namespaceSelector = { matchLabels: { team: 'a' } };
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions.map((a) => a.name), ['mine']);
    assert.equal(r.pending[0]?.message, "workload namespace doesn't match ClusterQueue selector");
  });
});

describe('priority', () => {
  it('higher priority goes first, then the older', () => {
    const ws = [
      workload('ns', 'old-low', { cpu: 4 }, { created: 0, priority: 0 }),
      workload('ns', 'new-high', { cpu: 4 }, { created: 9, priority: 100 }),
      workload('ns', 'mid-high', { cpu: 4 }, { created: 5, priority: 100 }),
    ];
    const r = schedule(oneQueue('StrictFIFO', ws), T0);
    assert.deepEqual(r.admissions.map((a) => a.name), ['mid-high', 'new-high']);
    assert.deepEqual(r.pending.map((p) => p.name), ['old-low']);
  });

  it('a WorkloadPriorityClass gives the priority when spec.priority is unset', () => {
    const high = workload('ns', 'high', { cpu: 8 }, { created: 5 });
    (high.spec as Record<string, unknown>)['priorityClassRef'] = { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: 'sample-priority' };
    const s = oneQueue('StrictFIFO', [workload('ns', 'low', { cpu: 8 }, { created: 0 }), high], {
      workloadPriorityClasses: [{ metadata: { name: 'sample-priority' }, value: 10000, description: 'Sample priority' }],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions.map((a) => a.name), ['high']);
    assert.equal(r.pending[0]?.priority, 0);
  });

  it('positions as the visibility API lists them, per ClusterQueue and per LocalQueue', () => {
    const s = world({
      resourceFlavors: [flavor('default-flavor')],
      clusterQueues: [clusterQueue('cq', { 'default-flavor': { cpu: 1 } }, { queueingStrategy: 'StrictFIFO' })],
      queues: [['a', 'cq'], ['b', 'cq']],
      workloads: [
        admitted(workload('a', 'running', { cpu: 1 }), 'cq', 'default-flavor'),
        workload('a', 'a1', { cpu: 1 }, { created: 1 }),
        workload('b', 'b1', { cpu: 1 }, { created: 2 }),
        workload('a', 'a2', { cpu: 1 }, { created: 3, priority: 5 }),
        workload('b', 'b2', { cpu: 1 }, { created: 4 }),
      ],
    });
    const expected = [
      ['a2', 0, 0],
      ['a1', 1, 1],
      ['b1', 2, 0],
      ['b2', 3, 1],
    ];
    assert.deepEqual(positions(s)['cq']?.map((p) => [p.name, p.positionInClusterQueue, p.positionInLocalQueue]), expected);
    const r = schedule(s, T0);
    assert.deepEqual(r.pending.map((p) => [p.name, p.positionInClusterQueue, p.positionInLocalQueue]), expected);
    assert.equal(r.clusterQueues['cq']?.pendingWorkloads, 4);
    assert.equal(r.localQueues['a/lq']?.pendingWorkloads, 2);
    assert.equal(r.localQueues['a/lq']?.reservingWorkloads, 1);
  });
});

describe('the engine between calls', () => {
  it('admits the next workload once a running one finishes, and only then', () => {
    const e = new AdmissionEngine(oneQueue('BestEffortFIFO', [running, workload('ns', 'next', { cpu: 6 }, { created: 1 })]));
    assert.deepEqual(e.schedule(T0).admissions, []);
    // the controller writes back nothing new: still nothing to do
    assert.deepEqual(e.schedule(T0 + 1000).admissions, []);
    const done = structuredClone(running);
    done.status?.conditions?.push({ type: 'Finished', status: 'True', reason: 'Succeeded', message: 'Job finished successfully' });
    e.upsertWorkload(done);
    const r = e.schedule(T0 + 2000);
    assert.deepEqual(r.admissions.map((a) => a.name), ['next']);
    assert.equal(r.clusterQueues['cq']?.reservingWorkloads, 1);
  });

  it('does not admit twice, and an admission written back changes nothing', () => {
    const w = workload('ns', 'w', { cpu: 4 });
    const e = new AdmissionEngine(oneQueue('BestEffortFIFO', [w, workload('ns', 'x', { cpu: 4 }, { created: 1 }), workload('ns', 'y', { cpu: 4 }, { created: 2 })]));
    const first = e.schedule(T0);
    assert.deepEqual(first.admissions.map((a) => a.name), ['w', 'x']);
    assert.deepEqual(e.schedule(T0).admissions, []);
    const a = first.admissions[0];
    e.upsertWorkload({
      ...w,
      status: { admission: a?.admission, conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', lastTransitionTime: new Date(T0).toISOString() }] },
    });
    const again = e.schedule(T0 + 1);
    assert.deepEqual(again.admissions, []);
    assert.equal(again.pending.find((p) => p.name === 'y')?.reason, 'WaitingForQuota');
    assert.equal(again.clusterQueues['cq']?.reservingWorkloads, 2);
  });

  it('a deleted workload gives its quota back', () => {
    const e = new AdmissionEngine(oneQueue('StrictFIFO', [running, workload('ns', 'next', { cpu: 6 }, { created: 1 })]));
    assert.deepEqual(e.schedule(T0).admissions, []);
    e.deleteWorkload('ns', 'running');
    assert.deepEqual(e.schedule(T0).admissions.map((a) => a.name), ['next']);
  });

  it('StrictFIFO: a workload created in the same second as the blocked head waits behind it, whatever its uid', () => {
    // creation timestamps have whole seconds: the uid, random on a cluster, must not decide the order
    const e = new AdmissionEngine(oneQueue('StrictFIFO', [running]));
    e.upsertWorkload(workload('ns', 'big', { cpu: 6 }, { created: 1, uid: 'uid-f' }));
    assert.deepEqual(e.schedule(T0 + 1000).admissions, []);
    e.upsertWorkload(workload('ns', 'small', { cpu: 2 }, { created: 1, uid: 'uid-0' }));
    const r = e.schedule(T0 + 1100);
    assert.deepEqual(r.admissions, []);
    assert.deepEqual(r.pending.map((p) => [p.name, p.positionInClusterQueue, p.reason]), [['big', 0, 'WaitingForQuota'], ['small', 1, 'PendingEvaluation']]);
    assert.deepEqual(e.positions()['cq']?.map((p) => p.name), ['big', 'small']);
    // quota freed: the head first, then the one behind it
    const done = structuredClone(running);
    done.status?.conditions?.push({ type: 'Finished', status: 'True', reason: 'Succeeded', message: 'Job finished successfully' });
    e.upsertWorkload(done);
    assert.deepEqual(e.schedule(T0 + 2000).admissions.map((a) => [a.name, a.cycle]), [['big', 1], ['small', 2]]);
  });

  it('heads of two ClusterQueues created in the same second compete for a cohort\'s quota in the order they arrived', () => {
    const e = new AdmissionEngine(world({
      resourceFlavors: [flavor('default-flavor')],
      clusterQueues: ['a', 'b', 'lender'].map((n) => clusterQueue(n, { 'default-flavor': { cpu: n === 'lender' ? 2 : 0 } }, { cohortName: 'org' })),
      queues: [['ns-a', 'a'], ['ns-b', 'b']],
    }));
    // b's head first, then a's: ClusterQueue a's name would otherwise put its head first
    e.upsertWorkload(workload('ns-b', 'early', { cpu: 2 }, { created: 1, uid: 'uid-f' }));
    e.upsertWorkload(workload('ns-a', 'late', { cpu: 2 }, { created: 1, uid: 'uid-0' }));
    const r = e.schedule(T0 + 1100);
    assert.deepEqual(r.admissions.map((a) => a.name), ['early']);
    assert.equal(r.pending.find((p) => p.name === 'late')?.reason, 'WaitingForQuota');
  });

  it('a workload in backoff after a PodsReady timeout waits for requeueAt', () => {
    const w = workload('ns', 'w', { cpu: 1 });
    w.status = {
      requeueState: { count: 1, requeueAt: new Date(T0 + 60_000).toISOString() },
      conditions: [{ type: 'Evicted', status: 'True', reason: 'PodsReadyTimeout', message: 'Exceeded the PodsReady timeout default/w', lastTransitionTime: new Date(T0).toISOString() }],
    };
    const e = new AdmissionEngine(oneQueue('BestEffortFIFO', [w]));
    assert.deepEqual(e.schedule(T0 + 30_000).admissions, []);
    assert.deepEqual(e.schedule(T0 + 60_000).admissions.map((a) => a.name), ['w']);
  });
});
