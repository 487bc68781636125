import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
