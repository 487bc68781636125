import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../conformance-path.js';
import type { Container, Pod } from './core-types.js';
import {
  collapsedShares, containerGpuRequest, decodeNodeDevices, decodePodDevices, encodeNodeDevices, encodePodDevices, gpuQuotaUsage, memoryOn, podGpuRequests,
} from './gpu-sharing.js';

const ctr = (limits: Record<string, string | number>, requests?: Record<string, string | number>): Container => ({ name: 'c', resources: { limits, ...(requests ? { requests } : {}) } });
const pod = (containers: Container[], init: Container[] = [], annotations: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team', annotations }, spec: { containers, initContainers: init },
});

describe("a container's GPU ask, with HAMi's defaults", () => {
  it('a plain nvidia.com/gpu takes whole cards: all the memory and 100 cores', () => {
    assert.deepEqual(containerGpuRequest(ctr({ 'nvidia.com/gpu': 2 })), { nums: 2, memoryMiB: 0, memoryPercent: 100, cores: 100, stated: { memory: false, cores: false } });
  });

  it('gpumem without gpucores shares the card with no compute limit', () => {
    assert.deepEqual(containerGpuRequest(ctr({ 'nvidia.com/gpu': 1, 'nvidia.com/gpumem': 3000 })), { nums: 1, memoryMiB: 3000, cores: 0, stated: { memory: true, cores: false } });
  });

  it('only memory or cores given: one card is implied', () => {
    assert.equal(containerGpuRequest(ctr({ 'nvidia.com/gpumem': '4000' }))?.nums, 1);
    assert.equal(containerGpuRequest(ctr({ 'nvidia.com/gpucores': '30' }))?.nums, 1);
    assert.equal(containerGpuRequest(ctr({ cpu: '1' })), undefined);
    assert.equal(containerGpuRequest({ name: 'c' }), undefined);
  });

  it('cores stated alone keep the whole memory, which is exclusive memory but not the card alone', () => {
    // HAMi: memory defaults to 100%, gpucores stated, so no exclusive default
    assert.deepEqual(containerGpuRequest(ctr({ 'nvidia.com/gpucores': 30 })), { nums: 1, memoryMiB: 0, memoryPercent: 100, cores: 30, stated: { memory: false, cores: true } });
  });

  it('a percentage of 100 with no cores is the card alone; 50 is a share', () => {
    assert.equal(containerGpuRequest(ctr({ 'nvidia.com/gpu': 1, 'nvidia.com/gpumem-percentage': 100 }))?.cores, 100);
    assert.deepEqual(containerGpuRequest(ctr({ 'nvidia.com/gpu': 2, 'nvidia.com/gpumem-percentage': 50, 'nvidia.com/gpucores': 30 })), { nums: 2, memoryMiB: 0, memoryPercent: 50, cores: 30, stated: { memory: true, cores: true } });
  });

  it('gpumem 0 is the whole memory (HAMi-core reads 0 as no limit), without taking the compute', () => {
    assert.deepEqual(containerGpuRequest(ctr({ 'nvidia.com/gpu': 1, 'nvidia.com/gpumem': 0 })), { nums: 1, memoryMiB: 0, memoryPercent: 100, cores: 0, stated: { memory: true, cores: false } });
  });

  it('gpumem wins over a percentage; cores over 100 are 100; priority is read', () => {
    const r = containerGpuRequest(ctr({ 'nvidia.com/gpu': 1, 'nvidia.com/gpumem': 2000, 'nvidia.com/gpumem-percentage': 50, 'nvidia.com/gpucores': 150, 'nvidia.com/priority': 0 }));
    assert.deepEqual(r, { nums: 1, memoryMiB: 2000, cores: 100, priority: 0, stated: { memory: true, cores: true } });
  });

  it('the count may be in requests only', () => {
    assert.equal(containerGpuRequest(ctr({}, { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '1024' }))?.memoryMiB, 1024);
  });

  it("HAMi's examples read as their comments say", () => {
    const dir = join(conformanceDir(), 'hami', 'examples', 'nvidia');
    const first = (f: string): Container => {
      const doc = YAML.parseAllDocuments(readFileSync(join(dir, f), 'utf8'))[0]?.toJSON() as { spec: { containers?: Container[]; template?: { spec: { containers: Container[] } } } };
      const c = doc.spec.containers?.[0] ?? doc.spec.template?.spec.containers[0];
      assert.ok(c, f);
      return c;
    };
    assert.deepEqual(containerGpuRequest(first('default_use.yaml')), { nums: 1, memoryMiB: 3000, cores: 30, stated: { memory: true, cores: true } });
    assert.equal(containerGpuRequest(first('default_use_legacy.yaml'))?.cores, 100);
    assert.deepEqual(containerGpuRequest(first('use_exclusive_card.yaml')), { nums: 2, memoryMiB: 0, memoryPercent: 100, cores: 100, stated: { memory: true, cores: true } });
    assert.deepEqual(containerGpuRequest(first('use_sharing_card.yaml')), { nums: 1, memoryMiB: 0, memoryPercent: 40, cores: 60, stated: { memory: true, cores: true } });
    assert.equal(containerGpuRequest(first('example.yaml'))?.cores, 0, 'gpumem alone: no compute limit');
  });

  it('init containers come first, as in an assignment', () => {
    const p = pod([ctr({ 'nvidia.com/gpu': 1 })], [ctr({ cpu: '1' })]);
    assert.deepEqual(podGpuRequests(p).map((r) => r?.nums), [undefined, 1]);
  });

  it('memory on a card: MiB as asked, a percentage of the card rounded down', () => {
    assert.equal(memoryOn({ memoryMiB: 3000 }, { memoryMiB: 81920 }), 3000);
    assert.equal(memoryOn({ memoryMiB: 0, memoryPercent: 33 }, { memoryMiB: 1000 }), 330);
  });
});

