import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { kubeconfigToken, resolveToken } from './credentials.js';

const config = YAML.stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'skiff',
  clusters: [{ name: 'skiff', cluster: { server: 'http://127.0.0.1:8080' } }, { name: 'other', cluster: { server: 'https://elsewhere:6443' } }],
  users: [{ name: 'skiff', user: { token: 'admin-token' } }, { name: 'o', user: { token: 'other-token' } }],
  contexts: [{ name: 'skiff', context: { cluster: 'skiff', user: 'skiff' } }, { name: 'o', context: { cluster: 'other', user: 'o' } }],
});

describe('CLI credentials', () => {
  it('takes the kubeconfig user\'s token only for the server it names', () => {
    assert.equal(kubeconfigToken(config, 'http://127.0.0.1:8080/'), 'admin-token');
    assert.equal(kubeconfigToken(config, 'https://elsewhere:6443'), 'other-token');
    assert.equal(kubeconfigToken(config, 'http://127.0.0.1:9999'), undefined);
    assert.equal(kubeconfigToken(': not yaml : [', 'http://127.0.0.1:8080'), undefined);
  });

  it('prefers --token, then SKIFF_TOKEN', () => {
    assert.equal(resolveToken('flag', { SKIFF_TOKEN: 'env' }, '/', 'http://x'), 'flag');
    assert.equal(resolveToken(undefined, { SKIFF_TOKEN: 'env' }, '/', 'http://x'), 'env');
    assert.equal(resolveToken(undefined, { KUBECONFIG: '/nonexistent/kubeconfig' }, '/', 'http://x'), undefined);
  });

  it('in a Pod, sends the service-account token to the server the Pod was given, and nowhere else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cred-'));
    try {
      const file = join(dir, 'token');
      writeFileSync(file, 'pod-token\n');
      const env = { KUBECONFIG: '/nonexistent/kubeconfig', SKIFF_SERVER: 'http://127.0.0.2:8080' };
      assert.equal(resolveToken(undefined, env, '/', 'http://127.0.0.2:8080/', file), 'pod-token');
      assert.equal(resolveToken(undefined, env, '/', 'http://elsewhere:8080', file), undefined);
      assert.equal(resolveToken(undefined, { SKIFF_SERVER: 'http://127.0.0.2:8080', SKIFF_TOKEN: 'mine' }, '/', 'http://127.0.0.2:8080', file), 'mine');
      assert.equal(resolveToken(undefined, env, '/', 'http://127.0.0.2:8080', join(dir, 'none')), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
