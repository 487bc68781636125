// The channel protocols' pieces: negotiation, framing both ways, the resize stream, the request's
// options and container, the Statuses kubectl reads its exit code from.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../api/errors.js';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { Channel, ResizeDecoder, chooseContainer, decodeFrame, encodeFrame, exitStatus, negotiate, streamOptions, successStatus, PROTOCOLS } from './remotecommand.js';

const proto = (name: string) => PROTOCOLS.find((p) => p.name === name) ?? assert.fail(name);

describe('negotiate', () => {
  test('takes the first offered protocol that is served, in the client\'s order', () => {
    assert.equal(negotiate(['v5.channel.k8s.io', 'v4.channel.k8s.io'])?.name, 'v5.channel.k8s.io');
    assert.equal(negotiate(['v4.channel.k8s.io', 'v5.channel.k8s.io'])?.name, 'v4.channel.k8s.io');
    assert.equal(negotiate([' portforward.k8s.io', ' v4.base64.channel.k8s.io'])?.name, 'v4.base64.channel.k8s.io');
    for (const n of ['v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io']) assert.equal(negotiate([n])?.name, n);
  });
  test('none offered is the unversioned binary protocol; none served is a refusal', () => {
    assert.equal(negotiate(['']), undefined);
    assert.equal(negotiate([]), undefined);
    assert.equal(negotiate(['v9.channel.k8s.io']), null);
  });
});

describe('frames', () => {
  test('binary: the channel byte, then the bytes', () => {
    const f = encodeFrame(proto('v5.channel.k8s.io'), Channel.stderr, Buffer.from('oops'));
    assert.deepEqual(f, Buffer.from([2, 0x6f, 0x6f, 0x70, 0x73]));
    assert.deepEqual(decodeFrame(proto('v4.channel.k8s.io'), Buffer.from([0, 0x68, 0x69])), { kind: 'data', channel: 0, data: Buffer.from('hi') });
  });
  test('base64: the channel as a digit, the payload in base64, both ways', () => {
    const p = proto('v4.base64.channel.k8s.io');
    assert.equal(encodeFrame(p, Channel.stdout, Buffer.from([0, 255, 10])), '1AP8K');
    assert.deepEqual(decodeFrame(p, Buffer.from('0aGVsbG8=')), { kind: 'data', channel: 0, data: Buffer.from('hello') });
    assert.equal(decodeFrame(p, Buffer.from('0not base64!')).kind, 'invalid');
  });
  test('v5 alone has the close signal, which must name exactly one channel', () => {
    assert.deepEqual(decodeFrame(proto('v5.channel.k8s.io'), Buffer.from([255, 0])), { kind: 'close', channel: 0 });
    assert.equal(decodeFrame(proto('v5.channel.k8s.io'), Buffer.from([255, 0, 1])).kind, 'invalid');
    assert.equal(decodeFrame(proto('v5.channel.k8s.io'), Buffer.from([255])).kind, 'invalid');
    // before v5, 255 is just a channel nobody reads
    assert.deepEqual(decodeFrame(proto('v4.channel.k8s.io'), Buffer.from([255, 0])), { kind: 'data', channel: 255, data: Buffer.from([0]) });
    assert.equal(decodeFrame(proto('v5.channel.k8s.io'), Buffer.alloc(0)).kind, 'empty');
  });
});

describe('ResizeDecoder', () => {
  test('objects split across messages and packed into one', () => {
    const d = new ResizeDecoder();
    assert.deepEqual(d.push(Buffer.from('{"Width":80,')), []);
    assert.deepEqual(d.push(Buffer.from('"Height":24}\n{"Width":100,"Height":30}{"Width"')), [{ width: 80, height: 24 }, { width: 100, height: 30 }]);
    assert.deepEqual(d.push(Buffer.from(':1,"Height":2,"note":"a } in a string"}')), [{ width: 1, height: 2 }]);
  });
  test('what is not a stream of objects is an error', () => {
    assert.throws(() => new ResizeDecoder().push(Buffer.from('80x24')));
    assert.throws(() => new ResizeDecoder().push(Buffer.from('{"Width":1}}')));
  });
});

describe('streamOptions', () => {
  const opts = (q: string) => streamOptions(new URL(`http://x/exec?${q}`));
  test('flags read as kube-apiserver converts them: only absent, 0 and false are false', () => {
    assert.deepEqual(opts('stdin=true&stdout=1&stderr=False'), { stdin: true, stdout: true, stderr: false, tty: false });
    assert.deepEqual(opts('stdout=&tty=yes'), { stdin: false, stdout: true, stderr: false, tty: true });
  });
  test('a terminal has no separate stderr; one stream at least must be asked for', () => {
    assert.deepEqual(opts('stdout=true&stderr=true&tty=true'), { stdin: false, stdout: true, stderr: false, tty: true });
    assert.throws(() => opts('tty=true'), (e: ApiError) => e.code === 400 && e.message === 'you must specify at least 1 of stdin, stdout, stderr');
  });
});

describe('chooseContainer', () => {
  const pod = (names: string[], init: string[] = []) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u', resourceVersion: '1', creationTimestamp: '' },
    spec: { containers: names.map((name) => ({ name, image: 'python' })), initContainers: init.map((name) => ({ name, image: 'python' })) },
  }) as unknown as Pod & StoredObject;
  test('the only container, or the one named (init containers too)', () => {
    assert.equal(chooseContainer(pod(['main']), undefined), 'main');
    assert.equal(chooseContainer(pod(['a', 'b'], ['setup']), 'setup'), 'setup');
  });
  test('errors as kube-apiserver words them', () => {
    assert.throws(() => chooseContainer(pod(['a', 'b'], ['setup']), undefined), { message: 'a container name must be specified for pod p, choose one of: [setup a b]' });
    assert.throws(() => chooseContainer(pod(['a']), 'nope'), { message: 'container nope is not valid for pod p' });
  });
});

test('Statuses on the error channel: kubectl takes the exit code from the ExitCode cause', () => {
  assert.deepEqual(successStatus(), { metadata: {}, status: 'Success' });
  const s = exitStatus(['sh', '-c', 'exit 3'], 3);
  assert.equal(s.status, 'Failure');
  assert.equal(s.reason, 'NonZeroExitCode');
  assert.deepEqual(s.details, { causes: [{ reason: 'ExitCode', message: '3' }] });
  assert.equal(s.message, "command terminated with non-zero exit code: command 'sh -c exit 3' exited with 3");
});
