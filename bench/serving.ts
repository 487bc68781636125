// Model serving: Skiff's InferenceServices against what a user would otherwise run, in one run on
// this machine:
//  a. the same scikit-learn model (LogisticRegression on sklearn's digits, one joblib file) behind
//     KServe's own Python model server (the `kserve` package from PyPI, bench/serving/kserve_sklearn.py,
//     in .venv-kserve) and behind a Skiff InferenceService (`predictor.sklearn`, Skiff's model-server
//     Pod reached through the gateway), without and with Skiff's batcher; one V1 request per digits
//     row, a closed loop of 32 connections (bench/loadgen.ts) for a fixed time, back to back;
//  b. first response from zero: an InferenceService with `minReplicas: 0` and a 2 s autoscaling
//     window, timed from sending a request while it has no replica to the answer;
//  c. ONNX: an MLP served in Skiff's process (`predictor.onnx`, V2 JSON through the gateway) against
//     onnxruntime-node's InferenceSession.run called directly in one process, the limit;
//  d. the model server's HTTP layer: the same scikit-learn model in python/skiff_model_server.py on
//     its own HTTP/1.1 server and on uvicorn with httptools (ASGI, same App), each process reached
//     directly, their loads alternated over several rounds, medians reported with the load average.
// Answers are checked against the Python model's before anything is timed.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { OnnxModel } from '../src/server/inference/onnx.js';
import { TestServer, repoRoot } from '../test/harness.js';
import { runLoad } from './loadgen.js';
import type { LoadResult } from './loadgen.js';
import { fmtMs, median, nowMs } from './stats.js';

type Row = (label: string, value: string, note?: string) => void;

const venvPython = join(repoRoot, '.venv', 'bin', 'python');
const kservePython = join(repoRoot, '.venv-kserve', 'bin', 'python');
const kserveStamp = join(repoRoot, '.venv-kserve', '.skiff-bench-installed');
const here = join(repoRoot, 'bench', 'serving');
const isvcPath = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';
const revisionsPath = '/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions';
const json = { 'content-type': 'application/json' };

/**
 * The batcher's window. A batch waits for company only while the replica has a free batch slot
 * (dispatch.ts: two per replica, one computing while the next forms), and at concurrency 32 with
 * two batches in flight a batch rarely reaches maxBatchSize, so it is the window that sends it. A
 * window of about one small batch's service time keeps the model server busy without adding more
 * than that to any request; KServe's default (5000 ms) is made for a different load (many clients,
 * slow models) and would stall a closed loop.
 */
const batchWindowMs = 2;

