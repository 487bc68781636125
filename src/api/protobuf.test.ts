import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { decodeProtobufObject, goDuration, isProtobufMediaType, readsProtobuf } from './protobuf.js';

// ---- a small protobuf writer, to say what a client would send

const varint = (n: bigint | number): Buffer => {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v ? b | 0x80 : b);
  } while (v);
  return Buffer.from(out);
};
const key = (num: number, wire: number): Buffer => varint((num << 3) | wire);
const bytes = (num: number, b: Buffer): Buffer => Buffer.concat([key(num, 2), varint(b.length), b]);
const str = (num: number, s: string): Buffer => bytes(num, Buffer.from(s));
const msg = (num: number, ...parts: Buffer[]): Buffer => bytes(num, Buffer.concat(parts));
const int = (num: number, n: bigint | number): Buffer => Buffer.concat([key(num, 0), varint(n)]);
const entry = (num: number, k: string, value: Buffer): Buffer => msg(num, str(1, k), value);
const body = (apiVersion: string, kind: string, ...raw: Buffer[]): Buffer =>
  Buffer.concat([Buffer.from('k8s\0', 'latin1'), msg(1, str(1, apiVersion), str(2, kind)), bytes(2, Buffer.concat(raw))]);

const fixtures = JSON.parse(readFileSync(new URL('../../../src/api/testdata/protobuf-kubectl.json', import.meta.url), 'utf8')) as {
  cases: Record<string, { args: string[]; path: string; body: string; json: unknown }>;
};

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    return e;
  }
  assert.fail('no error');
}

