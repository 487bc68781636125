// The in-process ONNX engine against real models exported by torch (from the repository's .venv):
// a small network trained on sklearn's digits, a model passing every common element type through,
// and a larger one to check that inference keeps the event loop free.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { OnnxModel, datatypeForOrt, resolveOnnxFile } from './onnx.js';
import type { Tensor } from './tensor.js';
import { ProtocolError } from './tensor.js';
import { encodeInferResponse, parseInferRequest } from './v2.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const python = join(repo, '.venv', 'bin', 'python');

// trains the digits network, exports it and the other test models, and writes torch's own outputs
const GENERATE = String.raw`
import json, os, sys
import torch
from sklearn.datasets import load_digits
out = sys.argv[1]
torch.manual_seed(0)
X, y = load_digits(return_X_y=True)
X = torch.tensor(X / 16.0, dtype=torch.float32)
y = torch.tensor(y)
net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10), torch.nn.Softmax(dim=1))
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for _ in range(150):
    opt.zero_grad()
    torch.nn.functional.nll_loss(torch.log(net(X) + 1e-9), y).backward()
    opt.step()
net.eval()
torch.onnx.export(net, X[:2], os.path.join(out, 'digits.onnx'), input_names=['pixels'], output_names=['probs'],
                  dynamic_axes={'pixels': {0: 'batch'}, 'probs': {0: 'batch'}}, opset_version=13)
with torch.no_grad():
    probs = net(X[:100])
json.dump({'inputs': X[:100].tolist(), 'probs': probs.tolist(), 'labels': y[:100].tolist()}, open(os.path.join(out, 'digits.json'), 'w'))

class Types(torch.nn.Module):
    def forward(self, f, i, b):
        return f * 2, f.double(), i + 1, i.to(torch.int32), torch.eq(b, torch.zeros_like(b)), (i % 256).to(torch.uint8)
torch.onnx.export(Types(), (torch.zeros(2, 3), torch.zeros(2, dtype=torch.int64), torch.zeros(2, dtype=torch.bool)),
                  os.path.join(out, 'types.onnx'), input_names=['f', 'i', 'b'], output_names=['f2', 'd', 'i1', 'i32', 'nb', 'u8'],
                  dynamic_axes={'f': {0: 'n'}, 'i': {0: 'n'}, 'b': {0: 'n'}}, opset_version=13)

big = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(4)])
torch.onnx.export(big, torch.zeros(64, 512), os.path.join(out, 'big.onnx'), input_names=['x'], output_names=['y'],
                  dynamic_axes={'x': {0: 'b'}, 'y': {0: 'b'}}, opset_version=13)
`;

const dir = mkdtempSync(join(tmpdir(), 'skiff-onnx-'));
let models: string | null = null;
let whyNot = '';

before(async () => {
  if (!existsSync(python)) { whyNot = `${python} is missing (run scripts/setup.sh)`; return; }
  try {
    await promisify(execFile)(python, ['-c', GENERATE, dir], { timeout: 180_000 });
    models = dir;
  } catch (e) {
    whyNot = `could not export the test models with torch: ${(e as Error).message.split('\n').slice(-3).join(' ')}`;
  }
});

after(() => rmSync(dir, { recursive: true, force: true }));

function f32(name: string, shape: number[], values: number[]): Tensor {
  return { name, datatype: 'FP32', shape, data: Float32Array.from(values) };
}

describe('finding and loading model files', () => {
  it('resolves a file, a directory with one model, and the Triton layout', () => {
    const root = join(dir, 'layout');
    mkdirSync(join(root, 'single'), { recursive: true });
    writeFileSync(join(root, 'single', 'm.onnx'), '');
    assert.equal(resolveOnnxFile(join(root, 'single')), join(root, 'single', 'm.onnx'));
    assert.equal(resolveOnnxFile(join(root, 'single', 'm.onnx')), join(root, 'single', 'm.onnx'));
    for (const v of ['1', '3', '20']) {
      mkdirSync(join(root, 'triton', 'digits', v), { recursive: true });
      writeFileSync(join(root, 'triton', 'digits', v, 'model.onnx'), '');
    }
    writeFileSync(join(root, 'triton', 'digits', 'config.pbtxt'), 'name: "digits"');
    assert.equal(resolveOnnxFile(join(root, 'triton')), join(root, 'triton', 'digits', '20', 'model.onnx'));
    assert.equal(resolveOnnxFile(join(root, 'triton', 'digits')), join(root, 'triton', 'digits', '20', 'model.onnx'));
    mkdirSync(join(root, 'two'), { recursive: true });
    writeFileSync(join(root, 'two', 'a.onnx'), '');
    writeFileSync(join(root, 'two', 'b.onnx'), '');
    assert.throws(() => resolveOnnxFile(join(root, 'two')), /found 2 \.onnx files .*a\.onnx, b\.onnx.*expected exactly one/);
    mkdirSync(join(root, 'none'), { recursive: true });
    assert.throws(() => resolveOnnxFile(join(root, 'none')), /no \.onnx file in/);
    assert.throws(() => resolveOnnxFile(join(root, 'absent')), /does not exist/);
  });

  it('fails to load a corrupt file with a message naming it', async () => {
    const bad = join(dir, 'corrupt', 'model.onnx');
    mkdirSync(dirname(bad), { recursive: true });
    writeFileSync(bad, 'this is not a protobuf \x00\x01\x02\xff');
    await assert.rejects(OnnxModel.load(dirname(bad)), (e: Error) => e.message.startsWith(`failed to load ONNX model ${bad}: `) && e.message.length > bad.length + 30);
  });

  it('maps ONNX element types to V2 datatypes', () => {
    assert.deepEqual(['float32', 'float64', 'int64', 'int32', 'uint8', 'bool', 'string', 'float16'].map(datatypeForOrt),
      ['FP32', 'FP64', 'INT64', 'INT32', 'UINT8', 'BOOL', 'BYTES', 'FP16']);
    assert.equal(datatypeForOrt('complex64'), undefined);
  });
});

