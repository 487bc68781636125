import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/meta.js';
import { defaultRegistry } from '../../api/index.js';
import { ClusterRoleKind } from '../../api/rbac.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { bootstrapPolicy, ensureBootstrapPolicy, reconcileBootstrap } from './bootstrap-policy.js';
import { RbacAuthorizer, staticPolicy } from './rbac.js';
import type { UserInfo } from './types.js';
import { binding, policy } from './testing.js';


describe('Kubeflow\'s roles in the bootstrap policy', () => {
  const authz = new RbacAuthorizer(staticPolicy(policy([binding('team-a', 'kubeflow-edit', 'carol'), binding('team-a', 'kubeflow-view', 'dave')])));
  const user = (username: string): UserInfo => ({ username, groups: ['system:authenticated'] });
  const can = (who: string, verb: string, resource: string, namespace = 'team-a'): boolean =>
    authz.authorize({ user: user(who), resource: { verb, apiGroup: 'kubeflow.org', resource, namespace } }).allowed;

  it('lets contributors work with every training job kind Skiff runs, and viewers read them', () => {
    for (const kind of ['pytorchjobs', 'tfjobs', 'mpijobs', 'xgboostjobs', 'paddlejobs', 'jaxjobs']) {
      assert.ok(can('carol', 'create', kind), `edit creates ${kind}`);
      assert.ok(can('dave', 'watch', kind), `view watches ${kind}`);
      assert.ok(!can('dave', 'create', kind), `view does not create ${kind}`);
      assert.ok(!can('carol', 'create', kind, 'team-b'), `edit in team-a is nothing in team-b (${kind})`);
    }
  });
});

describe('NetworkPolicies in the bootstrap policy', () => {
  const roles = ['admin', 'edit', 'view', 'kubeflow-admin', 'kubeflow-edit', 'kubeflow-view'];
  const authz = new RbacAuthorizer(staticPolicy(policy(roles.map((r) => binding('team-a', r, `u-${r}`)))));
  const can = (role: string, verb: string): boolean =>
    authz.authorize({ user: { username: `u-${role}`, groups: ['system:authenticated'] }, resource: { verb, apiGroup: 'networking.k8s.io', resource: 'networkpolicies', namespace: 'team-a' } }).allowed;

  it('lets admin and edit (Kubernetes\' and Kubeflow\'s, through aggregation) write them, and view read them', () => {
    for (const role of roles) {
      const writes = !role.endsWith('view');
      for (const verb of ['get', 'list', 'watch']) assert.ok(can(role, verb), `${role} ${verb}`);
      for (const verb of ['create', 'update', 'patch', 'delete']) assert.equal(can(role, verb), writes, `${role} ${verb}`);
    }
  });
});

describe('Kueue\'s roles in the bootstrap policy', () => {
  const clusterBinding = (role: string, user: string): KObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${user}-${role}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  } as KObject);
  const authz = new RbacAuthorizer(staticPolicy(policy([
    binding('team-a', 'kueue-batch-user-role', 'bob'), binding('team-a', 'view', 'vic'), binding('team-a', 'edit', 'eve'),
    binding('team-a', 'admin', 'ada'), binding('team-a', 'kubeflow-view', 'kim'), clusterBinding('kueue-batch-admin-role', 'root'),
  ])));
  const can = (who: string, verb: string, resource: string, namespace?: string, apiGroup = 'kueue.x-k8s.io'): boolean =>
    authz.authorize({ user: { username: who, groups: ['system:authenticated'] }, resource: { verb, apiGroup, resource, ...(namespace ? { namespace } : {}) } }).allowed;

  it('lets a batch user read the LocalQueues and Workloads of their namespace and submit jobs, and nothing more', () => {
    for (const r of ['localqueues', 'workloads']) {
      for (const verb of ['get', 'list', 'watch']) assert.ok(can('bob', verb, r, 'team-a'), `${verb} ${r}`);
      assert.ok(!can('bob', 'create', r, 'team-a'), `create ${r}`);
      assert.ok(!can('bob', 'get', r, 'team-b'), `${r} of another namespace`);
    }
    assert.ok(can('bob', 'get', 'localqueues/pendingworkloads', 'team-a', 'visibility.kueue.x-k8s.io'));
    assert.ok(can('bob', 'create', 'jobs', 'team-a', 'batch'));
    assert.ok(can('bob', 'create', 'pytorchjobs', 'team-a', 'kubeflow.org'));
    assert.ok(!can('bob', 'get', 'clusterqueues'));
    assert.ok(!can('bob', 'create', 'clusterqueues'));
  });

  it('aggregates the queue viewers into Kubernetes\' view, edit and admin, and Kubeflow\'s view', () => {
    for (const who of ['vic', 'eve', 'ada', 'kim']) {
      assert.ok(can(who, 'list', 'workloads', 'team-a'), `${who} lists workloads`);
      assert.ok(can(who, 'get', 'localqueues', 'team-a'), `${who} reads queues`);
      assert.ok(!can(who, 'create', 'localqueues', 'team-a'), `${who} makes no queue`);
    }
    // ClusterQueues, Cohorts and flavors are in admin only (a RoleBinding cannot reach them, a ClusterRoleBinding of admin can)
    assert.ok(!can('vic', 'get', 'clusterqueues', 'team-a'));
  });

  it('lets a batch admin bound cluster-wide manage every Kueue kind', () => {
    for (const r of ['clusterqueues', 'cohorts', 'resourceflavors', 'localqueues', 'workloads']) {
      for (const verb of ['create', 'update', 'delete', 'list']) assert.ok(can('root', verb, r, ['localqueues', 'workloads'].includes(r) ? 'team-a' : undefined), `${verb} ${r}`);
    }
    assert.ok(can('root', 'get', 'clusterqueues/pendingworkloads', undefined, 'visibility.kueue.x-k8s.io'));
    // status belongs to Kueue's controllers
    assert.ok(!can('root', 'update', 'clusterqueues/status'));
  });
});

