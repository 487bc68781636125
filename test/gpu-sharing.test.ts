// GPU sharing with HAMi's resource names on a node whose config declares two 80Gi GPUs (no GPU is
// needed): shares pack as the Pod's policy says, each container's environment is what HAMi-core
// reads, a share no card can hold waits Pending naming the resource, a quota on gpumem refuses a Pod,
// and the node shows what its cards hold.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { TestServer, podManifest } from './harness.js';

const pods = (ns = 'default'): string => `/api/v1/namespaces/${ns}/pods`;

describe('GPU sharing (HAMi resource names)', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { node: { gpus: 2, gpuMemory: '80Gi' } } });
  });
  after(async () => {
    await s.cleanup();
  });

  const sharePod = (name: string, limits: Record<string, string>, annotations: Record<string, string> = {}, env: { name: string; value: string }[] = []): any => {
    const m = podManifest(name, ['sleep', '300']);
    m.metadata.annotations = annotations;
    m.spec.containers[0].resources = { limits };
    if (env.length) m.spec.containers[0].env = env;
    return m;
  };
  const running = (name: string, ns = 'default'): Promise<any> => s.until(`${name} running`, async () => {
    const p = await s.get(`${pods(ns)}/${name}`);
    return p.status?.phase === 'Running' ? p : undefined;
  });
  const allocated = (p: any): string => p.metadata.annotations?.['hami.io/vgpu-devices-allocated'] ?? '';
  const cardOf = (p: any): string => allocated(p).split(',')[0] ?? '';
  const envOf = async (name: string): Promise<Record<string, string>> => {
    const r = await s.kubectl(['exec', name, '--', 'env']);
    assert.equal(r.code, 0, r.stderr);
    return Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  };

  it('registers the cards as HAMi does: nvidia.com/gpu is cards x 10', async () => {
    const node = await s.get('/api/v1/nodes/local');
    assert.equal(node.status.capacity['nvidia.com/gpu'], '20');
    const reg = JSON.parse(node.metadata.annotations['hami.io/node-nvidia-register']);
    assert.deepEqual(reg.map((c: any) => [c.id, c.devmem, c.devcore, c.count, c.type]), [['GPU-fake-0', 81920, 100, 10, 'NVIDIA GPU'], ['GPU-fake-1', 81920, 100, 10, 'NVIDIA GPU']]);
  });

  it('spreads shares over the cards, and gives each container what HAMi-core reads', async () => {
    const limits = { 'nvidia.com/gpumem': '10000', 'nvidia.com/gpucores': '30', 'nvidia.com/priority': '0' };
    await s.create(pods(), sharePod('spread-a', limits, {}, [{ name: 'CUDA_DISABLE_CONTROL', value: 'true' }]));
    const a = await running('spread-a');
    await s.create(pods(), sharePod('spread-b', limits));
    const b = await running('spread-b');
    assert.deepEqual([cardOf(a), cardOf(b)].sort(), ['GPU-fake-0', 'GPU-fake-1']);
    // HAMi's webhook default: a card is implied
    assert.equal(a.spec.containers[0].resources.limits['nvidia.com/gpu'], '1');
    assert.match(allocated(a), /^GPU-fake-[01],NVIDIA,10000,30:;$/);
    assert.equal(a.metadata.annotations['hami.io/vgpu-node'], 'local');

    const env = await envOf('spread-a');
    assert.equal(env.CUDA_VISIBLE_DEVICES, cardOf(a).slice(-1));
    assert.equal(env.CUDA_DEVICE_MEMORY_LIMIT_0, '10000m');
    assert.equal(env.CUDA_DEVICE_SM_LIMIT, '30');
    assert.equal(env.CUDA_TASK_PRIORITY, '0');
    assert.match(env.CUDA_DEVICE_MEMORY_SHARED_CACHE ?? '', new RegExp(`/pods/${a.metadata.uid}/vgpu/main/main\\.cache$`));
    assert.equal(env.CUDA_DISABLE_CONTROL, undefined, 'the bypass is removed');

    const events = (await s.get(`/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=spread-a`)).items;
    const advisory = events.find((e: any) => e.reason === 'GPULimitsAdvisory');
    assert.match(advisory?.message ?? '', /10000 MiB, 30% compute\) is placed and counted, but not enforced: no HAMi-core library is configured/);
    assert.ok(events.some((e: any) => e.reason === 'GPUControlKept'));
  });

  it('binpack puts shares on the fullest card that fits', async () => {
    const bin = { 'hami.io/gpu-scheduler-policy': 'binpack' };
    await s.create(pods(), sharePod('bin-a', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '20000', 'nvidia.com/gpucores': '20' }, bin));
    const a = await running('bin-a');
    await s.create(pods(), sharePod('bin-b', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '20000', 'nvidia.com/gpucores': '20' }, bin));
    const b = await running('bin-b');
    assert.equal(cardOf(a), cardOf(b));
  });

  it('a share no card can hold waits Pending, naming the resource', async () => {
    await s.create(pods(), sharePod('too-big', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '90000' }));
    const p = await s.until('too-big unschedulable', async () => {
      const got = await s.get(`${pods()}/too-big`);
      return got.status?.conditions?.find((c: any) => c.type === 'PodScheduled' && c.status === 'False') ? got : undefined;
    });
    assert.equal(p.status.phase, 'Pending');
    const cond = p.status.conditions.find((c: any) => c.type === 'PodScheduled');
    assert.equal(cond.reason, 'Unschedulable');
    assert.equal(cond.message, '0/1 nodes are available: 1 Insufficient nvidia.com/gpumem (2/2 CardInsufficientMemory).');
  });

  it('a quota on limits.nvidia.com/gpumem refuses the Pod that would go over, counting every card', async () => {
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    await s.create('/api/v1/namespaces/team/resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'gpu-memory' }, spec: { hard: { 'limits.nvidia.com/gpumem': '30000' } } });
    await s.create(pods('team'), sharePod('two-cards', { 'nvidia.com/gpu': '2', 'nvidia.com/gpumem': '10000' }));
    const r = await s.req('POST', pods('team'), sharePod('over', { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '15000' }));
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'pods "over" is forbidden: exceeded quota: gpu-memory, requested: limits.nvidia.com/gpumem=15k, used: limits.nvidia.com/gpumem=20k, limited: limits.nvidia.com/gpumem=30k');
    const placed = await running('two-cards', 'team');
    assert.equal(allocated(placed).split(':').filter((d) => d.includes(',')).length, 2, 'one share on each card');
    await s.until('the quota to count the shares', async () => (await s.get('/api/v1/namespaces/team/resourcequotas/gpu-memory')).status?.used?.['limits.nvidia.com/gpumem'] === '20k');
  });

  it("the node shows what its cards hold: kubectl describe and get -o wide, and the usage endpoint", async () => {
    const usage = await s.until('the shares on the node', async () => {
      const u = await s.get('/skiff/v1/nodes/local/gpus');
      // spread-a, spread-b, bin-a, bin-b and two-cards' two shares
      return u.cards.reduce((n: number, c: any) => n + c.used.shares, 0) === 6 ? u : undefined;
    });
    assert.equal(usage.kind, 'NodeGpuUsage');
    const all = usage.cards.flatMap((c: any) => c.allocations.map((a: any) => `${a.namespace}/${a.pod}`)).sort();
    assert.deepEqual(all, ['default/bin-a', 'default/bin-b', 'default/spread-a', 'default/spread-b', 'team/two-cards', 'team/two-cards']);
    const mem = usage.cards.reduce((n: number, c: any) => n + c.used.memoryMiB, 0);
    assert.equal(mem, 2 * 10000 + 2 * 20000 + 2 * 10000);

    const summary = await s.until('the node annotation', async () => {
      const v = (await s.get('/api/v1/nodes/local')).metadata.annotations?.['skiff.dev/gpu-shares'] as string | undefined;
      return v && [...v.matchAll(/(\d+)\/10 shares/g)].reduce((n, m) => n + Number(m[1]), 0) === 6 ? v : undefined;
    });
    assert.match(summary, /^0: \d\/10 shares, \d+\/81920 MiB, \d+\/100 cores; 1: /);
    const describe = await s.kubectl(['describe', 'node', 'local']);
    assert.equal(describe.code, 0, describe.stderr);
    assert.match(describe.stdout, /skiff\.dev\/gpu-shares: 0: /);
    assert.match(describe.stdout, /Allocatable:\n(.*\n)*?\s+nvidia\.com\/gpu:\s+20\n/, 'capacity and allocatable count shares');
    // kubectl sums the Pods' nvidia.com/gpu: six shares
    assert.match(describe.stdout, /Allocated resources:\n(.*\n)*?\s+nvidia\.com\/gpu\s+\d+\s+6\n/);
    const wide = await s.kubectl(['get', 'node', 'local', '-o', 'wide']);
    assert.match(wide.stdout, /GPU-SHARES/);
    assert.match(wide.stdout, /6\/20/);
  });
});

