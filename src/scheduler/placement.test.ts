import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir, corpusFiles } from '../conformance-path.js';
import type { Container, Pod } from '../api/core-types.js';
import { decodePodDevices } from '../api/gpu-sharing.js';
import { nodeObject } from './node.js';
import type { GpuInfo } from './node.js';
import type { NodeView, PlacementResult } from './placement.js';
import { ResourceFit, assignedGpus, nodeView, withAssignment } from './placement.js';

const card = (index: number, name = 'NVIDIA A100-SXM4-80GB', memoryMiB = 81920): GpuInfo => ({ index, uuid: `GPU-${index}`, name, memoryMiB });
const node = (gpus: GpuInfo[], split?: number): NodeView =>
  nodeView(nodeObject('local', { cpu: 8, memoryBytes: 64 * 2 ** 30, gpus, ...(split ? { deviceSplitCount: split } : {}) }, 'test') as Parameters<typeof nodeView>[0]);

let seq = 0;
const pod = (limits: Record<string, string | number>, annotations: Record<string, string> = {}, more: Partial<Pod['spec']> = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${++seq}`, namespace: 'team', uid: `uid-${seq}`, annotations },
  spec: { containers: [{ name: 'main', resources: { limits } }], ...more },
});

/** places the pods one after the other, as the scheduler binds them; returns the results */
function placeAll(fit: ResourceFit, n: NodeView, pods: Pod[], placed: Pod[] = []): PlacementResult[] {
  return pods.map((p) => {
    const r = fit.place(p, n, placed);
    if (r.fits) placed.push(withAssignment({ ...p, spec: { ...p.spec, nodeName: n.name } }, r, n.name));
    return r;
  });
}

const cards = (r: PlacementResult): number[] => (r.fits ? r.gpus : []);
const reason = (r: PlacementResult): string => (r.fits ? '' : r.reason);
const share = (mem: number, cores: number) => ({ 'nvidia.com/gpu': 1, 'nvidia.com/gpumem': mem, 'nvidia.com/gpucores': cores });

describe('GPU placement: the node', () => {
  it('counts shares as HAMi registers them: cards x deviceSplitCount', () => {
    const obj = nodeObject('local', { cpu: 8, memoryBytes: 2 ** 30, gpus: [card(0), card(1)] }, 'test');
    assert.equal(obj.status.capacity['nvidia.com/gpu'], '20');
    assert.equal(nodeObject('local', { cpu: 8, memoryBytes: 2 ** 30, gpus: [card(0)], deviceSplitCount: 4 }, 'test').status.allocatable['nvidia.com/gpu'], '4');
    const reg = JSON.parse(obj.metadata.annotations['hami.io/node-nvidia-register']);
    assert.deepEqual(reg[1], { id: 'GPU-1', index: 1, count: 10, devmem: 81920, devcore: 100, type: 'NVIDIA A100-SXM4-80GB', numa: 0, mode: 'hami-core', health: true });
    assert.deepEqual(node([card(0)]).cards?.[0], { index: 0, uuid: 'GPU-0', type: 'NVIDIA A100-SXM4-80GB', memoryMiB: 81920, cores: 100, split: 10, health: true });
  });
});

describe('GPU placement: shares', () => {
  it('spread (the default) puts each share on the emptiest card', () => {
    const r = placeAll(new ResourceFit(), node([card(0), card(1)]), [pod(share(10000, 30)), pod(share(10000, 30)), pod(share(20000, 10))]);
    assert.deepEqual(r.map(cards), [[0], [1], [0]]);
  });

  it('binpack fills the fullest card that still fits, by annotation or as the node default', () => {
    const bin = { 'hami.io/gpu-scheduler-policy': 'binpack' };
    assert.deepEqual(placeAll(new ResourceFit(), node([card(0), card(1)]), [pod(share(10000, 30), bin), pod(share(10000, 30), bin), pod(share(60000, 30), bin), pod(share(20000, 30), bin)]).map(cards), [[0], [0], [0], [1]]);
    assert.deepEqual(placeAll(new ResourceFit('binpack'), node([card(0), card(1)]), [pod(share(1000, 10)), pod(share(1000, 10))]).map(cards), [[0], [0]]);
  });

  it('records the shares in HAMi\'s annotations and Skiff\'s GPU indices', () => {
    const placed: Pod[] = [];
    const [r] = placeAll(new ResourceFit(), node([card(0), card(1)]), [pod({ 'nvidia.com/gpu': 2, 'nvidia.com/gpumem-percentage': 25, 'nvidia.com/gpucores': 20 })], placed);
    assert.ok(r?.fits);
    const a = placed[0]?.metadata.annotations ?? {};
    assert.equal(a['hami.io/vgpu-devices-allocated'], 'GPU-0,NVIDIA,20480,20:GPU-1,NVIDIA,20480,20:;');
    assert.equal(a['hami.io/vgpu-devices-to-allocate'], a['hami.io/vgpu-devices-allocated']);
    assert.equal(a['hami.io/vgpu-node'], 'local');
    assert.match(a['hami.io/vgpu-time'] ?? '', /^\d+$/);
    assert.deepEqual(assignedGpus(placed[0] as Pod), [0, 1]);
  });

  it('a Pod that names only gpumem gets one card; gpumem is not held against the node\'s allocatable', () => {
    const [r] = placeAll(new ResourceFit(), node([card(0)]), [pod({ 'nvidia.com/gpumem': 4000 })]);
    assert.deepEqual(cards(r as PlacementResult), [0]);
  });

  it('several containers each get their own share; init containers run before and share the same room', () => {
    const p = pod(share(30000, 40));
    p.spec.containers.push({ name: 'side', resources: { limits: share(30000, 40) } } as Container);
    p.spec.initContainers = [{ name: 'init', resources: { limits: share(70000, 90) } }];
    const placed: Pod[] = [];
    const [r] = placeAll(new ResourceFit(), node([card(0)]), [p], placed);
    assert.ok(r?.fits, reason(r as PlacementResult));
    const pd = decodePodDevices(placed[0]?.metadata.annotations?.['hami.io/vgpu-devices-allocated'] ?? '', 3);
    assert.deepEqual(pd.map((c) => c.map((d) => d.memoryMiB)), [[70000], [30000], [30000]]);
    // the card now holds 70000 MiB (the init container's peak) and 90 cores: a 20000 MiB share does not fit
    assert.match(reason(new ResourceFit().place(pod(share(20000, 5)), node([card(0)]), placed)), /Insufficient nvidia.com\/gpumem/);
  });
});

describe('GPU placement: whole cards and sharing', () => {
  it('a plain nvidia.com/gpu takes a card no share is on, and no share goes on it', () => {
    const n = node([card(0), card(1)]);
    const placed: Pod[] = [];
    const r = placeAll(new ResourceFit(), n, [pod(share(1000, 10)), pod({ 'nvidia.com/gpu': 1 }), pod({ 'nvidia.com/gpu': 1 })], placed);
    assert.deepEqual(r.map(cards), [[0], [1], []]);
    // as HAMi checks a card: memory first, so a card with a share lacks the whole card's memory
    assert.equal(reason(r[2] as PlacementResult), '0/1 nodes are available: 1 Insufficient nvidia.com/gpu (2/2 CardInsufficientMemory).');
    // a share goes beside the other share, never on the whole-GPU Pod's card
    assert.deepEqual(cards(new ResourceFit().place(pod(share(1000, 10)), n, placed)), [0]);
    assert.equal(reason(new ResourceFit().place(pod(share(1000, 10), { 'nvidia.com/use-gpuuuid': 'GPU-1' }), n, placed)),
      "0/1 nodes are available: 1 Insufficient nvidia.com/gpumem, 1 node(s) had no GPU matching the Pod's card type or UUID annotations (1/2 CardInsufficientMemory, 1/2 CardUuidMismatch).");
  });

  it('a Pod placed with GPU indices only (before shares were recorded) holds its cards whole', () => {
    const old = pod({ 'nvidia.com/gpu': 1 }, { 'skiff.dev/gpus': '0' });
    old.spec.nodeName = 'local';
    const [r] = placeAll(new ResourceFit(), node([card(0), card(1)]), [pod(share(1000, 10), { 'hami.io/gpu-scheduler-policy': 'binpack' })], [old]);
    assert.deepEqual(cards(r as PlacementResult), [1]);
  });

  it('finished Pods hold nothing', () => {
    const gone = withAssignment(pod({ 'nvidia.com/gpu': 1 }), { fits: true, gpus: [0], devices: [[{ uuid: 'GPU-0', type: 'NVIDIA', memoryMiB: 81920, cores: 100 }]] }, 'local');
    gone.status = { phase: 'Succeeded' };
    assert.deepEqual(cards(new ResourceFit().place(pod({ 'nvidia.com/gpu': 1 }), node([card(0)]), [gone])), [0]);
  });

  it('mutex takes only idle cards', () => {
    const mutex = { 'hami.io/gpu-scheduler-policy': 'mutex' };
    const r = placeAll(new ResourceFit(), node([card(0), card(1)]), [pod(share(1000, 10)), pod(share(1000, 10), mutex), pod(share(1000, 10), mutex)]);
    assert.deepEqual(r.map(cards), [[0], [1], []]);
    assert.match(reason(r[2] as PlacementResult), /2\/2 ExclusiveDeviceAllocateConflict/);
  });
});

describe('GPU placement: what a Pod waits for', () => {
  const two = (): NodeView => node([card(0), card(1)]);

  it('more memory than any card has', () => {
    assert.equal(reason(new ResourceFit().place(pod(share(90000, 10)), two(), [])), '0/1 nodes are available: 1 Insufficient nvidia.com/gpumem (2/2 CardInsufficientMemory).');
  });

  it('compute taken', () => {
    const r = placeAll(new ResourceFit(), two(), [pod(share(1000, 70)), pod(share(1000, 70)), pod(share(1000, 40))]);
    assert.equal(reason(r[2] as PlacementResult), '0/1 nodes are available: 1 Insufficient nvidia.com/gpucores (2/2 CardInsufficientCore).');
  });

  it('a share with no compute of its own cannot go where the compute is all taken', () => {
    const r = placeAll(new ResourceFit(), node([card(0)]), [pod(share(1000, 100)), pod({ 'nvidia.com/gpumem': 1000 })]);
    assert.match(reason(r[1] as PlacementResult), /ExclusiveDeviceAllocateConflict|CardComputeUnitsExhausted/);
  });

  it('more cards than the node has, and every share of a card taken', () => {
    assert.match(reason(new ResourceFit().place(pod({ 'nvidia.com/gpu': 3, 'nvidia.com/gpumem': 100 }), two(), [])), /^0\/1 nodes are available: 1 Insufficient nvidia.com\/gpu \(2\/2 NodeInsufficientDevice\)\.$/);
    const small = node([card(0)], 2);
    const r = placeAll(new ResourceFit(), small, [pod(share(100, 1)), pod(share(100, 1)), pod(share(100, 1))]);
    assert.match(reason(r[2] as PlacementResult), /Insufficient nvidia.com\/gpu/);
  });

  it('card type and UUID choices: use, avoid, and none matching', () => {
    const n = node([card(0, 'NVIDIA A100-SXM4-80GB'), card(1, 'Tesla V100-SXM2-32GB', 32768)]);
    assert.deepEqual(cards(new ResourceFit().place(pod(share(100, 1), { 'nvidia.com/use-gputype': 'v100' }), n, [])), [1]);
    assert.deepEqual(cards(new ResourceFit().place(pod(share(100, 1), { 'nvidia.com/nouse-gputype': 'A100,H100' }), n, [])), [1]);
    assert.deepEqual(cards(new ResourceFit().place(pod(share(100, 1), { 'nvidia.com/use-gpuuuid': 'GPU-1' }), n, [])), [1]);
    assert.deepEqual(cards(new ResourceFit().place(pod(share(100, 1), { 'nvidia.com/nouse-gpuuuid': 'GPU-0' }), n, [])), [1]);
    assert.equal(reason(new ResourceFit().place(pod(share(100, 1), { 'nvidia.com/use-gputype': 'H100' }), n, [])), "0/1 nodes are available: 1 node(s) had no GPU matching the Pod's card type or UUID annotations (2/2 CardTypeMismatch).");
    // HAMi's registered type carries the vendor: a model without it is NVIDIA-<model>
    assert.equal(n.cards?.[1]?.type, 'NVIDIA-Tesla V100-SXM2-32GB');
  });

  it("a namespace's quota on gpumem holds a share back (HAMi's ResourceQuotaNotFit)", () => {
    const r = new ResourceFit().place(pod({ 'nvidia.com/gpu': 2, 'nvidia.com/gpumem': 4000 }), two(), [], { gpuQuota: { memory: { limit: 10000, used: 3000 } } });
    assert.match(reason(r), /exceeded the namespace's GPU quota .*1\/2 ResourceQuotaNotFit/);
    assert.ok(new ResourceFit().place(pod({ 'nvidia.com/gpu': 2, 'nvidia.com/gpumem': 3500 }), two(), [], { gpuQuota: { memory: { limit: 10000, used: 3000 } } }).fits);
  });

  it('CPU and memory are still checked first, in the words they always had', () => {
    assert.equal(reason(new ResourceFit().place(pod({ cpu: 16, 'nvidia.com/gpumem': 10 }), two(), [])), '0/1 nodes are available: Insufficient cpu (requested 16, free 8 of 8).');
  });
});

describe("GPU placement: HAMi's examples", () => {
  /** each file's Pods (a Deployment's template as a Pod) */
  const podsOf = (file: string): Pod[] => YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON()).filter(Boolean).flatMap((o: any) => {
    if (o.kind === 'Pod') return [o as Pod];
    if (o.kind === 'Deployment') return [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: o.metadata.name, annotations: {}, ...o.spec.template.metadata }, spec: o.spec.template.spec } as Pod];
    return [];
  });
  const files = corpusFiles(join(conformanceDir(), 'hami', 'examples', 'nvidia'));

  it('are placed on two A100s as their comments say', { skip: files.length === 0 && 'the conformance corpus is not here' }, () => {
    const outcome: Record<string, string[]> = {};
    for (const f of files) {
      const n = node([card(0), card(1)]);
      const placed: Pod[] = [];
      outcome[basename(f, '.yaml')] = placeAll(new ResourceFit(), n, podsOf(f), placed).map((r) => (r.fits ? `cards ${r.gpus.join(',')}` : r.reason.replace(/^0\/1 nodes are available: /, '')));
    }
    assert.deepEqual(outcome, {
      default_use: ['cards 0'],
      default_use_legacy: ['cards 0,1'],
      // dynamic MIG needs cards in MIG mode; these are shared by HAMi-core
      dynamic_mig_example: ["1 node(s) had no GPU matching the Pod's card type or UUID annotations (2/2 CardTypeMismatch)."],
      example: ['cards 0'],
      mig_example: ['Insufficient nvidia.com/mig-3g.20gb (requested 1, free 0 of 0).'],
      specify_card_type_not_use: ['cards 0,1'],
      specify_card_type_to_use: ['cards 0,1'],
      specify_scheduling_policy: ['cards 0'],
      specify_uuid_not_use: ['cards 0,1'],
      // the example's UUIDs are not this node's cards
      specify_uuid_to_use: ["1 node(s) had no GPU matching the Pod's card type or UUID annotations (2/2 CardUuidMismatch)."],
      use_as_normal: ['cards 0', 'cards 1'],
      use_exclusive_card: ['cards 0,1'],
      use_memory_fraction: ['cards 0,1'],
      // spread keeps them apart; binpack would put both on one card (40% + 60%)
      use_sharing_card: ['cards 0', 'cards 1'],
      vllm_cross_vgpu: ['cards 0,1'],
    });
    const sharing = podsOf(files.find((f) => f.endsWith('use_sharing_card.yaml')) ?? '').map((p) => ({ ...p, metadata: { ...p.metadata, annotations: { 'hami.io/gpu-scheduler-policy': 'binpack' } } }));
    assert.deepEqual(placeAll(new ResourceFit(), node([card(0), card(1)]), sharing).map(cards), [[0], [0]]);
  });
});
