// Helpers for tests that decide requests with the bootstrap policy: a user's RoleBinding, and the
// policy with its aggregated roles filled in as the aggregation controller fills them.
import type { KObject, StoredObject } from '../../api/meta.js';
import { aggregatedRules } from '../../control/clusterrole-aggregation.js';
import { bootstrapPolicy } from './bootstrap-policy.js';

/** a RoleBinding of `user` to the ClusterRole `role` in `ns` */
export const binding = (ns: string, role: string, user: string): KObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `${user}-${role}`, namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
} as KObject);

/** the bootstrap policy with its aggregated roles filled in, and `extra` objects after it */
export function policy(extra: KObject[]): KObject[] {
  const objs = bootstrapPolicy().map((o) => ({ ...o, metadata: { ...o.metadata, uid: o.metadata.name, resourceVersion: '1' } })) as unknown as StoredObject[];
  // roles aggregated into aggregated roles: a few passes reach the top
  for (let pass = 0; pass < 4; pass++) {
    for (const o of objs) if ((o as { aggregationRule?: unknown }).aggregationRule) (o as { rules?: unknown[] }).rules = aggregatedRules(o, objs);
  }
  return [...(objs as unknown as KObject[]), ...extra];
}
