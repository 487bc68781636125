// Kueue's documented quota arithmetic: cohorts, borrowingLimit, lendingLimit, cohort-level quota,
// and the messages a workload that does not fit gets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { schedule } from './engine.js';
import { T0, admitted, clusterQueue, cohort, flavor, workload, world } from './testing.js';
import type { CycleResult, Snapshot, WorkloadLike } from './types.js';

const names = (r: CycleResult): string[] => r.admissions.map((a) => a.name);
const pendingOf = (r: CycleResult, name: string) => r.pending.find((p) => p.name === name);

/** team-a (9 CPU) and team-b (12 CPU) in cohort team-ab, as in Kueue's cluster_queue concept page */
function teams(a: Record<string, unknown> = {}, b: Record<string, unknown> = {}, workloads: WorkloadLike[] = []): Snapshot {
  return world({
    resourceFlavors: [flavor('default-flavor')],
    clusterQueues: [
      clusterQueue('team-a-cq', { 'default-flavor': { cpu: 9, ...a } }, { cohortName: 'team-ab' }),
      clusterQueue('team-b-cq', { 'default-flavor': { cpu: 12, ...b } }, { cohortName: 'team-ab' }),
    ],
    queues: [
      ['team-a', 'team-a-cq'],
      ['team-b', 'team-b-cq'],
    ],
    workloads,
  });
}

/** the largest single workload team-a can get admitted, found by asking for n CPUs */
function largestFor(build: (w: WorkloadLike[]) => Snapshot): number {
  let n = 0;
  while (n < 100 && schedule(build([workload('team-a', 'w', { cpu: n + 1 })]), T0).admissions.length === 1) n++;
  return n;
}

