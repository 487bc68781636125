// The usage monitor: rates, windows and counters on a made-up /proc with a fake clock, then real
// processes measured through the real /proc.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CLOCK_TICKS, parseStat } from './procfs.js';
import type { GpuProcessUse, GpuSample } from './gpu-processes.js';
import type { LiveContainer } from './usage.js';
import { attributeGpus, UsageMonitor } from './usage.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-usage-'));
after(() => rmSync(root, { recursive: true, force: true }));

function setProc(dir: string, pid: number, ppid: number, ticks: number, pssKb: number): void {
  mkdirSync(join(dir, String(pid)), { recursive: true });
  writeFileSync(join(dir, String(pid), 'stat'), `${pid} (python3) R ${ppid} ${pid} ${ppid} 0 -1 0 0 0 0 0 ${ticks} 0 0 0 20 0 1 0 1000 0 0\n`);
  writeFileSync(join(dir, String(pid), 'smaps_rollup'), `Rss: ${pssKb} kB\nPss: ${pssKb} kB\n`);
}

function setMachine(dir: string, busyTicks: number): void {
  writeFileSync(join(dir, 'stat'), `cpu  ${busyTicks} 0 0 5000 0 0 0 0 0 0\n`);
  writeFileSync(join(dir, 'meminfo'), 'MemTotal: 1000 kB\nMemFree: 200 kB\nInactive(file): 300 kB\n');
}

describe('UsageMonitor on a made-up /proc', () => {
  const dir = join(root, 'proc');
  mkdirSync(dir);
  let now = 1_000_000;
  let live: LiveContainer[] = [];
  const c = (pid: number, container: string): LiveContainer => ({ uid: 'u1', namespace: 'ns', pod: 'p', container, pid, startedAt: '2026-01-01T00:00:00Z' });
  setMachine(dir, 1000);
  const m = new UsageMonitor({ nodeName: 'n1', intervalMs: 5000, containers: () => live, procRoot: dir, now: () => now });

  it('has no rate after one sample, then the rate over the window between the last two', () => {
    setProc(dir, 10, 1, 100, 1000);
    setProc(dir, 11, 10, 50, 24);
    setProc(dir, 20, 1, 0, 8);
    live = [c(10, 'main'), c(20, 'side')];
    m.sample();
    let pods = m.podUsage();
    assert.equal(pods.length, 1);
    assert.deepEqual(pods[0]?.containers.map((x) => [x.name, x.cpuSeconds, x.cpuCores, x.memoryWorkingSetBytes]), [['main', 150 / CLOCK_TICKS, undefined, 1024 * 1024], ['side', 0, undefined, 8 * 1024]]);
    now += 4000;
    setProc(dir, 10, 1, 400, 2000);
    setProc(dir, 11, 10, 150, 48);
    m.sample();
    pods = m.podUsage();
    const main = pods[0]?.containers.find((x) => x.name === 'main');
    // (550 - 150) ticks in 4 s: one core
    assert.equal(main?.cpuCores, 1);
    assert.equal(main?.windowMs, 4000);
    assert.equal(main?.timestamp, now);
    assert.equal(main?.memoryWorkingSetBytes, 2048 * 1024);
  });

  it('keeps a counter from going back when a process leaves with its CPU time', () => {
    rmSync(join(dir, '11'), { recursive: true });
    now += 1000;
    m.sample();
    const main = m.podUsage()[0]?.containers.find((x) => x.name === 'main');
    assert.equal(main?.cpuSeconds, 550 / CLOCK_TICKS);
    assert.equal(main?.cpuCores, 0);
  });

  it('forgets a container once it is no longer running', () => {
    live = [c(20, 'side')];
    now += 1000;
    m.sample();
    assert.deepEqual(m.podUsage()[0]?.containers.map((x) => x.name), ['side']);
    live = [];
    now += 1000;
    m.sample();
    assert.deepEqual(m.podUsage(), []);
  });

  it('samples the node when asked, no more than once a second, with the window since the last sample', () => {
    setMachine(dir, 3000);
    now += 2000;
    const u = m.nodeUsage();
    assert.equal(u?.name, 'n1');
    assert.equal(u?.memoryWorkingSetBytes, (1000 - 200 - 300) * 1024);
    assert.equal(u?.windowMs, 2000);
    assert.equal(u?.cpuCores, (3000 - 1000) / CLOCK_TICKS / 2);
    setMachine(dir, 9000);
    now += 500;
    assert.deepEqual(m.nodeUsage(), u);
  });
});