interface Expected {
  rows: number[][];
  sklearn: number[];
  onnx_rows: number[][];
  onnx: number[][];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** runs bench/setup-serving.sh when .venv-kserve is missing or was not finished; false when it fails */
async function ensureKserveVenv(): Promise<{ ok: boolean; why?: string }> {
  if (existsSync(kservePython) && existsSync(kserveStamp)) return { ok: true };
  console.log('  creating .venv-kserve (bench/setup-serving.sh: kserve 0.21.0 from PyPI), once');
  try {
    await promisify(execFile)('bash', [join(repoRoot, 'bench', 'setup-serving.sh')], { timeout: 900_000, maxBuffer: 16 << 20 });
    return { ok: true };
  } catch (e) {
    return { ok: false, why: (e as Error).message.split('\n').slice(-4).join(' ') };
  }
}

/** a Python model server on a free port, once `readyPath` answers 200 (at most a minute) */
async function startPythonServer(what: string, python: string, argv: (port: number) => string[], readyPath: string): Promise<{ proc: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  let out = '';
  const proc = spawn(python, argv(port), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
  proc.stdout?.on('data', (d) => (out += d));
  proc.stderr?.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}:\n${out.slice(-3000)}`);
    const ok = await fetch(`${url}${readyPath}`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() - t0 > 60_000) throw new Error(`${what} did not become ready:\n${out.slice(-3000)}`);
    await sleep(100);
  }
  return { proc, url, output: () => out };
}

/** KServe's model server on the scikit-learn model, ready to answer */
async function startKserve(modelDir: string): Promise<{ proc: ChildProcess; url: string; banner: string; output: () => string }> {
  const srv = await startPythonServer('the kserve baseline', kservePython, (port) => [join(here, 'kserve_sklearn.py'), '--model_name', 'digits', '--model_dir', modelDir, '--http_port', String(port), '--quiet'], '/v1/models/digits');
  const banner = (/kserve-baseline: (kserve .*)/.exec(srv.output())?.[1] ?? 'kserve (version not printed)').replace(/, port \d+$/, '');
  return { ...srv, banner };
}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function applyIsvc(s: TestServer, name: string, predictor: Record<string, unknown>, annotations?: Record<string, string>): Promise<void> {
  await s.create(isvcPath, { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, ...(annotations ? { annotations } : {}) }, spec: { predictor } });
}

async function waitReady(s: TestServer, name: string, timeoutMs = 120_000): Promise<void> {
  await s.until(`InferenceService ${name} Ready`, async () => {
    const o = await s.get(`${isvcPath}/${name}`);
    const ready = (o.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
    if (ready?.status === 'True') return true;
    const failed = (o.status?.modelStatus?.lastFailureInfo as { message?: string } | undefined)?.message;
    if (failed && o.status?.modelStatus?.states?.targetModelState === 'FailedToLoad') throw new Error(`${name} failed to load: ${failed}`);
    return false;
  }, timeoutMs);
}

async function revisionOf(s: TestServer, isvc: string): Promise<any> {
  const list = await s.get(revisionsPath);
  const revs = (list.items as any[]).filter((r) => r.spec?.inferenceService === isvc && r.spec?.component === 'predictor');
  return revs.sort((a, b) => (b.spec.number as number) - (a.spec.number as number))[0];
}

async function post(url: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: json, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`POST ${url}: HTTP ${r.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** a closed loop of `concurrency` callers of `fn` in this process, measured like runLoad */
async function closedLoop(fn: (i: number) => Promise<void>, concurrency: number, durationMs: number, warmup = 20): Promise<LoadResult> {
  let k = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = 0; i < warmup; i++) await fn(k++);
  }));
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await fn(k++);
      } catch (e) {
        errors++;
        firstError ??= (e as Error).message;
      }
      lat.push(performance.now() - t);
    }
  }));
  const elapsed = performance.now() - start;
  lat.sort((a, b) => a - b);
  const pct = (p: number): number => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] as number;
  return { requests: lat.length, errors, rps: (lat.length * 1000) / elapsed, p50: pct(50), p90: pct(90), p99: pct(99), ...(firstError ? { firstError } : {}) };
}

const rate = (r: LoadResult): string => `${Math.round(r.rps).toLocaleString('en')}/s`;
const lat = (r: LoadResult): string => `p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}${r.errors ? `; ${r.errors} errors (${r.firstError})` : ''}`;
const x = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

/** cycles through pre-encoded request bodies */
function bodies(list: unknown[]): () => Buffer {
  const bufs = list.map((b) => Buffer.from(JSON.stringify(b)));
  let i = 0;
  return () => bufs[i++ % bufs.length] as Buffer;
}

export interface ServingOptions {
  /** measured seconds per load run */
  seconds?: number;
  concurrency?: number;
  /** first-response-from-zero repetitions */
  coldRuns?: number;
  /** rounds of the HTTP-layer comparison (d), each loading both servers once */
  httpRounds?: number;
  /** run only the HTTP-layer comparison (d) */
  httpOnly?: boolean;
}

