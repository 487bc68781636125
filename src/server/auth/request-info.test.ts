import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forbidden, forbiddenMessage, UnauthorizedError } from './messages.js';
import { requestChecks, requestInfo } from './request-info.js';
import type { ResourceAttributes } from './types.js';

describe('requestInfo', () => {
  // [method, url, what kube-apiserver's RequestInfoFactory makes of it]
  const table: [string, string, ResourceAttributes | { nonResource: string }][] = [
    ['GET', '/api/v1/namespaces/a/pods', { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/namespaces/a/pods?watch=true', { verb: 'watch', apiGroup: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/namespaces/a/pods?watch=1&resourceVersion=5', { verb: 'watch', apiGroup: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/namespaces/a/pods?watch=false', { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/watch/namespaces/a/pods', { verb: 'watch', apiGroup: '', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/watch/namespaces/a/pods/p', { verb: 'watch', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p' }],
    ['GET', '/api/v1/pods', { verb: 'list', apiGroup: '', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/a/pods/p', { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p' }],
    ['HEAD', '/api/v1/namespaces/a/pods/p', { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p' }],
    ['GET', '/api/v1/namespaces/a/pods/p/log?follow=true', { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'log', namespace: 'a', name: 'p' }],
    ['POST', '/api/v1/namespaces/a/pods/p/exec?command=ls', { verb: 'create', apiGroup: '', resource: 'pods', subresource: 'exec', namespace: 'a', name: 'p' }],
    ['POST', '/api/v1/namespaces/a/pods/p/portforward', { verb: 'create', apiGroup: '', resource: 'pods', subresource: 'portforward', namespace: 'a', name: 'p' }],
    ['POST', '/api/v1/namespaces/a/pods', { verb: 'create', apiGroup: '', resource: 'pods', namespace: 'a' }],
    ['PUT', '/api/v1/namespaces/a/pods/p/status', { verb: 'update', apiGroup: '', resource: 'pods', subresource: 'status', namespace: 'a', name: 'p' }],
    ['PATCH', '/apis/apps/v1/namespaces/a/deployments/d/scale', { verb: 'patch', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'a', name: 'd' }],
    ['DELETE', '/apis/batch/v1/namespaces/a/jobs/j', { verb: 'delete', apiGroup: 'batch', resource: 'jobs', namespace: 'a', name: 'j' }],
    ['DELETE', '/apis/batch/v1/namespaces/a/jobs?labelSelector=x', { verb: 'deletecollection', apiGroup: 'batch', resource: 'jobs', namespace: 'a' }],
    ['GET', '/apis/kubeflow.org/v1/namespaces/a/pytorchjobs?fieldSelector=metadata.name%3Dtrain', { verb: 'list', apiGroup: 'kubeflow.org', resource: 'pytorchjobs', namespace: 'a', name: 'train' }],
    ['GET', '/apis/kubeflow.org/v1/pytorchjobs', { verb: 'list', apiGroup: 'kubeflow.org', resource: 'pytorchjobs' }],
    // a Namespace is in itself; its status and finalize are its subresources
    ['GET', '/api/v1/namespaces/a', { verb: 'get', apiGroup: '', resource: 'namespaces', namespace: 'a', name: 'a' }],
    ['PUT', '/api/v1/namespaces/a/finalize', { verb: 'update', apiGroup: '', resource: 'namespaces', subresource: 'finalize', namespace: 'a', name: 'a' }],
    ['GET', '/api/v1/namespaces', { verb: 'list', apiGroup: '', resource: 'namespaces' }],
    ['GET', '/api/v1/nodes/local', { verb: 'get', apiGroup: '', resource: 'nodes', name: 'local' }],
    ['POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' }],
    ['GET', '/api/v1/namespaces/a/services/s:80/proxy/x/y', { verb: 'get', apiGroup: '', resource: 'services', subresource: 'proxy', namespace: 'a', name: 's:80' }],
    ['GET', '/api/v1/proxy/namespaces/a/services/s/x', { verb: 'proxy', apiGroup: '', resource: 'services', namespace: 'a', name: 's' }],
    ['GET', '/api/v1/namespaces/a%2Fb/pods', { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'a/b' }],
    // not resources
    ['GET', '/api', { nonResource: 'get /api' }],
    ['GET', '/api/v1', { nonResource: 'get /api/v1' }],
    ['GET', '/apis/apps/v1', { nonResource: 'get /apis/apps/v1' }],
    ['GET', '/apis/apps', { nonResource: 'get /apis/apps' }],
    ['GET', '/healthz', { nonResource: 'get /healthz' }],
    ['GET', '/openapi/v3/apis/apps/v1', { nonResource: 'get /openapi/v3/apis/apps/v1' }],
    ['POST', '/metrics', { nonResource: 'post /metrics' }],
  ];
  for (const [method, url, want] of table) {
    it(`${method} ${url}`, () => {
      const got = requestInfo(method, url);
      if ('nonResource' in want) assert.equal(got.nonResource && `${got.nonResource.verb} ${got.nonResource.path}`, want.nonResource);
      else assert.deepEqual(got.resource, want);
    });
  }

  it('asks for create too when exec, attach or portforward come as a WebSocket GET', () => {
    const checks = requestChecks('GET', '/api/v1/namespaces/a/pods/p/exec?command=sh', true).map((c) => c.resource?.verb);
    assert.deepEqual(checks, ['get', 'create']);
    assert.deepEqual(requestChecks('GET', '/api/v1/namespaces/a/pods/p/log', true).map((c) => c.resource?.verb), ['get']);
    assert.deepEqual(requestChecks('POST', '/api/v1/namespaces/a/pods/p/exec', true).map((c) => c.resource?.verb), ['create']);
  });
});

describe('forbidden', () => {
  const alice = { username: 'alice', groups: [] };
  it('words the refusal as kube-apiserver does', () => {
    const list = { user: alice, resource: { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'team-b' } };
    assert.equal(forbiddenMessage(list), 'User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"');
    const e = forbidden(list);
    assert.equal(e.code, 403);
    assert.deepEqual(e.toStatus(), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"',
      details: { kind: 'pods' },
    });
    const log = forbidden({ user: alice, resource: { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'log', namespace: 'a', name: 'p' } });
    assert.equal(log.message, 'pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "a"');
    assert.deepEqual(log.details, { name: 'p', kind: 'pods' });
    const cluster = forbidden({ user: alice, resource: { verb: 'list', apiGroup: 'kubeflow.org', resource: 'profiles' } });
    assert.equal(cluster.message, 'profiles.kubeflow.org is forbidden: User "alice" cannot list resource "profiles" in API group "kubeflow.org" at the cluster scope');
    assert.deepEqual(cluster.details, { group: 'kubeflow.org', kind: 'profiles' });
    assert.equal(forbidden({ user: alice, nonResource: { verb: 'get', path: '/metrics' } }).message, 'forbidden: User "alice" cannot get path "/metrics"');
    assert.equal(forbidden(list, 'no RoleBinding names alice').message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b": no RoleBinding names alice');
  });

  it('answers 401 with no details, as kube-apiserver', () => {
    assert.deepEqual(new UnauthorizedError().toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });
});
