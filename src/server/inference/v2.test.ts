import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { conformanceDir, corpusFiles } from '../../conformance-path.js';
import type { Datatype, Tensor } from './tensor.js';
import { DATATYPES, ProtocolError } from './tensor.js';
import type { InferRequest, InferResponse } from './v2.js';
import { encodeInferRequest, encodeInferResponse, parseInferRequest, parseInferResponse, v2Error } from './v2.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

function sample(dt: Datatype): Tensor {
  const shape = [2, 2];
  const make = (): Tensor['data'] => {
    switch (dt) {
      case 'BOOL': return Uint8Array.from([1, 0, 0, 1]);
      case 'UINT8': return Uint8Array.from([0, 1, 254, 255]);
      case 'UINT16': return Uint16Array.from([0, 1, 65534, 65535]);
      case 'UINT32': return Uint32Array.from([0, 1, 4294967294, 4294967295]);
      case 'UINT64': return BigUint64Array.from([0n, 1n, 2n ** 52n, 123n]);
      case 'INT8': return Int8Array.from([-128, -1, 0, 127]);
      case 'INT16': return Int16Array.from([-32768, -1, 0, 32767]);
      case 'INT32': return Int32Array.from([-2147483648, -1, 0, 2147483647]);
      case 'INT64': return BigInt64Array.from([-(2n ** 53n), -1n, 0n, 2n ** 53n]);
      case 'FP16': return Uint16Array.from([0x3c00, 0xc000, 0x0000, 0x7bff]);
      case 'BF16': return Uint16Array.from([0x3f80, 0xc000, 0x0000, 0x4049]);
      case 'FP32': return Float32Array.from([0.5, -1.25, 3.4e38, 1e-7]);
      case 'FP64': return Float64Array.from([0.1, -1e300, Math.PI, 2 ** -1074]);
      case 'BYTES': return [Buffer.from('a'), Buffer.from(''), Buffer.from('héllo'), Buffer.from('{"x":1}')];
    }
  };
  return { name: `in-${dt.toLowerCase()}`, datatype: dt, shape, data: make() };
}

function bodyOf(json: unknown): Buffer {
  return Buffer.from(JSON.stringify(json));
}

function status400(message: RegExp): (e: unknown) => boolean {
  return (e: unknown) => e instanceof ProtocolError && e.status === 400 && message.test(e.message);
}

