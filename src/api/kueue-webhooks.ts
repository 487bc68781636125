// Kueue's validating webhooks (pkg/webhooks): the checks a cluster running Kueue makes on
// ResourceFlavors, ClusterQueues, Cohorts and Workloads once the CRD's schema and CEL rules have
// passed, on the object as v1beta2, each refusal worded and placed as Kueue words and places it.
// src/api/kueue.ts runs them after the schema's checks.
import type { FieldError } from './errors.js';
import type { KObject } from './meta.js';
import { deepEqual } from './meta.js';
import { parseQuantity } from './quantity.js';
import { Validator, labelValueErrors, qualifiedNameErrors } from './validation.js';
import { isPlainObject } from '../util/objects.js';

type Json = Record<string, any>;

const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const map = (v: unknown): Json => (isPlainObject(v) ? v : {});

/** a quantity as Kueue's messages print it (resource.Quantity's String(): here as it was written) */
function shownQuantity(q: unknown): string {
  return typeof q === 'number' ? String(q) : String(q ?? '');
}

/** a value too big to print whole, as a cause shows it */
function shownObject(v: unknown): string {
  const s = JSON.stringify(v) ?? 'null';
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function conditionTrue(obj: KObject | undefined, type: string): boolean {
  return arr(obj?.status?.conditions).some((c) => c?.type === type && c?.status === 'True');
}

// ---- shared checks ----

/** apimachinery's ValidateLabels, as Kueue calls it on node labels, node selectors and labels */
function validateLabels(v: Validator, field: string, labels: unknown): void {
  if (!isPlainObject(labels)) return;
  for (const [k, val] of Object.entries(labels)) {
    for (const msg of qualifiedNameErrors(k)) v.invalid(field, k, msg);
    if (typeof val === 'string') for (const msg of labelValueErrors(val)) v.invalid(field, val, msg);
  }
}

/** a resource name is a label key (content.IsLabelKey) */
function validateResourceName(v: Validator, field: string, name: unknown): void {
  if (typeof name !== 'string') return;
  for (const msg of qualifiedNameErrors(name)) v.invalid(field, name, msg);
}

/** apimachinery's NotSupported: without valid values, the value alone */
function notSupported(v: Validator, field: string, value: unknown, allowed: string[]): void {
  if (allowed.length) v.notSupported(field, value, allowed);
  else v.add(field, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(value)}`);
}

function validateQuantityNotNegative(v: Validator, field: string, q: unknown): void {
  const n = parseQuantity(q);
  if (n !== undefined && n < 0) v.invalid(field, shownQuantity(q), 'must be greater than or equal to 0');
}

/** ClusterQueue and Cohort: `spec.fairSharing.weight` >= 0 and, when not 0, above 1n (weights that small collapse) */
function validateFairSharing(v: Validator, field: string, fs: unknown): void {
  if (!isPlainObject(fs) || fs.weight === undefined || fs.weight === null) return;
  const w = parseQuantity(fs.weight);
  if (w === undefined) return;
  if (w < 0) v.invalid(field, shownQuantity(fs.weight), 'must be greater than or equal to 0');
  if (w > 0 && w <= 1e-9) v.invalid(field, shownQuantity(fs.weight), 'When not 0, weight must be > 10e-9');
}

interface QuotaRules {
  /** a cohort (for a Cohort: a parent) to borrow from and lend to */
  hasParent: boolean;
  /** ClusterQueues only: lendingLimit <= nominalQuota */
  lendingAtMostNominal: boolean;
  isCohort: boolean;
}

/** resourceGroups of a ClusterQueue or Cohort, as Kueue's validateResourceGroups */
function validateResourceGroups(v: Validator, groups: unknown, path: string, rules: QuotaRules): void {
  const seenResources = new Set<string>();
  const seenFlavors = new Set<string>();
  arr(groups).forEach((rg: unknown, i: number) => {
    if (!isPlainObject(rg)) return;
    const at = `${path}[${i}]`;
    const covered = arr(rg.coveredResources);
    covered.forEach((name: unknown, j: number) => {
      const f = `${at}.coveredResources[${j}]`;
      validateResourceName(v, f, name);
      if (typeof name !== 'string') return;
      if (seenResources.has(name)) v.add(f, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(name)}`);
      else seenResources.add(name);
    });
    arr(rg.flavors).forEach((fq: unknown, j: number) => {
      if (!isPlainObject(fq)) return;
      const f = `${at}.flavors[${j}]`;
      validateFlavorQuotas(v, fq, covered, f, rules);
      if (typeof fq.name !== 'string') return;
      if (seenFlavors.has(fq.name)) v.add(`${f}.name`, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(fq.name)}`);
      else seenFlavors.add(fq.name);
    });
  });
}

function validateFlavorQuotas(v: Validator, fq: Json, covered: unknown[], path: string, rules: QuotaRules): void {
  const noParent = `must be nil when ${rules.isCohort ? 'parent' : 'cohort'} is empty`;
  arr(fq.resources).forEach((rq: unknown, i: number) => {
    // the schema's rule already refused a flavor whose resources do not line up with coveredResources
    if (i >= covered.length || !isPlainObject(rq)) return;
    const at = `${path}.resources[${i}]`;
    if (rq.name !== covered[i]) v.invalid(`${at}.name`, rq.name, 'must match the name in coveredResources');
    validateQuantityNotNegative(v, `${at}.nominalQuota`, rq.nominalQuota);
    if (rq.borrowingLimit !== undefined && rq.borrowingLimit !== null) {
      if (!rules.hasParent) v.invalid(`${at}.borrowingLimit`, shownQuantity(rq.borrowingLimit), noParent);
      validateQuantityNotNegative(v, `${at}.borrowingLimit`, rq.borrowingLimit);
    }
    if (rq.lendingLimit !== undefined && rq.lendingLimit !== null) {
      validateQuantityNotNegative(v, `${at}.lendingLimit`, rq.lendingLimit);
      if (!rules.hasParent) v.invalid(`${at}.lendingLimit`, shownQuantity(rq.lendingLimit), noParent);
      const lend = parseQuantity(rq.lendingLimit);
      const nominal = parseQuantity(rq.nominalQuota) ?? 0;
      if (rules.lendingAtMostNominal && lend !== undefined && lend > nominal) v.invalid(`${at}.lendingLimit`, shownQuantity(rq.lendingLimit), 'must be less than or equal to the nominalQuota');
    }
  });
}

/** apimachinery's ValidateLabelName (the key of a taint or toleration) */
function validateLabelName(v: Validator, field: string, key: unknown): void {
  if (typeof key !== 'string') return;
  for (const msg of qualifiedNameErrors(key)) v.invalid(field, key, msg);
}

function validateTolerations(v: Validator, tolerations: unknown, path: string): void {
  arr(tolerations).forEach((t: unknown, i: number) => {
    if (isPlainObject(t) && typeof t.key === 'string' && t.key.length > 0) validateLabelName(v, `${path}[${i}].key`, t.key);
  });
}

// ---- the webhooks, on v1beta2 objects ----

/** Kueue's ClusterQueue webhook (ValidateClusterQueue / ValidateClusterQueueUpdate) */
export function validateClusterQueueSpec(cq: KObject, old?: KObject): FieldError[] {
  const v = new Validator();
  const spec = map(cq.spec);
  const groups = arr(spec.resourceGroups);
  validateResourceGroups(v, groups, 'spec.resourceGroups', { hasParent: !!spec.cohortName, lendingAtMostNominal: true, isCohort: false });
  if (spec.namespaceSelector !== undefined && spec.namespaceSelector !== null) v.labelSelector('spec.namespaceSelector', spec.namespaceSelector);
  validateFairSharing(v, 'spec.fairSharing', spec.fairSharing);
  const flavors = groups.reduce((n: number, rg: unknown) => n + arr(map(rg).flavors).length, 0);
  if (flavors > 256) v.invalid('spec.resourceGroups', flavors, `total number of flavors across all resourceGroups must be ≤ 256, got ${flavors}`);
  const resources = groups.reduce((n: number, rg: unknown) => n + arr(map(rg).coveredResources).length, 0);
  if (resources > 256) v.invalid('spec.resourceGroups', resources, `total number of covered resources across all resourceGroups must be ≤ 256, got ${resources}`);
  groups.forEach((rg: unknown, i: number) => {
    const combos = arr(map(rg).flavors).reduce((n: number, f: unknown) => n + arr(map(f).resources).length, 0);
    if (combos > 512) v.invalid(`spec.resourceGroups[${i}]`, combos, `number of flavor-resource combinations in a resourceGroup must be ≤ 512, got ${combos}`);
  });
  // admission checks may name only the ClusterQueue's own flavors
  const allFlavors = groups.flatMap((rg: unknown) => arr(map(rg).flavors).map((f: unknown) => map(f).name)).filter((n): n is string => typeof n === 'string');
  arr(map(spec.admissionChecksStrategy).admissionChecks).forEach((check: unknown, i: number) => {
    arr(map(check).onFlavors).forEach((flavor: unknown, j: number) => {
      if (typeof flavor === 'string' && !allFlavors.includes(flavor)) notSupported(v, `spec.admissionChecksStrategy.admissionChecks[${i}].onFlavors[${j}]`, flavor, allFlavors);
    });
  });
  if (old && !deepEqual(spec.concurrentAdmissionPolicy, map(old.spec).concurrentAdmissionPolicy)) {
    v.invalid('spec.concurrentAdmissionPolicy', shownObject(spec.concurrentAdmissionPolicy ?? null), 'field is immutable');
  }
  return v.errors;
}

/** Kueue's Cohort webhook */
export function validateCohortSpec(cohort: KObject): FieldError[] {
  const v = new Validator();
  const spec = map(cohort.spec);
  validateFairSharing(v, 'spec.fairSharing', spec.fairSharing);
  validateResourceGroups(v, spec.resourceGroups, 'spec.resourceGroups', { hasParent: !!spec.parentName, lendingAtMostNominal: false, isCohort: true });
  return v.errors;
}

/** Kueue's ResourceFlavor webhook */
export function validateResourceFlavorSpec(rf: KObject): FieldError[] {
  const v = new Validator();
  const spec = map(rf.spec);
  validateLabels(v, 'spec.nodeLabels', spec.nodeLabels);
  const unique = new Map<string, Set<string>>();
  arr(spec.nodeTaints).forEach((t: unknown, i: number) => {
    if (!isPlainObject(t)) return;
    const at = `spec.nodeTaints[${i}]`;
    validateLabelName(v, `${at}.key`, t.key);
    if (typeof t.value === 'string') {
      const errs = labelValueErrors(t.value);
      if (errs.length) v.invalid(`${at}.value`, t.value, errs.join(';'));
    }
    const effect = String(t.effect ?? '');
    const keys = unique.get(effect) ?? new Set<string>();
    if (keys.has(String(t.key))) {
      v.add(at, 'FieldValueDuplicate', `Duplicate value: ${shownObject(t)}: taints must be unique by key and effect pair`);
      return;
    }
    keys.add(String(t.key));
    unique.set(effect, keys);
  });
  validateTolerations(v, spec.tolerations, 'spec.tolerations');
  return v.errors;
}

/** kube's ResourceValue: CPU in milli-units, anything else in units */
function resourceValue(name: string, q: unknown): number | undefined {
  const n = parseQuantity(q);
  if (n === undefined) return undefined;
  return name === 'cpu' ? Math.round(n * 1000) : Math.round(n);
}

/** requests and limits: no `pods` (Kueue counts pods itself), nothing negative */
function validateResourceList(v: Validator, list: unknown, path: string): void {
  for (const [name, q] of Object.entries(map(list))) {
    if (name === 'pods') v.invalid(`${path}[pods]`, 'pods', 'the key is reserved for internal kueue use');
    validateQuantityNotNegative(v, `${path}[${name}]`, q);
  }
}

function validatePodSet(v: Validator, ps: Json, path: string): void {
  const tmpl = map(ps.template);
  validateLabels(v, `${path}.template.metadata.labels`, map(tmpl.metadata).labels);
  const annotations = map(map(tmpl.metadata).annotations);
  for (const k of Object.keys(annotations)) for (const msg of qualifiedNameErrors(k.toLowerCase())) v.invalid(`${path}.template.metadata.annotations`, k, msg);
  const podSpec = map(tmpl.spec);
  for (const kind of ['initContainers', 'containers'] as const) {
    arr(podSpec[kind]).forEach((c: unknown, i: number) => {
      const res = map(map(c).resources);
      validateResourceList(v, res.requests, `${path}.template.spec.${kind}[${i}].resources.requests`);
      validateResourceList(v, res.limits, `${path}.template.spec.${kind}[${i}].resources.limits`);
    });
  }
  if (isPlainObject(podSpec.resources)) {
    validateResourceList(v, podSpec.resources.requests, `${path}.template.spec.resources.requests`);
    validateResourceList(v, podSpec.resources.limits, `${path}.template.spec.resources.limits`);
  }
  const tr = ps.topologyRequest;
  if (isPlainObject(tr)) {
    const at = `${path}.topologyRequest`;
    if (tr.podSetSliceRequiredTopology !== undefined && tr.podSetSliceRequiredTopology !== null) {
      if (tr.podSetSliceSize === undefined || tr.podSetSliceSize === null) v.required(`${at}.podSetSliceSize`, 'Required value: must be set when podSetSliceRequiredTopology is specified');
      else if (typeof tr.podSetSliceSize === 'number' && tr.podSetSliceSize <= 0) v.invalid(`${at}.podSetSliceSize`, tr.podSetSliceSize, 'must be greater than 0');
    } else if (tr.podSetSliceSize !== undefined && tr.podSetSliceSize !== null) {
      v.add(`${at}.podSetSliceSize`, 'FieldValueForbidden', 'Forbidden: may not be set when podSetSliceRequiredTopology is not specified');
    }
    arr(tr.podsetSliceRequiredTopologyConstraints).forEach((c: unknown, i: number) => {
      const size = map(c).size;
      if (typeof size === 'number' && size <= 0) v.invalid(`${at}.podsetSliceRequiredTopologyConstraints[${i}].size`, size, 'must be greater than 0');
    });
  }
}

const elasticJobAnnotation = 'kueue.x-k8s.io/elastic-job';

/** Kueue's Workload webhook on create (and, with `old`, the checks every update repeats) */
export function validateWorkloadObject(wl: KObject, old?: KObject): FieldError[] {
  const v = new Validator();
  const podSets = arr(map(wl.spec).podSets);
  let variable = 0;
  podSets.forEach((ps: unknown, i: number) => {
    if (!isPlainObject(ps)) return;
    validatePodSet(v, ps, `spec.podSets[${i}]`);
    if (ps.minCount !== undefined && ps.minCount !== null) variable++;
  });
  if (variable > 1) v.invalid('spec.podSets', variable, 'at most one podSet can use minCount');
  if (variable > 0 && wl.metadata.annotations?.[elasticJobAnnotation] === 'true') v.invalid('spec.podSets', variable, 'partial admission and elastic job cannot be used together');

  const status = map(wl.status);
  const names = podSets.map((ps: unknown) => map(ps).name as unknown);
  if (conditionTrue(wl, 'QuotaReserved')) {
    const admission = status.admission;
    // one that already held quota without an admission may change, so it can be put right
    const wasBroken = old !== undefined && conditionTrue(old, 'QuotaReserved') && !isPlainObject(map(old.status).admission);
    if (!isPlainObject(admission)) {
      if (!wasBroken) v.required('status.admission', 'Required value: must be set while the QuotaReserved condition is true');
    } else {
      arr(admission.podSetAssignments).forEach((psa: unknown, i: number) => {
        const a = map(psa);
        const at = `status.admission.podSetAssignments[${i}]`;
        if (!names.includes(a.name)) v.add(`${at}.name`, 'FieldValueNotFound', `Not found: ${JSON.stringify(a.name)}`);
        const count = typeof a.count === 'number' ? a.count : 0;
        if (count <= 0) return;
        for (const [res, q] of Object.entries(map(a.resourceUsage))) {
          const value = resourceValue(res, q);
          if (value !== undefined && value % count !== 0) v.invalid(`${at}.resourceUsage[${res}]`, shownQuantity(q), `is not a multiple of ${count}`);
        }
      });
    }
  }
  // reclaimable pods name a pod set and never more pods than it has
  for (const rp of arr(status.reclaimablePods)) {
    const r = map(rp);
    const at = `status.reclaimablePods[${String(r.name)}]`;
    const ps = podSets.find((p: unknown) => map(p).name === r.name);
    if (!ps) notSupported(v, `${at}.name`, r.name, names.map(String));
    else if (typeof r.count === 'number' && typeof ps.count === 'number' && r.count > ps.count) v.invalid(`${at}.count`, r.count, `should be less or equal to ${ps.count}`);
  }
  arr(status.admissionChecks).forEach((acs: unknown, i: number) => {
    arr(map(acs).podSetUpdates).forEach((psu: unknown, j: number) => {
      const u = map(psu);
      const at = `status.admissionChecks[${i}].podSetUpdates[${j}]`;
      if (!names.includes(u.name)) notSupported(v, `${at}.name`, u.name, names.map(String).sort());
      validateTolerations(v, u.tolerations, `${at}.tolerations`);
      for (const k of Object.keys(map(u.annotations))) for (const msg of qualifiedNameErrors(k.toLowerCase())) v.invalid(`${at}.annotations`, k, msg);
      validateLabels(v, `${at}.nodeSelector`, u.nodeSelector);
      validateLabels(v, `${at}.labels`, u.labels);
    });
  });
  return v.errors;
}

/** Kueue's Workload webhook on update: what may not change while the Workload holds quota */
export function validateWorkloadUpdate(wl: KObject, old: KObject): FieldError[] {
  const v = new Validator();
  v.errors.push(...validateWorkloadObject(wl, old));
  const podSets = arr(map(wl.spec).podSets);
  const oldPodSets = arr(map(old.spec).podSets);
  if (conditionTrue(old, 'QuotaReserved')) {
    if (podSets.length !== oldPodSets.length) v.invalid('spec.podSets', shownObject(podSets), 'field is immutable');
    else podSets.forEach((ps: unknown, i: number) => {
      if (!deepEqual(ps, oldPodSets[i])) v.invalid(`spec.podSets.${i}`, shownObject(ps), 'field is immutable');
    });
  }
  const status = map(wl.status);
  const oldStatus = map(old.status);
  if (conditionTrue(wl, 'QuotaReserved') && conditionTrue(old, 'QuotaReserved')) {
    const before = new Map<string, number>(arr(oldStatus.reclaimablePods).map((r: unknown) => [String(map(r).name), Number(map(r).count)]));
    const now = new Set<string>();
    for (const r of arr(status.reclaimablePods).map(map)) {
      now.add(String(r.name));
      const was = before.get(String(r.name));
      if (was !== undefined && typeof r.count === 'number' && r.count < was) v.invalid(`status.reclaimablePods[${String(r.name)}].count`, r.count, `cannot be less than ${was}`);
    }
    for (const name of before.keys()) if (!now.has(name)) v.required(`status.reclaimablePods[${name}]`, 'Required value: cannot be removed');
  }
  // an admission may be set or cleared, not changed (but for its topology assignments, written later)
  if (isPlainObject(status.admission) && isPlainObject(oldStatus.admission)) {
    const strip = (a: Json): Json => ({ ...a, podSetAssignments: arr(a.podSetAssignments).map((p: unknown) => ({ ...map(p), topologyAssignment: undefined, delayedTopologyRequest: undefined })) });
    const sameLength = arr(status.admission.podSetAssignments).length === arr(oldStatus.admission.podSetAssignments).length;
    if (!sameLength || !deepEqual(strip(status.admission), strip(oldStatus.admission))) v.invalid('status.admission', shownObject(status.admission), 'field is immutable');
  }
  // updates an admission check made once Ready stay as they were
  for (const [i, oldAc] of arr(oldStatus.admissionChecks).map(map).entries()) {
    const newAc = arr(status.admissionChecks).map(map).find((a) => a.name === oldAc.name);
    if (!newAc || oldAc.state !== 'Ready' || newAc.state !== 'Ready') continue;
    if (!deepEqual(newAc.podSetUpdates, oldAc.podSetUpdates)) v.invalid(`status.admissionChecks[${i}].podSetUpdates`, shownObject(newAc.podSetUpdates ?? null), 'field is immutable');
  }
  if ((oldStatus.clusterName === undefined || oldStatus.clusterName === null) && typeof status.clusterName === 'string') {
    if (!arr(oldStatus.nominatedClusterNames).includes(status.clusterName)) v.invalid('status.clusterName', status.clusterName, 'when setting clusterName it must be one of the nominatedClusterNames');
  }
  return v.errors;
}