const standIn = '/lib/x86_64-linux-gnu/libm.so.6';

describe('GPU sharing: HAMi-core preloaded where it is configured', () => {
  let s: TestServer;
  let lib: string;
  before(async () => {
    // any shared library stands in for libvgpu.so: what is checked is that every process of a
    // container with a share loads it, through the /etc/ld.so.preload it is given
    const dir = mkdtempSync(join(tmpdir(), 'skiff-libvgpu-'));
    lib = join(dir, 'libvgpu.so');
    if (existsSync(standIn)) copyFileSync(standIn, lib);
    s = await TestServer.start({ config: { node: { gpus: 1 }, gpuSharing: { libvgpu: lib } } });
  });
  after(async () => {
    await s.cleanup();
    rmSync(dirname(lib), { recursive: true, force: true });
  });

  const logOf = async (name: string): Promise<string> => {
    await s.until(`${name} done`, async () => ['Succeeded', 'Failed'].includes((await s.get(`${pods()}/${name}`)).status?.phase));
    return (await s.req('GET', `${pods()}/${name}/log`)).text;
  };
  const probe = 'cat /etc/ld.so.preload 2>/dev/null || echo "no preload"; grep -c /usr/local/vgpu/libvgpu.so /proc/self/maps || true; ls -d /tmp/vgpulock';

  const skip = !existsSync(standIn) ? 'no libm to stand in for the library' : !bwrapAvailable() ? 'bubblewrap cannot run here, so nothing can be bound at /etc/ld.so.preload' : false;

  it('a share loads the library in every process; a whole card does not', { skip }, async () => {
    const shared = podManifest('shared', ['sh', '-c', probe]);
    shared.spec.containers[0].resources = { limits: { 'nvidia.com/gpumem': '1000' } };
    await s.create(pods(), shared);
    const whole = podManifest('whole', ['sh', '-c', probe]);
    whole.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': '1' } };
    const sharedLog = await logOf('shared');
    await s.create(pods(), whole);
    const wholeLog = await logOf('whole');
    assert.match(sharedLog, /^\/usr\/local\/vgpu\/libvgpu\.so\n[1-9]\d*\n\/tmp\/vgpulock\n$/);
    assert.doesNotMatch(wholeLog, /libvgpu/);
    const events = (await s.get('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=shared')).items;
    assert.equal(events.find((e: any) => e.reason === 'GPULimitsAdvisory'), undefined, 'with the library the limits are enforced');
  });
});

