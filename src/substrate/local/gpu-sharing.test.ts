import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { GpuCard } from '../../api/gpu-sharing.js';
import { parseGpuSamples } from './capacity.js';
import type { ContainerGpus } from './gpu-sharing.js';
import { describeShares, gpuEnv, isShared, mpsPipeDir, preloadList } from './gpu-sharing.js';

const card = (index: number): GpuCard => ({ index, uuid: `GPU-${index}`, type: 'NVIDIA GPU', memoryMiB: 81920, cores: 100, split: 10, health: true });
const gpus = (shares: [number, number, number][], priority?: number): ContainerGpus => ({
  indices: shares.map(([i]) => i),
  shares: shares.map(([i, memoryMiB, cores]) => ({ uuid: `GPU-${i}`, type: 'NVIDIA', memoryMiB, cores })),
  cards: shares.map(([i]) => card(i)),
  ...(priority !== undefined ? { priority } : {}),
});

describe("a container's GPU environment", () => {
  it('a share gets HAMi-core\'s variables: a memory limit per device, the compute limit, its shared region', () => {
    assert.deepEqual(gpuEnv(gpus([[1, 3000, 30], [0, 3000, 30]]), { cacheFile: '/pods/u/vgpu/main/main.cache' }), {
      CUDA_VISIBLE_DEVICES: '1,0',
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_DEVICE_MEMORY_LIMIT_0: '3000m',
      CUDA_DEVICE_MEMORY_LIMIT_1: '3000m',
      CUDA_DEVICE_SM_LIMIT: '30',
      CUDA_DEVICE_MEMORY_SHARED_CACHE: '/pods/u/vgpu/main/main.cache',
    });
  });

  it('a whole card gets only its device, and the priority when the container states one', () => {
    assert.deepEqual(gpuEnv(gpus([[0, 81920, 100]], 0), { cacheFile: 'x' }), { CUDA_VISIBLE_DEVICES: '0', CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_TASK_PRIORITY: '0' });
    assert.equal(isShared(gpus([[0, 81920, 100]])), false);
    assert.equal(isShared(gpus([[0, 81920, 0]])), true, 'all the memory but no compute of its own is still a share');
    // a Pod placed with whole cards only (no shares recorded)
    assert.deepEqual(gpuEnv({ indices: [0, 1], shares: [], cards: [] }, { cacheFile: 'x' }), { CUDA_VISIBLE_DEVICES: '0,1', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' });
  });

  it('a share without compute limit has SM limit 0, which HAMi-core reads as none', () => {
    assert.equal(gpuEnv(gpus([[0, 4000, 0]]), { cacheFile: 'x' }).CUDA_DEVICE_SM_LIMIT, '0');
  });

  it("where an MPS daemon runs, MPS's limits too", () => {
    const env = gpuEnv(gpus([[0, 10240, 25], [1, 10240, 25]], 1), { cacheFile: 'x', mps: '/tmp/nvidia-mps' });
    assert.equal(env.CUDA_MPS_PIPE_DIRECTORY, '/tmp/nvidia-mps');
    assert.equal(env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, '25');
    assert.equal(env.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, '0=10240M,1=10240M');
    assert.equal(env.CUDA_TASK_PRIORITY, '1');
    assert.equal(gpuEnv(gpus([[0, 1024, 0]]), { cacheFile: 'x', mps: '/m' }).CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, undefined);
  });

  it('finds the MPS daemon by its pipe directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mps-'));
    assert.equal(mpsPipeDir({ CUDA_MPS_PIPE_DIRECTORY: dir }), dir);
    assert.equal(mpsPipeDir({}, (p) => p === '/tmp/nvidia-mps'), '/tmp/nvidia-mps');
    assert.equal(mpsPipeDir({}, () => false), undefined);
  });

  it("the container's ld.so.preload names the library first, then what the host preloads", () => {
    const dir = mkdtempSync(join(tmpdir(), 'preload-'));
    const host = join(dir, 'ld.so.preload');
    writeFileSync(host, '# comment\n/usr/lib/libfoo.so\n');
    assert.equal(preloadList('/usr/local/vgpu/libvgpu.so', host), '/usr/local/vgpu/libvgpu.so\n/usr/lib/libfoo.so\n');
    assert.equal(preloadList('/usr/local/vgpu/libvgpu.so', join(dir, 'none')), '/usr/local/vgpu/libvgpu.so\n');
  });

  it('says what a share is in words', () => {
    assert.equal(describeShares(gpus([[1, 3000, 30], [0, 2000, 0]])), 'card 1: 3000 MiB, 30% compute; card 0: 2000 MiB, unlimited compute');
  });
});

describe("a real card's use", () => {
  it("reads nvidia-smi's index, utilization and memory, leaving out what it cannot read", () => {
    assert.deepEqual(parseGpuSamples('0, 37, 1024\n1, [N/A], 0\n'), [{ index: 0, gpuPercent: 37, memoryUsedMiB: 1024 }]);
  });
});
