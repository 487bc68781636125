import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Tensor } from './tensor.js';
import {
  ProtocolError, batchCompatible, concatRows, dataFromBytes, dataFromJson, dataToBytes, dataToJson, elementCount,
  inferDatatype, nestedShape, nestedToTensor, splitRows, tensorToNested,
} from './tensor.js';

function f32(name: string, shape: number[], values: number[]): Tensor {
  return { name, datatype: 'FP32', shape, data: Float32Array.from(values) };
}

describe('tensor JSON data', () => {
  it('reads nested and flat data alike', () => {
    const nested = dataFromJson('input "x"', 'FP32', [2, 2], [[1, 2], [3, 4]]);
    const flat = dataFromJson('input "x"', 'FP32', [2, 2], [1, 2, 3, 4]);
    assert.deepEqual(nested, flat);
    assert.ok(flat instanceof Float32Array);
  });

  it('names the input and the counts when the element count is wrong', () => {
    assert.throws(() => dataFromJson('input "input-0"', 'FP32', [2, 4], [1, 2, 3, 4, 5, 6, 7]),
      (e: unknown) => e instanceof ProtocolError && e.status === 400 && e.message === 'input "input-0": shape [2,4] needs 8 elements, got 7');
    assert.throws(() => dataFromJson('input "a"', 'INT32', [2], [[1, 2], [3]]), /needs 2 elements, got 3/);
  });

  it('checks integers and their ranges', () => {
    assert.throws(() => dataFromJson('input "a"', 'INT8', [1], [128]), /element 0 \(128\) is not a valid INT8 value/);
    assert.throws(() => dataFromJson('input "a"', 'UINT8', [1], [-1]), /UINT8/);
    assert.throws(() => dataFromJson('input "a"', 'INT32', [2], [1, 1.5]), /element 1 \(1.5\)/);
    assert.throws(() => dataFromJson('input "a"', 'INT64', [1], ['x']), /INT64/);
    assert.deepEqual(dataFromJson('input "a"', 'INT64', [2], [-5, '9223372036854775807']), BigInt64Array.from([-5n, 9223372036854775807n]));
    assert.deepEqual(dataFromJson('input "a"', 'UINT32', [1], [4294967295]), Uint32Array.from([4294967295]));
  });

  it('checks booleans, strings and numbers', () => {
    assert.deepEqual(dataFromJson('input "b"', 'BOOL', [3], [true, false, true]), Uint8Array.from([1, 0, 1]));
    assert.throws(() => dataFromJson('input "b"', 'BOOL', [1], [1]), /true or false/);
    assert.throws(() => dataFromJson('input "s"', 'BYTES', [1], [1]), /a string/);
    assert.throws(() => dataFromJson('input "f"', 'FP64', [1], ['1.0']), /a number/);
  });

  it('refuses FP16/BF16 in JSON, pointing at the binary extension', () => {
    for (const dt of ['FP16', 'BF16'] as const) {
      assert.throws(() => dataFromJson('input "h"', dt, [1], [1]), /binary tensor data extension/);
    }
  });

  it('writes JSON values back (INT64 as numbers, BOOL as booleans, BYTES as strings)', () => {
    assert.deepEqual(dataToJson('INT64', BigInt64Array.from([1n, -2n])), [1, -2]);
    assert.deepEqual(dataToJson('BOOL', Uint8Array.from([1, 0])), [true, false]);
    assert.deepEqual(dataToJson('BYTES', [Buffer.from('hé')]), ['hé']);
    assert.deepEqual(dataToJson('FP64', Float64Array.from([1, NaN])), [1, null]);
    assert.deepEqual(tensorToNested(f32('x', [2, 3], [1, 2, 3, 4, 5, 6])), [[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(tensorToNested(f32('x', [], [7])), 7);
  });

  it('builds tensors from nested rows', () => {
    assert.deepEqual(nestedShape('x', [[1, 2], [3, 4], [5, 6]]), [3, 2]);
    assert.throws(() => nestedShape('input "x"', [[1, 2], [3]]), /ragged/);
    assert.equal(inferDatatype('x', [[1, 2]]), 'INT64');
    assert.equal(inferDatatype('x', [[1, 2.5]]), 'FP64');
    assert.equal(inferDatatype('x', ['a']), 'BYTES');
    assert.throws(() => inferDatatype('x', [1, 'a']), /mixes/);
    const t = nestedToTensor('input-0', [[6.8, 2.8], [6.0, 3.4]], 'FP32');
    assert.deepEqual(t.shape, [2, 2]);
    assert.ok(t.data instanceof Float32Array);
  });
});

describe('tensor binary data', () => {
  it('reads aligned data as a view and unaligned data as a copy', () => {
    const body = Buffer.alloc(17);
    body.writeFloatLE(1.5, 0);
    body.writeFloatLE(2.5, 4);
    const aligned = dataFromBytes('x', 'FP32', [2], body.subarray(0, 8)) as Float32Array;
    assert.deepEqual([...aligned], [1.5, 2.5]);
    assert.equal(aligned.buffer, body.buffer);
    const odd = Buffer.alloc(9);
    odd.writeFloatLE(3.5, 1);
    odd.writeFloatLE(4.5, 5);
    const copied = dataFromBytes('x', 'FP32', [2], odd.subarray(1)) as Float32Array;
    assert.deepEqual([...copied], [3.5, 4.5]);
    assert.notEqual(copied.buffer, odd.buffer);
  });

  it('checks sizes and BYTES framing', () => {
    assert.throws(() => dataFromBytes('input "x"', 'UINT32', [2, 2], Buffer.alloc(15)), /binary_data_size 15 does not match shape \[2,2\] of UINT32 \(16 bytes\)/);
    const two = dataToBytes('BYTES', [Buffer.from('ab'), Buffer.from('')]);
    assert.deepEqual([...two], [2, 0, 0, 0, 0x61, 0x62, 0, 0, 0, 0]);
    assert.deepEqual((dataFromBytes('x', 'BYTES', [2], two) as Buffer[]).map(String), ['ab', '']);
    assert.throws(() => dataFromBytes('input "s"', 'BYTES', [3], two), /needs 3 elements, got 2/);
    assert.throws(() => dataFromBytes('input "s"', 'BYTES', [1], Buffer.from([9, 0, 0, 0, 1])), /declares 9 bytes/);
    assert.throws(() => dataFromBytes('input "s"', 'BYTES', [1], Buffer.from([9, 0])), /length prefix/);
  });
});

describe('batching tensors', () => {
  it('concatenates along dim 0 and splits back', () => {
    const a = f32('x', [1, 2], [1, 2]);
    const b = f32('x', [2, 2], [3, 4, 5, 6]);
    const c = concatRows([a, b]);
    assert.deepEqual(c.shape, [3, 2]);
    assert.deepEqual([...(c.data as Float32Array)], [1, 2, 3, 4, 5, 6]);
    const [a2, b2] = splitRows(c, [1, 2]);
    assert.deepEqual(a2, a);
    assert.deepEqual(b2, b);
    const s = concatRows([
      { name: 's', datatype: 'BYTES', shape: [1], data: [Buffer.from('a')] },
      { name: 's', datatype: 'BYTES', shape: [2], data: [Buffer.from('b'), Buffer.from('c')] },
    ]);
    assert.deepEqual((s.data as Buffer[]).map(String), ['a', 'b', 'c']);
    assert.deepEqual(splitRows(s, [2, 1]).map((t) => (t.data as Buffer[]).map(String)), [['a', 'b'], ['c']]);
  });

  it('refuses mismatched parts', () => {
    assert.throws(() => concatRows([f32('x', [1, 2], [1, 2]), f32('x', [1, 3], [1, 2, 3])]), (e: unknown) => e instanceof ProtocolError && e.status === 400);
    assert.throws(() => concatRows([f32('x', [1], [1]), f32('y', [1], [1])]), /cannot batch input "y"/);
    assert.throws(() => concatRows([f32('x', [1], [1]), { name: 'x', datatype: 'FP64', shape: [1], data: Float64Array.from([1]) }]), /FP64 with FP32/);
    assert.throws(() => splitRows(f32('x', [2], [1, 2]), [1, 2]), /cannot be split/);
  });

  it('tells which requests can share a batch', () => {
    const r1 = [f32('x', [1, 2], [1, 2]), f32('y', [1], [1])];
    const r2 = [f32('y', [3], [1, 2, 3]), f32('x', [3, 2], [1, 2, 3, 4, 5, 6])];
    assert.equal(batchCompatible(r1, r2), true);
    assert.equal(batchCompatible(r1, [f32('x', [1, 3], [1, 2, 3]), f32('y', [1], [1])]), false);
    assert.equal(batchCompatible(r1, [f32('x', [1, 2], [1, 2])]), false);
    assert.equal(elementCount([]), 1);
  });
});
