// Kueue's API, kueue.x-k8s.io: ResourceFlavor, ClusterQueue, Cohort and WorkloadPriorityClass
// (cluster-scoped), LocalQueue and Workload (namespaced), served in v1beta2 (stored) and v1beta1
// (converted as Kueue's conversion webhook converts: src/api/kueue-conversion.ts). The types are in
// src/api/kueue-types.ts.
//
// An object goes through what a cluster running Kueue does to it, in that order:
//   1. the CRD's schema for the request's version (src/api/crd-schema.ts): defaults (queueingStrategy
//      BestEffortFIFO, every preemption policy Never, flavorFungibility MayStopSearch /
//      TryNextFlavor, stopPolicy None, a pod set's name "main" and count 1, ...), types, enums,
//      bounds (16 resource groups, 64 resources and 64 flavors in one, 1 to 18 pod sets, ...), and the
//      CEL rules (every flavor lists exactly its group's resources, borrowingLimit needs a cohort,
//      reclaimWithinCohort Never forbids borrowWithinCohort, LocalQueue.spec.clusterQueue is
//      immutable, minCount <= count, priorityClassRef's group and kind go together, ...);
//   2. when that passes, Kueue's validating webhooks (pkg/webhooks), on the object as v1beta2: a
//      resource or a flavor in one resource group only, a quota's resource named as its group covers
//      it, quantities >= 0, lendingLimit <= nominalQuota, limits of 256 flavors and 256 resources in
//      all, fair-sharing weights, label and taint rules, the reserved resource `pods`, a Workload's
//      status and its changes while it holds quota.
// Errors name the field as the API server names it and come back 422 Invalid with a cause each. (A
// cluster answers a webhook's refusal 403 "admission webhook ... denied the request" with the same
// text and no causes; Skiff keeps one form for every refusal.)
//
// Not done here: Kueue's mutating webhooks also put the `kueue.x-k8s.io/resource-in-use` finalizer on
// new ClusterQueues and ResourceFlavors. Only the queue controllers can take it off, so they put it on
// (KueueNames.resourceInUseFinalizer).
import type { FieldError } from './errors.js';
import { applyCrdDefaults, validateCrdObject } from './crd-schema.js';
import { unknownFieldErrors } from './field-validation.js';
import { kueueToV1beta1, kueueToV1beta2 } from './kueue-conversion.js';
import { KueueGroup, KueueStorageVersion } from './kueue-types.js';
import type { KObject, StoredObject } from './meta.js';
import { clone, deepEqual } from './meta.js';
import { schemaCatalog } from './openapi-schemas.js';
import { parseQuantity } from './quantity.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { Validator, labelValueErrors, qualifiedNameErrors } from './validation.js';
import { isPlainObject } from '../util/objects.js';

export * from './kueue-types.js';

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

// ---- the kinds ----

interface KueueKindInfo {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  hasStatus: boolean;
  columns(version: string): PrinterColumn[] | undefined;
  /** the webhook's checks on a v1beta2 object (`old` on update) */
  webhook?(obj: KObject, old?: KObject): FieldError[];
  /** on a status write, the webhook's checks (the schema's are made for every kind) */
  statusWebhook?(obj: KObject, old: KObject): FieldError[];
}

