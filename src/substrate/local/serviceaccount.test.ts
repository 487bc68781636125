import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { automounts, inClusterEnv, resolvedMountPath, serviceAccountBind, serviceAccountMountPath } from './serviceaccount.js';

const pod = (spec: Partial<Pod['spec']> = {}): Pod & StoredObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team-a', uid: 'u', resourceVersion: '1', creationTimestamp: '' },
  spec: { containers: [{ name: 'main', image: 'python' }], ...spec },
}) as Pod & StoredObject;

describe('the in-cluster contract', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-sa-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives every container the kubernetes Service\'s variables, as kubelet names them', () => {
    assert.deepEqual(inClusterEnv({ host: '127.0.0.2', port: 6443 }, 'http://127.0.0.2:8080'), {
      KUBERNETES_SERVICE_HOST: '127.0.0.2', KUBERNETES_SERVICE_PORT: '6443', KUBERNETES_SERVICE_PORT_HTTPS: '6443',
      KUBERNETES_PORT: 'tcp://127.0.0.2:6443', KUBERNETES_PORT_6443_TCP: 'tcp://127.0.0.2:6443', KUBERNETES_PORT_6443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_6443_TCP_PORT: '6443', KUBERNETES_PORT_6443_TCP_ADDR: '127.0.0.2', KF_PIPELINES_ENDPOINT: 'http://127.0.0.2:8080',
      KF_PIPELINES_SA_TOKEN_PATH: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    });
    assert.deepEqual(inClusterEnv(undefined, undefined), {});
  });

  it('mounts the token unless the Pod, or else its service account, says not to', () => {
    assert.equal(automounts(pod()), true);
    assert.equal(automounts(pod({ automountServiceAccountToken: false })), false);
    const sa = { automountServiceAccountToken: false } as unknown as StoredObject;
    assert.equal(automounts(pod(), sa), false);
    assert.equal(automounts(pod({ automountServiceAccountToken: true }), sa), true);
  });

  it('writes token, namespace and ca.crt once per Pod and binds them read-only', () => {
    let issued = 0;
    const contract = { host: '127.0.0.2', port: 6443, caPem: 'CA PEM', token: () => `token-${++issued}` };
    const b = serviceAccountBind(pod(), dir, contract);
    assert.equal(readFileSync(join(b.source, 'token'), 'utf8'), 'token-1');
    assert.equal(readFileSync(join(b.source, 'namespace'), 'utf8'), 'team-a');
    assert.equal(readFileSync(join(b.source, 'ca.crt'), 'utf8'), 'CA PEM');
    assert.equal(b.readOnly, true);
    assert.equal(b.target, resolvedMountPath(serviceAccountMountPath));
    serviceAccountBind(pod(), dir, contract);
    assert.equal(readFileSync(join(b.source, 'token'), 'utf8'), 'token-1', 'a restarted container keeps its token');
    assert.equal(existsSync(join(dir, 'serviceaccount.tmp')), false);
  });

  it('resolves a symlinked /var/run to where bwrap will mount', () => {
    const expected = existsSync('/var/run') && lstatSync('/var/run').isSymbolicLink() ? join(realpathSync('/var/run'), 'secrets/kubernetes.io/serviceaccount') : serviceAccountMountPath;
    assert.equal(resolvedMountPath(serviceAccountMountPath), expected);
    assert.equal(resolvedMountPath('/nonexistent-skiff/a/b'), '/nonexistent-skiff/a/b');
  });
});
