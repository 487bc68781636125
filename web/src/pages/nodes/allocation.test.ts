import { describe, expect, it } from 'vitest';
import type { NodeLike, PodLike } from './allocation';
import type { GpuCardUsage } from '../../api/workload-types';
import { formatAmount, nodeAllocation, pendingPods, phaseCounts, podAmounts, withGpuShares } from './allocation';

const node: NodeLike = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'local' },
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110', 'nvidia.com/gpu': '2' },
    allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'nvidia.com/gpu': '2', 'ephemeral-storage': '0' },
  },
};

function pod(name: string, containers: NonNullable<PodLike['spec']>['containers'], extra: Partial<NonNullable<PodLike['spec']>> = {}, phase = 'Running'): PodLike {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: 'local', containers, ...extra }, status: { phase } };
}

describe('podAmounts', () => {
  it('parses quantities as Kubernetes does and sums containers', () => {
    const a = podAmounts(pod('p', [
      { name: 'a', resources: { requests: { cpu: '500m', memory: '1Gi' } } },
      { name: 'b', resources: { requests: { cpu: '2e0', memory: '512Mi', 'example.com/x': '2e3' }, limits: { cpu: 3 } } },
    ]));
    expect(a.requests).toEqual({ cpu: 2.5, memory: 1.5 * 2 ** 30, 'example.com/x': 2000 });
    expect(a.limits).toEqual({ cpu: 3 });
    expect(a.invalid).toEqual([]);
  });

  it('takes a limit as the request when no request is given', () => {
    expect(podAmounts(pod('p', [{ name: 'a', resources: { limits: { 'nvidia.com/gpu': '1', cpu: '1' } } }])).requests).toEqual({ 'nvidia.com/gpu': 1, cpu: 1 });
  });

  it('counts the largest init container when it asks for more than the containers together, plus overhead', () => {
    const a = podAmounts(pod('p', [{ name: 'a', resources: { requests: { cpu: '100m' } } }], {
      initContainers: [{ name: 'i', resources: { requests: { cpu: '1', memory: '2Gi' } } }],
      overhead: { cpu: '250m' },
    }));
    expect(a.requests).toEqual({ cpu: 1.25, memory: 2 * 2 ** 30 });
  });

  it('names a value that is not a quantity instead of counting it', () => {
    const a = podAmounts(pod('p', [{ name: 'a', resources: { requests: { cpu: 'lots', memory: '1Mi' } } }]));
    expect(a.requests).toEqual({ memory: 2 ** 20 });
    expect(a.invalid).toEqual(['container a request cpu: "lots"']);
  });
});

describe('nodeAllocation', () => {
  const pods: PodLike[] = [
    pod('train', [{ name: 'm', resources: { requests: { cpu: '1', memory: '2Gi', 'nvidia.com/gpu': 1 }, limits: { cpu: '2', memory: '4Gi', 'nvidia.com/gpu': 1 } } }]),
    pod('serve', [{ name: 'm', resources: { requests: { cpu: '500m', 'example.com/fpga': '1' } } }]),
    pod('done', [{ name: 'm', resources: { requests: { cpu: '3' } } }], {}, 'Succeeded'),
    { ...pod('elsewhere', [{ name: 'm', resources: { requests: { cpu: '3' } } }]), spec: { nodeName: 'other', containers: [{ name: 'm', resources: { requests: { cpu: '3' } } }] } },
    { ...pod('unbound', [{ name: 'm', resources: { requests: { cpu: '3' } } }], {}, 'Pending'), spec: { containers: [{ name: 'm', resources: { requests: { cpu: '3' } } }] } },
  ];

  it('sums requests and limits of the unfinished Pods bound to the node, per resource', () => {
    const a = nodeAllocation(node, pods, { cpu: '250000000n', memory: '1Gi' });
    expect(a.pods.map((p) => p.name)).toEqual(['serve', 'train']);
    const by = Object.fromEntries(a.resources.map((r) => [r.resource, r]));
    expect(a.resources.map((r) => r.resource)).toEqual(['cpu', 'memory', 'nvidia.com/gpu', 'example.com/fpga', 'pods']);
    expect(by.cpu).toMatchObject({ allocatable: 4, requests: 1.5, limits: 2, usage: 0.25, requestsFraction: 0.375, limitsFraction: 0.5 });
    expect(by.memory).toMatchObject({ allocatable: 8 * 2 ** 30, requests: 2 * 2 ** 30, limits: 4 * 2 ** 30, usage: 2 ** 30, requestsFraction: 0.25 });
    expect(by['nvidia.com/gpu']).toMatchObject({ allocatable: 2, requests: 1, limits: 1, requestsFraction: 0.5 });
    // requested but not offered by the node: no fraction, so no bar pretending it fits
    expect(by['example.com/fpga']).toMatchObject({ allocatable: undefined, requests: 1, requestsFraction: undefined });
    expect(by.pods).toMatchObject({ allocatable: 110, requests: 2 });
  });

  it('changes when a Pod starts on the node', () => {
    const before = nodeAllocation(node, pods).resources.find((r) => r.resource === 'cpu');
    const after = nodeAllocation(node, [...pods, pod('new', [{ name: 'm', resources: { requests: { cpu: '1' } } }])]).resources.find((r) => r.resource === 'cpu');
    expect(before?.requests).toBe(1.5);
    expect(after?.requests).toBe(2.5);
  });

  it('lists cpu, memory and gpu even on a node without Pods or GPUs', () => {
    const bare = nodeAllocation({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status: { allocatable: { cpu: '2', memory: '1Gi' } } }, []);
    expect(bare.resources.map((r) => [r.resource, r.requests, r.allocatable])).toEqual([['cpu', 0, 2], ['memory', 0, 2 ** 30], ['nvidia.com/gpu', 0, undefined]]);
  });
});

