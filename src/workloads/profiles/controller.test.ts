import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kinds, defaultRegistry } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import { ProfileKind } from '../../api/profiles.js';
import type { ProfileObject } from '../../api/profiles.js';
import { RoleBindingKind } from '../../api/rbac.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { ProfileReconciler } from './controller.js';

const profile = (name: string, owner: string, hard?: Record<string, string>): ProfileObject => ({
  apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name },
  spec: { owner: { kind: 'User', name: owner }, ...(hard ? { resourceQuotaSpec: { hard } } : {}) },
});

async function setup(): Promise<{ client: Client; r: ProfileReconciler; settle(name: string): Promise<void> }> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  const r = new ProfileReconciler(client);
  // each pass makes one change or none; a handful of passes reaches the end
  const settle = async (name: string): Promise<void> => {
    for (let i = 0; i < 6; i++) await r.reconcile({ name });
  };
  return { client, r, settle };
}

describe('Profile controller', () => {
  it('makes the namespace, bindings, service accounts and quota as Kubeflow does', async () => {
    const { client, settle } = await setup();
    const p = await client.create(profile('team-a', 'alice@example.com', { 'requests.nvidia.com/gpu': '1', cpu: '2' }));
    await settle('team-a');
    const ns = await client.get(Kinds.Namespace, { name: 'team-a' });
    assert.equal(ns.metadata.annotations?.owner, 'alice@example.com');
    assert.equal(ns.metadata.labels?.['app.kubernetes.io/part-of'], 'kubeflow-profile');
    assert.equal(ns.metadata.labels?.['katib.kubeflow.org/metrics-collector-injection'], 'enabled');
    assert.equal(ns.metadata.labels?.['serving.kubeflow.org/inferenceservice'], 'enabled');
    assert.equal(ns.metadata.labels?.['pipelines.kubeflow.org/enabled'], 'true');
    assert.equal(ns.metadata.ownerReferences?.[0]?.uid, p.metadata.uid);
    const admin = await client.get(RoleBindingKind, { namespace: 'team-a', name: 'namespaceAdmin' });
    assert.deepEqual(admin.metadata.annotations, { user: 'alice@example.com', role: 'admin' });
    assert.deepEqual(admin.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeflow-admin' });
    assert.deepEqual(admin.subjects, [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice@example.com' }]);
    for (const [sa, role] of [['default-editor', 'kubeflow-edit'], ['default-viewer', 'kubeflow-view']] as const) {
      await client.get(Kinds.ServiceAccount, { namespace: 'team-a', name: sa });
      const b = await client.get(RoleBindingKind, { namespace: 'team-a', name: sa });
      assert.equal((b.roleRef as { name: string }).name, role);
      assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: sa, namespace: 'team-a' }]);
    }
    const q = await client.get(Kinds.ResourceQuota, { namespace: 'team-a', name: 'kf-resource-quota' });
    assert.deepEqual(q.spec, { hard: { 'requests.nvidia.com/gpu': '1', cpu: '2' } });
    const stored = await client.get(ProfileKind, { name: 'team-a' });
    assert.deepEqual(stored.metadata.finalizers, ['profile-finalizer']);
  });

  it('updates the quota with the spec and removes it when emptied', async () => {
    const { client, settle } = await setup();
    await client.create(profile('team-b', 'bob', { cpu: '2' }));
    await settle('team-b');
    const live = await client.get<StoredObject & ProfileObject>(ProfileKind, { name: 'team-b' });
    await client.update({ ...live, spec: { ...live.spec, resourceQuotaSpec: { hard: { cpu: '4' } } } });
    await settle('team-b');
    assert.deepEqual((await client.get(Kinds.ResourceQuota, { namespace: 'team-b', name: 'kf-resource-quota' })).spec, { hard: { cpu: '4' } });
    const again = await client.get<StoredObject & ProfileObject>(ProfileKind, { name: 'team-b' });
    await client.update({ ...again, spec: { ...again.spec, resourceQuotaSpec: {} } });
    await settle('team-b');
    assert.equal(await client.find(Kinds.ResourceQuota, { namespace: 'team-b', name: 'kf-resource-quota' }), undefined);
  });

  it('refuses a namespace owned by someone else with a Failed condition, and adopts nothing', async () => {
    const { client, settle } = await setup();
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'taken', annotations: { owner: 'carol' } } });
    await client.create(profile('taken', 'mallory'));
    await settle('taken');
    const p = await client.get<StoredObject & ProfileObject>(ProfileKind, { name: 'taken' });
    assert.deepEqual(p.status?.conditions, [{ type: 'Failed', status: 'True', message: 'namespace already exist, but not owned by profile creator mallory' }]);
    assert.equal(await client.find(RoleBindingKind, { namespace: 'taken', name: 'namespaceAdmin' }), undefined);
  });

  it('keeps labels a namespace already has and adds the missing ones', async () => {
    const { client, settle } = await setup();
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mine', annotations: { owner: 'dan' }, labels: { 'pipelines.kubeflow.org/enabled': 'false' } } });
    await client.create(profile('mine', 'dan'));
    await settle('mine');
    const ns = await client.get(Kinds.Namespace, { name: 'mine' });
    assert.equal(ns.metadata.labels?.['pipelines.kubeflow.org/enabled'], 'false');
    assert.equal(ns.metadata.labels?.['app.kubernetes.io/part-of'], 'kubeflow-profile');
  });

  it('validates a Profile naming the field, and stores v1beta1 as v1', async () => {
    const { client } = await setup();
    await assert.rejects(client.create({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'bad' }, spec: { owner: { kind: 'User' }, resourceQuotaSpec: { hard: { cpu: 'many' } } } }),
      /Profile.kubeflow.org "bad" is invalid: spec.owner.name: Required value, spec.resourceQuotaSpec.hard\[cpu\]/);
    const b = await client.create({ apiVersion: 'kubeflow.org/v1beta1', kind: 'Profile', metadata: { name: 'old' }, spec: { owner: { kind: 'User', name: 'e' } } });
    assert.equal(b.apiVersion, 'kubeflow.org/v1');
  });
});
