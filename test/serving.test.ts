// Model serving end to end: real models trained on scikit-learn's digits (sklearn, xgboost, a
// TorchScript network and its ONNX export), deployed from InferenceService YAML in the style of
// KServe's samples, and every prediction checked against the Python model's own output — over V1
// (plain HTTP), V2 (tritonclient.http, JSON and binary) and Seldon's predictions shape. Then what
// goes wrong (bad requests, a model that does not load, no runtime), canaries, batching, scale to
// zero, a transformer and a custom container.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync, mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { TestServer, repoRoot, sleep } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const fixtures = join(repoRoot, 'test', 'fixtures', 'serving');
const skip = !existsSync(python) ? 'the Python environment (.venv) is not set up' : false;
const isvcPath = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';

/** a POST with its own Host header (fetch does not let one set it) */
function withHost(base: string, path: string, host: string, body: unknown): Promise<{ status: number; text: string }> {
  const u = new URL(base);
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers: { host, 'content-type': 'application/json', 'content-length': String(data.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

interface Expected {
  rows: number[][];
  rows32: number[][];
  sklearn: number[];
  const: number[];
  xgboost: number[][];
  torch: number[][];
}

void describe('model serving', { skip, timeout: 600_000 }, () => {
  let server: TestServer;
  let models: string;
  let exp: Expected;

  const apply = async (obj: unknown): Promise<void> => {
    const r = await server.cli(['apply', '-f', '-'], YAML.stringify(obj));
    assert.equal(r.code, 0, r.stderr);
  };
  const isvc = (name: string): Promise<any> => server.get(`${isvcPath}/${name}`);
  const ready = (name: string, timeoutMs = 60_000): Promise<any> =>
    server.until(`InferenceService ${name} Ready`, async () => {
      const o = await isvc(name);
      return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
    }, timeoutMs);
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> =>
    server.req('POST', path, typeof body === 'string' ? body : JSON.stringify(body), { 'content-type': 'application/json', ...headers });
  const predictV1 = async (name: string, rows: unknown[]): Promise<unknown[]> => {
    const r = await post(`/serving/default/${name}/v1/models/${name}:predict`, { instances: rows });
    assert.equal(r.status, 200, r.text);
    return r.body.predictions as unknown[];
  };
  const tritonCheck = (name: string, kind: string): any => {
    const base = `${server.url.replace('http://', '')}/serving/default/${name}`;
    const r = spawnSync(python, [join(fixtures, 'triton_check.py'), base, name, join(models, 'expected.json'), kind], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop() as string);
  };
  const sklearnIsvc = (name: string, dir: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): unknown => ({
    apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, ...meta },
    spec: { predictor: { sklearn: { storageUri: `file://${join(models, dir)}` }, ...extra } },
  });

  before(async () => {
    server = await TestServer.start();
    models = join(server.dataDir, 'models');
    const r = spawnSync(python, [join(fixtures, 'train_models.py'), models], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    exp = JSON.parse(readFileSync(join(models, 'expected.json'), 'utf8')) as Expected;
  });
  after(async () => {
    await server?.cleanup();
  });

  void test('sklearn (legacy key, V1): predictions match; status as KServe reports it; Host routing and Seldon requests', async () => {
    await apply(sklearnIsvc('sklearn-digits', 'sklearn'));
    const o = await ready('sklearn-digits');
    assert.equal(o.status.url, 'http://sklearn-digits.default.example.com');
    assert.match(o.status.address.url, /\/serving\/default\/sklearn-digits$/);
    assert.equal(o.status.clusterServingRuntimeName, 'kserve-sklearnserver');
    assert.deepEqual(o.status.modelStatus.states, { activeModelState: 'Loaded', targetModelState: 'Loaded' });
    assert.equal(o.status.modelStatus.transitionStatus, 'UpToDate');
    for (const t of ['PredictorReady', 'IngressReady', 'Ready']) assert.equal(o.status.conditions.find((c: any) => c.type === t)?.status, 'True', t);
    assert.deepEqual(o.status.components.predictor.traffic.map((t: any) => [t.revisionName, t.percent]), [['sklearn-digits-predictor-00001', 100]]);
    assert.deepEqual(await predictV1('sklearn-digits', exp.rows), exp.sklearn);
    // the host of status.url, as KServe's docs curl it: -H "Host: ${SERVICE_HOSTNAME}"
    const byHost = await withHost(server.url, '/v1/models/sklearn-digits:predict', 'sklearn-digits.default.example.com', { instances: exp.rows.slice(0, 2) });
    assert.equal(byHost.status, 200, byHost.text);
    assert.deepEqual(JSON.parse(byHost.text).predictions, exp.sklearn.slice(0, 2));
    // model readiness, V1 and V2
    assert.deepEqual((await server.req('GET', '/serving/default/sklearn-digits/v1/models/sklearn-digits')).body, { name: 'sklearn-digits', ready: true });
    assert.equal((await server.req('GET', '/serving/default/sklearn-digits/v2/health/ready')).status, 200);
    // Seldon's predictions shape, as Kubeflow's MNIST tutorial sends it
    const names = Array.from({ length: 64 }, (_, i) => `pixel_${i}`);
    const seldon = await post('/serving/default/sklearn-digits/api/v0.1/predictions', { data: { names, ndarray: exp.rows.slice(0, 3) }, meta: { puid: 'p-1' } });
    assert.equal(seldon.status, 200, seldon.text);
    assert.deepEqual(seldon.body.data.ndarray, exp.sklearn.slice(0, 3));
    const logs = await server.cli(['logs', 'isvc/sklearn-digits']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /model sklearn-digits loaded \(sklearn\)/);
    const table = await server.cli(['get', 'isvc']);
    assert.match(table.stdout, /URL\s+READY\s+PREV\s+LATEST/);
    assert.match(table.stdout, /sklearn-digits\s+http:\/\/sklearn-digits\.default\.example\.com\s+True/);
  });

  void test('sklearn over V2 (protocolVersion v2 picks kserve-mlserver, as KServe does): tritonclient, JSON and binary', async () => {
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'sklearn-v2' }, spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, protocolVersion: 'v2', storageUri: `file://${join(models, 'sklearn')}` } } } });
    const o = await ready('sklearn-v2');
    assert.equal(o.status.clusterServingRuntimeName, 'kserve-mlserver');
    const r = tritonCheck('sklearn-v2', 'sklearn');
    assert.equal(r.results.json.output, 'predict');
    assert.equal(r.results.binary.id, 'check-True');
  });

  void test('xgboost (V1) and a TorchScript network (V2) from their Python models', async () => {
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'xgb-digits' }, spec: { predictor: { xgboost: { storageUri: `file://${join(models, 'xgboost')}` } } } });
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'torch-digits' }, spec: { predictor: { model: { modelFormat: { name: 'pytorch' }, protocolVersion: 'v2', storageUri: `file://${join(models, 'torch')}` } } } });
    await ready('xgb-digits');
    const got = (await predictV1('xgb-digits', exp.rows)) as number[][];
    got.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - (exp.xgboost[i]?.[j] as number)) < 1e-5, `xgboost row ${i} class ${j}: ${v}`)));
    tritonCheck('xgb-digits', 'xgboost');
    const t = await ready('torch-digits');
    assert.equal(t.status.clusterServingRuntimeName, 'kserve-torchserve');
    tritonCheck('torch-digits', 'torch');
  });

  void test('ONNX (legacy onnx key → V2 → served in process): tritonclient and V1 match torch', async () => {
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'onnx-digits' }, spec: { predictor: { onnx: { storageUri: `file://${join(models, 'onnx')}` } } } });
    const o = await ready('onnx-digits');
    assert.equal(o.status.clusterServingRuntimeName, 'kserve-tritonserver');
    const pods = await server.get('/api/v1/namespaces/default/pods?labelSelector=serving.kserve.io/inferenceservice%3Donnx-digits');
    assert.equal(pods.items.length, 0, 'an in-process model runs no Pod');
    tritonCheck('onnx-digits', 'onnx');
    const v1 = (await predictV1('onnx-digits', exp.rows32)) as number[][];
    v1.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - (exp.torch[i]?.[j] as number)) < 1e-4)));
  });

  void test('bad requests get 400/404/413 naming what is wrong, and the service keeps serving', async () => {
    const base = '/serving/default/sklearn-digits';
    const shape = await post(`${base}/v2/models/sklearn-digits/infer`, { inputs: [{ name: 'input-0', shape: [2, 64], datatype: 'FP64', data: [1, 2, 3] }] });
    assert.equal(shape.status, 400);
    assert.match(shape.body.error, /input-0/);
    const dtype = await post(`${base}/v2/models/sklearn-digits/infer`, { inputs: [{ name: 'input-0', shape: [1, 2], datatype: 'FLOAT99', data: [1, 2] }] });
    assert.equal(dtype.status, 400);
    assert.match(dtype.body.error, /FLOAT99/);
    const onnxShape = await post('/serving/default/onnx-digits/v2/models/onnx-digits/infer', { inputs: [{ name: 'input', shape: [1, 3], datatype: 'FP32', data: [1, 2, 3] }] });
    assert.equal(onnxShape.status, 400, onnxShape.text);
    assert.match(onnxShape.body.error, /input/);
    const bad = await post(`${base}/v1/models/sklearn-digits:predict`, '{"instances": [[1, 2');
    assert.equal(bad.status, 400);
    const unknown = await post(`${base}/v1/models/other:predict`, { instances: [[1]] });
    assert.equal(unknown.status, 404);
    const noService = await post('/serving/default/nothing-here/v1/models/x:predict', { instances: [[1]] });
    assert.equal(noService.status, 404);
    const huge = await fetch(`${server.url}${base}/v1/models/sklearn-digits:predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(65 * 1024 * 1024, 0x20) }).catch((e: Error) => e);
    if (!(huge instanceof Error)) assert.equal(huge.status, 413);
    assert.deepEqual(await predictV1('sklearn-digits', exp.rows.slice(0, 1)), exp.sklearn.slice(0, 1));
  });

  void test('a model that does not load is FailedToLoad with the loader\'s message; a format no runtime serves is InvalidSpec', async () => {
    await apply(sklearnIsvc('broken-model', 'broken'));
    const o = await server.until('FailedToLoad', async () => {
      const x = await isvc('broken-model');
      return x.status?.modelStatus?.states?.targetModelState === 'FailedToLoad' ? x : undefined;
    });
    assert.equal(o.status.modelStatus.transitionStatus, 'BlockedByFailedLoad');
    assert.equal(o.status.modelStatus.lastFailureInfo.reason, 'ModelLoadFailed');
    assert.match(o.status.modelStatus.lastFailureInfo.message, /failed to load model/);
    assert.equal(o.status.conditions.find((c: any) => c.type === 'Ready').status, 'False');
    const r = await post('/serving/default/broken-model/v1/models/broken-model:predict', { instances: exp.rows.slice(0, 1) });
    assert.equal(r.status, 503);
    // onnx with no protocolVersion is v1, which no ONNX runtime speaks (KServe's rule)
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'onnx-v1' }, spec: { predictor: { model: { modelFormat: { name: 'onnx' }, storageUri: `file://${join(models, 'onnx')}` } } } });
    const n = await server.until('InvalidSpec', async () => {
      const x = await isvc('onnx-v1');
      return x.status?.modelStatus?.transitionStatus === 'InvalidSpec' ? x : undefined;
    });
    assert.equal(n.status.modelStatus.lastFailureInfo.reason, 'NoSupportingRuntime');
    // the others still answer
    assert.deepEqual(await predictV1('sklearn-digits', exp.rows.slice(0, 2)), exp.sklearn.slice(0, 2));
    await server.req('DELETE', `${isvcPath}/broken-model`);
    await server.req('DELETE', `${isvcPath}/onnx-v1`);
  });

  void test('a model that is not there yet is FailedToLoad, looked for again with a crash loop\'s back-off, and served once it appears', async () => {
    const dir = join(models, 'later');
    await apply(sklearnIsvc('later', 'later'));
    const o = await server.until('FailedToLoad', async () => {
      const x = await isvc('later');
      return x.status?.modelStatus?.states?.targetModelState === 'FailedToLoad' ? x : undefined;
    });
    assert.match(o.status.modelStatus.lastFailureInfo.message, /later/);
    // as a training job would, after the InferenceService was applied
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(models, 'sklearn', 'model.joblib'), join(dir, 'model.joblib'));
    await ready('later');
    assert.deepEqual(await predictV1('later', exp.rows.slice(0, 2)), exp.sklearn.slice(0, 2));
    await server.req('DELETE', `${isvcPath}/later`);
  });

  void test('canary: 20% of 1,000 requests go to the new revision; promotion, then a pinned rollback', async () => {
    const one = [exp.rows[0]];
    await apply(sklearnIsvc('canary', 'sklearn'));
    await ready('canary');
    await apply(sklearnIsvc('canary', 'sklearn-const', { canaryTrafficPercent: 20 }));
    const split = await server.until('traffic split', async () => {
      const x = await isvc('canary');
      const t = x.status?.components?.predictor?.traffic ?? [];
      return t.length === 2 ? x : undefined;
    });
    const traffic = split.status.components.predictor.traffic;
    assert.deepEqual(traffic.map((t: any) => [t.revisionName, t.percent, t.tag, t.latestRevision]), [['canary-predictor-00002', 20, 'latest', true], ['canary-predictor-00001', 80, 'prev', false]]);
    let toCanary = 0;
    for (let i = 0; i < 1000; i += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => predictV1('canary', one)));
      toCanary += answers.filter((a) => a[0] === 9).length;
    }
    // binomial(1000, 0.2): mean 200, sd 12.6; ±4 sd
    assert.ok(toCanary > 150 && toCanary < 250, `${toCanary} of 1000 reached the canary`);
    const table = await server.cli(['get', 'isvc', 'canary']);
    assert.match(table.stdout, /True\s+80\s+20\s+/);
    // promotion: canaryTrafficPercent removed
    await apply(sklearnIsvc('canary', 'sklearn-const'));
    const promoted = await server.until('promotion', async () => {
      const x = await isvc('canary');
      const t = x.status?.components?.predictor?.traffic ?? [];
      return t.length === 1 && t[0].revisionName === 'canary-predictor-00002' ? x : undefined;
    });
    assert.equal(promoted.status.components.predictor.latestRolledoutRevision, 'canary-predictor-00002');
    assert.equal(promoted.status.components.predictor.previousRolledoutRevision, 'canary-predictor-00001');
    for (let i = 0; i < 20; i++) assert.deepEqual(await predictV1('canary', one), [9]);
    // rollback: canaryTrafficPercent 0 pins traffic back on the previous revision
    await apply(sklearnIsvc('canary', 'sklearn-const', { canaryTrafficPercent: 0 }));
    await server.until('rollback', async () => {
      const x = await isvc('canary');
      const t = x.status?.components?.predictor?.traffic ?? [];
      return t.find((r: any) => r.revisionName === 'canary-predictor-00001' && r.percent === 100) ? x : undefined;
    });
    await server.until('the old revision answers', async () => (await predictV1('canary', one))[0] === exp.sklearn[0]);
    for (let i = 0; i < 20; i++) assert.deepEqual(await predictV1('canary', one), [exp.sklearn[0]]);
    const revs = await server.get('/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions?labelSelector=serving.kserve.io/inferenceservice%3Dcanary');
    assert.equal(revs.items.length, 2, 'changing only canaryTrafficPercent makes no new revision');
    await server.req('DELETE', `${isvcPath}/canary`);
  });

  void test('batching: concurrent V1 and V2 requests share batches and each gets its own answer', async () => {
    await apply(sklearnIsvc('batched', 'sklearn', { batcher: { maxBatchSize: 16, maxLatency: 20 } }));
    await ready('batched');
    const v1 = Array.from({ length: 40 }, (_, i) => i % exp.rows.length);
    const answers = await Promise.all(v1.map((i) => predictV1('batched', [exp.rows[i]])));
    answers.forEach((a, k) => assert.deepEqual(a, [exp.sklearn[v1[k] as number]]));
    const v2 = await Promise.all(v1.map((i) => post('/serving/default/batched/v2/models/batched/infer', { id: `r${i}`, inputs: [{ name: 'input-0', shape: [1, 64], datatype: 'FP64', data: exp.rows[i] }] })));
    v2.forEach((r, k) => {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.id, `r${v1[k]}`);
      assert.deepEqual(r.body.outputs[0].data, [exp.sklearn[v1[k] as number]]);
    });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const count = Number(/skiff_serving_batch_size_count\{namespace="default",inferenceservice="batched"[^}]*\} (\d+)/.exec(metrics)?.[1]);
    const sum = Number(/skiff_serving_batch_size_sum\{namespace="default",inferenceservice="batched"[^}]*\} (\d+)/.exec(metrics)?.[1]);
    assert.equal(sum, 80, metrics);
    assert.ok(count < 80, `${count} batches for 80 requests`);
    assert.match(metrics, /skiff_serving_requests_total\{namespace="default",inferenceservice="batched",component="predictor",revision="batched-predictor-00001",code="200"\} 80/);
    assert.match(metrics, /skiff_serving_request_duration_seconds_bucket\{namespace="default",inferenceservice="batched"/);
    await server.req('DELETE', `${isvcPath}/batched`);
  });

  void test('scale to zero: an idle service goes to zero replicas, and the next request is answered', async () => {
    await apply(sklearnIsvc('zero', 'sklearn', { minReplicas: 0 }, { annotations: { 'autoscaling.knative.dev/window': '2s' } }));
    await ready('zero');
    await server.until('zero replicas', async () => {
      const pods = await server.get('/api/v1/namespaces/default/pods?labelSelector=serving.kserve.io/inferenceservice%3Dzero');
      return pods.items.length === 0;
    }, 30_000);
    const rev = await server.get('/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions/zero-predictor-00001');
    assert.equal(rev.status.modelState, 'Standby');
    assert.deepEqual(await predictV1('zero', exp.rows.slice(0, 2)), exp.sklearn.slice(0, 2));
    const o = await isvc('zero');
    assert.equal(o.status.conditions.find((c: any) => c.type === 'Ready').status, 'True');
    await server.req('DELETE', `${isvcPath}/zero`);
  });

  void test('a transformer in front of the predictor, and a custom container proxied as is', async () => {
    await apply({
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'with-transformer' },
      spec: {
        transformer: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(fixtures, 'transformer.py')] }] },
        predictor: { sklearn: { storageUri: `file://${join(models, 'sklearn')}` } },
      },
    });
    const o = await ready('with-transformer');
    assert.ok(o.status.components.transformer.latestReadyRevision);
    const scaled = exp.rows.map((r) => r.map((v) => v / 16));
    const r = await post('/serving/default/with-transformer/v1/models/with-transformer:predict', { instances: scaled });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.transformed, true);
    assert.deepEqual(r.body.predictions, exp.sklearn);
    await apply({
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'custom-echo' },
      spec: { predictor: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(fixtures, 'echo_server.py')] }] } },
    });
    await ready('custom-echo');
    const echo = await post('/serving/default/custom-echo/anything/at/all?x=1', { hello: 'there' });
    assert.equal(echo.status, 200, echo.text);
    assert.deepEqual(echo.body, { method: 'POST', path: '/anything/at/all?x=1', body: '{"hello":"there"}', k_service: 'custom-echo-predictor' });
    await sleep(10);
  });
  void test('containerConcurrency caps requests per replica; the autoscaler adds replicas under load up to maxReplicas and goes back; timeout gives 504', async () => {
    const slow = (name: string, sleepS: number, extra: Record<string, unknown>): unknown => ({
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, annotations: { 'autoscaling.knative.dev/window': '2s' } },
      spec: { predictor: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(fixtures, 'slow_server.py')], env: [{ name: 'SLEEP', value: String(sleepS) }] }], ...extra } },
    });
    await apply(slow('slow', 0.3, { containerConcurrency: 1, minReplicas: 1, maxReplicas: 3, scaleTarget: 1 }));
    await ready('slow');
    const pods = async (): Promise<any[]> => (await server.get('/api/v1/namespaces/default/pods?labelSelector=serving.kserve.io/inferenceservice%3Dslow')).items.filter((p: any) => !p.metadata.deletionTimestamp);
    let most = 0;
    const load = (async () => {
      const t0 = Date.now();
      while (Date.now() - t0 < 5000) {
        const rs = await Promise.all(Array.from({ length: 8 }, () => post('/serving/default/slow/v1/models/slow:predict', { instances: [1] })));
        for (const r of rs) assert.equal(r.status, 200, r.text);
      }
    })();
    while (!(await Promise.race([load.then(() => true), sleep(200).then(() => false)]))) most = Math.max(most, (await pods()).length);
    assert.equal(most, 3, 'scaled out to maxReplicas');
    for (const p of await pods()) {
      if (p.status?.phase !== 'Running') continue;
      const stats = (await (await fetch(`http://${p.status.podIP}:8080/stats`)).json()) as { max: number };
      assert.ok(stats.max <= 1, `${p.metadata.name} served ${stats.max} at once with containerConcurrency 1`);
    }
    await server.until('back to minReplicas', async () => (await pods()).length === 1, 30_000);
    await apply(slow('slow-timeout', 3, { timeout: 1 }));
    await ready('slow-timeout');
    // the model answers after 3 s with 200; the component's 1 s timeout answers first, with 504
    const r = await post('/serving/default/slow-timeout/v1/models/x:predict', { instances: [1] });
    assert.equal(r.status, 504, r.text);
    await server.req('DELETE', `${isvcPath}/slow`);
    await server.req('DELETE', `${isvcPath}/slow-timeout`);
  });

  void test('storage: an http(s) model is fetched once for all replicas; pvc:// mounts a claim\'s directory; :explain reaches the explainer', async () => {
    let gets = 0;
    const files = createServer((req, res) => {
      gets++;
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(readFileSync(join(models, 'sklearn', 'model.joblib')));
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    try {
      const port = (files.address() as AddressInfo).port;
      await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'from-http' }, spec: { predictor: { minReplicas: 2, sklearn: { storageUri: `http://127.0.0.1:${port}/models/model.joblib` } } } });
      await ready('from-http');
      await server.until('two replicas', async () => (await server.get('/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions/from-http-predictor-00001')).status?.readyReplicas === 2);
      assert.deepEqual(await predictV1('from-http', exp.rows), exp.sklearn);
      assert.equal(gets, 1, 'downloaded once');
    } finally {
      files.close();
    }
    await server.create('/api/v1/namespaces/default/persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'models' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await server.until('claim bound', async () => (await server.get('/api/v1/namespaces/default/persistentvolumeclaims/models')).status?.phase === 'Bound');
    const dir = join(server.dataDir, 'volumes', 'default', 'models', 'digits', 'v1');
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(models, 'sklearn', 'model.joblib'), join(dir, 'model.joblib'));
    await apply({
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'from-pvc' },
      spec: {
        predictor: { sklearn: { storageUri: 'pvc://models/digits/v1' } },
        explainer: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(fixtures, 'echo_server.py')] }] },
      },
    });
    await ready('from-pvc');
    assert.deepEqual(await predictV1('from-pvc', exp.rows), exp.sklearn);
    // KServe's `storage:` spec: an entry of the namespace's storage-config Secret, here a claim
    await server.create('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'storage-config' }, stringData: { localModels: JSON.stringify({ type: 'pvc', claim: 'models' }) } });
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'from-storage-spec' }, spec: { predictor: { sklearn: { storage: { key: 'localModels', path: 'digits/v1' } } } } });
    await ready('from-storage-spec');
    assert.deepEqual(await predictV1('from-storage-spec', exp.rows), exp.sklearn);
    await server.req('DELETE', `${isvcPath}/from-storage-spec`);
    const explain = await post('/serving/default/from-pvc/v1/models/from-pvc:explain', { instances: exp.rows.slice(0, 1) });
    assert.equal(explain.status, 200, explain.text);
    assert.equal(explain.body.k_service, 'from-pvc-explainer');
    assert.equal(explain.body.path, '/v1/models/from-pvc:explain');
    await server.req('DELETE', `${isvcPath}/from-http`);
    await server.req('DELETE', `${isvcPath}/from-pvc`);
  });

  void test('a model a pipeline produced is deployed by its artifact URI', async () => {
    const run = await server.cli(['run', join(repoRoot, 'examples', 'serving', 'train_digits.yaml'), '--watch']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const uri = /^ {2}output Output: (\S+)$/m.exec(run.stdout)?.[1];
    assert.ok(uri, run.stdout);
    const own = spawnSync(python, ['-c', `import joblib, json, sys; m = joblib.load(sys.argv[1] + '/model.joblib'); print(json.dumps(m.predict(json.load(open(sys.argv[2]))['rows']).tolist()))`, uri, join(models, 'expected.json')], { encoding: 'utf8' });
    assert.equal(own.status, 0, own.stderr);
    const manifest = readFileSync(join(repoRoot, 'examples', 'serving', 'sklearn-digits.yaml'), 'utf8').replace('MODEL_URI', uri);
    const r = await server.cli(['apply', '-f', '-'], manifest);
    assert.equal(r.code, 0, r.stderr);
    // the service of the first test, updated: a new revision takes all the traffic once loaded
    await server.until('the new revision serves', async () => {
      const o = await isvc('sklearn-digits');
      const t = o.status?.components?.predictor?.traffic ?? [];
      return t.length === 1 && t[0].revisionName === 'sklearn-digits-predictor-00002';
    });
    assert.deepEqual(await predictV1('sklearn-digits', exp.rows), JSON.parse(own.stdout));
  });

  void test('kill -9 of the server: after a restart the same replicas serve again, routes rebuilt', async () => {
    const selector = 'labelSelector=serving.knative.dev/revision%3Dsklearn-digits-predictor-00002';
    const before = (await server.get(`/api/v1/namespaces/default/pods?${selector}`)).items.map((p: any) => p.metadata.name).sort();
    assert.equal(before.length, 1);
    await server.crash();
    await server.launch();
    await server.until('answered after restart', async () => (await post('/serving/default/sklearn-digits/v1/models/sklearn-digits:predict', { instances: exp.rows.slice(0, 1) })).status === 200, 30_000);
    const after = (await server.get(`/api/v1/namespaces/default/pods?${selector}`)).items.map((p: any) => p.metadata.name).sort();
    assert.deepEqual(after, before, 'the running replica was adopted, not replaced');
    await ready('sklearn-digits');
  });
});