export async function servingBench(row: Row, opts: ServingOptions = {}): Promise<void> {
  const durationMs = (opts.seconds ?? 8) * 1000;
  const cc = opts.concurrency ?? 32;
  const coldRuns = opts.coldRuns ?? 3;
  console.log(`\n8. model serving: sklearn digits on Skiff vs KServe's Python model server; ONNX in process vs onnxruntime-node directly`);
  console.log(`   (closed loop, ${cc} keep-alive connections, ${durationMs / 1000} s each after warm-up; the load generator shares the machine's ${availableParallelism()} cores with the servers)`);
  if (!existsSync(venvPython)) {
    console.log('  skipped: no .venv (run npm run setup)');
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'skiff-bench-serving-'));
  await promisify(execFile)(venvPython, [join(here, 'make_models.py'), work], { timeout: 300_000 });
  const exp = JSON.parse(readFileSync(join(work, 'expected.json'), 'utf8')) as Expected;
  const v1Bodies = bodies(exp.rows.map((r) => ({ instances: [r] })));
  const v2Bodies = bodies(exp.onnx_rows.map((r) => ({ inputs: [{ name: 'pixels', shape: [1, 64], datatype: 'FP32', data: r }] })));
  const probe = 7; // the row checked on each side before timing
  // ---- d. the model server's own HTTP layer: hand-written vs uvicorn+httptools, before Skiff starts ----
  try {
    await modelServerHttp(row, work, exp, v1Bodies, probe, cc, durationMs, opts.httpRounds ?? 5);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  if (opts.httpOnly) {
    rmSync(work, { recursive: true, force: true });
    return;
  }

  const venv = await ensureKserveVenv();
  let kserve: Awaited<ReturnType<typeof startKserve>> | undefined;
  const s = await TestServer.start({ config: { verbose: false } });
  try {
    // ---- a. scikit-learn: KServe vs Skiff ----
    await applyIsvc(s, 'digits', { sklearn: { storageUri: `file://${work}/sklearn` } });
    await applyIsvc(s, 'digits-batch', { sklearn: { storageUri: `file://${work}/sklearn` }, batcher: { maxBatchSize: 32, maxLatency: batchWindowMs } });
    await applyIsvc(s, 'digits-onnx', { onnx: { storageUri: `file://${work}/onnx` } });
    if (venv.ok) kserve = await startKserve(join(work, 'sklearn'));
    else console.log(`  the kserve baseline is skipped: bench/setup-serving.sh failed (${venv.why})`);
    for (const n of ['digits', 'digits-batch', 'digits-onnx']) await waitReady(s, n);

    const skiffUrl = (name: string, path: string): string => `${s.url}/serving/default/${name}${path}`;
    const v1Path = (name: string): string => `/v1/models/${name}:predict`;
    const want = exp.sklearn[probe];
    const check = async (who: string, url: string): Promise<void> => {
      const got = (await post(url, { instances: [exp.rows[probe]] })).predictions?.[0];
      if (got !== want) throw new Error(`${who} answered ${JSON.stringify(got)} for row ${probe}; the model says ${want}`);
    };
    if (kserve) await check('kserve', `${kserve.url}${v1Path('digits')}`);
    await check('Skiff', skiffUrl('digits', v1Path('digits')));
    await check('Skiff (batcher)', skiffUrl('digits-batch', v1Path('digits-batch')));
    console.log(`  answers checked: row ${probe} is predicted ${want} on every server, as by the model in Python`);

    const load = (url: string): Promise<LoadResult> => runLoad({ url, body: v1Bodies, headers: json, concurrency: cc, durationMs, warmup: 20 });
    let base: LoadResult | undefined;
    if (kserve) {
      base = await load(`${kserve.url}${v1Path('digits')}`);
      row(`kserve ModelServer, 1 worker`, rate(base), `${lat(base)}; ${kserve.banner}`);
    }
    const plain = await load(skiffUrl('digits', v1Path('digits')));
    const plainRev = await revisionOf(s, 'digits');
    const cmp = (r: LoadResult): string => (base ? `; ${x(r.rps, base.rps)} kserve's rate, p99 ${x(r.p99, base.p99)} kserve's` : '');
    row('Skiff ISVC (sklearn), no batcher', rate(plain), `${lat(plain)}${cmp(plain)}`);
    const batched = await load(skiffUrl('digits-batch', v1Path('digits-batch')));
    const batchRev = await revisionOf(s, 'digits-batch');
    row(`Skiff ISVC, batcher (32, maxLatency ${batchWindowMs} ms)`, rate(batched), `${lat(batched)}${cmp(batched)}`);
    console.log(`  model-server processes: kserve 1 (uvicorn, 1 worker); Skiff ${plainRev?.status?.replicas ?? '?'} and ${batchRev?.status?.replicas ?? '?'} replica Pod(s) (each one Python process)`);
    console.log('  KServe\'s batcher is its Go agent sidecar, not part of the PyPI package, so the baseline runs unbatched');
    if (base) {
      const best = batched.rps > plain.rps ? batched : plain;
      row('  aim at c=32: >= 3x kserve, lower p99', best.rps >= 3 * base.rps && best.p99 < base.p99 ? 'met' : 'not met', `best Skiff row: ${x(best.rps, base.rps)}, p99 ${fmtMs(best.p99)} vs ${fmtMs(base.p99)}`);
      await stopProcess(kserve?.proc as ChildProcess);
      kserve = undefined;
    }

    // ---- c. ONNX: through the gateway vs onnxruntime-node directly ----
    const onnxFile = join(work, 'onnx', 'model.onnx');
    const wantProbs = exp.onnx[probe] as number[];
    const close = (got: number[] | undefined, who: string): void => {
      if (!got || got.length !== wantProbs.length || got.some((v, i) => Math.abs(v - (wantProbs[i] as number)) > 1e-4)) throw new Error(`${who} answered ${JSON.stringify(got)} for row ${probe}; torch says ${JSON.stringify(wantProbs)}`);
    };
    const ort = await import('onnxruntime-node');
    // the options Skiff's model worker uses (onnx-worker.ts)
    const session = await ort.InferenceSession.create(onnxFile, { executionMode: 'sequential', graphOptimizationLevel: 'all', interOpNumThreads: 1 });
    const rowsF32 = exp.onnx_rows.map((r) => Float32Array.from(r));
    const direct = async (i: number): Promise<number[]> => {
      const out = await session.run({ pixels: new ort.Tensor('float32', rowsF32[i % rowsF32.length] as Float32Array, [1, 64]) });
      return Array.from(out.probs?.data as Float32Array);
    };
    close(await direct(probe), 'onnxruntime-node');
    const gwUrl = skiffUrl('digits-onnx', '/v2/models/digits-onnx/infer');
    close((await post(gwUrl, { inputs: [{ name: 'pixels', shape: [1, 64], datatype: 'FP32', data: exp.onnx_rows[probe] }] })).outputs?.[0]?.data, 'Skiff (ONNX)');
    console.log('  ONNX answers checked against torch\'s on both paths');
    const limit = await closedLoop(async (i) => void (await direct(i)), cc, durationMs);
    await session.release();
    row('onnxruntime-node session.run, in process', rate(limit), `${lat(limit)}; the limit (no HTTP, no JSON)`);
    const engine = await OnnxModel.load(onnxFile);
    const viaWorker = await closedLoop(async (i) => void (await engine.infer([{ name: 'pixels', datatype: 'FP32', shape: [1, 64], data: rowsF32[i % rowsF32.length] as Float32Array }])), cc, durationMs);
    await engine.close();
    row(`  Skiff's OnnxModel (${engine.mode === 'worker' ? 'worker thread' : `on the event loop: ${Math.round(engine.calibratedUs ?? 0)} µs a row`}), no HTTP`, rate(viaWorker), `${lat(viaWorker)}; ${x(limit.rps, viaWorker.rps)} below the limit`);
    const gw = await runLoad({ url: gwUrl, body: v2Bodies, headers: json, concurrency: cc, durationMs, warmup: 20 });
    const probeBody = JSON.stringify({ inputs: [{ name: 'pixels', shape: [1, 64], datatype: 'FP32', data: exp.onnx_rows[probe] }] });
    const byHand = await onnxDirect(onnxFile, v2Bodies, cc, durationMs, probeBody, (got) => close(got, 'the hand-written server'));
    row('onnxruntime-node behind node:http, by hand', rate(byHand), `${lat(byHand)}; one process, session.run called directly: the limit over HTTP`);
    row('Skiff ISVC (onnx, in process), V2 JSON', rate(gw), `${lat(gw)}; ${x(byHand.rps, gw.rps)} below the hand-written server (aim <= 1.5x), ${x(limit.rps, gw.rps)} below session.run without HTTP`);
    const floor = await httpFloor(gwUrl, v2Bodies, cc, durationMs);
    row('  HTTP floor: a bare node:http server', rate(floor), `${lat(floor)}; Skiff ${x(gw.rps, floor.rps)} of it (same request, Skiff's answer sent back unread, no model)`);

    // ---- b. first response from zero ----
    const zero = 'digits-zero';
    await applyIsvc(s, zero, { minReplicas: 0, sklearn: { storageUri: `file://${work}/sklearn` } }, { 'autoscaling.knative.dev/window': '2s' });
    await waitReady(s, zero);
    const cold: number[] = [];
    const loads: number[] = [];
    for (let i = 0; i < coldRuns; i++) {
      const rev = await s.until(`${zero} at zero replicas`, async () => {
        const r = await revisionOf(s, zero);
        if (!r || r.status?.replicas !== 0 || r.status?.desiredReplicas !== 0) return undefined;
        const pods = await s.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(`serving.knative.dev/revision=${r.metadata.name}`)}`);
        return pods.items.length === 0 ? r : undefined;
      }, 120_000);
      await sleep(200);
      const t0 = nowMs();
      const got = (await post(skiffUrl(zero, v1Path(zero)), { instances: [exp.rows[probe]] })).predictions?.[0];
      cold.push(nowMs() - t0);
      if (got !== want) throw new Error(`${zero} answered ${JSON.stringify(got)} from zero; the model says ${want}`);
      const pods = await s.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(`serving.knative.dev/revision=${rev.metadata.name}`)}`);
      for (const p of pods.items as any[]) {
        const log = (await s.req('GET', `/api/v1/namespaces/default/pods/${p.metadata.name}/log`)).text;
        const m = /loaded \(\w+\) in (\d+) ms/.exec(log);
        if (m) loads.push(Number(m[1]));
      }
    }
    const mc = median(cold);
    row(`first response from zero, median of ${coldRuns}`, fmtMs(mc), `(every run: ${cold.map((c) => c.toFixed(0)).join(', ')} ms); aim < 1000 ms`);
    if (loads.length > 0) {
      const imp = await importTime();
      const ml = median(loads);
      row('  of which: sklearn import + joblib load', fmtMs(ml), 'the model server\'s own log');
      row('  of which: Python start + numpy import', fmtMs(imp), 'a bare `python -c "import numpy, orjson, uvloop"` in .venv');
      row('  the rest: Pod start, probe, request', fmtMs(mc - ml - imp), 'Skiff');
    }
  } finally {
    if (kserve) await stopProcess(kserve.proc);
    await s.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * What HTTP alone costs on this machine with this load generator: a node:http server in its own
 * process (as the gateway is) that reads each request and sends back one fixed answer, the one
 * Skiff gave for the first request.
 */
async function httpFloor(sample: string, body: () => Buffer, concurrency: number, durationMs: number): Promise<LoadResult> {
  const answer = Buffer.from(await (await fetch(sample, { method: 'POST', headers: json, body: body().toString('utf8') })).arrayBuffer());
  const code = `const http = require('node:http');
const answer = Buffer.from(process.argv[1], 'base64');
const s = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }); res.end(answer); });
});
s.keepAliveTimeout = 65000;
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  const p = spawn(process.execPath, ['-e', code, answer.toString('base64')], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      p.stdout?.once('data', (d) => resolve(Number(String(d).trim())));
      p.once('exit', (c) => reject(new Error(`the HTTP floor server exited with ${c}`)));
    });
    return await runLoad({ url: `http://127.0.0.1:${port}/v2/models/m/infer`, body, headers: json, concurrency, durationMs, warmup: 20 });
  } finally {
    await stopProcess(p);
  }
}

/** the hand-written server of onnx-direct.ts, checked with one request, then under the same load */
async function onnxDirect(model: string, body: () => Buffer, concurrency: number, durationMs: number, probeBody: string, check: (got: number[] | undefined) => void): Promise<LoadResult> {
  const p = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'serving', 'onnx-direct.js'), model], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      p.stdout?.once('data', (d) => resolve(Number(String(d).trim())));
      p.once('exit', (c) => reject(new Error(`the hand-written ONNX server exited with ${c}`)));
    });
    const url = `http://127.0.0.1:${port}/v2/models/m/infer`;
    check(((await (await fetch(url, { method: 'POST', headers: json, body: probeBody })).json()) as { outputs?: { data?: number[] }[] }).outputs?.[0]?.data);
    return await runLoad({ url, body, headers: json, concurrency, durationMs, warmup: 20 });
  } finally {
    await stopProcess(p);
  }
}

