// Flavor assignment: the order of a resource group's flavors, node labels and taints against the
// pods, one flavor per group, flavorFungibility, the `pods` resource, usage from pod templates,
// partial admission.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { schedule } from './engine.js';
import { T0, admitted, clusterQueue, flavor, podSet, taint, workload, world } from './testing.js';
import { usageOf } from './workload-info.js';
import type { CycleResult, ResourceFlavorLike, Snapshot, WorkloadLike } from './types.js';

const spot = flavor('spot', { nodeLabels: { 'instance-type': 'spot' }, nodeTaints: [taint('spot', 'true')] });
const onDemand = flavor('on-demand', { nodeLabels: { 'instance-type': 'on-demand' } });

function twoFlavors(workloads: WorkloadLike[], flavors: ResourceFlavorLike[] = [spot, onDemand], spec: Record<string, unknown> = {}): Snapshot {
  return world({
    resourceFlavors: flavors,
    clusterQueues: [clusterQueue('cq', { spot: { cpu: 4 }, 'on-demand': { cpu: 4 } }, spec)],
    queues: [['ns', 'cq']],
    workloads,
  });
}

const flavorOf = (r: CycleResult, name: string): string | undefined => r.admissions.find((a) => a.name === name)?.admission.podSetAssignments[0]?.flavors['cpu'];

