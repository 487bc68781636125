import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../api/core-types.js';
import { hostPathOf, readFilesAt } from './pod-files.js';

const pod = {
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' },
  spec: {
    containers: [{
      name: 'main', image: 'x',
      volumeMounts: [
        { name: 'metrics-volume', mountPath: '/var/log/katib' },
        { name: 'deep', mountPath: '/var/log/katib/deep/' },
        { name: 'data', mountPath: '/data', subPath: 'sub' },
      ],
    }, { name: 'other', image: 'x' }],
    volumes: [{ name: 'metrics-volume', emptyDir: {} }, { name: 'deep', hostPath: { path: '/srv/deep' } }, { name: 'data', persistentVolumeClaim: { claimName: 'c' } }],
  },
} as unknown as Pod;
const dirs = (hostVisible: boolean) => ({ podDir: '/pods/uid', claimDir: (ns: string, c: string) => `/claims/${ns}/${c}`, hostVisible });

describe('pod files', () => {
  it('maps a path to the deepest volume mounted over it', () => {
    assert.equal(hostPathOf(pod, 'main', '/var/log/katib/metrics.log', dirs(false)), '/pods/uid/volumes/metrics-volume/metrics.log');
    assert.equal(hostPathOf(pod, 'main', '/var/log/katib', dirs(false)), '/pods/uid/volumes/metrics-volume');
    assert.equal(hostPathOf(pod, 'main', '/var/log/katib/deep/x/y', dirs(false)), '/srv/deep/x/y');
    assert.equal(hostPathOf(pod, 'main', '/data/a.json', dirs(false)), '/claims/ns/c/sub/a.json');
    // not a volume: the container's own filesystem, the host's only without a sandbox
    assert.equal(hostPathOf(pod, 'main', '/var/log/katibx/m', dirs(false)), undefined);
    assert.equal(hostPathOf(pod, 'other', '/var/log/katib/m', dirs(true)), '/var/log/katib/m');
    assert.throws(() => hostPathOf(pod, 'nope', '/x', dirs(true)), /container nope/);
  });
  it('reads a file, a directory tree, or nothing', () => {
    const root = mkdtempSync(join(tmpdir(), 'podfiles-'));
    try {
      mkdirSync(join(root, 'train'), { recursive: true });
      writeFileSync(join(root, 'train', 'events.1'), 'b');
      writeFileSync(join(root, 'a.log'), 'a');
      const all = readFilesAt(root, '/var/log/katib');
      assert.deepEqual(all.map((f) => [f.path, f.data.toString()]), [['/var/log/katib/a.log', 'a'], ['/var/log/katib/train/events.1', 'b']]);
      assert.deepEqual(readFilesAt(join(root, 'a.log'), '/m/a.log').map((f) => f.path), ['/m/a.log']);
      assert.deepEqual(readFilesAt(join(root, 'none'), '/m/none'), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
