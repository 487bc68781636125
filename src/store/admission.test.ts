import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../api/errors.js';
import { defaultRegistry } from '../api/index.js';
import { Client } from './client.js';
import { SqliteStore } from './sqlite/store.js';

async function setup(hard: Record<string, string>): Promise<Client> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  await client.create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'kf-resource-quota', namespace: 'team' }, spec: { hard } });
  return client;
}

const gpuPod = (name: string, gpus = '1') => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team' },
  spec: { containers: [{ name: 'main', image: 'python', resources: { limits: { 'nvidia.com/gpu': gpus } } }] },
});

const refusal = (e: unknown): string => (e instanceof ApiError ? `${e.code} ${e.message}` : String(e));

describe('ResourceQuota admission', () => {
  it('refuses the Pod that goes over, 403 with the quota and resource', async () => {
    const client = await setup({ 'requests.nvidia.com/gpu': '1' });
    await client.create(gpuPod('a'));
    await assert.rejects(client.create(gpuPod('b')), (e) => {
      assert.equal(refusal(e), '403 pods "b" is forbidden: exceeded quota: kf-resource-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1');
      return true;
    });
  });

  it('admits only one of two Pods created at once for the last unit', async () => {
    const client = await setup({ 'requests.nvidia.com/gpu': '1' });
    const results = await Promise.allSettled([client.create(gpuPod('a')), client.create(gpuPod('b')), client.create(gpuPod('c'))]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  });

  it('frees the quota when a Pod finishes', async () => {
    const client = await setup({ 'requests.nvidia.com/gpu': '1' });
    const a = await client.create(gpuPod('a'));
    await client.updateStatus({ ...a, status: { phase: 'Succeeded' } });
    await client.create(gpuPod('b'));
  });

  it('refuses a Pod without cpu requests when cpu is limited', async () => {
    const client = await setup({ cpu: '2' });
    await assert.rejects(client.create(gpuPod('a')), (e) => refusal(e) === '403 pods "a" is forbidden: failed quota: kf-resource-quota: must specify cpu for: main');
  });

  it('counts PVCs and their storage, and objects by count/<resource>', async () => {
    const client = await setup({ persistentvolumeclaims: '1', 'requests.storage': '5Gi', 'count/configmaps': '1' });
    const pvc = (name: string, storage: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'team' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
    await assert.rejects(client.create(pvc('big', '6Gi')), (e) => /requested: requests.storage=6Gi, used: requests.storage=0, limited: requests.storage=5Gi/.test(refusal(e)));
    await client.create(pvc('a', '1Gi'));
    await assert.rejects(client.create(pvc('b', '1Gi')), (e) => /exceeded quota: kf-resource-quota, requested: persistentvolumeclaims=1,/.test(refusal(e)));
    await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'team' } });
    await assert.rejects(client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two', namespace: 'team' } }), (e) => /requested: count\/configmaps=1, used: count\/configmaps=1, limited: count\/configmaps=1/.test(refusal(e)));
  });

  it('leaves other namespaces alone', async () => {
    const client = await setup({ 'requests.nvidia.com/gpu': '0' });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await client.create({ ...gpuPod('a'), metadata: { name: 'a', namespace: 'other' } });
  });
});

const sharePod = (name: string, limits: Record<string, string>, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team', annotations },
  spec: { containers: [{ name: 'main', image: 'python', resources: { limits } }] },
});