const kueueKindInfos: KueueKindInfo[] = [
  {
    kind: 'ResourceFlavor', plural: 'resourceflavors', singular: 'resourceflavor', shortNames: ['flavor', 'flavors', 'rf'], namespaced: false, hasStatus: false,
    columns: () => undefined,
    webhook: validateResourceFlavorSpec,
  },
  {
    kind: 'ClusterQueue', plural: 'clusterqueues', singular: 'clusterqueue', shortNames: ['cq'], namespaced: false, hasStatus: true,
    columns: (version) => [
      { name: 'Cohort', type: 'string', jsonPath: version === 'v1beta1' ? '.spec.cohort' : '.spec.cohortName', description: 'Cohort that this ClusterQueue belongs to' },
      { name: 'Strategy', type: 'string', jsonPath: '.spec.queueingStrategy', description: 'The queueing strategy used to prioritize workloads', priority: 1 },
      { name: 'Pending Workloads', type: 'integer', jsonPath: '.status.pendingWorkloads', description: 'Number of pending workloads' },
      { name: 'Admitted Workloads', type: 'integer', jsonPath: '.status.admittedWorkloads', description: "Number of admitted workloads that haven't finished yet", priority: 1 },
    ],
    webhook: validateClusterQueueSpec,
  },
  {
    kind: 'Cohort', plural: 'cohorts', singular: 'cohort', shortNames: ['co'], namespaced: false, hasStatus: true,
    columns: () => undefined,
    webhook: validateCohortSpec,
  },
  {
    kind: 'LocalQueue', plural: 'localqueues', singular: 'localqueue', shortNames: ['queue', 'queues', 'lq'], namespaced: true, hasStatus: true,
    columns: () => [
      { name: 'ClusterQueue', type: 'string', jsonPath: '.spec.clusterQueue', description: 'Backing ClusterQueue' },
      { name: 'Pending Workloads', type: 'integer', jsonPath: '.status.pendingWorkloads', description: 'Number of pending workloads' },
      { name: 'Admitted Workloads', type: 'integer', jsonPath: '.status.admittedWorkloads', description: 'Number of admitted workloads that haven\'t finished yet.' },
    ],
  },
  {
    kind: 'WorkloadPriorityClass', plural: 'workloadpriorityclasses', singular: 'workloadpriorityclass', shortNames: ['wpc'], namespaced: false, hasStatus: false,
    columns: () => [{ name: 'Value', type: 'integer', jsonPath: '.value', description: 'Value of workloadPriorityClass\'s Priority' }],
  },
  {
    // Kueue dropped the short name `wl` in 0.16 (kubernetes-sigs/kueue#8472) for being too general a
    // word; nothing else Skiff serves is called that, and users of older Kueue type it, so it stays
    kind: 'Workload', plural: 'workloads', singular: 'workload', shortNames: ['kwl', 'kueueworkload', 'kueueworkloads', 'wl'], namespaced: true, hasStatus: true,
    columns: () => [
      { name: 'Queue', type: 'string', jsonPath: '.spec.queueName', description: 'Name of the queue this workload was submitted to' },
      { name: 'Reserved in', type: 'string', jsonPath: '.status.admission.clusterQueue', description: 'Name of the ClusterQueue where the workload is reserving quota' },
      { name: 'Admitted', type: 'string', jsonPath: '.status.conditions[?(@.type==\'Admitted\')].status', description: 'Admission status' },
      { name: 'Finished', type: 'string', jsonPath: '.status.conditions[?(@.type==\'Finished\')].status', description: 'Workload finished' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time this workload was created' },
    ],
    webhook: (wl, old) => (old ? validateWorkloadUpdate(wl, old) : validateWorkloadObject(wl)),
    statusWebhook: (wl, old) => validateWorkloadUpdate(wl, old),
  },
];

function kueueKind(info: KueueKindInfo, version: string): KindDef {
  const stored = version === KueueStorageVersion;
  const asStored = (o: KObject): KObject => (stored ? o : kueueToV1beta2(o));
  const def: KindDef = {
    group: KueueGroup, version, kind: info.kind, plural: info.plural, singular: info.singular, shortNames: info.shortNames,
    namespaced: info.namespaced, hasStatus: info.hasStatus,
    default(obj) {
      applyCrdDefaults(KueueGroup, version, info.kind, obj);
    },
    validate(obj, old) {
      const v = new Validator();
      v.dnsSubdomain('metadata.name', obj.metadata.name);
      if (v.errors.length) return v.errors;
      // on the main resource the status stays as it is: the rules see the status the object keeps
      const full = info.hasStatus ? withStatus(obj, old) : obj;
      const skip = info.hasStatus ? ['status'] : [];
      const errs = [
        ...unknownFieldErrors(schemaCatalog(), KueueGroup, version, info.kind, obj as Record<string, unknown>, ['status']),
        ...validateCrdObject(KueueGroup, version, info.kind, full, old, { skip }),
      ];
      if (errs.length || !info.webhook) return errs;
      return info.webhook(asStored(full), old ? asStored(old) : undefined);
    },
    printerColumns: info.columns(version),
  };
  if (stored && info.hasStatus) {
    def.validateStatus = (obj: KObject, old: StoredObject): FieldError[] => {
      const errs = validateCrdObject(KueueGroup, version, info.kind, obj, old);
      if (errs.length || !info.statusWebhook) return errs;
      return info.statusWebhook(obj, old);
    };
  }
  if (!stored) {
    def.conversion = {
      storageVersion: KueueStorageVersion,
      toStorage: kueueToV1beta2,
      fromStorage(obj) {
        const out = kueueToV1beta1(obj);
        // as the API server decodes a stored object in the version asked for: with that version's defaults
        applyCrdDefaults(KueueGroup, version, info.kind, out);
        return out;
      },
    };
  }
  return def;
}

function withStatus(obj: KObject, old: StoredObject | undefined): KObject {
  const out = { ...obj };
  if (old?.status !== undefined) out.status = clone(old.status);
  else delete out.status;
  return out;
}

const v1beta2Kinds = kueueKindInfos.map((info) => kueueKind(info, 'v1beta2'));
const v1beta1Kinds = kueueKindInfos.map((info) => kueueKind(info, 'v1beta1'));

function find(defs: KindDef[], kind: string): KindDef {
  const def = defs.find((d) => d.kind === kind);
  if (!def) throw new Error(`kind ${kind} is not defined`);
  return def;
}

export const ResourceFlavorKind = find(v1beta2Kinds, 'ResourceFlavor');
export const ClusterQueueKind = find(v1beta2Kinds, 'ClusterQueue');
export const CohortKind = find(v1beta2Kinds, 'Cohort');
export const LocalQueueKind = find(v1beta2Kinds, 'LocalQueue');
export const WorkloadPriorityClassKind = find(v1beta2Kinds, 'WorkloadPriorityClass');
export const WorkloadKind = find(v1beta2Kinds, 'Workload');

/** every kueue.x-k8s.io kind in both versions: v1beta2 (stored) first */
export const kueueKinds: KindDef[] = [...v1beta2Kinds, ...v1beta1Kinds];

/** a stored (v1beta2) object as a v1beta1 client reads it, and back: for tests and tools */
export function toV1beta1(obj: KObject): KObject {
  const out = kueueToV1beta1(obj);
  applyCrdDefaults(KueueGroup, 'v1beta1', obj.kind, out);
  return out;
}

export function toV1beta2(obj: KObject): KObject {
  const out = kueueToV1beta2(obj);
  applyCrdDefaults(KueueGroup, 'v1beta2', obj.kind, out);
  return out;
}