describe('V2 requests', () => {
  for (const binary of [false, true]) {
    it(`round-trips every datatype (${binary ? 'binary' : 'JSON'})`, () => {
      const req: InferRequest = { id: 'r1', inputs: DATATYPES.map(sample), outputs: [{ name: 'out', parameters: { binary_data: true } }], parameters: { p: 1 } };
      const enc = encodeInferRequest(req, { binary });
      if (binary) assert.equal(enc.headers['content-type'], 'application/octet-stream');
      else assert.ok(enc.headers['inference-header-content-length'], 'FP16/BF16 always travel binary');
      const back = parseInferRequest(enc.body, enc.headers);
      assert.deepEqual(back, req);
    });
  }

  it('reads JSON data nested or flat, with a content type carrying parameters', () => {
    const nested = parseInferRequest(bodyOf({ inputs: [{ name: 'input-0', shape: [2, 4], datatype: 'FP32', data: [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]] }] }),
      { 'content-type': 'application/json; charset=utf-8' });
    const flat = parseInferRequest(bodyOf({ inputs: [{ name: 'input-0', shape: [2, 4], datatype: 'FP32', data: [6.8, 2.8, 4.8, 1.4, 6.0, 3.4, 4.5, 1.6] }] }), {});
    assert.deepEqual(nested, flat);
    assert.equal(nested.inputs[0]?.data.length, 8);
  });

  it('parses the binary example of the extension exactly (UINT32 [2,2] + BOOL [3])', () => {
    const header = JSON.stringify({
      model_name: 'mymodel',
      inputs: [
        { name: 'input0', shape: [2, 2], datatype: 'UINT32', parameters: { binary_data_size: 16 } },
        { name: 'input1', shape: [3], datatype: 'BOOL', parameters: { binary_data_size: 3 } },
      ],
      outputs: [{ name: 'output0', parameters: { binary_data: true } }],
    });
    const tensors = Buffer.alloc(19);
    [1, 2, 3, 0xdeadbeef].forEach((v, i) => tensors.writeUInt32LE(v, i * 4));
    tensors.set([1, 0, 1], 16);
    const body = Buffer.concat([Buffer.from(header), tensors]);
    assert.equal(body.length, Buffer.byteLength(header) + 19);
    const req = parseInferRequest(body, { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(Buffer.byteLength(header)) });
    assert.deepEqual(req.inputs.map((t) => [t.name, t.datatype, t.shape, [...(t.data as Uint32Array)]]), [
      ['input0', 'UINT32', [2, 2], [1, 2, 3, 0xdeadbeef]],
      ['input1', 'BOOL', [3], [1, 0, 1]],
    ]);
    assert.equal(req.inputs[0]?.parameters, undefined, 'binary_data_size is consumed');
    assert.deepEqual(req.outputs, [{ name: 'output0', parameters: { binary_data: true } }]);

    // the answer of the example: 24 bytes of FP32 [3,2] after the JSON header
    const res = encodeInferResponse({ model_name: 'mymodel', id: '', outputs: [{ name: 'output0', datatype: 'FP32', shape: [3, 2], data: Float32Array.from([1, 2, 3, 4, 5, 6]) }] }, req);
    const hlen = Number(res.headers['inference-header-content-length']);
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.equal(res.body.length, hlen + 24);
    assert.deepEqual(JSON.parse(res.body.subarray(0, hlen).toString()).outputs,
      [{ name: 'output0', datatype: 'FP32', shape: [3, 2], parameters: { binary_data_size: 24 } }]);
    assert.equal(res.body.readFloatLE(hlen + 20), 6);
  });

  it('checks binary sizes and the length header', () => {
    const header = JSON.stringify({ inputs: [{ name: 'x', shape: [2], datatype: 'INT32', parameters: { binary_data_size: 8 } }] });
    const h = { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.length) };
    assert.throws(() => parseInferRequest(Buffer.concat([Buffer.from(header), Buffer.alloc(4)]), h), status400(/input "x": binary_data_size 8 runs past the end/));
    assert.throws(() => parseInferRequest(Buffer.concat([Buffer.from(header), Buffer.alloc(12)]), h), status400(/4 bytes of binary data that no input claims/));
    assert.throws(() => parseInferRequest(Buffer.concat([Buffer.from(header), Buffer.alloc(8)]), { 'content-type': 'application/octet-stream' }),
      status400(/inference-header-content-length' header is missing/));
    assert.throws(() => parseInferRequest(Buffer.from([0, 1, 2, 3]), { 'content-type': 'application/octet-stream' }), status400(/header is missing/));
    assert.throws(() => parseInferRequest(Buffer.from(header), { 'inference-header-content-length': '9999' }), status400(/exceeds the body length/));
    assert.throws(() => parseInferRequest(Buffer.from(header), { 'inference-header-content-length': '0' }), status400(/raw binary/));
    const wrongSize = JSON.stringify({ inputs: [{ name: 'x', shape: [2], datatype: 'INT32', parameters: { binary_data_size: 6 } }] });
    assert.throws(() => parseInferRequest(Buffer.concat([Buffer.from(wrongSize), Buffer.alloc(6)]), { 'inference-header-content-length': String(wrongSize.length) }),
      status400(/input "x": binary_data_size 6 does not match shape \[2\] of INT32 \(8 bytes\)/));
  });

  it('answers 400 naming the input for malformed tensors', () => {
    const req = (input: Record<string, unknown>): Buffer => bodyOf({ inputs: [{ name: 'input-0', shape: [2, 4], datatype: 'FP32', data: [1, 2, 3, 4, 5, 6, 7, 8], ...input }] });
    assert.throws(() => parseInferRequest(req({ data: [1, 2, 3, 4, 5, 6, 7] }), JSON_HEADERS), status400(/^input "input-0": shape \[2,4\] needs 8 elements, got 7$/));
    assert.throws(() => parseInferRequest(req({ datatype: 'FLOAT' }), JSON_HEADERS), status400(/input "input-0": unknown datatype "FLOAT"/));
    assert.throws(() => parseInferRequest(req({ shape: [2, -4] }), JSON_HEADERS), status400(/input "input-0".*non-negative/));
    assert.throws(() => parseInferRequest(req({ shape: -1 }), JSON_HEADERS), status400(/input "input-0": shape must be a list/));
    assert.throws(() => parseInferRequest(req({ shape: [8], datatype: 'FP16' }), JSON_HEADERS), status400(/input "input-0": FP16 .*binary tensor data extension/));
    assert.throws(() => parseInferRequest(req({ data: undefined }), JSON_HEADERS), status400(/input "input-0": "data" is missing/));
    assert.throws(() => parseInferRequest(req({ shape: [8], datatype: 'INT8', data: [1, 2, 3, 4, 5, 6, 7, 300] }), JSON_HEADERS), status400(/input "input-0": element 7 \(300\)/));
    assert.throws(() => parseInferRequest(Buffer.from('{"inputs": ['), JSON_HEADERS), status400(/invalid JSON/));
    assert.throws(() => parseInferRequest(bodyOf({ instances: [] }), JSON_HEADERS), status400(/"inputs" is missing/));
    assert.throws(() => parseInferRequest(bodyOf({ inputs: [{ name: 'a', shape: [1], datatype: 'FP32', data: [1] }, { name: 'a', shape: [1], datatype: 'FP32', data: [1] }] }), JSON_HEADERS),
      status400(/input "a" appears more than once/));
  });

  it('reads the V2 request bodies of the conformance corpus', (t) => {
    const root = join(conformanceDir(), 'kserve');
    if (!existsSync(root)) { t.skip('conformance corpus not found'); return; }
    const files = [
      ...['samples/v1beta1/sklearn/v2/iris-input.json', 'samples/v1beta1/triton/torchscript/input.json', 'samples/v1beta1/xgboost/iris-input.json',
        'samples/v1beta1/torchserve/v2/tensor_conv/input.json'].map((f) => join(root, f)),
      ...corpusFiles(join(root, 'website-extracted', 'json'), /\.json$/),
      ...corpusFiles(join(root, 'website-extracted', 'json-files'), /\.json$/),
    ].filter(existsSync);
    let parsed = 0;
    for (const f of files) {
      let json: unknown;
      try { json = JSON.parse(readFileSync(f, 'utf8')); } catch { continue; }
      const inputs = (json as { inputs?: unknown[] }).inputs;
      // V2 bodies: inputs that are tensors with `data` (gRPC `contents` bodies and V1 `inputs` rows are other protocols)
      if (!Array.isArray(inputs) || !inputs.every((i) => typeof i === 'object' && i !== null && 'datatype' in i && 'data' in i)) continue;
      const shapesOk = inputs.every((i) => Array.isArray((i as unknown as { shape: unknown }).shape));
      const sizedOk = inputs.every((i) => (i as { data: unknown[] }).data.length > 0);
      if (!shapesOk || !sizedOk) {
        // corpus bodies with `"shape": -1` (TorchServe) or placeholder empty data are refused with a 400 naming the input
        assert.throws(() => parseInferRequest(readFileSync(f), JSON_HEADERS), status400(/^input "/), f);
        continue;
      }
      const req = parseInferRequest(readFileSync(f), JSON_HEADERS);
      for (const [i, t] of req.inputs.entries()) {
        const raw = inputs[i] as unknown as { name: string; shape: number[] };
        assert.equal(t.name, raw.name);
        assert.deepEqual(t.shape, raw.shape);
      }
      parsed++;
    }
    assert.ok(parsed >= 5, `parsed ${parsed} corpus requests`);
    const iris = parseInferRequest(readFileSync(join(root, 'samples/v1beta1/sklearn/v2/iris-input.json')), JSON_HEADERS);
    assert.deepEqual([...(iris.inputs[0]?.data as Float32Array)], [6.8, 2.8, 4.8, 1.4, 6.0, 3.4, 4.5, 1.6].map(Math.fround));
    const triton = parseInferRequest(readFileSync(join(root, 'samples/v1beta1/triton/torchscript/input.json')), JSON_HEADERS);
    assert.deepEqual(triton.inputs[0]?.shape, [1, 3, 32, 32]);
    assert.equal(triton.inputs[0]?.data.length, 3072);
  });
});

describe('V2 responses', () => {
  const res: InferResponse = {
    model_name: 'sklearn-iris',
    id: '42',
    outputs: [
      { name: 'output-0', datatype: 'INT64', shape: [2], data: BigInt64Array.from([1n, 1n]) },
      { name: 'proba', datatype: 'FP32', shape: [2, 2], data: Float32Array.from([0.25, 0.75, 0.5, 0.5]) },
    ],
  };

  it('writes JSON with INT64 as numbers, the id echoed and no model_version when unset', () => {
    const enc = encodeInferResponse(res, { id: '42', inputs: [] });
    assert.equal(enc.headers['content-type'], 'application/json');
    const json = JSON.parse(enc.body.toString());
    assert.deepEqual(json, {
      model_name: 'sklearn-iris', id: '42',
      outputs: [
        { name: 'output-0', datatype: 'INT64', shape: [2], data: [1, 1] },
        { name: 'proba', datatype: 'FP32', shape: [2, 2], data: [0.25, 0.75, 0.5, 0.5] },
      ],
    });
    assert.ok(!enc.body.toString().includes('model_version'));
    const versioned = JSON.parse(encodeInferResponse({ ...res, model_version: '1' }, { inputs: [] }).body.toString());
    assert.equal(versioned.model_version, '1');
  });

  it('returns only the requested outputs and binary ones when asked', () => {
    const one = JSON.parse(encodeInferResponse(res, { inputs: [], outputs: [{ name: 'proba' }] }).body.toString());
    assert.deepEqual(one.outputs.map((o: { name: string }) => o.name), ['proba']);
    for (const requested of [
      { inputs: [], parameters: { binary_data_output: true } },
      { inputs: [], outputs: [{ name: 'output-0', parameters: { binary_data: true } }, { name: 'proba', parameters: { binary_data: true } }] },
    ] as InferRequest[]) {
      const enc = encodeInferResponse(res, requested);
      assert.ok(enc.headers['inference-header-content-length']);
      assert.deepEqual(parseInferResponse(enc.body, enc.headers), res);
    }
    // a per-output setting overrides the request-wide one
    const mixed = encodeInferResponse(res, { inputs: [], parameters: { binary_data_output: true }, outputs: [{ name: 'output-0', parameters: { binary_data: false } }, { name: 'proba' }] });
    const header = JSON.parse(mixed.body.subarray(0, Number(mixed.headers['inference-header-content-length'])).toString());
    assert.deepEqual(header.outputs[0].data, [1, 1]);
    assert.deepEqual(header.outputs[1].parameters, { binary_data_size: 16 });
    assert.deepEqual(parseInferResponse(mixed.body, mixed.headers), res);
  });

  it('reads what model servers answer (KServe nulls, Triton versions)', () => {
    const kserve = parseInferResponse(bodyOf({ model_name: 'm', model_version: null, id: '42', parameters: null, outputs: [{ name: 'output-0', shape: [2], datatype: 'INT64', parameters: null, data: [1, 1] }] }), JSON_HEADERS);
    assert.deepEqual(kserve, { model_name: 'm', id: '42', outputs: [{ name: 'output-0', shape: [2], datatype: 'INT64', data: BigInt64Array.from([1n, 1n]) }] });
    assert.throws(() => parseInferResponse(bodyOf({ error: 'boom' }), JSON_HEADERS), (e: unknown) => e instanceof ProtocolError && e.status === 502 && /boom/.test(e.message));
  });

  it('encodes errors as {"error": message}', () => {
    const e = v2Error(400, 'bad');
    assert.equal(e.status, 400);
    assert.deepEqual(JSON.parse(e.body.toString()), { error: 'bad' });
  });
});
