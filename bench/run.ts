// Skiff's platform-core benchmarks, in one run on this machine:
//   1. `skiff up` start-up time to ready
//   2. apply-to-process-start latency of a Pod, against spawning the same process directly
//   3. store throughput (create/get/list) and the latency of a 100-item page out of 100,000 objects,
//      in process and over HTTP
//   4. a 10-step pipeline of lightweight components: kfp.local against `skiff run`, and Skiff's
//      per-task cost beyond a bare `python3 -c "import kfp"`
//   5. a 200-item ParallelFor with a dsl.Collected fan-in: kfp.local against Skiff
//   6. a 1,000-item ParallelFor on Skiff, with the server's peak memory
//   7. distributed training: a PyTorchJob's start and DDP speed against torchrun (bench/training.ts)
//   8. model serving: sklearn against KServe's Python model server, first response from zero, ONNX
//      against onnxruntime-node directly (bench/serving.ts); a TensorFlow SavedModel on Skiff's
//      tensorflow runtime against TensorFlow's Python API behind a plain HTTP server
//      (bench/serving-tensorflow.ts)
//   9. the dashboard's first paint in Chromium: the runs list with 1,000 Runs and a run of 1,000 tasks,
//      against `kubectl get runs` and `skiff get runs` over the same list (bench/ui.ts)
//  10. hyperparameter tuning: a Katib trial's cost beyond its payload (bench/tuning-overhead.ts), and
//      Skiff's search algorithms against Optuna's on Branin, Hartmann-6, BBOB and an SVM, in the same
//      run (bench/tuning/README.md): its quick matrix by default, the issue's full one with --tuning-full
//  11. the cost of tenancy: a Pod's apply-to-Running, the pipeline chain and one ConfigMap's GET with
//      tenancy off and on (a token file, a Profile, RBAC on every request), alternated (bench/tenancy.ts)
//  12. queues: the admission engine's decisions on 15,000 Workloads, then the real queue controllers
//      admitting 15,000 suspended Jobs in waves and the time from a freed quota to the next admission
//      (bench/queues.ts; --queue-jobs 15000 --queue-wave 1000)
//  13. Kubernetes: the 10-step pipeline chain on a real control plane with a node agent against the
//      local substrate, then kwok's simulated Nodes running batch Jobs by the cluster's Job controller
//      alone and through Skiff's Kueue queues: time to all Complete, Skiff's RSS, time per reconcile as
//      the cluster grows (bench/kubernetes.ts; --k8s-nodes 1000 --k8s-jobs 100 --k8s-completions 100
//      for the issue's 10,000 Pods on 1,000 Nodes)
//   --busy: a CPU burner on every core for the whole run, to see what holds on a loaded machine
// Usage: npm run bench [-- --objects 100000 --runs 30 --bare-runs 30 --serving-seconds 8 --only 4,5,6 --busy --fanout-pairs 3]
//        section 9: --ui-runs 1000 --ui-tasks 1000 --ui-loads 5 --ui-list-selector SEL --ui-run-selector SEL|auto
//        section 8's model-server HTTP comparison alone: --only 8 --serving-http-only [--serving-http-rounds 5]
//        section 7's TFJob comparison alone: --only 7 --training-tf-only [--training-tf-pairs 3]
//        section 8's TensorFlow comparison alone: --only 8 --serving-tf-only [--serving-tf-rounds 3]
//        section 10: --tuning-full (10 seeds, 50 and 200 trials, sequential and 4 in parallel, every
//        suite: many hours on 2 cores); node dist/bench/tuning.js runs the comparison alone, with its own flags
//        section 11: --tenancy-gets 2000 --tenancy-chains 5 (Pod starts: --runs)
//        section 13: --k8s-nodes N --k8s-jobs J --k8s-completions C --k8s-parallelism P --k8s-chains R
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultRegistry, Kinds } from '../src/api/index.js';
import { Client } from '../src/store/client.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { TestServer, repoRoot, skiffBin } from '../test/harness.js';
import { chainRun, compileChain, podStart, singleUser } from './measure.js';
import { fanOut1000, fanOut200 } from './pipelines/fanout.js';
import { fmtMs, median, nowMs, percentile } from './stats.js';
import { servingBench } from './serving.js';
import { tfServingBench } from './serving-tensorflow.js';
import { tenancyBench } from './tenancy.js';
import { queuesControllersBench } from './queues/controllers.js';
import { queuesEngineBench } from './queues/engine.js';
import { trainingBench } from './training.js';
import { tfTrainingBench } from './training-tf.js';
import { FULL, QUICK, tuningBench } from './tuning/bench.js';
import { trialOverheadBench } from './tuning-overhead.js';
import { uiBench } from './ui.js';
import { K8S_DEFAULTS, kubernetesBench } from './kubernetes.js';

