import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/meta.js';
import { ApiError } from '../../api/errors.js';
import { forbiddenError, forbiddenMessage } from './messages.js';
import { RbacAuthorizer, staticPolicy } from './rbac.js';
import type { Attributes, UserInfo } from './types.js';

const rbac = 'rbac.authorization.k8s.io/v1';
const clusterRole = (name: string, rules: unknown[]): KObject => ({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules });
const role = (ns: string, name: string, rules: unknown[]): KObject => ({ apiVersion: rbac, kind: 'Role', metadata: { name, namespace: ns }, rules });
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
const group = (name: string) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });
const sa = (name: string, namespace?: string) => ({ kind: 'ServiceAccount', name, ...(namespace ? { namespace } : {}) });
const binding = (ns: string, name: string, kind: 'Role' | 'ClusterRole', roleName: string, subjects: unknown[]): KObject => ({
  apiVersion: rbac, kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName }, subjects,
});
const clusterBinding = (name: string, roleName: string, subjects: unknown[]): KObject => ({
  apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects,
});

const policy = staticPolicy([
  clusterRole('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }]),
  clusterRole('log-reader', [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }]),
  clusterRole('status-writer', [{ apiGroups: ['*'], resources: ['*/status'], verbs: ['update', 'patch'] }]),
  clusterRole('everything', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]),
  clusterRole('health', [{ nonResourceURLs: ['/healthz', '/metrics/*'], verbs: ['get'] }]),
  clusterRole('experiments-edit', [{ apiGroups: ['kubeflow.org'], resources: ['experiments', 'trials'], verbs: ['create', 'get', 'list', 'delete'] }]),
  role('team-a', 'one-config', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'], verbs: ['get', 'update'] }]),
  binding('team-a', 'alice-reads', 'ClusterRole', 'pod-reader', [user('alice')]),
  binding('team-a', 'alice-logs', 'ClusterRole', 'log-reader', [user('alice')]),
  binding('team-a', 'alice-config', 'Role', 'one-config', [user('alice')]),
  binding('team-a', 'runner', 'ClusterRole', 'experiments-edit', [sa('default-editor')]),
  binding('team-a', 'all-sas-read', 'ClusterRole', 'pod-reader', [group('system:serviceaccounts:team-b')]),
  binding('team-a', 'dangling', 'Role', 'gone', [user('carol')]),
  clusterBinding('ops', 'everything', [group('ops')]),
  clusterBinding('controller-status', 'status-writer', [sa('ctl', 'kube-system')]),
  clusterBinding('health', 'health', [group('system:authenticated')]),
]);
const authz = new RbacAuthorizer(policy);

