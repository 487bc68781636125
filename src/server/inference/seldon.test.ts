import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from './tensor.js';
import { encodeSeldonResponse, parseSeldonRequest, seldonError, seldonToTensor } from './seldon.js';

const body = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const is400 = (re: RegExp) => (e: unknown) => e instanceof ProtocolError && e.status === 400 && re.test(e.message);

describe('Seldon prediction messages', () => {
  it('reads ndarray requests and mirrors them in the answer', () => {
    const req = parseSeldonRequest(body({ data: { names: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'], ndarray: [[5.964, 4.006, 2.081, 1.031]] } }), 'application/json');
    assert.equal(req.kind, 'ndarray');
    assert.deepEqual(req.shape, [1, 4]);
    assert.equal(req.names.length, 4);
    const t = seldonToTensor(req, { name: 'x', datatype: 'FP32' });
    assert.deepEqual(t.shape, [1, 4]);
    const res = JSON.parse(encodeSeldonResponse(req, [[0.9548873249364059, 0.04505474761562512, 5.7927447968953825e-05]]).toString());
    assert.deepEqual(res, { data: { names: ['t:0', 't:1', 't:2'], ndarray: [[0.9548873249364059, 0.04505474761562512, 5.7927447968953825e-05]] }, meta: {} });
  });

  it('reads tensor requests and answers with a tensor, echoing the puid', () => {
    const req = parseSeldonRequest(body({ data: { names: ['a', 'b'], tensor: { shape: [2, 2], values: [0, 0, 1, 1] } }, meta: { puid: 'hello' } }));
    assert.equal(req.kind, 'tensor');
    assert.deepEqual(req.rows, [[0, 0], [1, 1]]);
    assert.deepEqual(seldonToTensor(req).datatype, 'FP64');
    const res = JSON.parse(encodeSeldonResponse(req, [[0.87, 0.13, 7.6e-6], [0.1, 0.2, 0.7]]).toString());
    assert.deepEqual(res, { data: { names: ['t:0', 't:1', 't:2'], tensor: { shape: [2, 3], values: [0.87, 0.13, 7.6e-6, 0.1, 0.2, 0.7] } }, meta: { puid: 'hello' } });
    // non-numeric answers are always ndarray; given names win
    const labels = JSON.parse(encodeSeldonResponse(req, ['setosa', 'virginica'], ['class']).toString());
    assert.deepEqual(labels.data, { names: ['class'], ndarray: ['setosa', 'virginica'] });
    // 1-D answers have no default names
    assert.deepEqual(JSON.parse(encodeSeldonResponse(req, [1, 0]).toString()).data, { names: [], tensor: { shape: [2], values: [1, 0] } });
  });

  it('takes the message from a form field or the query', () => {
    const msg = JSON.stringify({ data: { ndarray: [[1, 2]] } });
    const form = parseSeldonRequest(Buffer.from(new URLSearchParams({ json: msg }).toString()), 'application/x-www-form-urlencoded');
    assert.deepEqual(form.rows, [[1, 2]]);
    // curl -d '{...}' labels a JSON body as a form
    assert.deepEqual(parseSeldonRequest(Buffer.from(msg), 'application/x-www-form-urlencoded').rows, [[1, 2]]);
    const query = parseSeldonRequest(Buffer.alloc(0), undefined, new URLSearchParams({ json: msg }));
    assert.deepEqual(query.rows, [[1, 2]]);
  });

  it('reads jsonData, strData and binData and answers in kind', () => {
    const j = parseSeldonRequest(body({ jsonData: { a: 1 } }));
    assert.deepEqual(j, { kind: 'jsonData', names: [], rows: [{ a: 1 }] });
    assert.deepEqual(JSON.parse(encodeSeldonResponse(j, [{ b: 2 }]).toString()), { jsonData: { b: 2 }, meta: {} });
    const s = parseSeldonRequest(body({ strData: 'hi' }));
    assert.deepEqual(JSON.parse(encodeSeldonResponse(s, ['ho']).toString()), { strData: 'ho', meta: {} });
    const b = parseSeldonRequest(body({ binData: Buffer.from('xyz').toString('base64') }));
    assert.deepEqual(b.rows, [Buffer.from('xyz')]);
  });

  it('refuses malformed messages', () => {
    assert.throws(() => parseSeldonRequest(body({ data: { tensor: { shape: [2, 2], values: [1, 2, 3] } } })), is400(/needs 4 values, got 3/));
    assert.throws(() => parseSeldonRequest(body({ data: { names: [] } })), is400(/"ndarray" or "tensor"/));
    assert.throws(() => parseSeldonRequest(body({ meta: {} })), is400(/no "data"/));
    assert.throws(() => parseSeldonRequest(Buffer.from('{')), is400(/invalid JSON/));
    assert.throws(() => parseSeldonRequest(Buffer.from('a=b'), 'application/x-www-form-urlencoded'), is400(/"json" field/));
  });

  it('encodes errors like the Seldon wrapper', () => {
    const e = seldonError(400, 'bad data');
    assert.equal(e.status, 400);
    assert.deepEqual(JSON.parse(e.body.toString()), { status: { status: 1, info: 'bad data', code: -1, reason: 'MICROSERVICE_BAD_DATA' } });
  });
});