/** Python's start with the model server's module-level imports, median of 5 (page cache warm) */
async function importTime(): Promise<number> {
  const times: number[] = [];
  const code = 'import numpy\ntry:\n import orjson, uvloop\nexcept ImportError:\n pass';
  for (let i = 0; i < 6; i++) {
    const t = nowMs();
    await promisify(execFile)(venvPython, ['-c', code]);
    if (i > 0) times.push(nowMs() - t);
  }
  return median(times);
}

/** python/skiff_model_server.py on the given HTTP server, started directly (no Skiff), ready to answer */
function startModelServer(modelDir: string, httpServer: 'builtin' | 'uvicorn'): Promise<{ proc: ChildProcess; url: string; output: () => string }> {
  return startPythonServer(`the model server (${httpServer})`, venvPython, (port) => [join(repoRoot, 'python', 'skiff_model_server.py'), '--model_name', 'digits', '--model_dir', modelDir, '--http_host', '127.0.0.1', '--http_port', String(port), '--http_server', httpServer], '/v2/health/ready');
}

/**
 * d. The model server's HTTP layer. Both servers run the same App (routing, V1/V2 handling, model) in
 * one process each; only the HTTP/1.1 server differs. The machine is shared, so the two loads
 * alternate, round after round, and the medians are compared; the load average says how busy it was.
 */