describe("HAMi's annotations", () => {
  it('an assignment round-trips in the device plugin format, one list per container', () => {
    const pd = [[], [{ uuid: 'GPU-a', type: 'NVIDIA', memoryMiB: 3000, cores: 30 }, { uuid: 'GPU-b', type: 'NVIDIA', memoryMiB: 3000, cores: 30 }]];
    const enc = encodePodDevices(pd);
    assert.equal(enc, ';GPU-a,NVIDIA,3000,30:GPU-b,NVIDIA,3000,30:;');
    assert.deepEqual(decodePodDevices(enc, 2), pd);
    assert.deepEqual(decodePodDevices('GPU-a,NVIDIA,100,0:;', 3), [[{ uuid: 'GPU-a', type: 'NVIDIA', memoryMiB: 100, cores: 0 }], [], []]);
  });

  it("a node's cards round-trip; HAMi's own JSON (zero fields left out) reads", () => {
    const cards = [{ index: 0, uuid: 'GPU-0', type: 'NVIDIA A100', memoryMiB: 40960, cores: 100, split: 10, health: true }];
    assert.deepEqual(decodeNodeDevices(encodeNodeDevices(cards)), cards);
    const hami = '[{"id":"GPU-03f69c50","count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-NVIDIA GeForce RTX 4090","mode":"hami-core","health":true}]';
    assert.deepEqual(decodeNodeDevices(hami), [{ index: 0, uuid: 'GPU-03f69c50', type: 'NVIDIA-NVIDIA GeForce RTX 4090', memoryMiB: 24576, cores: 100, split: 10, health: true }]);
  });

  it('a pod holds the larger of its biggest init share and its containers’ sum on each card', () => {
    const p = pod([ctr({}), ctr({})], [ctr({})]);
    const pd = [[{ uuid: 'A', type: 'NVIDIA', memoryMiB: 5000, cores: 10 }], [{ uuid: 'A', type: 'NVIDIA', memoryMiB: 2000, cores: 30 }], [{ uuid: 'A', type: 'NVIDIA', memoryMiB: 2000, cores: 30 }]];
    assert.deepEqual(collapsedShares(p, pd).get('A'), { memoryMiB: 5000, cores: 60, slots: 2 });
  });
});

describe("HAMi's quota accounting", () => {
  it('counts memory and cores per card: gpumem times the cards', () => {
    assert.deepEqual(gpuQuotaUsage(pod([ctr({ 'nvidia.com/gpu': 2, 'nvidia.com/gpumem': 3000, 'nvidia.com/gpucores': 20 })])), { memoryMiB: 6000, cores: 40 });
  });

  it('a percentage counts on the card size given; once placed, what it was given', () => {
    const p = pod([ctr({ 'nvidia.com/gpu': 1, 'nvidia.com/gpumem-percentage': 25 })]);
    assert.deepEqual(gpuQuotaUsage(p, 81920), { memoryMiB: 20480, cores: 0 });
    p.metadata.annotations = { 'hami.io/vgpu-devices-allocated': 'GPU-x,NVIDIA,10240,0:;' };
    assert.deepEqual(gpuQuotaUsage(p, 81920), { memoryMiB: 10240, cores: 0 });
  });

  it('a Pod asking for no card counts nothing', () => {
    assert.equal(gpuQuotaUsage(pod([ctr({ cpu: '1' })])), undefined);
  });
});