describe('GPU sharing in an isolated Pod (tenancy on)', () => {
  let s: TestServer;
  let lib: string;
  const skip = process.getuid?.() !== 0 ? 'isolating Pods needs a server running as root'
    : !bwrapAvailable() ? 'bubblewrap cannot run here'
    : !existsSync('/usr/sbin/nft') && !existsSync('/usr/bin/nft') ? 'nftables is not installed (scripts/setup.sh installs it)'
    : !existsSync(standIn) ? 'no libm to stand in for the library' : false;
  before(async () => {
    if (skip) return;
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-gpu-iso-'));
    writeFileSync(join(dataDir, 'tokens.csv'), 'admin-token,admin,1,"system:masters"\n');
    lib = join(dataDir, 'libvgpu.so');
    copyFileSync(standIn, lib);
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: 'tokens.csv', node: { gpus: 1 }, gpuSharing: { libvgpu: lib } } });
  });
  after(async () => {
    await s?.cleanup();
  });

  it('the Pod, as its own user, loads the library and writes its shared region', { skip }, async () => {
    const kubectl = (args: string[], input?: string) => s.kubectl(args, input, { KUBECONFIG: join(s.dataDir, 'kubeconfig') });
    const probe = 'id -u; cat /etc/ld.so.preload; grep -c /usr/local/vgpu/libvgpu.so /proc/self/maps; touch "$CUDA_DEVICE_MEMORY_SHARED_CACHE" && echo region ok; touch /tmp/vgpulock/probe && echo lock ok';
    const manifest = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'iso-share', namespace: 'default' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['sh', '-c', probe], resources: { limits: { 'nvidia.com/gpumem': '2048', 'nvidia.com/gpucores': '25' } } }] } };
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
    assert.equal(applied.code, 0, applied.stderr);
    await s.until('iso-share done', async () => ['Succeeded', 'Failed'].includes(JSON.parse((await kubectl(['get', 'pod', 'iso-share', '-o', 'json'])).stdout || '{}').status?.phase), 90_000);
    const out = (await kubectl(['logs', 'iso-share'])).stdout.trim().split('\n');
    assert.notEqual(out[0], '0', 'runs as its own user');
    assert.deepEqual(out.slice(1), ['/usr/local/vgpu/libvgpu.so', out[2], 'region ok', 'lock ok']);
    assert.ok(Number(out[2]) > 0, `the library is mapped: ${out.join(' | ')}`);
  });
});