describe('protobuf request bodies', () => {
  for (const [name, c] of Object.entries(fixtures.cases)) {
    it(`reads what kubectl sends for \`${name}\` as the JSON it prints under --dry-run=client`, () => {
      assert.deepEqual(decodeProtobufObject(Buffer.from(c.body, 'hex')), c.json);
    });
  }

  it('knows its media type, and reads Kubernetes kinds only', () => {
    assert.ok(isProtobufMediaType('application/vnd.kubernetes.protobuf'));
    assert.ok(isProtobufMediaType('Application/vnd.kubernetes.protobuf; charset=binary'));
    assert.ok(!isProtobufMediaType('application/vnd.kubernetes.protobuf;stream=watch,application/json'.split(',')[1]));
    assert.ok(!isProtobufMediaType(undefined));
    assert.ok(readsProtobuf('v1', 'Pod') && readsProtobuf('batch/v1', 'Job') && readsProtobuf('policy/v1', 'Eviction'));
    assert.ok(!readsProtobuf('kubeflow.org/v1', 'PyTorchJob'));
  });

  it('writes a Pod as Go writes its JSON: omitempty, pointers, inline handlers, IntOrString, Quantity, Time', () => {
    const pod = decodeProtobufObject(body('v1', 'Pod',
      msg(1, str(1, 'p'), str(2, ''), int(7, 0), msg(8, int(1, 1700000000)), entry(11, 'b', str(2, '2')), entry(11, 'a', str(2, '1'))),
      msg(2,
        msg(2,
          str(1, 'main'),
          str(3, 'python'), str(3, '-c'),
          msg(6, int(3, 8080), str(4, 'TCP'), int(2, 0)),
          msg(8, entry(1, 'cpu', msg(2, str(1, '500m'))), entry(2, 'memory', msg(2))),
          msg(11, msg(1, msg(2, str(1, '/healthz'), msg(2, int(1, 0), int(2, 8080)))), int(4, 5)),
          msg(10, msg(1, msg(3, msg(1, int(1, 1), str(3, 'http'))))),
          int(16, 0)),
        int(21, 0), int(4, 0), msg(14, int(4, 1), bytes(4, Buffer.concat([varint(2), varint(3)])))),
    ));
    assert.deepEqual(pod, {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', creationTimestamp: '2023-11-14T22:13:20Z', labels: { a: '1', b: '2' } },
      spec: {
        containers: [{
          name: 'main',
          command: ['python', '-c'],
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { limits: { cpu: '500m' }, requests: { memory: '0' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 },
          livenessProbe: { tcpSocket: { port: 'http' } },
        }],
        // a pointer keeps its false and 0; `stdin: false` (omitempty) is left out
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        // supplementalGroups came once unpacked and once packed
        securityContext: { supplementalGroups: [1, 2, 3] },
      },
      status: {},
    });
    assert.deepEqual(Object.keys(pod.metadata as object), ['name', 'creationTimestamp', 'labels'], 'Go sorts map keys, not fields');
  });

  it('writes Time to the second, MicroTime to the microsecond, and a zero time as null (or not at all under omitzero)', () => {
    const event = decodeProtobufObject(body('v1', 'Event',
      msg(1, str(1, 'e'), msg(8)),
      msg(2, str(1, 'Pod'), str(3, 'p')),
      msg(6, int(1, 1700000000), int(2, 999_999_999)),
      msg(10, int(1, 1700000000), int(2, 123_456_789)),
      msg(11, int(1, 2), msg(2, int(1, -62135596800))),
    ));
    assert.deepEqual(event.metadata, { name: 'e' });
    assert.equal(event.firstTimestamp, '2023-11-14T22:13:20Z');
    assert.equal(event.lastTimestamp, null);
    assert.equal(event.eventTime, '2023-11-14T22:13:20.123456Z');
    assert.deepEqual(event.series, { count: 2, lastObservedTime: null });
    // no omitempty on these two: Go writes their empty strings
    assert.equal(event.reportingComponent, '');
    assert.equal(event.reportingInstance, '');
  });

  it('reads bytes as base64, empty bytes in a map as "", named slices as arrays, and fields whose JSON name differs', () => {
    const secret = decodeProtobufObject(body('v1', 'Secret', msg(1, str(1, 's')), entry(2, 'k', bytes(2, Buffer.from([0, 255]))), entry(2, 'e', Buffer.alloc(0)), str(3, 'Opaque')));
    assert.deepEqual(secret, { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's' }, data: { e: '', k: 'AP8=' }, type: 'Opaque' });
    const review = decodeProtobufObject(body('authentication.k8s.io/v1', 'TokenReview',
      msg(1, str(1, 'r')),
      msg(2, str(1, 'tok')),
      msg(3, int(1, 1), msg(2, str(1, 'alice'), str(2, 'u-1'), entry(4, 'scopes', msg(2, str(1, 'a'), str(1, 'b'))), entry(4, 'none', msg(2))))));
    assert.deepEqual(review.spec, { token: 'tok' });
    assert.deepEqual(review.status, { authenticated: true, user: { username: 'alice', uid: 'u-1', extra: { none: null, scopes: ['a', 'b'] } } });
    // BoundObjectReference's uid is `uID` in the .proto
    const token = decodeProtobufObject(body('authentication.k8s.io/v1', 'TokenRequest', msg(2, int(4, 600), msg(3, str(1, 'Pod'), str(3, 'p'), str(4, 'u-2')))));
    assert.deepEqual(token.spec, { audiences: null, expirationSeconds: 600, boundObjectRef: { kind: 'Pod', name: 'p', uid: 'u-2' } });
  });

  it('reads an Eviction with its DeleteOptions, and DeleteOptions sent as any group-version\'s', () => {
    const eviction = decodeProtobufObject(body('policy/v1', 'Eviction', msg(1, str(1, 'p'), str(3, 'ns')), msg(2, int(1, 0), str(5, 'All'))));
    assert.deepEqual(eviction, { kind: 'Eviction', apiVersion: 'policy/v1', metadata: { name: 'p', namespace: 'ns' }, deleteOptions: { gracePeriodSeconds: 0, dryRun: ['All'] } });
    const opts = decodeProtobufObject(body('batch/v1', 'DeleteOptions', str(4, 'Foreground')));
    assert.deepEqual(opts, { kind: 'DeleteOptions', apiVersion: 'batch/v1', propagationPolicy: 'Foreground' });
  });

  it('takes a missing kind from the path, and ignores fields it does not know, as Go\'s unmarshalers do', () => {
    const cm = decodeProtobufObject(body('', '', msg(1, str(1, 'c')), entry(2, 'a', str(2, 'b')), str(99, 'future')), { apiVersion: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(cm, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data: { a: 'b' } });
  });

  it('refuses what kube-apiserver refuses, 400 with its words', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod' };
    let e = refusal(() => decodeProtobufObject(Buffer.from('{"kind":"Pod"}'), pod));
    assert.equal(e.code, 400);
    assert.equal(e.message, 'the object provided is unrecognized (must be of type Pod): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
    e = refusal(() => decodeProtobufObject(body('v1', 'Pod', msg(1, str(1, 'p'))).subarray(0, -2), pod));
    assert.equal(e.message, 'the object provided is unrecognized (must be of type Pod): unexpected EOF');
    e = refusal(() => decodeProtobufObject(body('v1', 'Pod', msg(1, int(1, 7))), pod));
    assert.equal(e.message, 'Pod in version "v1" cannot be handled as a Pod: proto: wrong wireType = 0 for field name');
    e = refusal(() => decodeProtobufObject(body('v1', 'ReplicationController'), pod));
    assert.equal(e.message, 'ReplicationController in version "v1" cannot be handled as a Pod: no kind "ReplicationController" is registered for version "v1"');
    // a custom resource is unstructured in kube-apiserver, which has no protobuf form
    e = refusal(() => decodeProtobufObject(body('kubeflow.org/v1', 'PyTorchJob', msg(1, str(1, 'j'))), { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob' }));
    assert.equal(e.code, 400);
    assert.equal(e.message, 'PyTorchJob in version "v1" cannot be handled as a PyTorchJob: object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message');
    e = refusal(() => decodeProtobufObject(Buffer.from('k8s\0', 'latin1')));
    assert.equal(e.message, 'the object provided is unrecognized: empty body');
  });
});

describe('goDuration', () => {
  it('prints as Go prints a time.Duration', () => {
    const cases: [bigint, string][] = [[0n, '0s'], [1n, '1ns'], [1500n, '1.5µs'], [2_000_000n, '2ms'], [1_500_000_000n, '1.5s'], [90_000_000_000n, '1m30s'], [3_600_000_000_000n, '1h0m0s'], [-1_000_000_000n, '-1s'], [3_723_000_000_001n, '1h2m3.000000001s']];
    for (const [ns, text] of cases) assert.equal(goDuration(ns), text, String(ns));
  });
});
