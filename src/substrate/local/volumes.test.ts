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

it('a projected volume as the ServiceAccount admission plugin adds it: the token asked for, the cluster CA, the namespace', async () => {
  const { mkdtempSync, readFileSync, rmSync, statSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { prepareVolumes } = await import('./volumes.js');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-projected-'));
  try {
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'p', namespace: 'team', uid: 'u1', labels: { app: 'x', tier: 'a"b' } },
      spec: {
        containers: [{ name: 'main', image: 'python:3', resources: { limits: { memory: '64Mi' } } }],
        volumes: [{
          name: 'kube-api-access-abcde',
          projected: {
            defaultMode: 0o644,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        }, {
          name: 'info',
          downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'mem', resourceFieldRef: { containerName: 'main', resource: 'limits.memory', divisor: '1Mi' } }] },
        }],
      },
    };
    const asked: unknown[] = [];
    const written: string[] = [];
    const vols = await prepareVolumes(pod as never, dir, {
      configMap: async (name) => (name === 'kube-root-ca.crt' ? { data: { 'ca.crt': 'PEM' } } as never : undefined),
      secret: async () => undefined,
      claim: async () => undefined,
      claimDir: () => '',
      serviceAccountToken: async (req) => {
        asked.push(req);
        return { token: 'jwt', expirationTimestamp: new Date(Date.now() + 3607_000).toISOString(), expirationSeconds: 3607 };
      },
      onToken: (t) => written.push(t.file),
    });
    const sa = vols.get('kube-api-access-abcde');
    assert.equal(sa?.readOnly, true);
    assert.equal(readFileSync(join(sa?.dir ?? '', 'token'), 'utf8'), 'jwt');
    assert.equal(statSync(join(sa?.dir ?? '', 'token')).mode & 0o777, 0o644);
    assert.equal(readFileSync(join(sa?.dir ?? '', 'ca.crt'), 'utf8'), 'PEM');
    assert.equal(readFileSync(join(sa?.dir ?? '', 'namespace'), 'utf8'), 'team');
    assert.deepEqual(asked, [{ expirationSeconds: 3607 }]);
    assert.deepEqual(written, [join(sa?.dir ?? '', 'token')]);
    const info = vols.get('info')?.dir ?? '';
    assert.equal(readFileSync(join(info, 'labels'), 'utf8'), 'app="x"\ntier="a\\"b"');
    assert.equal(readFileSync(join(info, 'mem'), 'utf8'), '64');
    // a node without a way to ask for tokens refuses the source, naming the volume
    await assert.rejects(prepareVolumes(pod as never, dir, { configMap: async () => ({ data: { 'ca.crt': 'PEM' } }) as never, secret: async () => undefined, claim: async () => undefined, claimDir: () => '' }),
      /projected volume "kube-api-access-abcde" source 0: this node cannot issue service-account tokens/);
    // a refused TokenRequest is a mount failure saying why
    await assert.rejects(prepareVolumes(pod as never, dir, {
      configMap: async () => ({ data: { 'ca.crt': 'PEM' } }) as never, secret: async () => undefined, claim: async () => undefined, claimDir: () => '',
      serviceAccountToken: async () => { throw new Error('serviceaccounts "default" is forbidden'); },
    }), /failed to fetch token: serviceaccounts "default" is forbidden/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('secret and projected volumes go to the runtime directory (memory); others, and one a server left on disk, stay on disk', async () => {
  const { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { prepareVolumes } = await import('./volumes.js');
  const root = mkdtempSync(join(tmpdir(), 'skiff-memory-volumes-'));
  const podDir = join(root, 'disk', 'pods', 'u1');
  const memory = join(root, 'shm', 'pods', 'u1');
  try {
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team', uid: 'u1' },
      spec: {
        containers: [{ name: 'main', image: 'python:3' }],
        volumes: [
          { name: 'creds', secret: { secretName: 's3' } },
          { name: 'kube-api-access-x', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
          { name: 'settings', configMap: { name: 'cfg' } },
          { name: 'scratch', emptyDir: {} },
          { name: 'old', secret: { secretName: 's3' } },
        ],
      },
    };
    // a volume an earlier server wrote on disk, which a running container may have bound
    mkdirSync(join(podDir, 'volumes', 'old'), { recursive: true });
    const vols = await prepareVolumes(pod as never, podDir, {
      configMap: async () => ({ data: { mode: 'fast' } }) as never,
      secret: async () => ({ data: { key: Buffer.from('s3cr3t').toString('base64') } }) as never,
      claim: async () => undefined,
      claimDir: () => '',
      serviceAccountToken: async () => ({ token: 'jwt', expirationTimestamp: new Date(Date.now() + 3600_000).toISOString(), expirationSeconds: 3600 }),
    }, memory);
    assert.equal(vols.get('creds')?.dir, join(memory, 'volumes', 'creds'));
    assert.equal(readFileSync(join(memory, 'volumes', 'creds', 'key'), 'utf8'), 's3cr3t');
    assert.equal(readFileSync(join(memory, 'volumes', 'kube-api-access-x', 'token'), 'utf8'), 'jwt');
    assert.equal(existsSync(join(podDir, 'volumes', 'creds')), false, 'the secret never on disk');
    assert.equal(existsSync(join(podDir, 'volumes', 'kube-api-access-x')), false, 'the token never on disk');
    assert.equal(vols.get('settings')?.dir, join(podDir, 'volumes', 'settings'));
    assert.equal(vols.get('scratch')?.dir, join(podDir, 'volumes', 'scratch'));
    assert.equal(vols.get('old')?.dir, join(podDir, 'volumes', 'old'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