describe('/metrics in the bootstrap policy', () => {
  const authz = new RbacAuthorizer(staticPolicy(policy([binding('team-a', 'kubeflow-admin', 'owner')])));
  const can = (groups: string[], verb: string, path: string): boolean =>
    authz.authorize({ user: { username: 'u', groups: [...groups, 'system:authenticated'] }, nonResource: { verb, path } }).allowed;

  it('lets system:monitoring and cluster admins read it, as kube-apiserver does, and nobody else', () => {
    assert.ok(can(['system:monitoring'], 'get', '/metrics'));
    assert.ok(can(['system:monitoring'], 'get', '/readyz/ping'));
    assert.ok(!can(['system:monitoring'], 'post', '/metrics'));
    assert.ok(can(['system:masters'], 'get', '/metrics'));
    assert.ok(!can([], 'get', '/metrics'), 'a signed-in user');
    assert.ok(!authz.authorize({ user: { username: 'owner', groups: ['system:authenticated'] }, nonResource: { verb: 'get', path: '/metrics' } }).allowed, 'a namespace\'s owner');
    assert.ok(!authz.authorize({ user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, nonResource: { verb: 'get', path: '/metrics' } }).allowed);
  });
});

describe('the bootstrap policy in a data directory written by an older Skiff', () => {
  it('adds what a stored role lacks, leaves a role marked autoupdate "false" alone, and then has nothing to do', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    const client = new Client(store, defaultRegistry());
    const stale = (name: string, annotations?: Record<string, string>): KObject => {
      const r = bootstrapPolicy().find((o) => o.kind === 'ClusterRole' && o.metadata.name === name) as KObject & { rules: unknown[] };
      return { ...r, metadata: { name, labels: {}, ...(annotations ? { annotations } : {}) }, rules: r.rules.slice(0, 1) } as KObject;
    };
    await client.create(stale('kubeflow-training-edit'));
    await client.create(stale('skiff-pipelines-view', { 'rbac.authorization.kubernetes.io/autoupdate': 'false' }));
    const full = (name: string): KObject => bootstrapPolicy().find((o) => o.metadata.name === name) as KObject;
    assert.ok(await ensureBootstrapPolicy(client) > 0);
    const training = await client.get<KObject & { rules: unknown[] }>(ClusterRoleKind, { name: 'kubeflow-training-edit' });
    assert.deepEqual(training.rules, (full('kubeflow-training-edit') as KObject & { rules: unknown[] }).rules);
    assert.deepEqual(training.metadata.labels, full('kubeflow-training-edit').metadata.labels);
    const kept = await client.get<KObject & { rules: unknown[] }>(ClusterRoleKind, { name: 'skiff-pipelines-view' });
    assert.equal(kept.rules.length, 1);
    assert.equal(await ensureBootstrapPolicy(client), 0);
  });

  it('adds a missing aggregation selector and subjects, never taking anything away', () => {
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r', labels: { mine: 'x' } }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'true' } }] }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] } as KObject;
    const want = { ...role, metadata: { name: 'r', labels: { b: 'true' } }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { b: 'true' } }] }, rules: [] } as KObject;
    const out = reconcileBootstrap(role, want) as KObject & Record<string, any>;
    assert.deepEqual(out.aggregationRule.clusterRoleSelectors, [{ matchLabels: { a: 'true' } }, { matchLabels: { b: 'true' } }]);
    assert.deepEqual(out.metadata.labels, { mine: 'x', b: 'true' });
    assert.deepEqual(out.rules, role.rules as unknown);
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'b' }, roleRef: {}, subjects: [{ kind: 'Group', name: 'g1' }] } as KObject;
    const wantB = { ...binding, subjects: [{ kind: 'Group', name: 'g2' }] } as KObject;
    assert.deepEqual((reconcileBootstrap(binding, wantB) as Record<string, any>).subjects, [{ kind: 'Group', name: 'g1' }, { kind: 'Group', name: 'g2' }]);
    assert.equal(reconcileBootstrap(binding, binding), undefined);
  });
});
