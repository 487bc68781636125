// The kfp-kubernetes settings that place a Pod on a cluster: node selector, tolerations, node and
// pod (anti-)affinity. This machine is one node without taints, so each is kept on the Pod (the
// node selector in an annotation: on spec.nodeSelector it would keep the Pod from ever starting)
// and said in a note, not enforced.
import { isQualifiedName } from '../../api/validation.js';
import { isPlainObject } from '../../util/objects.js';
import type { Change, PlatformContext } from './platform-fields.js';
import { entry, fail, jsonFrom, list, optBool, optInt, optString, reqString, show, skipped, stringList, stringMap } from './platform-fields.js';

/** The annotation that keeps a task's node selector (it is not put in spec.nodeSelector). */
export const NODE_SELECTOR_ANNOTATION = 'pipelines.kubeflow.org/node-selector';

function selectorRequirements(v: unknown, field: string): { key: string; operator: string; values?: string[] }[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(field, `expected a list, got ${show(v)}`);
  return v.map((x, i) => {
    const f = `${field}[${i}]`;
    const e = entry(x, f);
    const key = reqString(e, 'key', f);
    const operator = reqString(e, 'operator', f);
    const values = stringList(e, 'values', f);
    return values && values.length ? { key, operator, values } : { key, operator };
  });
}

function weightOf(obj: Record<string, unknown>, field: string): number | undefined {
  const w = obj['weight'];
  if (w === undefined || w === null) return undefined;
  if (typeof w !== 'number' || !Number.isInteger(w) || w < 1 || w > 100) fail(field, `weight must be an integer from 1 to 100, got ${show(w)}`);
  return w;
}

function toleration(t: unknown, field: string): Record<string, unknown> {
  const e = entry(t, field);
  const out: Record<string, unknown> = {};
  const key = optString(e, 'key', field);
  const operator = optString(e, 'operator', field);
  const value = optString(e, 'value', field);
  const effect = optString(e, 'effect', field);
  const seconds = optInt(e, 'tolerationSeconds', field);
  if (operator !== undefined && operator !== 'Exists' && operator !== 'Equal') fail(field, `operator must be Exists or Equal, got ${JSON.stringify(operator)}`);
  if (operator === 'Exists' && value !== undefined) fail(field, 'value must be empty when operator is Exists');
  if (key === undefined && operator !== 'Exists') fail(field, 'operator must be Exists when key is empty');
  if (effect !== undefined && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) fail(field, `effect must be NoSchedule, PreferNoSchedule or NoExecute, got ${JSON.stringify(effect)}`);
  if (seconds !== undefined && effect !== 'NoExecute') fail(field, 'tolerationSeconds needs effect NoExecute');
  if (key !== undefined) out['key'] = key;
  if (operator !== undefined) out['operator'] = operator;
  if (value !== undefined) out['value'] = value;
  if (effect !== undefined) out['effect'] = effect;
  if (seconds !== undefined) out['tolerationSeconds'] = seconds;
  return out;
}

function describeSelector(sel: Record<string, string>): string {
  return Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(', ');
}


/** nodeSelector: labels, or a JSON parameter (nodeSelectorJson) */
export function nodeSelector(c: PlatformContext): Change | void {
  if (c.config['nodeSelector'] === undefined || c.config['nodeSelector'] === null) return;
  const ns = entry(c.config['nodeSelector'], 'nodeSelector');
  let found: Record<string, string> | undefined;
  if (ns['nodeSelectorJson'] !== undefined && ns['nodeSelectorJson'] !== null) {
    const v = jsonFrom(c.resolve, ns['nodeSelectorJson'], 'nodeSelector.nodeSelectorJson');
    if (v === undefined) skipped(c, 'nodeSelector', 'nodeSelectorJson');
    else found = stringMap(v, 'nodeSelector.nodeSelectorJson');
  } else found = stringMap(ns['labels'], 'nodeSelector.labels');
  if (found) for (const k of Object.keys(found)) if (!isQualifiedName(k)) fail(`nodeSelector[${JSON.stringify(k)}]`, 'a label key must be a qualified name');
  if (!found || Object.keys(found).length === 0) return;
  const sel = found;
  return () => {
    (c.pod.metadata.annotations ??= {})[NODE_SELECTOR_ANNOTATION] = JSON.stringify(sel);
    c.notes.add(`nodeSelector ${describeSelector(sel)} is not applied: this machine is one node, whose labels a cluster's node selector would never match, so the Pod would never start; it is kept in the annotation ${NODE_SELECTOR_ANNOTATION}`);
  };
}

/** tolerations: entries, or a JSON parameter holding one or a list */
export function tolerations(c: PlatformContext): Change | void {
  const found: Record<string, unknown>[] = [];
  list(c.config, 'tolerations').forEach((x, i) => {
    const f = `tolerations[${i}]`;
    const e = entry(x, f);
    if (e['tolerationJson'] !== undefined && e['tolerationJson'] !== null) {
      const v = jsonFrom(c.resolve, e['tolerationJson'], `${f}.tolerationJson`);
      if (v === undefined) return skipped(c, f, 'tolerationJson');
      const items = Array.isArray(v) ? v : isPlainObject(v) && Object.keys(v).length === 0 ? [] : [v];
      items.forEach((t, j) => found.push(toleration(t, Array.isArray(v) ? `${f}.tolerationJson[${j}]` : `${f}.tolerationJson`)));
    } else found.push(toleration(e, f));
  });
  if (!found.length) return;
  return () => {
    c.spec.tolerations = [...(c.spec.tolerations ?? []), ...found];
    c.notes.add('tolerations are kept on the Pod but have no effect: the local node has no taints');
  };
}

