// TensorFlow SavedModel serving (part of section 8): a Keras classifier trained on scikit-learn's
// digits and exported as a SavedModel (test/fixtures/serving/train_tf.py), served three ways on this
// machine and loaded in turn, round after round, one V1 request per digits row from a closed loop of
// keep-alive connections (bench/loadgen.ts):
//  - the baseline: TensorFlow's own Python API (`tf.saved_model.load`, the `serving_default`
//    signature called directly) behind the standard library's threading HTTP server
//    (bench/serving/tf_plain.py), what a user would write by hand;
//  - Skiff's model server (python/skiff_model_server.py, `--format tensorflow`) started directly, in
//    TensorFlow's environment, without Skiff;
//  - a Skiff InferenceService (`modelFormat: tensorflow`, kserve-tensorflow-serving), its model-server
//    Pod reached through the gateway.
// Answers are checked against the SavedModel's own in Python before anything is timed; the load
// average is printed with the medians, since the machine is shared.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../src/testing/kube-cluster.js';
import { TestServer, repoRoot } from '../test/harness.js';
import { runLoad } from './loadgen.js';
import type { LoadResult } from './loadgen.js';
import { fmtMs, median, nowMs } from './stats.js';

type Row = (label: string, value: string, note?: string) => void;

const tfPython = join(repoRoot, '.venv-tensorflow', 'bin', 'python');
const isvcPath = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';
const json = { 'content-type': 'application/json' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Expected {
  rows: number[][];
  digits: number[][];
}

export interface TfServingOptions {
  /** measured seconds per load run */
  seconds?: number;
  concurrency?: number;
  /** alternating rounds, each loading every server once */
  rounds?: number;
}

/** a Python server on a free port, once a probe request answers 200 (at most two minutes: TensorFlow imports slowly) */
async function startServer(what: string, argv: (port: number) => string[], probe: (url: string) => Promise<boolean>): Promise<{ proc: ChildProcess; url: string; output: () => string; readyMs: number }> {
  const port = await freePort();
  let out = '';
  const t0 = nowMs();
  const proc = spawn(tfPython, argv(port), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1', TF_CPP_MIN_LOG_LEVEL: '2' } });
  proc.stdout?.on('data', (d) => (out += d));
  proc.stderr?.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}:\n${out.slice(-3000)}`);
    if (await probe(url).catch(() => false)) break;
    if (nowMs() - t0 > 120_000) throw new Error(`${what} did not become ready:\n${out.slice(-3000)}`);
    await sleep(100);
  }
  return { proc, url, output: () => out, readyMs: nowMs() - t0 };
}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function predict(url: string, row: number[]): Promise<number[] | undefined> {
  const r = await fetch(url, { method: 'POST', headers: json, body: JSON.stringify({ instances: [row] }) });
  if (r.status !== 200) throw new Error(`POST ${url}: HTTP ${r.status} ${(await r.text()).slice(0, 300)}`);
  return ((await r.json()) as { predictions?: number[][] }).predictions?.[0];
}

const rate = (rps: number): string => `${Math.round(rps).toLocaleString('en')}/s`;

export async function tfServingBench(row: Row, opts: TfServingOptions = {}): Promise<void> {
  const durationMs = (opts.seconds ?? 8) * 1000;
  const cc = opts.concurrency ?? 32;
  const rounds = opts.rounds ?? 3;
  console.log(`\n8e. TensorFlow SavedModel serving: Skiff's tensorflow runtime vs TensorFlow's Python API behind a plain HTTP server`);
  console.log(`   (closed loop, ${cc} keep-alive connections, one digits row per V1 request, ${rounds} alternating rounds of ${durationMs / 1000} s; ${availableParallelism()} cores shared with the load generator)`);
  if (!existsSync(tfPython)) {
    console.log('  skipped: no .venv-tensorflow (scripts/setup.sh makes it)');
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'skiff-bench-tf-'));
  const servers: ChildProcess[] = [];
  let s: TestServer | undefined;
  try {
    await promisify(execFile)(tfPython, [join(repoRoot, 'test', 'fixtures', 'serving', 'train_tf.py'), work], { timeout: 300_000, env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
    const exp = JSON.parse(readFileSync(join(work, 'expected.json'), 'utf8')) as Expected;
    const modelDir = join(work, 'digits');
    const savedModel = join(modelDir, '2'); // the highest version, the one TF Serving (and Skiff) serves

    s = await TestServer.start({ config: { verbose: false } });
    const tApply = nowMs();
    await s.create(isvcPath, { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'tf-digits' }, spec: { predictor: { model: { modelFormat: { name: 'tensorflow' }, storageUri: `file://${modelDir}` } } } });
    const server = s;
    await server.until('InferenceService tf-digits Ready', async () => {
      const o = await server.get(`${isvcPath}/tf-digits`);
      if (o.status?.modelStatus?.states?.targetModelState === 'FailedToLoad') throw new Error(`tf-digits failed to load: ${o.status.modelStatus.lastFailureInfo?.message}`);
      return (o.status?.conditions ?? []).find((c: any) => c.type === 'Ready')?.status === 'True';
    }, 180_000);
    const isvcReadyMs = nowMs() - tApply;

    const plain = await startServer('the plain TensorFlow server', (port) => [join(repoRoot, 'bench', 'serving', 'tf_plain.py'), savedModel, String(port)],
      async (url) => (await fetch(`${url}/v1/models/m:predict`, { method: 'POST', headers: json, body: JSON.stringify({ instances: [exp.rows[0]] }) })).status === 200);
    servers.push(plain.proc);
    const direct = await startServer('the model server', (port) => [join(repoRoot, 'python', 'skiff_model_server.py'), '--model_name', 'tf-digits', '--model_dir', modelDir, '--format', 'tensorflow', '--http_host', '127.0.0.1', '--http_port', String(port)],
      async (url) => (await fetch(`${url}/v2/health/ready`)).status === 200);
    servers.push(direct.proc);

    const targets = [
      { key: 'plain', label: 'TensorFlow signature behind http.server, by hand', url: `${plain.url}/v1/models/m:predict` },
      { key: 'direct', label: 'Skiff model server (tensorflow), started directly', url: `${direct.url}/v1/models/tf-digits:predict` },
      { key: 'isvc', label: 'Skiff ISVC (modelFormat tensorflow), through the gateway', url: `${s.url}/serving/default/tf-digits/v1/models/tf-digits:predict` },
    ] as const;
    const probe = 7;
    const want = exp.digits[probe] as number[];
    for (const t of targets) {
      const got = await predict(t.url, exp.rows[probe] as number[]);
      if (!got || got.length !== want.length || got.some((v, i) => Math.abs(v - (want[i] as number)) > 1e-5)) throw new Error(`${t.label} answered ${JSON.stringify(got)} for row ${probe}; the SavedModel says ${JSON.stringify(want)}`);
    }
    console.log(`  answers checked: row ${probe} gets the SavedModel's own probabilities from every server`);

    const bodies = exp.rows.map((r) => Buffer.from(JSON.stringify({ instances: [r] })));
    let n = 0;
    const body = (): Buffer => bodies[n++ % bodies.length] as Buffer;
    const results: Record<(typeof targets)[number]['key'], LoadResult[]> = { plain: [], direct: [], isvc: [] };
    const load0 = loadavg();
    for (let r = 0; r < rounds; r++) {
      // the order turns each round, so no server always follows the same one's load
      const order = [...targets.slice(r % targets.length), ...targets.slice(0, r % targets.length)];
      for (const t of order) {
        const res = await runLoad({ url: t.url, body, headers: json, concurrency: cc, durationMs, warmup: 20 });
        results[t.key].push(res);
        console.log(`     round ${r + 1} ${t.key.padEnd(6)} ${rate(res.rps).padStart(8)}  p50 ${fmtMs(res.p50)}, p99 ${fmtMs(res.p99)}${res.errors ? `; ${res.errors} errors (${res.firstError})` : ''}  (load average ${loadavg()[0]?.toFixed(2)})`);
      }
    }
    const load1 = loadavg();
    const med = (k: (typeof targets)[number]['key'], f: (r: LoadResult) => number): number => median(results[k].map(f));
    for (const t of targets) {
      const errors = results[t.key].reduce((a, r) => a + r.errors, 0);
      row(t.label, rate(med(t.key, (r) => r.rps)), `median of ${rounds}: p50 ${fmtMs(med(t.key, (r) => r.p50))}, p99 ${fmtMs(med(t.key, (r) => r.p99))}${errors ? `; ${errors} errors` : ''}`);
    }
    const ratio = (k: 'direct' | 'isvc'): string => `${(med(k, (r) => r.rps) / med('plain', (r) => r.rps)).toFixed(2)}x`;
    const perRound = (k: 'direct' | 'isvc'): string => results[k].map((x, i) => (x.rps / (results.plain[i] as LoadResult).rps).toFixed(2)).join(', ');
    row('  Skiff ISVC / by hand, requests/s', ratio('isvc'), `per round: ${perRound('isvc')}`);
    row('  model server alone / by hand, requests/s', ratio('direct'), `per round: ${perRound('direct')}`);
    const loaded = /loaded \(tensorflow\) in (\d+) ms/.exec(direct.output())?.[1];
    row('  ready: ISVC apply to Ready', fmtMs(isvcReadyMs), `the model server alone: ${fmtMs(direct.readyMs)} to its first answer (TensorFlow import + SavedModel load ${loaded ?? '?'} ms, its log); by hand ${fmtMs(plain.readyMs)}`);
    console.log(`     load average (1, 5, 15 min) before ${load0.map((l) => l.toFixed(2)).join(', ')}, after ${load1.map((l) => l.toFixed(2)).join(', ')} on ${availableParallelism()} cores`);
  } finally {
    for (const p of servers) await stopProcess(p);
    await s?.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
}