describe('flavors', () => {
  it('pods that do not tolerate the spot taint go on-demand', () => {
    const r = schedule(twoFlavors([workload('ns', 'w', { cpu: 2 })]), T0);
    assert.equal(flavorOf(r, 'w'), 'on-demand');
  });

  it('pods that tolerate the taint take the first flavor', () => {
    const w = workload('ns', 'w', [podSet({ requests: { cpu: 2 }, tolerations: [{ key: 'spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' }] })]);
    assert.equal(flavorOf(schedule(twoFlavors([w]), T0), 'w'), 'spot');
  });

  it('a flavor\'s own tolerations stand in for the pods\' (the taint is not considered)', () => {
    const tolerating = flavor('spot', { nodeLabels: { 'instance-type': 'spot' }, nodeTaints: [taint('spot', 'true')], tolerations: [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }] });
    assert.equal(flavorOf(schedule(twoFlavors([workload('ns', 'w', { cpu: 2 })], [tolerating, onDemand]), T0), 'w'), 'spot');
  });

  it('a nodeSelector on a flavor label picks that flavor; other labels are not the flavor\'s concern', () => {
    const w = workload('ns', 'w', [podSet({ requests: { cpu: 2 }, tolerations: [{ operator: 'Exists' }], nodeSelector: { 'instance-type': 'on-demand', 'kubernetes.io/arch': 'amd64' } })]);
    assert.equal(flavorOf(schedule(twoFlavors([w]), T0), 'w'), 'on-demand');
  });

  it('when no flavor suits the pods, each says why', () => {
    const w = workload('ns', 'w', [podSet({ requests: { cpu: 2 }, nodeSelector: { 'instance-type': 'gpu' } })]);
    const p = schedule(twoFlavors([w]), T0).pending[0];
    assert.equal(p?.reason, 'NoMatchingFlavor');
    assert.equal(p?.message, "couldn't assign flavors to pod set main: flavor on-demand doesn't match node affinity, untolerated taint spot=true:NoSchedule in flavor spot");
  });

  it('the next flavor takes what the first cannot hold', () => {
    const tol = [{ operator: 'Exists' }];
    const ws = [1, 2, 3].map((i) => workload('ns', `w${i}`, [podSet({ requests: { cpu: 3 }, tolerations: tol })], { created: i }));
    const r = schedule(twoFlavors(ws), T0);
    assert.deepEqual(r.admissions.map((a) => [a.name, a.admission.podSetAssignments[0]?.flavors['cpu']]), [['w1', 'spot'], ['w2', 'on-demand']]);
    assert.equal(
      r.pending[0]?.message,
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 2 more needed, insufficient unused quota for cpu in flavor spot, 2 more needed",
    );
  });

  it('resources of one group share a flavor; separate groups choose their own', () => {
    const s = world({
      resourceFlavors: [flavor('x86'), flavor('arm'), flavor('default-flavor')],
      clusterQueues: [clusterQueue('cluster-queue', [{ x86: { cpu: 9 }, arm: { cpu: 12 } }, { 'default-flavor': { memory: '84Gi' } }])],
      queues: [['ns', 'cluster-queue']],
      workloads: [workload('ns', 'a', { cpu: 8, memory: '10Gi' }), workload('ns', 'b', { cpu: 8, memory: '10Gi' }, { created: 1 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(
      r.admissions.map((a) => a.admission.podSetAssignments[0]?.flavors),
      [
        { cpu: 'x86', memory: 'default-flavor' },
        { cpu: 'arm', memory: 'default-flavor' },
      ],
    );
  });

  it('a second resource group caps the total across flavors (credits)', () => {
    const s = world({
      resourceFlavors: [flavor('on-demand'), flavor('spot'), flavor('credits')],
      clusterQueues: [clusterQueue('team-cluster-queue', [{ 'on-demand': { cpu: 9 }, spot: { cpu: 9 } }, { credits: { cpu_credits: 14 } }])],
      queues: [['default', 'team-cluster-queue']],
      workloads: [workload('default', 'a', { cpu: 8, cpu_credits: 8 }), workload('default', 'b', { cpu: 8, cpu_credits: 8 }, { created: 1 }), workload('default', 'c', { cpu: 6, cpu_credits: 6 }, { created: 2 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions.map((a) => a.name), ['a', 'c']);
    assert.match(r.pending[0]?.message ?? '', /insufficient unused quota for cpu_credits in flavor credits, 2 more needed/);
  });

  it('whenCanBorrow MayStopSearch stays on the first flavor even if it has to borrow; TryNextFlavor moves on', () => {
    const s = (fungibility?: Record<string, string>): Snapshot =>
      world({
        resourceFlavors: [flavor('a'), flavor('b')],
        clusterQueues: [
          clusterQueue('cq', { a: { cpu: 2 }, b: { cpu: 4 } }, fungibility ? { cohortName: 'co', flavorFungibility: fungibility } : { cohortName: 'co' }),
          clusterQueue('lender', { a: { cpu: 4 }, b: { cpu: 0 } }, { cohortName: 'co' }),
        ],
        queues: [['ns', 'cq']],
        workloads: [workload('ns', 'w', { cpu: 3 })],
      });
    const stop = schedule(s(), T0).admissions[0];
    assert.deepEqual([stop?.admission.podSetAssignments[0]?.flavors['cpu'], stop?.borrowing], ['a', true]);
    const next = schedule(s({ whenCanBorrow: 'TryNextFlavor' }), T0).admissions[0];
    assert.deepEqual([next?.admission.podSetAssignments[0]?.flavors['cpu'], next?.borrowing], ['b', false]);
  });

  it('counts pods when the ClusterQueue covers the reserved resource "pods"', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      clusterQueues: [clusterQueue('cq', { f: { cpu: 100, pods: 5 } })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'a', [podSet({ count: 3, requests: { cpu: 1 } })]), workload('ns', 'b', [podSet({ count: 3, requests: { cpu: 1 } })], { created: 1 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions[0]?.admission.podSetAssignments[0], { name: 'main', flavors: { cpu: 'f', pods: 'f' }, resourceUsage: { cpu: '3', pods: '3' }, count: 3 });
    assert.match(r.pending[0]?.message ?? '', /insufficient unused quota for pods in flavor f, 1 more needed/);
  });
});

describe('usage', () => {
  it('is requests times count, limits standing in for missing requests, init containers by their peak', () => {
    const w = workload('ns', 'w', [
      {
        name: 'workers',
        count: 4,
        template: {
          spec: {
            initContainers: [{ name: 'init', resources: { requests: { cpu: '3' } } }],
            containers: [
              { name: 'a', resources: { requests: { cpu: '500m', memory: '1Gi' } } },
              { name: 'b', resources: { limits: { cpu: '1', memory: '512Mi', 'nvidia.com/gpu': '1' } } },
            ],
          },
        },
      },
    ]);
    assert.deepEqual(usageOf(w), {
      podSets: [{ name: 'workers', count: 4, requests: { cpu: '12', memory: '6Gi', 'nvidia.com/gpu': '4' } }],
      total: { cpu: '12', memory: '6Gi', 'nvidia.com/gpu': '4' },
      flavors: {},
    });
  });

  it('of an admitted workload comes from its admission, less reclaimable pods', () => {
    const w = admitted(workload('ns', 'w', [podSet({ count: 4, requests: { cpu: '2' } })]), 'cq', 'f');
    (w.status as { reclaimablePods?: unknown }).reclaimablePods = [{ name: 'main', count: 1 }];
    assert.deepEqual(usageOf(w), { podSets: [{ name: 'main', count: 3, requests: { cpu: '6' } }], total: { cpu: '6' }, flavors: { f: { cpu: '6' } } });
  });
});

describe('partial admission', () => {
  it('parallelism 20 with minCount 5 and 9 CPUs free is admitted with 9 pods', () => {
    const s = world({
      resourceFlavors: [flavor('default-flavor')],
      clusterQueues: [clusterQueue('cluster-queue', { 'default-flavor': { cpu: 9, memory: '36Gi' } })],
      queues: [['default', 'cluster-queue', 'user-queue']],
      workloads: [workload('default', 'job-sample-job-partial-admission', [podSet({ count: 20, minCount: 5, requests: { cpu: 1, memory: '200Mi' } })], { queue: 'user-queue' })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions[0]?.admission.podSetAssignments[0], { name: 'main', flavors: { cpu: 'default-flavor', memory: 'default-flavor' }, resourceUsage: { cpu: '9', memory: '1800Mi' }, count: 9 });
  });

  it('is not tried below minCount', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      clusterQueues: [clusterQueue('cq', { f: { cpu: 4 } })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'w', [podSet({ count: 20, minCount: 5, requests: { cpu: 1 } })])],
    });
    const r = schedule(s, T0);
    assert.equal(r.admissions.length, 0);
    assert.equal(r.pending[0]?.reason, 'ExceedsMaxQuota');
  });

  it('can be switched off', () => {
    const s = world({
      resourceFlavors: [flavor('f')],
      clusterQueues: [clusterQueue('cq', { f: { cpu: 9 } })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'w', [podSet({ count: 20, minCount: 5, requests: { cpu: 1 } })])],
    });
    assert.equal(schedule(s, T0, { partialAdmission: false }).admissions.length, 0);
  });
});

describe('admission checks', () => {
  it('a ClusterQueue with checks reserves quota; the workload is admitted once they are ready', () => {
    const s = world({
      resourceFlavors: [flavor('f'), flavor('g')],
      clusterQueues: [clusterQueue('cq', { f: { cpu: 1 }, g: { cpu: 4 } }, { admissionChecksStrategy: { admissionChecks: [{ name: 'prov' }, { name: 'only-g', onFlavors: ['g'] }] } })],
      queues: [['ns', 'cq']],
      workloads: [workload('ns', 'a', { cpu: 1 }), workload('ns', 'b', { cpu: 2 }, { created: 1 })],
    });
    const r = schedule(s, T0);
    assert.deepEqual(r.admissions.map((a) => [a.name, a.admissionChecks]), [['a', ['prov']], ['b', ['prov', 'only-g']]]);
    assert.equal(r.clusterQueues['cq']?.reservingWorkloads, 2);
    assert.equal(r.clusterQueues['cq']?.admittedWorkloads, 0);
  });
});
