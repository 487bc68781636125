import assert from 'node:assert/strict';
import { it } from 'node:test';
import { containerBinds } from './volumes.js';

it('a container\'s volume binds go shallowest mount point first, keeping the listed order among equals', () => {
  const volumes = new Map([
    ['ckpt', { dir: '/h/ckpt', readOnly: false }],
    ['metrics', { dir: '/h/metrics', readOnly: false }],
    ['a', { dir: '/h/a', readOnly: true }],
    ['b', { dir: '/h/b', readOnly: false }],
  ]);
  const binds = containerBinds({
    name: 'c', image: 'x',
    volumeMounts: [
      { name: 'ckpt', mountPath: '/var/log/katib/checkpoints/' },
      { name: 'metrics', mountPath: '/var/log/katib' },
      { name: 'missing', mountPath: '/nowhere' },
      { name: 'b', mountPath: '/data/b' },
      { name: 'a', mountPath: '/data/a', readOnly: false },
    ],
  }, volumes);
  assert.deepEqual(binds, [
    { source: '/h/b', target: '/data/b', readOnly: false },
    { source: '/h/a', target: '/data/a', readOnly: true },
    { source: '/h/metrics', target: '/var/log/katib', readOnly: false },
    { source: '/h/ckpt', target: '/var/log/katib/checkpoints/', readOnly: false },
  ]);
});
