// ParallelFor benchmarks (bench/pipelines/fanout.py):
//   a. 200 items with a fan-in (dsl.Collected), kfp.local.SubprocessRunner against Skiff
//   c. 1,000 items on Skiff alone, with the peak resident memory of the `skiff up` process, after
//      10 and 100 items on the same server: the orchestration cost per task should not grow with the run
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { TestServer, repoRoot } from '../../test/harness.js';
import { fmtMs, nowMs } from '../stats.js';

type Row = (label: string, value: string, note?: string) => void;

const python = join(repoRoot, '.venv', 'bin', 'python');
const script = join(repoRoot, 'bench', 'pipelines', 'fanout.py');
const runsPath = '/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs';

const sumOfSquares = (n: number): number => ((n - 1) * n * (2 * n - 1)) / 6;

export function compile(dir: string, n: number, parallelism: number): unknown {
  const file = join(dir, `fanout-${n}.yaml`);
  execFileSync(python, [script, 'compile', file, String(n), String(parallelism)]);
  return YAML.parse(readFileSync(file, 'utf8'));
}

/** the pid of the server process itself (not its containers), found by its data dir */
function serverPid(dataDir: string): number {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('skiff.js')) && argv.includes('up') && argv.includes(dataDir)) return Number(pid);
    } catch {
      // gone
    }
  }
  throw new Error(`no skiff up process for ${dataDir}`);
}

/** clock ticks, as /proc counts CPU time (USER_HZ is 100 on Linux) */
const msPerTick = 10;

/** the machine's busy and total CPU time since boot, in ticks (/proc/stat's first line; iowait is idle) */
function machineTicks(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}

/** the CPU time a process has used (user + system, all its threads), in ticks */
function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the fields after the command name, which may hold spaces and parentheses
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** submits the compiled pipeline as a Run and polls (100 ms) until it ends; wall-clock ms */
export async function runOnSkiff(s: TestServer, pipelineSpec: unknown, n: number): Promise<number> {
  const t0 = nowMs();
  const created = await s.create(runsPath, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { generateName: `fan-out-in-${n}-` }, spec: { pipelineSpec } });
  const name = String(created.metadata.name);
  const run = await s.until(`run ${name}`, async () => {
    const r = await s.get(`${runsPath}/${name}`);
    return ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(r.status?.state) ? r : undefined;
  }, 30 * 60_000);
  const took = nowMs() - t0;
  if (run.status.state !== 'SUCCEEDED') throw new Error(`run ${name} ${run.status.state}: ${run.status.message ?? ''}`);
  const out = run.status.outputs?.parameters?.Output;
  if (Number(out) !== sumOfSquares(n)) throw new Error(`run ${name}: output ${JSON.stringify(out)}, want ${sumOfSquares(n)}`);
  return took;
}

/** a. 200 iterations and a dsl.Collected fan-in, by kfp.local and by Skiff */
export async function fanOut200(row: Row): Promise<void> {
  const n = 200;
  const parallelism = 8;
  console.log(`\n5. pipelines: ParallelFor over ${n} items (parallelism ${parallelism}) + a dsl.Collected fan-in (bench/pipelines/fanout.py), 1 run each`);
  console.log('   components without the pip bootstrap (install_kfp_package=False); kfp.local runs at most 2 iterations at a time');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-fan-'));
  try {
    const spec = compile(dir, n, parallelism);
    const t0 = nowMs();
    const printed = execFileSync(python, [script, 'local', join(dir, 'local'), String(n), String(parallelism)], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 }).toString().trim().split('\n');
    const localWall = nowMs() - t0;
    const localRun = Number(printed.pop()) * 1000;
    const s = await TestServer.start({ config: { verbose: false } });
    let skiff: number;
    let cpu: { server: number; busy: number; capacity: number };
    try {
      const pid = serverPid(s.dataDir);
      const m0 = machineTicks();
      const s0 = processTicks(pid);
      skiff = await runOnSkiff(s, spec, n);
      const m1 = machineTicks();
      cpu = { server: (processTicks(pid) - s0) * msPerTick, busy: (m1.busy - m0.busy) * msPerTick, capacity: (m1.total - m0.total) * msPerTick };
    } finally {
      await s.cleanup();
    }
    row('kfp.local SubprocessRunner (pipeline call)', fmtMs(localRun), `process wall ${fmtMs(localWall)}; ${fmtMs(localRun / (n + 1))} a task`);
    row('skiff: POST Run -> SUCCEEDED', fmtMs(skiff), `${fmtMs(skiff / (n + 1))} a task`);
    row('kfp.local over skiff', `${(localRun / skiff).toFixed(1)}x`, `${localRun >= skiff ? 'skiff faster' : 'skiff slower'}; aim >= 3x`);
    // where Skiff's run spent the machine: the server process (all its threads) and everything else
    // (the tasks' Python, the zygote, shims, the kernel, and whatever else this machine runs)
    row('skiff: CPU of the server process', fmtMs(cpu.server), `${fmtMs(cpu.server / (n + 1))} a task`);
    row('skiff: CPU of the whole machine', fmtMs(cpu.busy), `${fmtMs((cpu.busy - cpu.server) / (n + 1))} a task beyond the server; ${fmtMs(cpu.capacity)} of CPU time passed (all cores)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** c. 1,000 iterations on Skiff alone: wall-clock and the server's peak RSS, sampled every 100 ms */
export async function fanOut1000(row: Row): Promise<void> {
  const n = 1000;
  const parallelism = 16;
  console.log(`\n6. pipelines: ParallelFor over ${n} items (parallelism ${parallelism}) + fan-in on Skiff alone, server memory sampled every 100 ms`);
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-fan-'));
  const s = await TestServer.start({ config: { verbose: false } });
  try {
    for (const small of [10, 100]) {
      const took = await runOnSkiff(s, compile(dir, small, parallelism), small);
      row(`skiff: ${small + 1} tasks, POST Run -> SUCCEEDED`, fmtMs(took), `${fmtMs(took / (small + 1))} a task`);
    }
    const spec = compile(dir, n, parallelism);
    const pid = serverPid(s.dataDir);
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssBytes(pid));
      } catch {
        // the server is gone: the run fails below
      }
    }, 100);
    let took: number;
    try {
      took = await runOnSkiff(s, spec, n);
    } finally {
      clearInterval(sampler);
    }
    const mb = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MB`;
    row(`skiff: ${n + 1} tasks, POST Run -> SUCCEEDED`, fmtMs(took), `${fmtMs(took / (n + 1))} a task; aim < 60 s`);
    row('skiff up peak VmRSS during the run', mb(peak), `${mb(before)} before it; aim < 300 MB`);
  } finally {
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}