describe('borrowing in a cohort (Kueue docs: team-a 9 CPU, team-b 12 CPU)', () => {
  it('team-a uses up to 21 CPUs while team-b is idle', () => {
    assert.equal(largestFor((w) => teams({}, {}, w)), 21);
    const r = schedule(teams({}, {}, [workload('team-a', 'w', { cpu: 21 })]), T0);
    assert.deepEqual(names(r), ['w']);
    assert.equal(r.admissions[0]?.borrowing, true);
    assert.deepEqual(r.clusterQueues['team-a-cq']?.flavorsReservation, [{ name: 'default-flavor', resources: [{ name: 'cpu', total: '21', borrowed: '12' }] }]);
  });

  it('with borrowingLimit 1 team-a uses up to 10', () => {
    const a = { cpu: [9, 1] };
    assert.equal(largestFor((w) => teams(a, {}, w)), 10);
  });

  it('with team-b lendingLimit 1 team-a uses up to 10', () => {
    const b = { cpu: [12, null, 1] };
    assert.equal(largestFor((w) => teams({}, b, w)), 10);
  });

  it('team-b keeps the 11 CPUs it does not lend while team-a borrows the 1 it does', () => {
    const b = { cpu: [12, null, 1] };
    const a = admitted(workload('team-a', 'a', { cpu: 10 }), 'team-a-cq', 'default-flavor');
    assert.deepEqual(names(schedule(teams({}, b, [a, workload('team-b', 'b', { cpu: 11 }, { created: 1 })]), T0)), ['b']);
    const r = schedule(teams({}, b, [a, workload('team-b', 'b', { cpu: 12 }, { created: 1 })]), T0);
    assert.deepEqual(names(r), []);
    assert.match(pendingOf(r, 'b')?.message ?? '', /, 1 more needed$/);
  });

  it('a borrowed CPU is not available to the lender until given back', () => {
    const r = schedule(teams({}, {}, [admitted(workload('team-a', 'a', { cpu: 15 }), 'team-a-cq', 'default-flavor'), workload('team-b', 'b', { cpu: 7 }, { created: 1 })]), T0);
    assert.deepEqual(names(r), []);
    assert.equal(pendingOf(r, 'b')?.reason, 'WaitingForQuota');
    assert.equal(pendingOf(r, 'b')?.message, "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed");
  });

  it('workloads under nominal quota go before borrowing ones in the same cycle', () => {
    // both heads arrive in the first cycle; team-b's fits its own quota and goes first although
    // younger; team-a's, skipped then, is looked at again in the next cycle and waits for quota
    const r = schedule(teams({}, {}, [workload('team-a', 'a', { cpu: 15 }), workload('team-b', 'b', { cpu: 12 }, { created: 5 })]), T0);
    assert.deepEqual(r.admissions.map((x) => [x.name, x.cycle]), [['b', 1]]);
    assert.equal(pendingOf(r, 'a')?.reason, 'WaitingForQuota');
    assert.equal(pendingOf(r, 'a')?.message, "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 6 more needed");
  });

  it('a head skipped because an earlier one took the quota is told so', () => {
    // StrictFIFO keeps the skipped head in front, and no later cycle changes its verdict
    const s = teams({}, {}, [workload('team-a', 'a', { cpu: 15 }), workload('team-b', 'b', { cpu: 12 }, { created: 5 })]);
    for (const cq of s.clusterQueues ?? []) (cq.spec as { queueingStrategy?: string }).queueingStrategy = 'StrictFIFO';
    const r = schedule(s, T0, { maxCycles: 1 });
    assert.equal(pendingOf(r, 'a')?.message, 'Workload no longer fits after processing another workload');
    assert.equal(pendingOf(r, 'a')?.reason, 'WaitingForQuota');
  });

  it('a request beyond anything the cohort could give stays pending with Kueue\'s words', () => {
    const r = schedule(teams({}, {}, [workload('team-a', 'w', { cpu: 24 })]), T0);
    assert.equal(r.admissions.length, 0);
    const p = pendingOf(r, 'w');
    assert.equal(p?.reason, 'ExceedsMaxQuota');
    assert.equal(
      p?.message,
      "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests (0) + current podset request (24) > maximum capacity (21)",
    );
  });

  it('a ClusterQueue without a cohort: request > maximum capacity (24 > 20)', () => {
    const s = world({
      resourceFlavors: [flavor('default-flavor')],
      clusterQueues: [clusterQueue('cq', { 'default-flavor': { cpu: 20 } })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'w', { cpu: 24 })],
    });
    assert.match(pendingOf(schedule(s, T0), 'w')?.message ?? '', /current podset request \(24\) > maximum capacity \(20\)$/);
  });

  it('earlier pod sets count against later ones in the message', () => {
    const s = world({
      resourceFlavors: [flavor('default-flavor')],
      clusterQueues: [clusterQueue('cq', { 'default-flavor': { cpu: 10 } })],
      queues: [['ns', 'cq']],
      workloads: [
        workload('ns', 'w', [
          { name: 'driver', count: 1, template: { spec: { containers: [{ resources: { requests: { cpu: '4' } } }] } } },
          { name: 'workers', count: 2, template: { spec: { containers: [{ resources: { requests: { cpu: '3500m' } } }] } } },
        ]),
      ],
    });
    assert.equal(
      pendingOf(schedule(s, T0), 'w')?.message,
      "couldn't assign flavors to pod set workers: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests (4) + current podset request (7) > maximum capacity (10)",
    );
  });

  it('memory prints as Kubernetes does', () => {
    const s = world({
      resourceFlavors: [flavor('default-flavor')],
      clusterQueues: [clusterQueue('cq', { 'default-flavor': { cpu: 9, memory: '36Gi' } })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'w', { cpu: 1, memory: '40Gi' })],
    });
    assert.match(pendingOf(schedule(s, T0), 'w')?.message ?? '', /current podset request \(40Gi\) > maximum capacity \(36Gi\)$/);
  });

  it('a Cohort\'s own quota adds to its ClusterQueues\' (nominalQuota 0 queue uses the cohort\'s 12 CPUs)', () => {
    const s = world({
      resourceFlavors: [flavor('default-flavor')],
      cohorts: [cohort('hello-cohort', { resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: 12 }] }] }] })],
      clusterQueues: [clusterQueue('my-cluster-queue', { 'default-flavor': { cpu: 0 } }, { cohortName: 'hello-cohort' })],
      queues: [['ns', 'my-cluster-queue']],
      workloads: [workload('ns', 'a', { cpu: 8 }), workload('ns', 'b', { cpu: 4 }, { created: 1 }), workload('ns', 'c', { cpu: 1 }, { created: 2 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(names(r), ['a', 'b']);
    assert.equal(pendingOf(r, 'c')?.reason, 'WaitingForQuota');
  });

  it('hierarchical cohorts: a queue borrows through its parent from a cousin', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      cohorts: [cohort('root'), cohort('left', { parentName: 'root' }), cohort('right', { parentName: 'root' })],
      clusterQueues: [clusterQueue('a', { f: { cpu: 4 } }, { cohortName: 'left' }), clusterQueue('b', { f: { cpu: 6 } }, { cohortName: 'right' })],
      queues: [['ns-a', 'a'], ['ns-b', 'b']],
      workloads: [workload('ns-a', 'w', { cpu: 10 }), workload('ns-a', 'x', { cpu: 1 }, { created: 1 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(names(r), ['w']);
    assert.equal(pendingOf(r, 'x')?.reason, 'WaitingForQuota');
  });

  it('a cohort\'s lendingLimit keeps part of its subtree\'s quota from the rest of the tree', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      cohorts: [
        cohort('root'),
        cohort('left', { parentName: 'root', resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'f', resources: [{ name: 'cpu', nominalQuota: 0, lendingLimit: 2 }] }] }] }),
        cohort('right', { parentName: 'root' }),
      ],
      clusterQueues: [clusterQueue('a', { f: { cpu: 8 } }, { cohortName: 'left' }), clusterQueue('b', { f: { cpu: 0 } }, { cohortName: 'right' })],
      queues: [['ns-a', 'a'], ['ns-b', 'b']],
      workloads: [workload('ns-b', 'w', { cpu: 3 })],
    });
    const r = schedule(s, T0);
    assert.equal(r.admissions.length, 0);
    assert.match(pendingOf(r, 'w')?.message ?? '', /maximum capacity \(2\)$/);
  });
});

