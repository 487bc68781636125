// The InferenceService `tensorflow` runtime end to end: Keras classifiers trained on scikit-learn's
// digits and exported as SavedModels in TF Serving's layout (test/fixtures/serving/train_tf.py), served
// by KServe's kserve-tensorflow-serving runtime from the model server in TensorFlow's environment,
// and every answer checked against what the SavedModel predicts when loaded in Python: V1 in TF
// Serving's row and columnar formats (one input and several, a second signature), the model's status
// and metadata, and V2 — also through Triton's tensorflow format (protocolVersion v2). Then a
// SavedModel that does not load (FailedToLoad with TensorFlow's message) and malformed requests (400
// in TF Serving's error shape).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { TestServer, repoRoot } from './harness.js';

const python = join(repoRoot, '.venv-tensorflow', 'bin', 'python');
const isvcPath = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';

/** why the tests cannot run here, if they cannot: TensorFlow's environment (python/requirements-tensorflow.txt) */
function missing(): string | false {
  if (!existsSync(python)) return 'no .venv-tensorflow (scripts/setup.sh makes it)';
  const r = spawnSync(python, ['-c', 'import tensorflow, sklearn'], { encoding: 'utf8', env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
  return r.status === 0 ? false : `TensorFlow cannot be imported in .venv-tensorflow: ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
}

interface Expected {
  rows: number[][];
  labels: number[];
  digits: number[][];
  digitsOld: number[][];
  scale: number[];
  multi: { probabilities: number[][]; class_ids: number[] };
  top: number[];
}

/** float32 answers, compared with room for JSON's rounding */
function near(got: unknown, want: unknown, what: string): void {
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got) && got.length === want.length, `${what}: ${JSON.stringify(got)?.slice(0, 200)} is not ${want.length} long`);
    want.forEach((w, i) => near((got as unknown[])[i], w, `${what}[${i}]`));
    return;
  }
  assert.equal(typeof got, 'number', `${what}: ${JSON.stringify(got)}`);
  assert.ok(Math.abs((got as number) - (want as number)) < 1e-5, `${what}: ${String(got)} vs ${String(want)}`);
}

void describe('the tensorflow serving runtime', { skip: missing(), timeout: 600_000 }, () => {
  let server: TestServer;
  let models: string;
  let exp: Expected;

  const apply = async (obj: unknown): Promise<void> => {
    const r = await server.cli(['apply', '-f', '-'], YAML.stringify(obj));
    assert.equal(r.code, 0, r.stderr);
  };
  const isvc = (name: string): Promise<any> => server.get(`${isvcPath}/${name}`);
  // TensorFlow's import takes seconds, more on a loaded machine
  const ready = (name: string): Promise<any> =>
    server.until(`InferenceService ${name} Ready`, async () => {
      const o = await isvc(name);
      return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
    }, 180_000);
  const post = (path: string, body: unknown): Promise<{ status: number; body: any; text: string }> =>
    server.req('POST', path, typeof body === 'string' ? body : JSON.stringify(body), { 'content-type': 'application/json' });
  const tfIsvc = (name: string, dir: string, extra: Record<string, unknown> = {}): unknown => ({
    apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name },
    spec: { predictor: { model: { modelFormat: { name: 'tensorflow' }, storageUri: `file://${join(models, dir)}`, ...extra } } },
  });

  before(async () => {
    server = await TestServer.start();
    models = join(server.dataDir, 'tf-models');
    const r = spawnSync(python, [join(repoRoot, 'test', 'fixtures', 'serving', 'train_tf.py'), models], { encoding: 'utf8', timeout: 180_000, env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
    assert.equal(r.status, 0, r.stderr);
    exp = JSON.parse(readFileSync(join(models, 'expected.json'), 'utf8')) as Expected;
    // every InferenceService at once: their model servers start (and import TensorFlow) side by side
    await apply(tfIsvc('tf-digits', 'digits'));
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'tf-multi' }, spec: { predictor: { tensorflow: { storageUri: `file://${join(models, 'multi')}` } } } });
    await apply(tfIsvc('tf-v2', 'digits', { protocolVersion: 'v2' }));
    await apply(tfIsvc('tf-broken', 'broken'));
    await apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'tf-batched' }, spec: { predictor: { batcher: { maxBatchSize: 8, maxLatency: 20 }, tensorflow: { storageUri: `file://${join(models, 'multi')}` } } } });
  });
  after(async () => {
    await server?.cleanup();
  });

  void test('a Keras classifier over V1: the highest version is served, rows and columns answer as the SavedModel does in Python', async () => {
    const o = await ready('tf-digits');
    assert.equal(o.status.clusterServingRuntimeName, 'kserve-tensorflow-serving');
    assert.deepEqual(o.status.modelStatus.states, { activeModelState: 'Loaded', targetModelState: 'Loaded' });
    const base = '/serving/default/tf-digits/v1/models/tf-digits';
    const rows = await post(`${base}:predict`, { instances: exp.rows });
    assert.equal(rows.status, 200, rows.text);
    near(rows.body.predictions, exp.digits, 'row format');
    // version 2 (trained), not version 1 (untrained): the two differ
    assert.ok(Math.abs((exp.digits[0]?.[0] ?? 0) - (exp.digitsOld[0]?.[0] ?? 0)) > 1e-4);
    const cols = await post(`${base}:predict`, { signature_name: 'serving_default', inputs: exp.rows.slice(0, 3) });
    assert.equal(cols.status, 200, cols.text);
    near(cols.body.outputs, exp.digits.slice(0, 3), 'columnar format');
    const named = await post(`${base}/versions/2:predict`, { instances: exp.rows.slice(0, 2).map((r) => ({ pixels: r })) });
    assert.equal(named.status, 200, named.text);
    near(named.body.predictions, exp.digits.slice(0, 2), 'named instances, by version');
    assert.equal((await post(`${base}/versions/1:predict`, { instances: exp.rows.slice(0, 1) })).status, 404);
    // the model's status and signatures, as TF Serving reports them
    assert.deepEqual((await server.get(base)).model_version_status, [{ version: '2', state: 'AVAILABLE', status: { error_code: 'OK', error_message: '' } }]);
    const meta = await server.get(`${base}/metadata`);
    const sig = meta.metadata.signature_def.signature_def.serving_default;
    assert.equal(sig.inputs.pixels.dtype, 'DT_FLOAT');
    assert.deepEqual(sig.inputs.pixels.tensor_shape.dim.map((d: any) => d.size), ['-1', '64']);
    // V2 from the same server
    const v2 = await post('/serving/default/tf-digits/v2/models/tf-digits/infer', { inputs: [{ name: 'pixels', shape: [8, 64], datatype: 'FP32', data: exp.rows.flat() }] });
    assert.equal(v2.status, 200, v2.text);
    assert.deepEqual(v2.body.outputs[0].shape, [8, 10]);
    near(v2.body.outputs[0].data, exp.digits.flat(), 'V2');
    const logs = await server.cli(['logs', 'isvc/tf-digits']);
    assert.match(logs.stdout, /model tf-digits loaded \(tensorflow\)/);
  });

  void test('several inputs and outputs (legacy tensorflow key): named rows, named columns, a second signature, V2 by name', async () => {
    await ready('tf-multi');
    const base = '/serving/default/tf-multi/v1/models/tf-multi:predict';
    const rows = await post(base, { instances: exp.rows.map((r, i) => ({ pixels: r, scale: exp.scale[i] })) });
    assert.equal(rows.status, 200, rows.text);
    assert.deepEqual(rows.body.predictions.map((p: any) => p.class_ids), exp.multi.class_ids);
    near(rows.body.predictions.map((p: any) => p.probabilities), exp.multi.probabilities, 'named rows');
    const cols = await post(base, { inputs: { pixels: exp.rows, scale: exp.scale } });
    assert.equal(cols.status, 200, cols.text);
    assert.deepEqual(cols.body.outputs.class_ids, exp.multi.class_ids);
    near(cols.body.outputs.probabilities, exp.multi.probabilities, 'named columns');
    const top = await post(base, { signature_name: 'logits', instances: exp.rows });
    assert.equal(top.status, 200, top.text);
    near(top.body.predictions, exp.top, 'second signature');
    const v2 = await post('/serving/default/tf-multi/v2/models/tf-multi/infer', {
      inputs: [{ name: 'scale', shape: [8], datatype: 'FP32', data: exp.scale }, { name: 'pixels', shape: [8, 64], datatype: 'FP32', data: exp.rows.flat() }],
      outputs: [{ name: 'class_ids' }],
    });
    assert.equal(v2.status, 200, v2.text);
    assert.deepEqual(v2.body.outputs.map((x: any) => [x.name, x.datatype]), [['class_ids', 'INT64']]);
    assert.deepEqual(v2.body.outputs[0].data, exp.multi.class_ids);
  });

  void test('batching: concurrent row requests share batches, each answered alone; columns and other signatures are not merged', async () => {
    await ready('tf-batched');
    const base = '/serving/default/tf-batched/v1/models/tf-batched:predict';
    const which = Array.from({ length: 24 }, (_, i) => i % exp.rows.length);
    const [answers, cols, top] = await Promise.all([
      Promise.all(which.map((i) => post(base, { instances: [{ pixels: exp.rows[i], scale: exp.scale[i] }] }))),
      post(base, { inputs: { pixels: exp.rows.slice(0, 2), scale: exp.scale.slice(0, 2) } }),
      post(base, { signature_name: 'logits', instances: exp.rows.slice(0, 2) }),
    ]);
    answers.forEach((r, k) => {
      const i = which[k] as number;
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.predictions.length, 1);
      assert.equal(r.body.predictions[0].class_ids, exp.multi.class_ids[i]);
      near(r.body.predictions[0].probabilities, exp.multi.probabilities[i], `batched row ${i}`);
    });
    assert.equal(cols.status, 200, cols.text);
    assert.deepEqual(cols.body.outputs.class_ids, exp.multi.class_ids.slice(0, 2));
    assert.equal(top.status, 200, top.text);
    near(top.body.predictions, exp.top.slice(0, 2), 'a second signature beside the batches');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const count = Number(/skiff_serving_batch_size_count\{namespace="default",inferenceservice="tf-batched"[^}]*\} (\d+)/.exec(metrics)?.[1]);
    const sum = Number(/skiff_serving_batch_size_sum\{namespace="default",inferenceservice="tf-batched"[^}]*\} (\d+)/.exec(metrics)?.[1]);
    // the 24 rows in shared batches, and the two requests sent as they came, a batch of one each
    assert.equal(sum, 26, metrics.split('\n').filter((l) => l.includes('tf-batched') && l.includes('batch_size')).join('\n'));
    assert.ok(count < 24, `${count} batches for 26 requests`);
  });

  void test('protocolVersion v2 (Triton\'s tensorflow format) is served by the same model server', async () => {
    const o = await ready('tf-v2');
    assert.equal(o.status.clusterServingRuntimeName, 'kserve-tritonserver');
    const v2 = await post('/serving/default/tf-v2/v2/models/tf-v2/infer', { inputs: [{ name: 'pixels', shape: [2, 64], datatype: 'FP32', data: exp.rows.slice(0, 2).flat() }] });
    assert.equal(v2.status, 200, v2.text);
    near(v2.body.outputs[0].data, exp.digits.slice(0, 2).flat(), 'V2 through Triton');
  });

  void test('examples/serving/tf-digits.yaml serves what examples/training/tf_digits.py exports (the TFJob example\'s program, run here as its chief alone)', async () => {
    const modelDir = join(server.dataDir, 'tf-example');
    const env = { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2', EPOCHS: '2', MODEL_DIR: modelDir };
    const train = spawnSync(python, [join(repoRoot, 'examples', 'training', 'tf_digits.py')], { encoding: 'utf8', timeout: 180_000, env });
    assert.equal(train.status, 0, train.stderr);
    assert.match(train.stdout, /it answers as the trained model: True/);
    const answer = spawnSync(python, ['-c', [
      'import json, sys, numpy as np, tensorflow as tf',
      'f = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]',
      'x = np.array(json.loads(sys.argv[2]), np.float32)',
      'print(json.dumps(next(iter(f(tf.constant(x)).values())).numpy().tolist()))',
    ].join('\n'), join(modelDir, '1'), JSON.stringify(exp.rows)], { encoding: 'utf8', timeout: 120_000, env });
    assert.equal(answer.status, 0, answer.stderr);
    const want = JSON.parse(answer.stdout.trim().split('\n').pop() as string) as number[][];
    // renamed: tf-digits is this file's own classifier
    const manifest = readFileSync(join(repoRoot, 'examples', 'serving', 'tf-digits.yaml'), 'utf8')
      .replace('file:///tmp/skiff-examples/tf-digits/model', `file://${modelDir}`).replace('name: tf-digits', 'name: tf-example');
    const r = await server.cli(['apply', '-f', '-'], manifest);
    assert.equal(r.code, 0, r.stderr);
    await ready('tf-example');
    const got = await post('/serving/default/tf-example/v1/models/tf-example:predict', { instances: exp.rows });
    assert.equal(got.status, 200, got.text);
    near(got.body.predictions, want, 'the example');
  });

  void test('a SavedModel that does not load is FailedToLoad with TensorFlow\'s message; malformed requests get 400 {"error"}', async () => {
    const o = await server.until('tf-broken FailedToLoad', async () => {
      const x = await isvc('tf-broken');
      return x.status?.modelStatus?.states?.targetModelState === 'FailedToLoad' ? x : undefined;
    }, 180_000);
    assert.equal(o.status.modelStatus.lastFailureInfo.reason, 'ModelLoadFailed');
    assert.match(o.status.modelStatus.lastFailureInfo.message, /Error parsing message with type 'tensorflow.SavedModel'/);
    assert.equal(o.status.conditions.find((c: any) => c.type === 'Ready').status, 'False');

    await ready('tf-digits');
    const base = '/serving/default/tf-digits/v1/models/tf-digits:predict';
    const bad = async (body: unknown, pattern: RegExp): Promise<void> => {
      const r = await post(base, body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${r.text}`);
      assert.deepEqual(Object.keys(r.body), ['error']);
      assert.match(r.body.error, pattern);
    };
    await bad('{"instances": [[1, 2', /Unrecognized request format/);
    await bad({ instances: [[1, 2, 3]] }, /input 'pixels': shape \[1, 3\]/);
    await bad({ instances: [exp.rows[0]], inputs: [exp.rows[0]] }, /Not both 'inputs' and 'instances' can be set/);
    await bad({ signature_name: 'nope', instances: [exp.rows[0]] }, /Serving signature key "nope" not found/);
    await bad({ instances: [['a']] }, /input 'pixels'/);
    await bad({ rows: [] }, /Missing 'inputs' or 'instances' key/);
    // and it keeps serving
    const ok = await post(base, { instances: exp.rows.slice(0, 1) });
    assert.equal(ok.status, 200, ok.text);
  });
});