describe("HAMi's GPU sharing at admission", () => {
  it('implies one card for a share named by memory or cores, and gives a whole card its compute', async () => {
    const client = await setup({ pods: '10' });
    const mem = await client.create(sharePod('mem', { 'nvidia.com/gpumem': '3000' }));
    assert.deepEqual(mem.spec.containers[0].resources.limits, { 'nvidia.com/gpumem': '3000', 'nvidia.com/gpu': '1' });
    const whole = await client.create(sharePod('whole', { 'nvidia.com/gpu': '1' }));
    assert.deepEqual(whole.spec.containers[0].resources.limits, { 'nvidia.com/gpu': '1', 'nvidia.com/gpucores': '100' });
    const all = await client.create(sharePod('all', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem-percentage': '100' }));
    assert.equal(all.spec.containers[0].resources.limits['nvidia.com/gpucores'], '100');
    const shared = await client.create(sharePod('shared', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem-percentage': '50' }));
    assert.equal(shared.spec.containers[0].resources.limits['nvidia.com/gpucores'], undefined);
    const cpu = await client.create(sharePod('cpu', { cpu: '1' }));
    assert.deepEqual(cpu.spec.containers[0].resources.limits, { cpu: '1' });
  });

  it('drops an assignment a new Pod brings along, and keeps a placed Pod\'s from changing', async () => {
    const client = await setup({ pods: '10' });
    const fake = { 'hami.io/vgpu-devices-allocated': 'GPU-0,NVIDIA,0,0:;', 'skiff.dev/gpus': '0', 'nvidia.com/use-gputype': 'A100' };
    const p = await client.create(sharePod('sneaky', { 'nvidia.com/gpumem': '1000' }, fake));
    assert.deepEqual(p.metadata.annotations, { 'nvidia.com/use-gputype': 'A100' });
    const bound = await client.bind({ ...p, metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, 'hami.io/vgpu-devices-allocated': 'GPU-0,NVIDIA,1000,0:;' } }, spec: { ...p.spec, nodeName: 'local' } });
    await assert.rejects(client.update({ ...bound, metadata: { ...bound.metadata, annotations: { ...bound.metadata.annotations, 'hami.io/vgpu-devices-allocated': 'GPU-1,NVIDIA,1000,0:;' } } }),
      (e) => /metadata.annotations\[hami.io\/vgpu-devices-allocated\]: Forbidden: the GPU assignment of a scheduled Pod may not change/.test(refusal(e)));
    await client.update({ ...bound, metadata: { ...bound.metadata, annotations: { ...bound.metadata.annotations, note: 'other annotations may change' } } });
  });

  it('refuses a memory percentage outside 0..100', async () => {
    const client = await setup({ pods: '10' });
    await assert.rejects(client.create(sharePod('bad', { 'nvidia.com/gpumem-percentage': '150' })),
      (e) => refusal(e) === '403 pods "bad" is forbidden: invalid nvidia.com/gpumem-percentage value 150 in container main: must be an integer between 0 and 100');
  });

  it("enforces limits.nvidia.com/gpumem per card, as HAMi's quota does", async () => {
    const client = await setup({ 'limits.nvidia.com/gpumem': '10000', 'limits.nvidia.com/gpucores': '100' });
    await client.create(sharePod('a', { 'nvidia.com/gpu': '2', 'nvidia.com/gpumem': '3000', 'nvidia.com/gpucores': '20' }));
    await assert.rejects(client.create(sharePod('b', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '5000', 'nvidia.com/gpucores': '10' })), (e) => {
      assert.equal(refusal(e), '403 pods "b" is forbidden: exceeded quota: kf-resource-quota, requested: limits.nvidia.com/gpumem=5k, used: limits.nvidia.com/gpumem=6k, limited: limits.nvidia.com/gpumem=10k');
      return true;
    });
    await assert.rejects(client.create(sharePod('c', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '1000', 'nvidia.com/gpucores': '70' })), (e) => /requested: limits.nvidia.com\/gpucores=70, used: limits.nvidia.com\/gpucores=40,/.test(refusal(e)));
    await client.create(sharePod('d', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '4000', 'nvidia.com/gpucores': '60' }));
  });

  it("counts a percentage on the smallest card a node registered", async () => {
    const client = await setup({ 'limits.nvidia.com/gpumem': '30000' });
    await client.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', annotations: { 'hami.io/node-nvidia-register': JSON.stringify([{ id: 'GPU-0', index: 0, count: 10, devmem: 81920, devcore: 100, type: 'NVIDIA', health: true }, { id: 'GPU-1', index: 1, count: 10, devmem: 40960, devcore: 100, type: 'NVIDIA', health: true }]) } } });
    await assert.rejects(client.create(sharePod('half', { 'nvidia.com/gpu': '2', 'nvidia.com/gpumem-percentage': '50' })), (e) => /requested: limits.nvidia.com\/gpumem=40960,/.test(refusal(e)));
    await client.create(sharePod('quarter', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem-percentage': '25' }));
  });
});
