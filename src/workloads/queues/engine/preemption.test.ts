// Preemption as Kueue does it: within a ClusterQueue by priority, reclaiming lent quota in a cohort,
// borrowing while preempting up to a priority threshold, the minimal set of victims, their order,
// the reasons and messages, and fair sharing's strategies.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionEngine, schedule } from './engine.js';
import { T0, admitted, clusterQueue, flavor, workload, world } from './testing.js';
import type { ClusterQueuePreemptionLike, CycleResult, Snapshot, WorkloadLike } from './types.js';

const victims = (r: CycleResult): [string, string][] => r.preemptions.map((p) => [p.name, p.reason]);
const run = (name: string, cpu: number, o: { priority?: number; ns?: string; cq?: string; at?: number } = {}): WorkloadLike =>
  admitted(workload(o.ns ?? 'ns', name, { cpu }, { priority: o.priority ?? 0, created: -1000 + (o.at ?? 0) }), o.cq ?? 'cq', 'f', o.at ?? 0);

function single(preemption: ClusterQueuePreemptionLike, workloads: WorkloadLike[]): Snapshot {
  return world({ resourceFlavors: [flavor('f')], clusterQueues: [clusterQueue('cq', { f: { cpu: 10 } }, { preemption })], queues: [['ns', 'cq']], workloads });
}

describe('preemption within a ClusterQueue', () => {
  const running = [run('low-old', 6, { at: 1 }), run('low-new', 4, { at: 2 })];

  it('LowerPriority: evicts the fewest lower-priority workloads that make room', () => {
    const r = schedule(single({ withinClusterQueue: 'LowerPriority' }, [...running, workload('ns', 'high', { cpu: 5 }, { priority: 100, uid: 'high-uid' })]), T0);
    // low-new (most recently admitted) is tried first, but only low-old's 6 CPUs are needed in the end
    assert.deepEqual(victims(r), [['low-old', 'InClusterQueue']]);
    assert.equal(r.preemptions[0]?.message, 'Preempted to accommodate a workload (UID: high-uid, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq');
    assert.deepEqual(r.preemptions[0]?.preemptor, { namespace: 'ns', name: 'high', uid: 'high-uid' });
    const high = r.pending.find((p) => p.name === 'high');
    assert.equal(high?.reason, 'WaitingForPreemptedWorkloads');
    assert.equal(high?.message, "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor f, 5 more needed. Pending the preemption of 1 workload(s)");
    assert.equal(r.admissions.length, 0);
  });

  it('takes the newest of equal candidates first', () => {
    const r = schedule(single({ withinClusterQueue: 'LowerPriority' }, [...running, workload('ns', 'high', { cpu: 3 }, { priority: 100 })]), T0);
    assert.deepEqual(victims(r), [['low-new', 'InClusterQueue']]);
  });

  it('never preempts equal priority under LowerPriority', () => {
    const r = schedule(single({ withinClusterQueue: 'LowerPriority' }, [...running, workload('ns', 'same', { cpu: 5 })]), T0);
    assert.deepEqual(r.preemptions, []);
    assert.equal(r.pending[0]?.reason, 'WaitingForQuota');
  });

  it('LowerOrNewerEqualPriority: an older workload of equal priority preempts a newer one', () => {
    const newer = admitted(workload('ns', 'newer', { cpu: 10 }, { created: 50 }), 'cq', 'f', 60);
    const r = schedule(single({ withinClusterQueue: 'LowerOrNewerEqualPriority' }, [newer, workload('ns', 'older', { cpu: 5 }, { created: 10 })]), T0 + 100_000);
    assert.deepEqual(victims(r), [['newer', 'InClusterQueue']]);
  });

  it('a preemption already under way is not issued again', () => {
    const victim = run('low-old', 6, { at: 1 });
    victim.status?.conditions?.push({ type: 'Evicted', status: 'True', reason: 'Preempted', message: 'Preempted to accommodate a workload', lastTransitionTime: new Date(T0).toISOString() });
    const r = schedule(single({ withinClusterQueue: 'LowerPriority' }, [victim, run('low-new', 4, { at: 2 }), workload('ns', 'high', { cpu: 5 }, { priority: 100 })]), T0);
    assert.deepEqual(r.preemptions, []);
    assert.match(r.pending[0]?.message ?? '', /Pending the preemption of 1 workload\(s\)$/);
  });

  it('the engine holds the preemptor at the head until its victims are gone, then admits it', () => {
    const e = new AdmissionEngine(single({ withinClusterQueue: 'LowerPriority' }, [...running, workload('ns', 'high', { cpu: 5 }, { priority: 100 }), workload('ns', 'small', { cpu: 1 }, { priority: 50, created: 1 })]));
    const first = e.schedule(T0);
    assert.deepEqual(victims(first), [['low-old', 'InClusterQueue']]);
    assert.deepEqual(first.admissions, []);
    // again before the victim is gone: nothing new
    const again = e.schedule(T0 + 1);
    assert.deepEqual([again.preemptions, again.admissions], [[], []]);
    assert.deepEqual(again.pending.map((p) => [p.name, p.positionInClusterQueue]), [['high', 0], ['small', 1]]);
    e.deleteWorkload('ns', 'low-old');
    assert.deepEqual(e.schedule(T0 + 2).admissions.map((a) => a.name), ['high', 'small']);
  });
});

