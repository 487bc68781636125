import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../api/errors.js';
import { decodeProtobuf } from './protobuf.js';

// a small protobuf writer for the test bodies, from the wire format's definition
function varint(n: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}
const bytes = (no: number, b: Buffer | string): Buffer => {
  const buf = typeof b === 'string' ? Buffer.from(b) : b;
  return Buffer.concat([varint((no << 3) | 2), varint(buf.length), buf]);
};
const num = (no: number, n: number | bigint): Buffer => Buffer.concat([varint(no << 3), varint(n)]);
const msg = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer =>
  Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytes(1, msg(bytes(1, apiVersion), bytes(2, kind))), bytes(2, raw), bytes(3, ''), bytes(4, '')]);

describe('protobuf bodies', () => {
  it('decodes a ConfigMap: metadata, a string map, a bytes map, and leaves unset fields out', () => {
    const objectMeta = msg(bytes(1, 'settings'), bytes(2, ''), bytes(3, 'default'), num(7, 0), bytes(8, msg()), bytes(11, msg(bytes(1, 'app'), bytes(2, 'web'))));
    const raw = msg(bytes(1, objectMeta), bytes(2, msg(bytes(1, 'a'), bytes(2, '1'))), bytes(2, msg(bytes(1, 'b'), bytes(2, ''))), bytes(3, msg(bytes(1, 'bin'), bytes(2, Buffer.from([0, 1, 2])))));
    assert.deepEqual(decodeProtobuf(envelope('v1', 'ConfigMap', raw)), {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default', labels: { app: 'web' } },
      data: { a: '1', b: '' },
      binaryData: { bin: 'AAEC' },
    });
  });

  it('decodes a Pod: repeated messages, inlined fields, int-or-string, quantities, pointers set to zero', () => {
    const port = msg(bytes(1, 'http'), num(3, 8080), bytes(4, 'TCP'));
    const probe = msg(bytes(1, msg(bytes(2, msg(bytes(1, '/healthz'), bytes(2, msg(num(1, 1), bytes(3, 'http'))))))), num(2, 0));
    const resources = msg(bytes(1, msg(bytes(1, 'cpu'), bytes(2, msg(bytes(1, '500m'))))));
    const container = msg(bytes(1, 'main'), bytes(2, 'python'), bytes(3, 'sleep'), bytes(3, '1'), bytes(6, port), bytes(8, resources), bytes(10, probe));
    const volume = msg(bytes(1, 'scratch'), bytes(2, msg(bytes(2, msg()))));
    const spec = msg(bytes(1, volume), bytes(2, container), bytes(3, 'Never'), num(4, 0));
    const created = msg(num(1, 1_700_000_000));
    const raw = msg(bytes(1, msg(bytes(1, 'p'), bytes(8, created))), bytes(2, spec), bytes(3, msg()));
    const pod = decodeProtobuf(envelope('v1', 'Pod', raw)) as any;
    assert.equal(pod.metadata.creationTimestamp, '2023-11-14T22:13:20Z');
    assert.deepEqual(pod.spec.volumes, [{ name: 'scratch', emptyDir: {} }]);
    assert.equal(pod.spec.restartPolicy, 'Never');
    assert.equal(pod.spec.terminationGracePeriodSeconds, 0);
    const c = pod.spec.containers[0];
    assert.deepEqual(c.command, ['sleep', '1']);
    assert.deepEqual(c.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    assert.deepEqual(c.resources, { limits: { cpu: '500m' } });
    assert.deepEqual(c.livenessProbe.httpGet, { path: '/healthz', port: 'http' });
  });

  it('decodes DeleteOptions whatever its apiVersion says, with a zero grace period kept', () => {
    const raw = msg(num(1, 0), bytes(4, 'Foreground'), bytes(5, 'All'));
    assert.deepEqual(decodeProtobuf(envelope('meta.k8s.io/v1', 'DeleteOptions', raw)), {
      apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, propagationPolicy: 'Foreground', dryRun: ['All'],
    });
  });

  it('refuses what it cannot read: a kind it has no table for (415), a broken body (400)', () => {
    assert.throws(() => decodeProtobuf(envelope('kubeflow.org/v1', 'PyTorchJob', msg())), (e) => e instanceof ApiError && e.code === 415);
    assert.throws(() => decodeProtobuf(Buffer.from('{"kind":"Pod"}')), (e) => e instanceof ApiError && e.code === 400);
    assert.throws(() => decodeProtobuf(envelope('v1', 'ConfigMap', Buffer.from([0x0a, 0x05, 0x01]))), (e) => e instanceof ApiError && e.code === 400 && /runs past the end/.test(e.message));
  });
});
