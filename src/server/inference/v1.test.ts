import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { conformanceDir } from '../../conformance-path.js';
import { ProtocolError } from './tensor.js';
import { batchableInstances, encodeV1Response, instancesToTensor, parseV1Request, tensorToInstances, v1Error } from './v1.js';

const body = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const is400 = (re: RegExp) => (e: unknown) => e instanceof ProtocolError && e.status === 400 && re.test(e.message);

describe('KServe V1 bodies', () => {
  it('takes instances or inputs, inputs winning', () => {
    assert.deepEqual(parseV1Request(body({ instances: [[1, 2]] })), { instances: [[1, 2]], key: 'instances' });
    assert.deepEqual(parseV1Request(body({ inputs: [[3]], instances: [[1, 2]] }), 'application/json; charset=utf-8'), { instances: [[3]], key: 'inputs' });
    // curl's default form content type still carries JSON
    assert.equal(parseV1Request(body({ instances: ['a'] }), 'application/x-www-form-urlencoded').key, 'instances');
  });

  it('refuses bodies without a list', () => {
    assert.throws(() => parseV1Request(body({ data: [] })), is400(/neither "instances" nor "inputs"/));
    assert.throws(() => parseV1Request(body({ instances: 3 })), is400(/"instances" must be a list/));
    assert.throws(() => parseV1Request(body({ inputs: {}, instances: [] })), is400(/"inputs" must be a list/));
    assert.throws(() => parseV1Request(body([1, 2])), is400(/JSON object/));
    assert.throws(() => parseV1Request(Buffer.from('{')), is400(/invalid JSON/));
  });

  it('the batcher merges only plain {"instances": [...]} bodies; TF Serving\'s columns and signatures go as they came', () => {
    assert.deepEqual(batchableInstances(body({ instances: [[1, 2], { pixels: [3] }] })), [[1, 2], { pixels: [3] }]);
    for (const b of [{ inputs: [[1]] }, { inputs: { pixels: [[1]] } }, { signature_name: 'other', instances: [[1]] }, { instances: 3 }, [1], { data: [] }]) {
      assert.equal(batchableInstances(body(b)), undefined, JSON.stringify(b));
    }
    assert.equal(batchableInstances(Buffer.from('{"instances": [')), undefined);
  });

  it('turns numeric rows into a tensor and outputs back into predictions', () => {
    const t = instancesToTensor([[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]], { name: 'x', datatype: 'FP32' });
    assert.deepEqual(t.shape, [2, 4]);
    assert.equal(t.datatype, 'FP32');
    assert.equal(instancesToTensor([[1, 2]]).datatype, 'INT64');
    assert.throws(() => instancesToTensor([[1, 2], [3]]), is400(/ragged/));
    assert.throws(() => instancesToTensor([{ a: 1 }]), is400(/objects/));
    assert.deepEqual(tensorToInstances({ name: 'y', datatype: 'INT64', shape: [2], data: BigInt64Array.from([1n, 0n]) }), [1, 0]);
    assert.deepEqual(tensorToInstances({ name: 'y', datatype: 'FP64', shape: [2, 1], data: Float64Array.from([0.5, 1]) }), [[0.5], [1]]);
    assert.deepEqual(JSON.parse(encodeV1Response([1, 1]).body.toString()), { predictions: [1, 1] });
    assert.deepEqual(JSON.parse(encodeV1Response([1], { batchId: 'b', message: '' }).body.toString()), { batchId: 'b', message: '', predictions: [1] });
    assert.deepEqual(JSON.parse(v1Error(404, 'Model with name x does not exist.').body.toString()), { error: 'Model with name x does not exist.' });
  });

  it('reads the V1 samples of the conformance corpus', (t) => {
    const root = join(conformanceDir(), 'kserve', 'samples');
    if (!existsSync(root)) { t.skip('conformance corpus not found'); return; }
    const iris = parseV1Request(readFileSync(join(root, 'v1beta1/sklearn/v1/iris-input.json')));
    assert.deepEqual(instancesToTensor(iris.instances, { datatype: 'FP32' }).shape, [2, 4]);
    const batcher = parseV1Request(readFileSync(join(root, 'batcher/basic/input.json')));
    assert.deepEqual(instancesToTensor(batcher.instances, { datatype: 'FP32' }).shape, [1, 3, 32, 32]);
    const mixed = parseV1Request(readFileSync(join(root, 'v1beta1/sklearn/v1/sklearn-mixedtype-model/mixedtype-input.json')));
    assert.equal(mixed.instances.length, 1);
  });
});
