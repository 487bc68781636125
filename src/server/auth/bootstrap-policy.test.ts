import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, StoredObject } from '../../api/meta.js';
import { aggregatedRules } from '../../control/clusterrole-aggregation.js';
import { bootstrapPolicy } from './bootstrap-policy.js';
import { RbacAuthorizer, staticPolicy } from './rbac.js';
import type { UserInfo } from './types.js';

const binding = (ns: string, role: string, user: string): KObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `${user}-${role}`, namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
} as KObject);

/** the bootstrap policy with its aggregated roles filled in, as the aggregation controller fills them */
function policy(extra: KObject[]): KObject[] {
  const objs = bootstrapPolicy().map((o) => ({ ...o, metadata: { ...o.metadata, uid: o.metadata.name, resourceVersion: '1' } })) as unknown as StoredObject[];
  for (let pass = 0; pass < 4; pass++) {
    for (const o of objs) if ((o as { aggregationRule?: unknown }).aggregationRule) (o as { rules?: unknown[] }).rules = aggregatedRules(o, objs);
  }
  return [...(objs as unknown as KObject[]), ...extra];
}

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