/** team-a and team-b, 9 and 12 CPUs, in cohort team-ab */
function cohortOf(pa: ClusterQueuePreemptionLike, pb: ClusterQueuePreemptionLike, workloads: WorkloadLike[]): Snapshot {
  return world({
    resourceFlavors: [flavor('f')],
    clusterQueues: [
      clusterQueue('team-a-cq', { f: { cpu: 9 } }, { cohortName: 'team-ab', preemption: pa }),
      clusterQueue('team-b-cq', { f: { cpu: 12 } }, { cohortName: 'team-ab', preemption: pb }),
    ],
    queues: [['team-a', 'team-a-cq'], ['team-b', 'team-b-cq']],
    workloads,
  });
}

describe('reclaim within a cohort', () => {
  const borrowed = [run('a1', 9, { ns: 'team-a', cq: 'team-a-cq', at: 1, priority: 20 }), run('a2', 6, { ns: 'team-a', cq: 'team-a-cq', at: 2, priority: 10 })];

  it('Any: a queue takes back its lent quota from a borrower of any priority, lowest first', () => {
    const r = schedule(cohortOf({}, { reclaimWithinCohort: 'Any' }, [...borrowed, workload('team-b', 'b', { cpu: 10 })]), T0);
    assert.deepEqual(victims(r), [['a2', 'InCohortReclamation']]);
    assert.match(r.preemptions[0]?.message ?? '', /due to reclamation within the cohort; preemptor path: \/team-ab\/team-b-cq; preemptee path: \/team-ab\/team-a-cq$/);
  });

  it('LowerPriority: only lower-priority borrowers are taken', () => {
    const r = schedule(cohortOf({}, { reclaimWithinCohort: 'LowerPriority' }, [...borrowed, workload('team-b', 'b', { cpu: 10 }, { priority: 15 })]), T0);
    assert.deepEqual(victims(r), [['a2', 'InCohortReclamation']]);
    const none = schedule(cohortOf({}, { reclaimWithinCohort: 'LowerPriority' }, [...borrowed, workload('team-b', 'b', { cpu: 10 }, { priority: 5 })]), T0);
    assert.deepEqual(none.preemptions, []);
  });

  it('Never: the lender waits', () => {
    const r = schedule(cohortOf({}, {}, [...borrowed, workload('team-b', 'b', { cpu: 10 })]), T0);
    assert.deepEqual(r.preemptions, []);
    assert.equal(r.pending.find((p) => p.name === 'b')?.reason, 'WaitingForQuota');
  });

  it('a queue within its nominal quota is never a reclaim target', () => {
    const own = [run('a1', 9, { ns: 'team-a', cq: 'team-a-cq', at: 1 })];
    const r = schedule(cohortOf({}, { reclaimWithinCohort: 'Any' }, [...own, run('b0', 12, { ns: 'team-b', cq: 'team-b-cq' }), workload('team-b', 'b', { cpu: 1 })]), T0);
    assert.deepEqual(r.preemptions, []);
  });
});

describe('borrowWithinCohort', () => {
  // three queues of 4; b borrows 4 with a low-priority workload; c uses its own 4; a uses its 4 and wants 2 more
  function three(bwc: ClusterQueuePreemptionLike['borrowWithinCohort'], preemptorPriority: number): Snapshot {
    return world({
      resourceFlavors: [flavor('f')],
      clusterQueues: ['a', 'b', 'c'].map((n) => clusterQueue(n, { f: { cpu: 4 } }, { cohortName: 'co', preemption: { reclaimWithinCohort: 'Any', borrowWithinCohort: bwc } })),
      queues: [['ns-a', 'a'], ['ns-b', 'b'], ['ns-c', 'c']],
      workloads: [
        run('a-own', 4, { ns: 'ns-a', cq: 'a' }),
        run('b-borrow', 8, { ns: 'ns-b', cq: 'b', priority: 0 }),
        run('c-own', 4, { ns: 'ns-c', cq: 'c' }),
        workload('ns-a', 'a-more', { cpu: 2 }, { priority: preemptorPriority }),
      ],
    });
  }

  it('LowerPriority lets a borrowing workload preempt lower-priority borrowers', () => {
    const r = schedule(three({ policy: 'LowerPriority' }, 10), T0);
    assert.deepEqual(victims(r), [['b-borrow', 'InCohortReclaimWhileBorrowing']]);
    assert.match(r.preemptions[0]?.message ?? '', /due to reclamation within the cohort while borrowing;/);
  });

  it('not above maxPriorityThreshold', () => {
    assert.deepEqual(schedule(three({ policy: 'LowerPriority', maxPriorityThreshold: -1 }, 10), T0).preemptions, []);
    assert.deepEqual(victims(schedule(three({ policy: 'LowerPriority', maxPriorityThreshold: 0 }, 10), T0)), [['b-borrow', 'InCohortReclaimWhileBorrowing']]);
  });

  it('Never (the default): a workload that would borrow does not preempt', () => {
    assert.deepEqual(schedule(three(undefined, 10), T0).preemptions, []);
  });
});