/** nodeAffinity: match expressions and fields (weighted: preferred), or a JSON parameter holding a NodeAffinity */
export function nodeAffinity(c: PlatformContext): Change | void {
  const required: unknown[] = [];
  const preferred: unknown[] = [];
  list(c.config, 'nodeAffinity').forEach((x, i) => {
    const f = `nodeAffinity[${i}]`;
    const e = entry(x, f);
    if (e['nodeAffinityJson'] !== undefined && e['nodeAffinityJson'] !== null) {
      const v = jsonFrom(c.resolve, e['nodeAffinityJson'], `${f}.nodeAffinityJson`);
      if (v === undefined) return skipped(c, f, 'nodeAffinityJson');
      const na = entry(v, `${f}.nodeAffinityJson`);
      const req = na['requiredDuringSchedulingIgnoredDuringExecution'];
      if (req !== undefined && req !== null) {
        const terms = entry(req, `${f}.nodeAffinityJson.requiredDuringSchedulingIgnoredDuringExecution`)['nodeSelectorTerms'];
        if (!Array.isArray(terms)) fail(`${f}.nodeAffinityJson.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`, 'expected a list');
        required.push(...terms.map((t, j) => entry(t, `${f}.nodeAffinityJson.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${j}]`)));
      }
      const pref = na['preferredDuringSchedulingIgnoredDuringExecution'];
      if (pref !== undefined && pref !== null) {
        if (!Array.isArray(pref)) fail(`${f}.nodeAffinityJson.preferredDuringSchedulingIgnoredDuringExecution`, 'expected a list');
        pref.forEach((p, j) => {
          const pf = `${f}.nodeAffinityJson.preferredDuringSchedulingIgnoredDuringExecution[${j}]`;
          const pe = entry(p, pf);
          const weight = weightOf(pe, pf);
          if (weight === undefined) fail(pf, 'weight is required');
          preferred.push({ weight, preference: entry(pe['preference'], `${pf}.preference`) });
        });
      }
      return;
    }
    const matchExpressions = selectorRequirements(e['matchExpressions'], `${f}.matchExpressions`);
    const matchFields = selectorRequirements(e['matchFields'], `${f}.matchFields`);
    if (matchExpressions.length === 0 && matchFields.length === 0) return c.notes.add(`${f} is empty and is ignored`);
    const term = { ...(matchExpressions.length ? { matchExpressions } : {}), ...(matchFields.length ? { matchFields } : {}) };
    const weight = weightOf(e, f);
    if (weight !== undefined) preferred.push({ weight, preference: term });
    else required.push(term);
  });
  if (!required.length && !preferred.length) return;
  return () => {
    const na: Record<string, unknown> = {};
    if (required.length) na['requiredDuringSchedulingIgnoredDuringExecution'] = { nodeSelectorTerms: required };
    if (preferred.length) na['preferredDuringSchedulingIgnoredDuringExecution'] = preferred;
    c.spec.affinity = { ...(c.spec.affinity ?? {}), nodeAffinity: na };
    c.notes.add('node affinity is kept on the Pod but not enforced: this machine is one node');
  };
}

/** podAffinity: terms over pod and namespace labels; `anti` ones go to podAntiAffinity */
export function podAffinity(c: PlatformContext): Change | void {
  const podAff: { required: unknown[]; preferred: unknown[] } = { required: [], preferred: [] };
  const podAnti: { required: unknown[]; preferred: unknown[] } = { required: [], preferred: [] };
  list(c.config, 'podAffinity').forEach((x, i) => {
    const f = `podAffinity[${i}]`;
    const e = entry(x, f);
    const topologyKey = reqString(e, 'topologyKey', f);
    const podExpr = selectorRequirements(e['matchPodExpressions'], `${f}.matchPodExpressions`);
    const podLabels = stringMap(e['matchPodLabels'], `${f}.matchPodLabels`);
    const nsExpr = selectorRequirements(e['matchNamespaceExpressions'], `${f}.matchNamespaceExpressions`);
    const nsLabels = stringMap(e['matchNamespaceLabels'], `${f}.matchNamespaceLabels`);
    const namespaces = stringList(e, 'namespaces', f);
    const selector = (expr: unknown[], lbls: Record<string, string>): Record<string, unknown> => ({
      ...(expr.length ? { matchExpressions: expr } : {}), ...(Object.keys(lbls).length ? { matchLabels: lbls } : {}),
    });
    const term: Record<string, unknown> = { labelSelector: selector(podExpr, podLabels), topologyKey };
    if (namespaces && namespaces.length) term['namespaces'] = namespaces;
    if (nsExpr.length || Object.keys(nsLabels).length) term['namespaceSelector'] = selector(nsExpr, nsLabels);
    const weight = weightOf(e, f);
    const into = optBool(e, 'anti', f) ? podAnti : podAff;
    if (weight !== undefined) into.preferred.push({ weight, podAffinityTerm: term });
    else into.required.push(term);
  });
  if (![podAff, podAnti].some((t) => t.required.length || t.preferred.length)) return;
  return () => {
    for (const [key, terms] of [['podAffinity', podAff], ['podAntiAffinity', podAnti]] as const) {
      if (!terms.required.length && !terms.preferred.length) continue;
      const a: Record<string, unknown> = {};
      if (terms.required.length) a['requiredDuringSchedulingIgnoredDuringExecution'] = terms.required;
      if (terms.preferred.length) a['preferredDuringSchedulingIgnoredDuringExecution'] = terms.preferred;
      c.spec.affinity = { ...(c.spec.affinity ?? {}), [key]: a };
      c.notes.add(`${key === 'podAffinity' ? 'pod affinity' : 'pod anti-affinity'} is kept on the Pod but not enforced: this machine is one node`);
    }
  };
}