function ticksOf(pid: number): number {
  return parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'latin1'))?.cpuTicks ?? NaN;
}

describe('UsageMonitor on this machine', () => {
  it('measures a busy process and the memory a process holds', async () => {
    const busy = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    const holder = spawn(process.execPath, ['-e', 'const b = Buffer.alloc(64 * 1024 * 1024, 1); setInterval(() => b[0]++, 1000); process.stdout.write("ready")'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((r) => holder.stdout?.once('data', r));
      const live: LiveContainer[] = [
        { uid: 'b', namespace: 'ns', pod: 'busy', container: 'main', pid: busy.pid ?? 0, startedAt: 'x' },
        { uid: 'h', namespace: 'ns', pod: 'holder', container: 'main', pid: holder.pid ?? 0, startedAt: 'x' },
      ];
      const m = new UsageMonitor({ nodeName: 'n', intervalMs: 60_000, containers: () => live });
      const before1 = ticksOf(busy.pid ?? 0);
      m.sample();
      const after1 = ticksOf(busy.pid ?? 0);
      await new Promise((r) => setTimeout(r, 1500));
      const before2 = ticksOf(busy.pid ?? 0);
      m.sample();
      const after2 = ticksOf(busy.pid ?? 0);
      const pods = m.podUsage();
      const cpu = pods.find((p) => p.name === 'busy')?.containers[0];
      assert.ok(cpu?.cpuCores !== undefined && cpu.windowMs !== undefined);
      // what the monitor read lies between what /proc said just before and just after each sample
      const used = cpu.cpuCores * (cpu.windowMs / 1000);
      assert.ok(used >= (before2 - after1) / CLOCK_TICKS - 1e-9 && used <= (after2 - before1) / CLOCK_TICKS + 1e-9, `${used} s of CPU, /proc said ${before2 - after1}..${after2 - before1} ticks`);
      assert.ok(used > 0, 'a busy loop used no CPU');
      const mem = pods.find((p) => p.name === 'holder')?.containers[0]?.memoryWorkingSetBytes ?? 0;
      assert.ok(mem >= 64 * 1024 * 1024, `the holder's working set is ${mem} bytes`);
      assert.ok((m.nodeUsage()?.memoryWorkingSetBytes ?? 0) > mem);
    } finally {
      busy.kill('SIGKILL');
      holder.kill('SIGKILL');
    }
  });

  it('counts a session that left the tree but writes to the container\'s output (a zygote-forked task)', async () => {
    // the subshell exits at once: the busy loop, a session of its own, is init's child now, with
    // the container's stdout, as a task the zygote forked for a container's skiff-pyfork is
    const root = spawn('sh', ['-c', '(setsid sh -c \'echo $$; while :; do :; done\' &); exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const away = Number(await new Promise<string>((r) => root.stdout?.once('data', (d: Buffer) => r(d.toString()))));
    try {
      const m = new UsageMonitor({ nodeName: 'n', intervalMs: 60_000, containers: () => [{ uid: 'z', namespace: 'ns', pod: 'task', container: 'main', pid: root.pid ?? 0, startedAt: 'x' }] });
      const before1 = ticksOf(away);
      m.sample();
      await new Promise((r) => setTimeout(r, 1000));
      m.sample();
      const after2 = ticksOf(away);
      const c = m.podUsage()[0]?.containers[0];
      assert.ok(c?.cpuCores !== undefined && c.windowMs !== undefined);
      const used = c.cpuCores * (c.windowMs / 1000);
      assert.ok(used > 0 && used <= (after2 - before1) / CLOCK_TICKS + 0.02, `${used} s of CPU; the escaped loop used ${(after2 - before1) / CLOCK_TICKS} s`);
    } finally {
      try {
        process.kill(away, 'SIGKILL');
      } catch {
        // gone
      }
      root.kill('SIGKILL');
    }
  });
});

describe("containers' GPU use", () => {
  const model = 'NVIDIA H100 80GB HBM3';
  const proc = (pid: number, index: number, memoryUsedMiB?: number, smPercent?: number): GpuProcessUse =>
    ({ pid, index, uuid: `GPU-${index}`, modelName: model, ...(memoryUsedMiB !== undefined ? { memoryUsedMiB } : {}), ...(smPercent !== undefined ? { smPercent } : {}) });
  const owner = new Map([[10, 'a'], [11, 'a'], [20, 'b']]);

  it("sums a container's processes per card, with pmon's utilisation; an unknown pid is no one's", () => {
    const sample: GpuSample = { cards: [{ index: 0, gpuPercent: 90, memoryUsedMiB: 3000 }], processes: [proc(10, 0, 1000, 30), proc(11, 0, 500, 80), proc(20, 0, 1000), proc(99, 0, 500, 10)], perProcess: true };
    const got = attributeGpus(sample, owner, new Map());
    assert.deepEqual(got.get('a'), [{ index: 0, uuid: 'GPU-0', modelName: model, memoryUsedMiB: 1500, gpuPercent: 100, gpuPercentSource: 'process' }]);
    // pmon printed `-` for it: no kernel ran
    assert.deepEqual(got.get('b'), [{ index: 0, uuid: 'GPU-0', modelName: model, memoryUsedMiB: 1000, gpuPercent: 0, gpuPercentSource: 'process' }]);
    assert.equal(got.size, 2);
  });

  it("without pmon, splits the card's utilisation by the shares' compute, or equally when one has no limit", () => {
    const sample: GpuSample = { cards: [{ index: 0, gpuPercent: 80, memoryUsedMiB: 3000 }, { index: 1, gpuPercent: 50, memoryUsedMiB: 10 }], processes: [proc(10, 0, 1000), proc(20, 0, 2000), proc(11, 1)], perProcess: false };
    const byCores = attributeGpus(sample, owner, new Map([['a', [{ uuid: 'GPU-0', cores: 30 }, { uuid: 'GPU-1', cores: 100 }]], ['b', [{ uuid: 'GPU-0', cores: 10 }]]]));
    assert.deepEqual(byCores.get('a')?.map((g) => [g.index, g.gpuPercent, g.gpuPercentSource, g.memoryUsedMiB]), [[0, 60, 'cardShare', 1000], [1, 50, 'cardShare', undefined]]);
    assert.deepEqual(byCores.get('b')?.map((g) => [g.index, g.gpuPercent]), [[0, 20]]);
    const equal = attributeGpus(sample, owner, new Map([['a', [{ uuid: 'GPU-0', cores: 0 }]], ['b', [{ uuid: 'GPU-0', cores: 10 }]]]));
    assert.deepEqual([equal.get('a')?.[0]?.gpuPercent, equal.get('b')?.[0]?.gpuPercent], [40, 40]);
    // a card nvidia-smi could not read ([N/A]) gives memory but no utilisation
    const unread = attributeGpus({ ...sample, cards: [] }, owner, new Map());
    assert.deepEqual(unread.get('b'), [{ index: 0, uuid: 'GPU-0', modelName: model, memoryUsedMiB: 2000 }]);
  });

  it('the monitor asks once per sample, never twice at once, and maps the answer to the containers it sampled', async () => {
    const dir = join(root, 'proc-gpu');
    mkdirSync(dir);
    setMachine(dir, 1000);
    setProc(dir, 30, 1, 10, 100);
    setProc(dir, 31, 30, 10, 100);
    let asked = 0;
    let answer: (s: GpuSample) => void = () => undefined;
    const m = new UsageMonitor({
      nodeName: 'n', intervalMs: 5000, procRoot: dir,
      containers: () => [{ uid: 'u', namespace: 'ns', pod: 'train', container: 'main', pid: 30, startedAt: 's', gpuShares: [{ uuid: 'GPU-0', cores: 50 }] }],
      gpus: () => {
        asked++;
        return new Promise((r) => (answer = r));
      },
    });
    m.sample();
    m.sample();
    assert.equal(asked, 1, 'a second sample while the first answer is awaited does not ask again');
    assert.equal(m.podUsage()[0]?.containers[0]?.gpus, undefined);
    answer({ cards: [{ index: 0, gpuPercent: 40, memoryUsedMiB: 700 }], processes: [proc(31, 0, 700)], perProcess: false });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(m.podUsage()[0]?.containers[0]?.gpus, [{ index: 0, uuid: 'GPU-0', modelName: model, memoryUsedMiB: 700, gpuPercent: 40, gpuPercentSource: 'cardShare' }]);
    assert.deepEqual(m.nodeUsage()?.gpus, [{ index: 0, gpuPercent: 40, memoryUsedMiB: 700 }]);
    m.sample();
    assert.equal(asked, 2);
  });
});
