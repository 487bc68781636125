import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../api/errors.js';
import { defaultRegistry } from '../api/index.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { Kfam, bindingName } from './kfam.js';

const alice = { username: 'alice@example.com', groups: ['system:authenticated'] };
const mallory = { username: 'mallory@example.com', groups: ['system:authenticated'] };
const admin = { username: 'root', groups: ['system:masters'] };

async function setup(): Promise<{ client: Client; kfam: Kfam }> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  await client.create({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'team' }, spec: { owner: { kind: 'User', name: alice.username } } });
  return { client, kfam: new Kfam(client) };
}

const forbidden = (e: unknown): boolean => e instanceof ApiError && e.code === 403;
const binding = (role = 'kubeflow-edit') => ({ user: { kind: 'User', name: 'Bob.Smith@example.com' }, referredNamespace: 'team', RoleRef: { kind: 'ClusterRole', name: role } });

describe('KFAM', () => {
  it('names bindings as KFAM does', () => {
    assert.equal(bindingName('Bob.Smith@example.com', 'edit'), 'user-bob-smith-example-com-clusterrole-edit');
  });

  it('lets the owner and a cluster admin change contributors, and nobody else', async () => {
    const { kfam } = await setup();
    await assert.rejects(kfam.addBinding(mallory, binding()), forbidden);
    await kfam.addBinding(alice, binding());
    await kfam.addBinding(admin, binding('view'));
    const listed = await kfam.list(new URLSearchParams('namespace=team'));
    assert.deepEqual(listed.map((b) => b.RoleRef?.name).sort(), ['edit', 'view']);
    await assert.rejects(kfam.removeBinding(mallory, binding()), forbidden);
    await kfam.removeBinding(alice, binding());
    assert.deepEqual((await kfam.list(new URLSearchParams('user=Bob.Smith@example.com'))).map((b) => b.RoleRef?.name), ['view']);
  });

  it('lets a user create only their own Profile', async () => {
    const { kfam } = await setup();
    const p = (owner: string) => ({ apiVersion: '', kind: '', metadata: { name: 'ns2' }, spec: { owner: { kind: 'User', name: owner } } });
    await assert.rejects(kfam.createProfile(mallory, p(alice.username)), forbidden);
    await kfam.createProfile(mallory, p(mallory.username));
  });

  it('answers clusteradmin from cluster-admin bindings', async () => {
    const { client, kfam } = await setup();
    assert.equal(await kfam.queryClusterAdmin(alice, 'carol'), false);
    await client.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'carol-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }] });
    assert.equal(await kfam.queryClusterAdmin(alice, 'carol'), true);
  });
});
