// Label selectors (a ClusterQueue's namespaceSelector) and the node-side checks a flavor must pass
// for a pod set: its node labels against the pods' nodeSelector and required node affinity, its
// taints against their tolerations. Kubernetes' rules, reduced to what a flavor's labels can say.
import type { LabelSelector, PodSpecLike, Taint, Toleration } from './types.js';

function requirementMatches(op: string, has: boolean, value: string | undefined, values: string[]): boolean {
  switch (op) {
    case 'In':
      return has && values.includes(value as string);
    case 'NotIn':
      return !has || !values.includes(value as string);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const a = Number.parseInt(value as string, 10);
      const b = Number.parseInt(values[0] as string, 10);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return op === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** metav1.LabelSelectorAsSelector's meaning: null or absent selects nothing, {} everything. */
export function selectorMatches(sel: LabelSelector | null | undefined, labels: Record<string, string> | undefined): boolean {
  if (!sel) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const r of sel.matchExpressions ?? []) {
    if (!requirementMatches(r.operator, Object.hasOwn(l, r.key), l[r.key], r.values ?? [])) return false;
  }
  return true;
}

/**
 * Whether a node carrying only the flavor's labels satisfies the pod's nodeSelector and required
 * node affinity, looking only at keys the flavor sets: other keys are for kube-scheduler to judge
 * among the flavor's nodes. A term left empty by that filter matches any flavor.
 */
export function flavorMatchesAffinity(spec: PodSpecLike | undefined, nodeLabels: Record<string, string> | undefined): boolean {
  const labels = nodeLabels ?? {};
  const has = (k: string): boolean => Object.hasOwn(labels, k);
  for (const [k, v] of Object.entries(spec?.nodeSelector ?? {})) {
    if (has(k) && labels[k] !== v) return false;
  }
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  const filtered: { key: string; operator: string; values?: string[] }[][] = [];
  for (const t of terms) {
    const exps = (t.matchExpressions ?? []).filter((e) => has(e.key));
    if (exps.length === 0) return true;
    filtered.push(exps);
  }
  return filtered.some((exps) => exps.every((e) => requirementMatches(e.operator, has(e.key), labels[e.key], e.values ?? [])));
}

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator ?? 'Equal';
  if (op === 'Exists') return true;
  if (op === 'Equal') return (t.value ?? '') === (taint.value ?? '');
  return false;
}

/** Taint.ToString(): "key=value:Effect", or "key:Effect" without a value */
export function taintString(t: Taint): string {
  return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
}

/** The first NoSchedule or NoExecute taint that no toleration tolerates (PreferNoSchedule never blocks). */
export function untoleratedTaint(taints: Taint[] | undefined, tolerations: Toleration[]): Taint | undefined {
  for (const taint of taints ?? []) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerations.some((t) => tolerates(t, taint))) return taint;
  }
  return undefined;
}