describe('serving ONNX models', () => {
  let digits: OnnxModel | undefined;
  after(async () => { await digits?.close(); });

  it('describes and runs the digits network like torch does', async (t) => {
    if (!models) { t.skip(whyNot); return; }
    digits = await OnnxModel.load(join(models, 'digits.onnx'), { intraOpThreads: 1 });
    assert.deepEqual(digits.inputs, [{ name: 'pixels', datatype: 'FP32', shape: [-1, 64] }]);
    assert.deepEqual(digits.outputs, [{ name: 'probs', datatype: 'FP32', shape: [-1, 10] }]);
    const expected = JSON.parse(readFileSync(join(models, 'digits.json'), 'utf8')) as { inputs: number[][]; probs: number[][]; labels: number[] };
    const [probs] = await digits.infer([f32('pixels', [100, 64], expected.inputs.flat())]);
    assert.ok(probs);
    assert.equal(probs.datatype, 'FP32');
    assert.deepEqual(probs.shape, [100, 10]);
    const got = probs.data as Float32Array;
    expected.probs.flat().forEach((p, i) => assert.ok(Math.abs((got[i] as number) - p) < 1e-5, `element ${i}: ${got[i]} vs torch ${p}`));
    let right = 0;
    expected.labels.forEach((label, r) => {
      const row = [...got.subarray(r * 10, r * 10 + 10)];
      if (row.indexOf(Math.max(...row)) === label) right++;
    });
    assert.ok(right >= 95, `${right}/100 digits recognised`);
    // one row of this network costs less than handing it to the worker: it also runs on the loop,
    // with the same answers; the 100-row batch above went to the worker
    assert.equal(digits.mode, 'both', `calibrated at ${digits.calibratedUs} µs a row`);
    const [one] = await digits.infer([f32('pixels', [1, 64], expected.inputs[0] as number[])]);
    const row = one?.data as Float32Array;
    (expected.probs[0] as number[]).forEach((p, i) => assert.ok(Math.abs((row[i] as number) - p) < 1e-5));
  });

  it('refuses wrong input names, datatypes and shapes with a 400 naming the input', async (t) => {
    if (!digits) { t.skip(whyNot || 'digits model not loaded'); return; }
    const row = new Array<number>(64).fill(0);
    const is400 = (re: RegExp) => (e: unknown) => e instanceof ProtocolError && e.status === 400 && re.test(e.message);
    await assert.rejects(digits.infer([f32('image', [1, 64], row)]), is400(/unknown input "image"; the model's inputs are "pixels"/));
    await assert.rejects(digits.infer([{ name: 'pixels', datatype: 'FP64', shape: [1, 64], data: Float64Array.from(row) }]), is400(/input "pixels": datatype FP64 does not match the model's FP32/));
    await assert.rejects(digits.infer([f32('pixels', [1, 63], row.slice(1))]), is400(/input "pixels": shape \[1,63\] does not match the model's \[-1,64\]/));
    await assert.rejects(digits.infer([f32('pixels', [64], row)]), is400(/input "pixels": shape \[64\]/));
    await assert.rejects(digits.infer([f32('pixels', [2, 64], row)]), is400(/input "pixels": shape \[2,64\] needs 128 elements, got 64/));
    await assert.rejects(digits.infer([]), is400(/input "pixels" is missing/));
    await assert.rejects(digits.infer([f32('pixels', [1, 64], row)], ['logits']), is400(/unknown output "logits"/));
  });

  it('answers 100 parallel requests, each with its own result', async (t) => {
    if (!digits || !models) { t.skip(whyNot || 'digits model not loaded'); return; }
    const model = digits;
    const expected = JSON.parse(readFileSync(join(models, 'digits.json'), 'utf8')) as { inputs: number[][]; probs: number[][] };
    const results = await Promise.all(expected.inputs.map((row) => model.infer([f32('pixels', [1, 64], row)])));
    results.forEach(([out], r) => {
      assert.deepEqual(out?.shape, [1, 10]);
      const want = expected.probs[r] as number[];
      want.forEach((p, i) => assert.ok(Math.abs(((out?.data as Float32Array)[i] as number) - p) < 1e-5, `request ${r} element ${i}`));
    });
  });

  it('serves a V2 request end to end', async (t) => {
    if (!digits) { t.skip(whyNot || 'digits model not loaded'); return; }
    const body = Buffer.from(JSON.stringify({ id: '7', inputs: [{ name: 'pixels', shape: [1, 64], datatype: 'FP32', data: [new Array<number>(64).fill(0.5)] }] }));
    const req = parseInferRequest(body, { 'content-type': 'application/json' });
    const outputs = await digits.infer(req.inputs, req.outputs?.map((o) => o.name));
    const res = JSON.parse(encodeInferResponse({ model_name: 'digits', id: req.id ?? '', outputs }, req).body.toString());
    assert.equal(res.id, '7');
    assert.equal(res.outputs[0].name, 'probs');
    assert.equal(res.outputs[0].data.length, 10);
    assert.ok(Math.abs(res.outputs[0].data.reduce((a: number, b: number) => a + b, 0) - 1) < 1e-4);
  });

  it('passes FP32, FP64, INT64, INT32, BOOL and UINT8 through', async (t) => {
    if (!models) { t.skip(whyNot); return; }
    const m = await OnnxModel.load(join(models, 'types.onnx'), { intraOpThreads: 1 });
    try {
      assert.deepEqual(m.inputs.map((s) => [s.name, s.datatype, s.shape]), [['f', 'FP32', [-1, 3]], ['i', 'INT64', [-1]], ['b', 'BOOL', [-1]]]);
      const out = await m.infer([
        f32('f', [2, 3], [1, 2, 3, 4, 5, 6.5]),
        { name: 'i', datatype: 'INT64', shape: [2], data: BigInt64Array.from([41n, 2n ** 40n]) },
        { name: 'b', datatype: 'BOOL', shape: [2], data: Uint8Array.from([1, 0]) },
      ], ['nb', 'i1', 'd', 'i32', 'u8', 'f2']);
      assert.deepEqual(out.map((o) => [o.name, o.datatype, o.shape]), [
        ['nb', 'BOOL', [2]], ['i1', 'INT64', [2]], ['d', 'FP64', [2, 3]], ['i32', 'INT32', [2]], ['u8', 'UINT8', [2]], ['f2', 'FP32', [2, 3]],
      ]);
      const byName = new Map(out.map((o) => [o.name, o.data]));
      assert.deepEqual([...(byName.get('nb') as Uint8Array)], [0, 1]);
      assert.deepEqual([...(byName.get('i1') as BigInt64Array)], [42n, 2n ** 40n + 1n]);
      assert.deepEqual([...(byName.get('d') as Float64Array)], [1, 2, 3, 4, 5, 6.5]);
      assert.deepEqual([...(byName.get('u8') as Uint8Array)], [41, 0]);
      assert.deepEqual([...(byName.get('f2') as Float32Array)], [2, 4, 6, 8, 10, 13]);
    } finally {
      await m.close();
    }
  });

  it('keeps the event loop free while a model computes', async (t) => {
    if (!models) { t.skip(whyNot); return; }
    const m = await OnnxModel.load(join(models, 'big.onnx'), { intraOpThreads: 1 });
    try {
      const x: Tensor = { name: 'x', datatype: 'FP32', shape: [256, 512], data: new Float32Array(256 * 512).fill(0.01) };
      await m.infer([x]);
      const h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      const start = performance.now();
      let runs = 0;
      while (performance.now() - start < 1000) {
        await m.infer([x]);
        runs++;
      }
      h.disable();
      const perRun = (performance.now() - start) / runs;
      t.diagnostic(`${runs} inferences, ${perRun.toFixed(2)} ms each; event-loop delay mean ${(h.mean / 1e6).toFixed(2)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(2)} ms`);
      // Where it ran, without timing: on the loop, the inference runs (and its promise settles) before
      // a callback scheduled after the call; on the worker, that callback runs first.
      const order: string[] = [];
      const done = m.infer([x]).then(() => order.push('inference'));
      setImmediate(() => order.push('loop'));
      await done;
      assert.deepEqual(order, ['loop', 'inference'], 'a 256-row batch ran on the event loop');
    } finally {
      await m.close();
    }
  });

  it('rejects inference after close and finds a model copied into the Triton layout', async (t) => {
    if (!models) { t.skip(whyNot); return; }
    const repoDir = join(dir, 'repo');
    mkdirSync(join(repoDir, 'digits', '1'), { recursive: true });
    copyFileSync(join(models, 'digits.onnx'), join(repoDir, 'digits', '1', 'model.onnx'));
    const m = await OnnxModel.load(repoDir);
    assert.equal(m.inputs[0]?.name, 'pixels');
    await m.close();
    await assert.rejects(m.infer([f32('pixels', [1, 64], new Array<number>(64).fill(0))]), /closed/);
  });
});