const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
const bob: UserInfo = { username: 'bob', groups: ['system:authenticated', 'ops'] };
const carol: UserInfo = { username: 'carol', groups: ['system:authenticated'] };
const editor: UserInfo = { username: 'system:serviceaccount:team-a:default-editor', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'] };
const otherEditor: UserInfo = { username: 'system:serviceaccount:team-c:default-editor', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-c', 'system:authenticated'] };
const teamBSa: UserInfo = { username: 'system:serviceaccount:team-b:default', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-b', 'system:authenticated'] };
const ctl: UserInfo = { username: 'system:serviceaccount:kube-system:ctl', groups: ['system:serviceaccounts'] };
const admin: UserInfo = { username: 'root', groups: ['system:masters'] };
const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

const res = (u: UserInfo, verb: string, resource: string, namespace?: string, more: { apiGroup?: string; subresource?: string; name?: string } = {}): Attributes => ({
  user: u, resource: { verb, apiGroup: more.apiGroup ?? '', resource, ...(more.subresource ? { subresource: more.subresource } : {}), ...(namespace ? { namespace } : {}), ...(more.name ? { name: more.name } : {}) },
});
const url = (u: UserInfo, verb: string, path: string): Attributes => ({ user: u, nonResource: { verb, path } });

describe('RBAC evaluation', () => {
  const cases: [string, Attributes, boolean][] = [
    ['a RoleBinding to a ClusterRole grants in its namespace', res(alice, 'list', 'pods', 'team-a'), true],
    ['…and not in another namespace', res(alice, 'list', 'pods', 'team-b'), false],
    ['…nor across all namespaces', res(alice, 'list', 'pods'), false],
    ['a verb the rule does not list', res(alice, 'delete', 'pods', 'team-a', { name: 'p' }), false],
    ['a resource in another group', res(alice, 'list', 'pods', 'team-a', { apiGroup: 'kubeflow.org' }), false],
    ['`pods` does not grant the log subresource', res(carol, 'get', 'pods', 'team-a', { subresource: 'log', name: 'p' }), false],
    ['`pods/log` grants the log', res(alice, 'get', 'pods', 'team-a', { subresource: 'log', name: 'p' }), true],
    ['`pods/log` does not grant exec', res(alice, 'create', 'pods', 'team-a', { subresource: 'exec', name: 'p' }), false],
    ['`*/status` grants any status', res(ctl, 'patch', 'experiments', 'team-x', { apiGroup: 'kubeflow.org', subresource: 'status', name: 'e' }), true],
    ['`*/status` does not grant the object', res(ctl, 'patch', 'experiments', 'team-x', { apiGroup: 'kubeflow.org', name: 'e' }), false],
    ['resourceNames: the named object', res(alice, 'get', 'configmaps', 'team-a', { name: 'settings' }), true],
    ['resourceNames: another object', res(alice, 'get', 'configmaps', 'team-a', { name: 'other' }), false],
    ['resourceNames: a list names none', res(alice, 'list', 'configmaps', 'team-a'), false],
    ['a ServiceAccount subject defaults to the binding namespace', res(editor, 'create', 'experiments', 'team-a', { apiGroup: 'kubeflow.org' }), true],
    ['…so the same name in another namespace is someone else', res(otherEditor, 'create', 'experiments', 'team-a', { apiGroup: 'kubeflow.org' }), false],
    ['system:serviceaccounts:<ns> as a group', res(teamBSa, 'get', 'pods', 'team-a', { name: 'p' }), true],
    ['a ClusterRoleBinding grants everywhere', res(bob, 'delete', 'namespaces', undefined, { name: 'x' }), true],
    ['…and across namespaces', res(bob, 'list', 'pods'), true],
    ['system:masters may do anything with no binding', res(admin, 'escalate', 'clusterroles', undefined, { apiGroup: 'rbac.authorization.k8s.io' }), true],
    ['a non-resource URL, exact', url(alice, 'get', '/healthz'), true],
    ['a non-resource URL under a trailing *', url(alice, 'get', '/metrics/cadvisor'), true],
    ['the prefix of a trailing * rule is not the bare path', url(alice, 'get', '/metrics'), false],
    ['a non-resource URL with another verb', url(alice, 'post', '/healthz'), false],
    ['a non-resource URL needs the group the binding names', url(anonymous, 'get', '/healthz'), false],
    ['`*` resources grant URLs? no: resources and URLs are separate', url(bob, 'get', '/healthz/etcd'), false],
    ['a binding to a missing role grants nothing', res(carol, 'get', 'pods', 'team-a'), false],
  ];
  for (const [what, attrs, want] of cases) {
    it(what, () => assert.equal(authz.authorize(attrs).allowed, want, JSON.stringify(attrs)));
  }

  it('says which binding allowed, as kube-apiserver words it', () => {
    assert.equal(authz.authorize(res(bob, 'get', 'pods', 'x')).reason, 'RBAC: allowed by ClusterRoleBinding "ops" of ClusterRole "everything" to Group "ops"');
    assert.equal(authz.authorize(res(alice, 'get', 'pods', 'team-a')).reason, 'RBAC: allowed by RoleBinding "alice-reads/team-a" of ClusterRole "pod-reader" to User "alice"');
    assert.equal(authz.authorize(res(editor, 'get', 'trials', 'team-a', { apiGroup: 'kubeflow.org' })).reason, 'RBAC: allowed by RoleBinding "runner/team-a" of ClusterRole "experiments-edit" to ServiceAccount "default-editor/team-a"');
    assert.equal(authz.authorize(res(ctl, 'update', 'pods', 'y', { subresource: 'status' })).reason, 'RBAC: allowed by ClusterRoleBinding "controller-status" of ClusterRole "status-writer" to ServiceAccount "ctl/kube-system"');
    assert.equal(authz.authorize(res(alice, 'delete', 'pods', 'team-b')).reason, undefined);
    assert.equal(authz.authorize(res(carol, 'get', 'pods', 'team-a')).reason, 'RBAC: role.rbac.authorization.k8s.io "gone" not found');
  });

  it('lists the rules a user has in a namespace', () => {
    const rules = authz.rulesFor(alice, 'team-a');
    assert.deepEqual(rules.resourceRules, [
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      { verbs: ['get', 'update'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] },
    ]);
    assert.deepEqual(rules.nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/metrics/*'] }]);
    assert.equal(rules.incomplete, false);
    assert.deepEqual(authz.rulesFor(alice, 'team-b').resourceRules, []);
    const broken = authz.rulesFor(carol, 'team-a');
    assert.equal(broken.incomplete, true);
    assert.equal(broken.evaluationError, 'role.rbac.authorization.k8s.io "gone" not found');
  });
});

describe('forbidden messages', () => {
  it('words each kind of refusal as kube-apiserver does', () => {
    assert.equal(forbiddenMessage(res(alice, 'list', 'pods', 'team-b')), 'User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"');
    assert.equal(forbiddenMessage(res(alice, 'list', 'namespaces')), 'User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
    assert.equal(forbiddenMessage(res(alice, 'get', 'pods', 'b', { subresource: 'log', name: 'p' })), 'User "alice" cannot get resource "pods/log" in API group "" in the namespace "b"');
    assert.equal(forbiddenMessage(url(alice, 'get', '/metrics')), 'User "alice" cannot get path "/metrics"');
    const e = forbiddenError(res(alice, 'get', 'experiments', 'b', { apiGroup: 'kubeflow.org', name: 'e1' }));
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, 403);
    assert.equal(e.message, 'experiments.kubeflow.org "e1" is forbidden: User "alice" cannot get resource "experiments" in API group "kubeflow.org" in the namespace "b"');
    assert.deepEqual(e.toStatus().details, { name: 'e1', group: 'kubeflow.org', kind: 'experiments' });
    assert.equal(forbiddenError(res(alice, 'list', 'pods', 'b')).message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "b"');
    assert.equal(forbiddenError(url(alice, 'get', '/metrics'), 'no binding').message, 'forbidden: User "alice" cannot get path "/metrics": no binding');
  });
});
