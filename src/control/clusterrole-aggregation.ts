// ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller keeps it:
// a ClusterRole with an `aggregationRule` has as its `rules` the union of the rules of every other
// ClusterRole its selectors match, in the order of those roles' names, each distinct rule once. Any
// ClusterRole change may change an aggregate, so every change looks at all the aggregating roles.
import { isConflict, isNotFound } from '../api/errors.js';
import type { StoredObject } from '../api/meta.js';
import { ClusterRoleKind } from '../api/rbac.js';
import type { Client } from '../store/client.js';
import { matchLabels, selectorFromObject } from '../store/selectors.js';
import type { Controller, Manager, Result } from './controller.js';

type LabelSelector = Parameters<typeof selectorFromObject>[0];

const selectorsOf = (role: StoredObject): LabelSelector[] => {
  const rule = role.aggregationRule as { clusterRoleSelectors?: LabelSelector[] } | undefined;
  return Array.isArray(rule?.clusterRoleSelectors) ? rule.clusterRoleSelectors : [];
};

/** the rules an aggregating role should have, given every ClusterRole */
export function aggregatedRules(role: StoredObject, all: StoredObject[]): unknown[] {
  const selectors = selectorsOf(role).map(selectorFromObject);
  const sources = all
    .filter((o) => o.metadata.name !== role.metadata.name && selectors.some((s) => s.length > 0 && matchLabels(s, o.metadata.labels)))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const seen = new Set<string>();
  const rules: unknown[] = [];
  for (const src of sources) {
    for (const rule of Array.isArray(src.rules) ? src.rules : []) {
      const key = JSON.stringify(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      rules.push(rule);
    }
  }
  return rules;
}

export function addClusterRoleAggregationController(mgr: Manager, client: Client): Controller {
  const aggregating = (): StoredObject[] => mgr.cache.list(ClusterRoleKind).filter((o) => selectorsOf(o).length > 0);
  async function reconcile(key: { name: string }): Promise<Result> {
    const role = mgr.cache.get(ClusterRoleKind, key);
    if (!role || selectorsOf(role).length === 0) return {};
    const rules = aggregatedRules(role, mgr.cache.list(ClusterRoleKind));
    if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) return {};
    try {
      await client.update({ ...structuredClone(role), rules });
    } catch (e) {
      if (isNotFound(e)) return {};
      if (!isConflict(e)) throw e;
      return { requeueAfter: 100 };
    }
    return {};
  }
  return mgr.add({
    name: 'clusterrole-aggregation',
    for: ClusterRoleKind,
    // a change to any ClusterRole may add or take rules from any aggregate
    watches: [{ kind: ClusterRoleKind, map: () => aggregating().map((o) => ({ name: o.metadata.name })) }],
    reconcile,
  });
}
