// ParallelFor benchmarks (bench/pipelines/fanout.py):
//   a. 200 items with a fan-in (dsl.Collected), kfp.local.SubprocessRunner against Skiff
//   c. 1,000 items on Skiff alone, with the peak resident memory of the `skiff up` process, after
//      10 and 100 items on the same server: the orchestration cost per task should not grow with the run
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

/** the processes that run a Skiff task beside the server: its skiff-spawner (which forks the shims; its
 *  children's CPU holds the shims' and skiff-pyfork's) and the warm zygote (whose children are the tasks' Python) */
function taskProcesses(serverPid: number, dataDir: string): { spawner?: number; zygote?: number } {
  const found: { spawner?: number; zygote?: number } = {};
  const serverStart = Number(procStat(serverPid)[19]);
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const f = procStat(pid);
      if ((argv[0] ?? '').endsWith('skiff-spawner') && Number(f[1]) === serverPid) found.spawner = pid;
      // its socket is in the data dir, or (a long path) /tmp/skiff-zygote-*.sock; it started after the server
      const socket = argv.find((a) => a.endsWith('.sock')) ?? '';
      if (argv.some((a) => a.endsWith('skiff_zygote.py')) && (socket.startsWith(dataDir) || (socket.startsWith('/tmp/skiff-zygote-') && Number(f[19]) >= serverStart))) found.zygote = pid;
    } catch {
      // gone
    }
  }
  return found;
}

/** /proc/PID/stat's fields after the command name (which may hold spaces and parentheses): [0] is the state */
function procStat(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** a process's own CPU time and its waited-for children's, in ticks */
function treeTicks(pid: number | undefined): { self: number; children: number } {
  if (pid === undefined) return { self: 0, children: 0 };
  try {
    const f = procStat(pid);
    return { self: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
  } catch {
    return { self: 0, children: 0 };
  }
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
  return treeTicks(pid).self;
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

/** what one Skiff run of the fan-out cost: wall-clock, and CPU by process (ms) */
interface SkiffRun {
  took: number;
  cpu: { server: number; busy: number; capacity: number; tasks: number; zygote: number; shims: number };
}

/** one run of the pipeline on a fresh server, with the CPU its processes and the machine spent */
async function skiffRun(spec: unknown, n: number): Promise<SkiffRun> {
  const s = await TestServer.start({ config: { verbose: false } });
  try {
    const pid = serverPid(s.dataDir);
    const m0 = machineTicks();
    const s0 = processTicks(pid);
    // the spawner and the zygote start with the first container: both are new here, and counted whole
    const took = await runOnSkiff(s, spec, n);
    const m1 = machineTicks();
    const serverTicks = processTicks(pid) - s0;
    const tp = taskProcesses(pid, s.dataDir);
    const z = treeTicks(tp.zygote);
    const sp = treeTicks(tp.spawner);
    return {
      took,
      cpu: {
        server: serverTicks * msPerTick, busy: (m1.busy - m0.busy) * msPerTick, capacity: (m1.total - m0.total) * msPerTick,
        tasks: z.children * msPerTick, zygote: z.self * msPerTick, shims: (sp.self + sp.children) * msPerTick,
      },
    };
  } finally {
    await s.cleanup();
  }
}

/** a. 200 iterations and a dsl.Collected fan-in, by kfp.local and by Skiff, in alternating pairs */
export async function fanOut200(row: Row, pairs = 3): Promise<void> {
  const n = 200;
  const parallelism = 8;
  console.log(`\n5. pipelines: ParallelFor over ${n} items (parallelism ${parallelism}) + a dsl.Collected fan-in (bench/pipelines/fanout.py), ${pairs} alternating pairs`);
  console.log('   components without the pip bootstrap (install_kfp_package=False); kfp.local runs at most 2 iterations at a time');
  console.log('   a pair is kfp.local then Skiff (a fresh server); the ratio is the median of the pairs\' ratios, as one run either way varies by ±20% here');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-fan-'));
  try {
    const spec = compile(dir, n, parallelism);
    // kfp.local runs each task's `mktemp -d` on this machine: given its own TMPDIR, removed with dir
    const env = { ...process.env, TMPDIR: join(dir, 'tmp') };
    mkdirSync(env.TMPDIR);
    const ratios: number[] = [];
    let last: SkiffRun | undefined;
    for (let i = 0; i < pairs; i++) {
      const t0 = nowMs();
      const printed = execFileSync(python, [script, 'local', join(dir, `local-${i}`), String(n), String(parallelism)], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20, env }).toString().trim().split('\n');
      const localWall = nowMs() - t0;
      const localRun = Number(printed.pop()) * 1000;
      const run = await skiffRun(spec, n);
      ratios.push(localRun / run.took);
      row(`pair ${i + 1}: kfp.local SubprocessRunner (pipeline call)`, fmtMs(localRun), `process wall ${fmtMs(localWall)}; ${fmtMs(localRun / (n + 1))} a task`);
      row(`pair ${i + 1}: skiff POST Run -> SUCCEEDED`, fmtMs(run.took), `${fmtMs(run.took / (n + 1))} a task; server CPU ${fmtMs(run.cpu.server / (n + 1))} a task; ${(localRun / run.took).toFixed(1)}x`);
      last = run;
    }
    const sorted = [...ratios].sort((a, b) => a - b);
    const mid = sorted[Math.floor(sorted.length / 2)] ?? 0;
    row('kfp.local over skiff, median of the pairs', `${mid.toFixed(1)}x`, `${mid >= 1 ? 'skiff faster' : 'skiff slower'}; pairs ${ratios.map((r) => `${r.toFixed(1)}x`).join(', ')}; aim >= 3x`);
    if (!last) return;
    const { cpu } = last;
    // where Skiff's last run spent the machine: the server process (all its threads) and everything
    // else (the tasks' Python, the zygote, shims, the kernel, and whatever else this machine runs)
    row('skiff (last pair): CPU of the server process', fmtMs(cpu.server), `${fmtMs(cpu.server / (n + 1))} a task`);
    // the task side, process by process: the forked Python children (the components' work), the zygote
    // (accepting and forking; its start, importing kfp, is in it), the spawner with the shims and skiff-pyfork
    row('skiff (last pair): CPU of the tasks\' processes', fmtMs(cpu.tasks + cpu.zygote + cpu.shims), `${fmtMs((cpu.tasks + cpu.zygote + cpu.shims) / (n + 1))} a task: forked Python ${fmtMs(cpu.tasks / (n + 1))}, zygote ${fmtMs(cpu.zygote / (n + 1))} (its start, about 50 ms, included), spawner + shims + skiff-pyfork ${fmtMs(cpu.shims / (n + 1))}`);
    row('skiff (last pair): CPU of the whole machine', fmtMs(cpu.busy), `${fmtMs((cpu.busy - cpu.server) / (n + 1))} a task beyond the server; ${fmtMs(cpu.capacity)} of CPU time passed (all cores)`);
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