describe('why a workload is not admitted', () => {
  const base = (extra: Partial<Snapshot> & { queues?: [string, string, string?][] }): Snapshot =>
    world({ resourceFlavors: [flavor('default-flavor')], clusterQueues: [clusterQueue('cq', { 'default-flavor': { cpu: 10 } })], ...extra });

  it('LocalQueue lq doesn\'t exist', () => {
    const r = schedule(base({ queues: [], namespaces: [{ metadata: { name: 'ns' } }], workloads: [workload('ns', 'w', { cpu: 1 })] }), T0);
    assert.deepEqual(pendingOf(r, 'w') && { reason: pendingOf(r, 'w')?.reason, message: pendingOf(r, 'w')?.message }, { reason: 'Misconfigured', message: "LocalQueue lq doesn't exist" });
    assert.equal(pendingOf(r, 'w')?.positionInClusterQueue, undefined);
  });

  it('ClusterQueue cq doesn\'t exist', () => {
    const r = schedule(base({ queues: [['ns', 'other']], workloads: [workload('ns', 'w', { cpu: 1 })] }), T0);
    assert.equal(pendingOf(r, 'w')?.message, "ClusterQueue other doesn't exist");
  });

  it('stopPolicy Hold: ClusterQueue cq is inactive, and its Active condition says it is stopped', () => {
    const s = base({ queues: [['ns', 'cq']], workloads: [workload('ns', 'w', { cpu: 1 })] });
    (s.clusterQueues?.[0]?.spec as { stopPolicy?: string }).stopPolicy = 'Hold';
    const r = schedule(s, T0);
    assert.equal(r.admissions.length, 0);
    assert.deepEqual({ reason: pendingOf(r, 'w')?.reason, message: pendingOf(r, 'w')?.message }, { reason: 'Suspended', message: 'ClusterQueue cq is inactive' });
    assert.deepEqual(r.clusterQueues['cq']?.conditions[0], { type: 'Active', status: 'False', reason: 'Stopped', message: "Can't admit new workloads: is stopped." });
    // still queued: it keeps its place
    assert.equal(pendingOf(r, 'w')?.positionInClusterQueue, 0);
    assert.equal(r.clusterQueues['cq']?.pendingWorkloads, 1);
  });

  it('a ClusterQueue naming a missing flavor is inactive', () => {
    const s = world({ clusterQueues: [clusterQueue('cq', { gone: { cpu: 10 } })], queues: [['ns', 'cq']], workloads: [workload('ns', 'w', { cpu: 1 })] });
    const r = schedule(s, T0);
    assert.equal(pendingOf(r, 'w')?.message, 'ClusterQueue cq is inactive');
    assert.deepEqual(r.clusterQueues['cq']?.conditions[0], { type: 'Active', status: 'False', reason: 'FlavorNotFound', message: "Can't admit new workloads: references missing ResourceFlavor(s): gone." });
  });

  it('a stopped LocalQueue: LocalQueue lq is inactive', () => {
    const s = base({ localQueues: [{ metadata: { namespace: 'ns', name: 'lq' }, spec: { clusterQueue: 'cq', stopPolicy: 'Hold' } }], namespaces: [{ metadata: { name: 'ns' } }], workloads: [workload('ns', 'w', { cpu: 1 })] });
    const r = schedule(s, T0);
    assert.deepEqual({ reason: pendingOf(r, 'w')?.reason, message: pendingOf(r, 'w')?.message }, { reason: 'Suspended', message: 'LocalQueue lq is inactive' });
    assert.deepEqual(r.localQueues['ns/lq']?.conditions[0], { type: 'Active', status: 'False', reason: 'Stopped', message: 'LocalQueue is stopped' });
  });

  it('a namespace the namespaceSelector does not match', () => {
    const s = base({ queues: [['team-b', 'cq']], workloads: [workload('team-b', 'w', { cpu: 1 })] });
    (s.clusterQueues?.[0]?.spec as { namespaceSelector?: unknown }).namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } };
    const r = schedule(s, T0);
    assert.deepEqual({ reason: pendingOf(r, 'w')?.reason, message: pendingOf(r, 'w')?.message }, { reason: 'Misconfigured', message: "workload namespace doesn't match ClusterQueue selector" });
  });

  it('no namespaceSelector at all admits no namespace', () => {
    const s = base({ queues: [['ns', 'cq']], workloads: [workload('ns', 'w', { cpu: 1 })] });
    delete (s.clusterQueues?.[0]?.spec as { namespaceSelector?: unknown }).namespaceSelector;
    assert.equal(pendingOf(schedule(s, T0), 'w')?.message, "workload namespace doesn't match ClusterQueue selector");
  });

  it('a resource the ClusterQueue does not cover', () => {
    const r = schedule(base({ queues: [['ns', 'cq']], workloads: [workload('ns', 'w', { cpu: 1, 'nvidia.com/gpu': 1 })] }), T0);
    assert.deepEqual({ reason: pendingOf(r, 'w')?.reason, message: pendingOf(r, 'w')?.message }, { reason: 'NoMatchingFlavor', message: "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in ClusterQueue" });
  });

  it('requests above limits', () => {
    const w = workload('ns', 'w', [{ name: 'main', count: 1, template: { spec: { containers: [{ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] } } }]);
    const r = schedule(base({ queues: [['ns', 'cq']], workloads: [w] }), T0);
    assert.equal(pendingOf(r, 'w')?.message, 'resources validation failed: spec.podSets[0].template.spec.containers[0]: Invalid value: ["cpu"]: requests must not exceed its limits');
  });

  it('an inactive workload is deactivated', () => {
    const w = workload('ns', 'w', { cpu: 1 });
    (w.spec as { active?: boolean }).active = false;
    const r = schedule(base({ queues: [['ns', 'cq']], workloads: [w] }), T0);
    assert.equal(r.admissions.length, 0);
    assert.equal(pendingOf(r, 'w')?.message, 'The workload is deactivated');
  });
});