describe('withGpuShares', () => {
  const card = (index: number, memoryMiB: number, cores: number): GpuCardUsage => ({
    index, uuid: `GPU-${index}`, type: 'NVIDIA A100', memoryMiB: 81920, cores: 100, shares: 10,
    used: { shares: memoryMiB ? 1 : 0, memoryMiB, cores }, allocations: [],
  });
  const shared = { ...node, status: { capacity: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '20' }, allocatable: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '20' } } };
  // two shares of 10000 MiB and 30% each, on two cards: the limits say 10000 and 30 once
  const sharePod = pod('share', [{ name: 'm', resources: { limits: { 'nvidia.com/gpu': '2', 'nvidia.com/gpumem': '10000', 'nvidia.com/gpucores': '30', 'nvidia.com/priority': '1' } } }]);

  it('offers the cards\' memory and cores, taken as placement gave them, beside nvidia.com/gpu', () => {
    const counted = nodeAllocation(shared, [sharePod]);
    expect(counted.resources.find((r) => r.resource === 'nvidia.com/gpumem')?.allocatable).toBeUndefined();
    const a = withGpuShares(counted, [card(0, 10000, 30), card(1, 10000, 30)]);
    expect(a.resources.map((r) => r.resource)).toEqual(['cpu', 'memory', 'nvidia.com/gpu', 'nvidia.com/gpumem', 'nvidia.com/gpucores']);
    const by = Object.fromEntries(a.resources.map((r) => [r.resource, r]));
    expect(by['nvidia.com/gpu']).toMatchObject({ allocatable: 20, requests: 2 });
    expect(by['nvidia.com/gpumem']).toMatchObject({ allocatable: 163840, requests: 20000, requestsFraction: 20000 / 163840 });
    expect(by['nvidia.com/gpucores']).toMatchObject({ allocatable: 200, requests: 60, requestsFraction: 0.3 });
    expect(formatAmount('nvidia.com/gpumem', 20000)).toBe('20000 MiB');
  });

  it('offers them on a node with cards and no Pod, and leaves a node without cards as it was', () => {
    const idle = withGpuShares(nodeAllocation(shared, []), [card(0, 0, 0)]);
    expect(idle.resources.find((r) => r.resource === 'nvidia.com/gpumem')).toMatchObject({ allocatable: 81920, requests: 0 });
    const counted = nodeAllocation(node, []);
    expect(withGpuShares(counted, [])).toBe(counted);
    expect(withGpuShares(counted, undefined)).toBe(counted);
  });
});

describe('formatAmount', () => {
  it('prints cpu, memory and counts as people read them', () => {
    expect(formatAmount('cpu', 0.5)).toBe('500m');
    expect(formatAmount('cpu', 2)).toBe('2');
    expect(formatAmount('cpu', 1.25)).toBe('1.25');
    expect(formatAmount('memory', 24684084 * 1024)).toBe('23.5Gi');
    expect(formatAmount('memory', 512 * 2 ** 20)).toBe('512Mi');
    expect(formatAmount('nvidia.com/gpu', 1)).toBe('1');
    expect(formatAmount('cpu', undefined)).toBe('—');
  });
});

describe('pendingPods', () => {
  it('says why each Pod is not running: the scheduler’s reason, or what a bound Pod waits on', () => {
    const unsched: PodLike = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'big', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { containers: [] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: Insufficient cpu.', lastTransitionTime: '2026-01-01T00:00:01Z' }] },
    };
    const starting = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'slow', namespace: 'ml', creationTimestamp: '2026-01-01T00:00:02Z' }, spec: { nodeName: 'local', containers: [] }, status: { phase: 'Pending', containerStatuses: [{ name: 'm', state: { waiting: { reason: 'ContainerCreating' } } }] } } as PodLike;
    const running = pod('r', []);
    expect(pendingPods([starting, running, unsched])).toEqual([
      { namespace: 'default', name: 'big', reason: 'Unschedulable', message: '0/1 nodes are available: Insufficient cpu.', since: '2026-01-01T00:00:01Z' },
      { namespace: 'ml', name: 'slow', reason: 'ContainerCreating', message: 'container m is waiting', since: '2026-01-01T00:00:02Z' },
    ]);
  });

  it('counts Pods by phase', () => {
    expect(phaseCounts([pod('a', []), pod('b', [], {}, 'Failed'), pod('c', [])]).filter((x) => x.count)).toEqual([{ phase: 'Running', count: 2 }, { phase: 'Failed', count: 1 }]);
  });
});