const args = process.argv.slice(2);
const arg = (name: string, def: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const objects = arg('objects', 100_000);
const runs = arg('runs', 30);
const bareRuns = arg('bare-runs', 30);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',')) : undefined;
const wanted = (section: number): boolean => !only || only.has(String(section));

const busy = args.includes('--busy');

/** every result carries the 1-minute load average it was measured under */
function row(label: string, value: string, note = ''): void {
  console.log(`  ${label.padEnd(44)} ${value.padStart(14)}  ${note}${note ? '; ' : ''}load ${loadavg()[0]?.toFixed(2)}`);
}

/** one busy loop per core, at normal priority, as other work on a shared machine would be */
function startBurners(): ChildProcess[] {
  return cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

async function startup(): Promise<void> {
  console.log('\n1. skiff up: start to ready (fresh data dir each time)');
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-up-'));
    const t0 = nowMs();
    const p = spawn(process.execPath, [skiffBin, 'up', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      p.stdout.on('data', (d) => {
        out += d;
        const m = /ready at (\S+)/.exec(out);
        if (m) resolve(m[1] as string);
      });
      p.once('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
    });
    const ready = await fetch(`${url}/readyz`);
    times.push(nowMs() - t0);
    if (ready.status !== 200) throw new Error('not ready');
    p.kill('SIGTERM');
    await new Promise((r) => p.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
  row('start-up to /readyz (median of 5)', fmtMs(median(times)), `max ${fmtMs(Math.max(...times))}; aim < 1000 ms`);
}

/** runs `date +%s%N` directly and returns the delay from spawn to the process printing its clock */
async function bareSpawn(): Promise<number> {
  const t0 = nowMs();
  const p = spawn('date', ['+%s%N'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  await new Promise((r) => p.once('exit', r));
  return Number(BigInt(out.trim()) / 1000n) / 1000 - t0;
}

async function applyToStart(): Promise<void> {
  console.log(`\n2. apply-to-process-start: POST a Pod running \`date +%s%N\` vs spawning it directly (${runs} runs each)`);
  const s = await TestServer.start({ config: { verbose: false } });
  try {
    const bare: number[] = [];
    const skiff: number[] = [];
    for (let i = 0; i < 3; i++) await bareSpawn(); // warm the page cache
    for (let i = 0; i < runs; i++) {
      bare.push(await bareSpawn());
      skiff.push(await podStart(s, singleUser, `lat-${i}`));
    }
    const mb = median(bare);
    const ms = median(skiff);
    row('bare spawn, median', fmtMs(mb), `p90 ${fmtMs(percentile(bare, 90))}`);
    row('skiff: POST Pod -> process running, median', fmtMs(ms), `p90 ${fmtMs(percentile(skiff, 90))}`);
    row('skiff over bare spawn (median)', fmtMs(ms - mb), `ratio ${(ms / mb).toFixed(1)}x; aim < 50 ms over`);
  } finally {
    await s.cleanup();
  }
}

async function storeBench(): Promise<void> {
  console.log(`\n3. store: ${objects.toLocaleString('en')} ConfigMaps in SQLite`);
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-store-'));
  const store = new SqliteStore({ file: join(dir, 'skiff.db') });
  const client = new Client(store, defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  let t0 = nowMs();
  for (let i = 0; i < objects; i++) {
    await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default', labels: { shard: String(i % 10) } }, data: { value: String(i) } });
  }
  const createS = (nowMs() - t0) / 1000;
  row('create (validated, one transaction each)', `${Math.round(objects / createS).toLocaleString('en')}/s`);
  t0 = nowMs();
  const gets = 20_000;
  for (let i = 0; i < gets; i++) await client.get(Kinds.ConfigMap, { namespace: 'default', name: `cm-${(i * 7919) % objects}` });
  row('get', `${Math.round(gets / ((nowMs() - t0) / 1000)).toLocaleString('en')}/s`);
  const pageTimes: number[] = [];
  let cont: string | undefined;
  for (let i = 0; i < 300; i++) {
    const t = nowMs();
    const page = await client.list(Kinds.ConfigMap, { namespace: 'default', limit: 100, continue: cont });
    pageTimes.push(nowMs() - t);
    cont = page.continue;
  }
  row('list a 100-item page, in process', fmtMs(median(pageTimes)), `p99 ${fmtMs(percentile(pageTimes, 99))}; aim p99 < 20 ms`);
  const selTimes: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = nowMs();
    await client.list(Kinds.ConfigMap, { namespace: 'default', limit: 100, labelSelector: `shard=${i % 10}` });
    selTimes.push(nowMs() - t);
  }
  row('list 100 with a label selector (1 in 10 match)', fmtMs(median(selTimes)), `p99 ${fmtMs(percentile(selTimes, 99))}`);
  await store.close();

  const s = await TestServer.start({ dataDir: dir, config: { verbose: false } });
  try {
    const http: number[] = [];
    let c: string | undefined;
    for (let i = 0; i < 300; i++) {
      const t = nowMs();
      const r = await s.get(`/api/v1/namespaces/default/configmaps?limit=100${c ? `&continue=${c}` : ''}`);
      http.push(nowMs() - t);
      c = r.metadata.continue;
    }
    row('list a 100-item page over HTTP', fmtMs(median(http)), `p99 ${fmtMs(percentile(http, 99))}; aim p99 < 20 ms`);
  } finally {
    await s.cleanup();
  }
}

/** the same 10-step chain of lightweight components, by kfp.local.SubprocessRunner and by Skiff */
async function pipelineChain(): Promise<void> {
  const python = join(repoRoot, '.venv', 'bin', 'python');
  const script = join(repoRoot, 'bench', 'pipelines', 'chain.py');
  if (!existsSync(python)) {
    console.log('\n4. pipelines: skipped, no .venv (run npm run setup)');
    return;
  }
  console.log('\n4. pipelines: a 10-step chain of lightweight components (bench/pipelines/chain.py), 3 runs each');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-kfp-'));
  const compiled = compileChain(python, script, dir);
  const local: number[] = [];
  // kfp.local runs each task's `mktemp -d` on this machine: given its own TMPDIR, removed with dir
  const localEnv = { ...process.env, TMPDIR: join(dir, 'tmp') };
  mkdirSync(localEnv.TMPDIR);
  for (let i = 0; i < 3; i++) local.push(Number(execFileSync(python, [script, 'local', join(dir, `local-${i}`)], { stdio: ['ignore', 'pipe', 'ignore'], env: localEnv }).toString().trim().split('\n').pop()) * 1000);
  // a bare `import kfp`, and the lean one a task's executor does: the component command sets
  // _KFP_RUNTIME=true, which keeps kfp from importing its REST client
  const timeImport = (env: NodeJS.ProcessEnv): number[] => {
    const times: number[] = [];
    execFileSync(python, ['-c', 'import kfp'], { env }); // warm the page cache
    for (let i = 0; i < bareRuns; i++) {
      const t = nowMs();
      execFileSync(python, ['-c', 'import kfp'], { env });
      times.push(nowMs() - t);
    }
    return times;
  };
  const bare = timeImport(process.env);
  const lean = timeImport({ ...process.env, _KFP_RUNTIME: 'true' });
  const s = await TestServer.start({ config: { verbose: false } });
  const skiff: number[] = [];
  try {
    for (let i = 0; i < 3; i++) skiff.push(await chainRun(s, singleUser, compiled));
  } finally {
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  const ml = median(local);
  const ms = median(skiff);
  row('kfp.local SubprocessRunner, median', fmtMs(ml));
  row('skiff run --watch (CLI to SUCCEEDED), median', fmtMs(ms), `${(ml / ms).toFixed(1)}x faster; aim >= 10x`);
  const perTask = ms / 10;
  row('skiff per task (run time / 10)', fmtMs(perTask));
  row(`python3 -c "import kfp", median of ${bareRuns}`, fmtMs(median(bare)), `p90 ${fmtMs(percentile(bare, 90))}`);
  row('  the same with _KFP_RUNTIME=true (a task)', fmtMs(median(lean)), `p90 ${fmtMs(percentile(lean, 90))}; what executor_main imports`);
  const over = perTask - median(bare);
  row('skiff per task beyond `import kfp`', over >= 0 ? fmtMs(over) : `${fmtMs(-over)} below`, over >= 0 ? 'aim < 50 ms' : 'a task imports the lean kfp (next row); aim < 50 ms');
  row('skiff per task beyond the lean import', fmtMs(perTask - median(lean)), 'orchestration + process start per task, CLI start-up included');
}

console.log(`Skiff platform-core benchmarks (node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} cores${busy ? `, busy: ${cpus().length} CPU burners running` : ''})`);
const burners = busy ? startBurners() : [];
const t0 = nowMs();
if (wanted(1)) await startup();
if (wanted(2)) await applyToStart();
if (wanted(3)) await storeBench();
if (wanted(4)) await pipelineChain();
if (existsSync(join(repoRoot, '.venv', 'bin', 'python'))) {
  if (wanted(5)) await fanOut200(row, arg('fanout-pairs', 3));
  if (wanted(6)) await fanOut1000(row);
}
if (wanted(7)) {
  if (!args.includes('--training-tf-only')) await trainingBench(row);
  await tfTrainingBench(row, arg('training-tf-pairs', 3));
}
if (wanted(8)) {
  const tfOnly = args.includes('--serving-tf-only');
  if (!tfOnly) await servingBench(row, { seconds: arg('serving-seconds', 8), httpRounds: arg('serving-http-rounds', 5), httpOnly: args.includes('--serving-http-only') });
  if (tfOnly || !args.includes('--serving-http-only')) await tfServingBench(row, { seconds: arg('serving-seconds', 8), rounds: arg('serving-tf-rounds', 3) });
}
if (wanted(9) && existsSync(join(repoRoot, '.venv', 'bin', 'python'))) {
  const sarg = (name: string, def: string): string => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? String(args[i + 1]) : def;
  };
  await uiBench(row, {
    runs: arg('ui-runs', 1000),
    tasks: arg('ui-tasks', 1000),
    loads: arg('ui-loads', 5),
    listSelector: sarg('ui-list-selector', '[role=rowgroup] [role=row]'),
    runSelector: sarg('ui-run-selector', 'auto'),
  });
}
if (wanted(10) && existsSync(join(repoRoot, '.venv', 'bin', 'python'))) {
  const full = args.includes('--tuning-full');
  console.log(`\n10. hyperparameter tuning: a Katib trial's overhead, then Skiff's search algorithms against Optuna's (${full ? 'the full matrix' : 'quick; --tuning-full for the full matrix'})`);
  const overheadMs = await trialOverheadBench(row, 10);
  await tuningBench(full ? FULL : QUICK, { row, overheadMs });
}
if (wanted(11)) await tenancyBench(row, { runs, gets: arg('tenancy-gets', 2000), chainRuns: arg('tenancy-chains', 5) });
if (wanted(12)) {
  console.log('\n12. queues: Kueue\'s admission decisions in Skiff\'s engine, then the real controllers on a store, against Kueue\'s published figures');
  await queuesEngineBench(row, { workloads: arg('queue-workloads', 15_000), freedSamples: 50, baseline: true });
  await queuesControllersBench(row, { jobs: arg('queue-jobs', 15_000), wave: arg('queue-wave', 1000), freedSamples: 50 });
}
if (wanted(13)) {
  await kubernetesBench(row, {
    nodes: arg('k8s-nodes', K8S_DEFAULTS.nodes), jobs: arg('k8s-jobs', K8S_DEFAULTS.jobs), completions: arg('k8s-completions', K8S_DEFAULTS.completions),
    parallelism: arg('k8s-parallelism', K8S_DEFAULTS.parallelism), chainRuns: arg('k8s-chains', K8S_DEFAULTS.chainRuns),
  });
}
for (const b of burners) b.kill('SIGKILL');
console.log(`\nall benchmarks: ${((nowMs() - t0) / 1000).toFixed(0)} s`);
