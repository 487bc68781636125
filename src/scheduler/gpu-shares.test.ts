import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../api/core-types.js';
import type { StoredObject } from '../api/meta.js';
import { gpuQuotaOf } from './gpu-quota.js';
import { nodeGpuUsage, sharesSummary } from './gpu-shares.js';
import { nodeObject } from './node.js';

const node = nodeObject('local', { cpu: 4, memoryBytes: 2 ** 30, gpus: [0, 1].map((i) => ({ index: i, uuid: `GPU-${i}`, name: 'NVIDIA GPU', memoryMiB: 81920 })) }, 'test') as unknown as StoredObject;
const pod = (name: string, ns: string, allocated: string | undefined, extra: Partial<Pod> = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: ns, uid: name, annotations: allocated === undefined ? {} : { 'hami.io/vgpu-devices-allocated': allocated } },
  spec: { nodeName: 'local', containers: [{ name: 'main', resources: { limits: { 'nvidia.com/gpu': 1, 'nvidia.com/gpumem': 1000 } } }] },
  ...extra,
});

describe('what the cards hold', () => {
  it('lists every share by Pod and container, and sums each card', () => {
    const pods = [
      pod('a', 'team', 'GPU-0,NVIDIA,10000,30:;'),
      pod('b', 'team', 'GPU-0,NVIDIA,81920,100:GPU-1,NVIDIA,81920,100:;'),
      pod('done', 'team', 'GPU-1,NVIDIA,5000,5:;', { status: { phase: 'Succeeded' } }),
      { ...pod('old', 'x', undefined), metadata: { name: 'old', namespace: 'x', annotations: { 'skiff.dev/gpus': '1' } } },
    ];
    const u = nodeGpuUsage(node, pods);
    assert.deepEqual(u.cards.map((c) => c.used), [{ shares: 2, memoryMiB: 91920, cores: 130 }, { shares: 2, memoryMiB: 163840, cores: 200 }]);
    assert.deepEqual(u.cards[0]?.allocations[0], { namespace: 'team', pod: 'a', container: 'main', memoryMiB: 10000, cores: 30, exclusive: false });
    assert.equal(u.cards[1]?.allocations[1]?.pod, 'old');
    assert.equal(sharesSummary(u), '0: 2/10 shares, 91920/81920 MiB, 130/100 cores; 1: 2/10 shares, 163840/81920 MiB, 200/100 cores');
  });
});

describe("HAMi's quota at placement", () => {
  const quota = (hard: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: `q${Object.keys(hard).length}`, namespace: 'team' }, spec: { hard } });

  it('takes the tightest quota and counts the namespace\'s placed shares only', () => {
    const pods = [pod('a', 'team', 'GPU-0,NVIDIA,10000,30:;'), pod('pending', 'team', undefined), pod('other', 'x', 'GPU-0,NVIDIA,7000,0:;'), pod('me', 'team', undefined)];
    const q = gpuQuotaOf(pods[3] as Pod, [quota({ 'limits.nvidia.com/gpumem': '30000' }), quota({ 'limits.nvidia.com/gpumem': '20000', 'limits.nvidia.com/gpucores': '100' })], pods);
    assert.deepEqual(q, { memory: { limit: 20000, used: 10000 }, cores: { limit: 100, used: 30 } });
    assert.equal(gpuQuotaOf(pods[3] as Pod, [quota({ cpu: '2' })], pods), undefined);
  });
});
