import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/meta.js';
import { ApiError } from '../../api/errors.js';
import { impersonate } from './impersonation.js';
import { RbacAuthorizer, staticPolicy } from './rbac.js';
import type { UserInfo } from './types.js';

const g = 'rbac.authorization.k8s.io';
const policy: KObject[] = [
  { apiVersion: `${g}/v1`, kind: 'ClusterRole', metadata: { name: 'as-alice' }, rules: [{ apiGroups: [''], resources: ['users'], resourceNames: ['alice'], verbs: ['impersonate'] }] },
  { apiVersion: `${g}/v1`, kind: 'ClusterRole', metadata: { name: 'as-team' }, rules: [{ apiGroups: [''], resources: ['groups'], resourceNames: ['team'], verbs: ['impersonate'] }] },
  { apiVersion: `${g}/v1`, kind: 'ClusterRole', metadata: { name: 'as-sa' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }] },
  { apiVersion: `${g}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'bob-alice' }, roleRef: { apiGroup: g, kind: 'ClusterRole', name: 'as-alice' }, subjects: [{ apiGroup: g, kind: 'User', name: 'bob' }] },
  { apiVersion: `${g}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'bob-team' }, roleRef: { apiGroup: g, kind: 'ClusterRole', name: 'as-team' }, subjects: [{ apiGroup: g, kind: 'User', name: 'bob' }] },
  { apiVersion: `${g}/v1`, kind: 'RoleBinding', metadata: { name: 'bob-sa', namespace: 'team-a' }, roleRef: { apiGroup: g, kind: 'ClusterRole', name: 'as-sa' }, subjects: [{ apiGroup: g, kind: 'User', name: 'bob' }] },
];
const authz = new RbacAuthorizer(staticPolicy(policy));
const bob: UserInfo = { username: 'bob', groups: ['system:authenticated'] };
const admin: UserInfo = { username: 'skiff-admin', groups: ['system:masters', 'system:authenticated'] };

const request = (headers: Record<string, string[]>): IncomingMessage => ({ headersDistinct: headers }) as unknown as IncomingMessage;

function refused(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => e instanceof ApiError && e.code === 403 && e.message === message);
}

describe('impersonation', () => {
  it('without headers is the user itself', () => {
    assert.equal(impersonate(request({}), bob, authz), bob);
  });

  it('acts as a user the caller may impersonate, with system:authenticated added', () => {
    assert.deepEqual(impersonate(request({ 'impersonate-user': ['alice'] }), bob, authz), { username: 'alice', groups: ['system:authenticated'] });
    assert.deepEqual(impersonate(request({ 'impersonate-user': ['alice'], 'impersonate-group': ['team'] }), bob, authz), { username: 'alice', groups: ['team', 'system:authenticated'] });
  });

  it('refuses a user or group the caller may not impersonate, in kube-apiserver words', () => {
    refused(() => impersonate(request({ 'impersonate-user': ['carol'] }), bob, authz), 'users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
    refused(() => impersonate(request({ 'impersonate-user': ['alice'], 'impersonate-group': ['system:masters'] }), bob, authz), 'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope');
    refused(() => impersonate(request({ 'impersonate-user': ['alice'], 'impersonate-uid': ['1'] }), bob, authz), 'uids.authentication.k8s.io "1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope');
  });

  it('a service account is checked in its namespace and gets its groups', () => {
    assert.deepEqual(impersonate(request({ 'impersonate-user': ['system:serviceaccount:team-a:default-editor'] }), bob, authz), {
      username: 'system:serviceaccount:team-a:default-editor', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'],
    });
    refused(() => impersonate(request({ 'impersonate-user': ['system:serviceaccount:team-b:default'] }), bob, authz), 'serviceaccounts "default" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-b"');
  });

  it('system:masters may impersonate anyone, extras included; anonymous is unauthenticated', () => {
    const as = impersonate(request({ 'impersonate-user': ['system:anonymous'], 'impersonate-extra-scopes': ['a', 'b'] }), admin, authz);
    assert.deepEqual(as, { username: 'system:anonymous', groups: ['system:unauthenticated'], extra: { scopes: ['a', 'b'] } });
  });

  it('groups without a user are a bad request; one request decides once', () => {
    assert.throws(() => impersonate(request({ 'impersonate-group': ['team'] }), bob, authz), (e: unknown) => e instanceof ApiError && e.code === 400);
    const req = request({ 'impersonate-user': ['alice'] });
    const first = impersonate(req, bob, authz);
    // the request path already switched to alice; a handler asking again gets alice, not a refusal
    assert.equal(impersonate(req, first, authz), first);
  });
});
