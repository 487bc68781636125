import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultRegistry } from '../api/index.js';
import { ClusterRoleKind } from '../api/rbac.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { addClusterRoleAggregationController } from './clusterrole-aggregation.js';
import { Manager } from './controller.js';

const role = (name: string, labels: Record<string, string>, rules: unknown[], aggregate?: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules,
  ...(aggregate ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregate]: 'true' } }] } } : {}),
});

async function until(what: string, fn: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('ClusterRole aggregation', () => {
  it('keeps an aggregate the union of the matching roles, through nested aggregates, adds and removals', async () => {
    const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    const mgr = new Manager(client);
    addClusterRoleAggregationController(mgr, client);
    const pods = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    const logs = { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] };
    const exps = { apiGroups: ['kubeflow.org'], resources: ['experiments'], verbs: ['create'] };
    await client.create(role('kf-admin', {}, [], 'to-admin'));
    await client.create(role('kf-edit', { 'to-admin': 'true' }, [], 'to-edit'));
    await client.create(role('b-view', { 'to-edit': 'true' }, [logs, pods]));
    await client.create(role('a-view', { 'to-edit': 'true' }, [pods]));
    mgr.start();
    const rulesOf = async (name: string): Promise<unknown> => (await client.get(ClusterRoleKind, { name })).rules;
    const is = (name: string, want: unknown[]) => async () => JSON.stringify(await rulesOf(name)) === JSON.stringify(want);
    // sorted by source name, each distinct rule once
    await until('kf-edit from a-view and b-view', is('kf-edit', [pods, logs]));
    await until('kf-admin through kf-edit', is('kf-admin', [pods, logs]));
    await client.create(role('c-edit', { 'to-edit': 'true' }, [exps]));
    await until('a new role flows up', is('kf-admin', [pods, logs, exps]));
    await client.delete(ClusterRoleKind, { name: 'b-view' });
    await until('a removed role leaves', is('kf-admin', [pods, exps]));
    const cur = await client.get(ClusterRoleKind, { name: 'c-edit' });
    await client.update({ ...cur, metadata: { ...cur.metadata, labels: {} } });
    await until('an unlabelled role leaves', is('kf-admin', [pods]));
    await mgr.stop();
  });
});