describe('fair sharing', () => {
  const fair = { fairSharing: { preemptionStrategies: ['LessThanOrEqualToFinalShare', 'LessThanInitialShare'] as ('LessThanOrEqualToFinalShare' | 'LessThanInitialShare')[] } };
  function shares(workloads: WorkloadLike[], weights: [number, number] = [1, 1]): Snapshot {
    return world({
      resourceFlavors: [flavor('f')],
      clusterQueues: [
        clusterQueue('a', { f: { cpu: 4 } }, { cohortName: 'co', preemption: { reclaimWithinCohort: 'Any' }, fairSharing: { weight: weights[0] } }),
        clusterQueue('b', { f: { cpu: 4 } }, { cohortName: 'co', preemption: { reclaimWithinCohort: 'Any' }, fairSharing: { weight: weights[1] } }),
        clusterQueue('c', { f: { cpu: 4 } }, { cohortName: 'co' }),
      ],
      queues: [['ns-a', 'a'], ['ns-b', 'b'], ['ns-c', 'c']],
      workloads,
    });
  }
  const aBorrows = [1, 2, 3, 4].map((i) => run(`a${i}`, 2, { ns: 'ns-a', cq: 'a', at: i }));

  it('reports each ClusterQueue\'s weighted share: borrowed over what the cohort can lend, ×1000, over the weight', () => {
    const r = schedule(shares(aBorrows), T0, fair);
    // a borrows 4 of 12: 333.3 rounded up
    assert.deepEqual(r.clusterQueues['a']?.fairSharing, { weightedShare: 334 });
    assert.deepEqual(r.clusterQueues['b']?.fairSharing, { weightedShare: 0 });
    const halfWeight = schedule(shares(aBorrows, [0.5, 1]), T0, fair);
    assert.deepEqual(halfWeight.clusterQueues['a']?.fairSharing, { weightedShare: 667 });
    assert.equal(schedule(shares(aBorrows), T0).clusterQueues['a']?.fairSharing, undefined);
  });

  it('a queue borrowing less than another takes from it while its share stays no higher (InCohortFairSharing)', () => {
    const s = shares([...aBorrows, run('b1', 4, { ns: 'ns-b', cq: 'b' }), workload('ns-b', 'b-more', { cpu: 2 })]);
    const r = schedule(s, T0, fair);
    assert.deepEqual(victims(r), [['a4', 'InCohortFairSharing']]);
    assert.match(r.preemptions[0]?.message ?? '', /due to Fair Sharing within the cohort;/);
    // without fair sharing, a workload that has to borrow cannot preempt
    assert.deepEqual(schedule(s, T0).preemptions, []);
  });

  it('no preemption when it would leave the preemptor above the target', () => {
    const s = shares([run('a1', 6, { ns: 'ns-a', cq: 'a' }), run('b1', 6, { ns: 'ns-b', cq: 'b' }), workload('ns-b', 'b-more', { cpu: 2 })]);
    assert.deepEqual(schedule(s, T0, fair).preemptions, []);
  });

  it('admission goes to the queue whose share would be lowest', () => {
    // a already borrows; both heads would borrow 2 more; b, at 0, goes first and takes the last room
    const s = shares([run('a1', 6, { ns: 'ns-a', cq: 'a' }), run('b1', 4, { ns: 'ns-b', cq: 'b' }), workload('ns-a', 'a-next', { cpu: 2 }), workload('ns-b', 'b-next', { cpu: 2 }, { created: 10 })]);
    const r = schedule(s, T0, fair);
    assert.deepEqual(r.admissions.map((a) => [a.name, a.cycle]), [['b-next', 1]]);
    // classic order would have taken the older one
    assert.deepEqual(schedule(s, T0).admissions.map((a) => a.name), ['a-next']);
  });
});