async function modelServerHttp(row: Row, work: string, exp: Expected, body: () => Buffer, probe: number, cc: number, durationMs: number, rounds: number): Promise<void> {
  const kinds = ['builtin', 'uvicorn'] as const;
  const label = { builtin: 'hand-written asyncio HTTP/1.1', uvicorn: 'uvicorn + httptools (ASGI)' };
  console.log(`  d. the model server's HTTP layer, same sklearn model and App, one process each, ${rounds} alternating rounds of ${durationMs / 1000} s`);
  const servers: Partial<Record<(typeof kinds)[number], Awaited<ReturnType<typeof startModelServer>>>> = {};
  const results: Record<(typeof kinds)[number], LoadResult[]> = { builtin: [], uvicorn: [] };
  try {
    await promisify(execFile)(venvPython, ['-c', 'import uvicorn, httptools']);
  } catch {
    console.log('     skipped: uvicorn and httptools are not in .venv (python/requirements-serving.txt; npm run setup)');
    return;
  }
  const load0 = loadavg();
  try {
    for (const k of kinds) {
      const srv = await startModelServer(join(work, 'sklearn'), k);
      servers[k] = srv;
      const got = (await post(`${srv.url}/v1/models/digits:predict`, { instances: [exp.rows[probe]] })).predictions?.[0];
      if (got !== exp.sklearn[probe]) throw new Error(`the model server (${k}) answered ${JSON.stringify(got)} for row ${probe}; the model says ${exp.sklearn[probe]}`);
    }
    for (let r = 0; r < rounds; r++) {
      // which server goes first alternates too, so neither always follows the other's load
      for (const k of r % 2 === 0 ? kinds : [...kinds].reverse()) {
        const res = await runLoad({ url: `${(servers[k] as { url: string }).url}/v1/models/digits:predict`, body, headers: json, concurrency: cc, durationMs, warmup: 20 });
        results[k].push(res);
        console.log(`     round ${r + 1} ${k.padEnd(8)} ${rate(res).padStart(8)}  ${lat(res)}  (load average ${loadavg()[0]?.toFixed(2)})`);
      }
    }
  } finally {
    for (const k of kinds) if (servers[k]) await stopProcess((servers[k] as { proc: ChildProcess }).proc);
  }
  const med = (k: (typeof kinds)[number], f: (r: LoadResult) => number): number => median(results[k].map(f));
  for (const k of kinds) {
    const errors = results[k].reduce((n, r) => n + r.errors, 0);
    row(`model server on ${label[k]}`, `${Math.round(med(k, (r) => r.rps)).toLocaleString('en')}/s`, `median of ${rounds}: p50 ${fmtMs(med(k, (r) => r.p50))}, p99 ${fmtMs(med(k, (r) => r.p99))}${errors ? `; ${errors} errors` : ''}`);
  }
  const ratio = med('uvicorn', (r) => r.rps) / med('builtin', (r) => r.rps);
  const load1 = loadavg();
  row('  uvicorn / hand-written, requests/s', `${ratio.toFixed(2)}x`, `p99 ${x(med('uvicorn', (r) => r.p99), med('builtin', (r) => r.p99))}; per round: ${results.uvicorn.map((u, i) => (u.rps / (results.builtin[i] as LoadResult).rps).toFixed(2)).join(', ')}`);
  console.log(`     load average (1, 5, 15 min) before ${load0.map((l) => l.toFixed(2)).join(', ')}, after ${load1.map((l) => l.toFixed(2)).join(', ')} on ${availableParallelism()} cores`);
}
