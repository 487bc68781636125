// kueue.x-k8s.io v1beta1 <-> v1beta2, as Kueue's conversion webhook converts (apis/kueue/v1beta1/
// *_conversion.go and the generated conversions beside them). v1beta2 is stored; a v1beta1 request
// is converted up before it is stored and every answer down to v1beta1.
//
// What changes between the two:
//   ClusterQueue  spec.cohort <-> spec.cohortName; v1beta1's spec.admissionChecks (names) become
//                 spec.admissionChecksStrategy.admissionChecks (nothing goes back: v1beta1 serves the
//                 strategy too); flavorFungibility's Borrow and Preempt become MayStopSearch;
//                 v1beta2's concurrentAdmissionPolicy and v1beta1's status.pendingWorkloadsStatus and
//                 status.fairSharing.admissionFairSharingStatus have no counterpart and are dropped
//   Cohort        status.fairSharing.admissionFairSharingStatus (v1beta1 only) is dropped
//   LocalQueue    status.flavorUsage (v1beta1) <-> status.flavorsUsage (v1beta2); v1beta1's
//                 status.flavors is dropped
//   Workload      spec.priorityClassSource + spec.priorityClassName <-> spec.priorityClassRef
//                 {group, kind, name}; status.accumulatedPastExexcutionTimeSeconds (v1beta1's
//                 spelling) <-> accumulatedPastExecutionTimeSeconds; a topology assignment's
//                 domains <-> slices; v1beta2's spec/status.preemptionGates and a topology request's
//                 podsetSliceRequiredTopologyConstraints are dropped going down
//   ResourceFlavor, WorkloadPriorityClass: the same in both
//
// The conversions are lossy where Kueue's are: an object written through v1beta1 loses what only
// v1beta2 can say.
import type { KObject } from './meta.js';
import { clone } from './meta.js';
import { isPlainObject } from '../util/objects.js';

type Json = Record<string, unknown>;

const group = 'kueue.x-k8s.io';
const workloadPriorityClassSource = 'kueue.x-k8s.io/workloadpriorityclass';
const podPriorityClassSource = 'scheduling.k8s.io/priorityclass';

function obj(v: unknown): Json | undefined {
  return isPlainObject(v) ? v : undefined;
}

/** renames a field of an object in place, keeping its place among the keys out of the way */
function rename(o: Json | undefined, from: string, to: string): void {
  if (!o || !(from in o)) return;
  const v = o[from];
  delete o[from];
  if (v !== undefined) o[to] = v;
}

function withVersion(o: KObject, version: string): KObject {
  o.apiVersion = `${group}/${version}`;
  return o;
}

// ---- ClusterQueue ----

function clusterQueueUp(o: KObject): void {
  const spec = obj(o.spec);
  if (spec) {
    rename(spec, 'cohort', 'cohortName');
    const checks = spec.admissionChecks;
    delete spec.admissionChecks;
    if (Array.isArray(checks) && checks.length > 0) spec.admissionChecksStrategy = { admissionChecks: checks.map((name) => ({ name })) };
    const ff = obj(spec.flavorFungibility);
    if (ff?.whenCanBorrow === 'Borrow') ff.whenCanBorrow = 'MayStopSearch';
    if (ff?.whenCanPreempt === 'Preempt') ff.whenCanPreempt = 'MayStopSearch';
  }
  const status = obj(o.status);
  if (status) {
    delete status.pendingWorkloadsStatus;
    delete obj(status.fairSharing)?.admissionFairSharingStatus;
  }
}

function clusterQueueDown(o: KObject): void {
  const spec = obj(o.spec);
  if (spec) {
    rename(spec, 'cohortName', 'cohort');
    delete spec.concurrentAdmissionPolicy;
  }
}

// ---- Cohort ----

function cohortUp(o: KObject): void {
  delete obj(obj(o.status)?.fairSharing)?.admissionFairSharingStatus;
}

// ---- LocalQueue ----

function localQueueUp(o: KObject): void {
  const status = obj(o.status);
  rename(status, 'flavorUsage', 'flavorsUsage');
  if (status) delete status.flavors;
}

function localQueueDown(o: KObject): void {
  rename(obj(o.status), 'flavorsUsage', 'flavorUsage');
}

// ---- Workload ----

interface Domain {
  values: string[];
  count: number;
}

/** the longest common prefix and suffix of strings, not overlapping within the shortest */
function affixes(values: string[]): { prefix: string; suffix: string } {
  let prefix = values[0] ?? '';
  let suffix = values[0] ?? '';
  for (const s of values) {
    let i = 0;
    while (i < prefix.length && i < s.length && s[i] === prefix[i]) i++;
    prefix = prefix.slice(0, i);
    let j = 0;
    while (j < suffix.length && j < s.length && s[s.length - 1 - j] === suffix[suffix.length - 1 - j]) j++;
    suffix = suffix.slice(suffix.length - j);
  }
  const shortest = Math.min(...values.map((s) => s.length));
  if (prefix.length + suffix.length > shortest) prefix = prefix.slice(0, Math.max(0, shortest - suffix.length));
  return { prefix, suffix };
}

/**
 * v1beta1's list of domains as v1beta2's compact form: one slice, each level's values one universal
 * value when all are equal or else their roots between a common prefix and suffix, and one universal
 * pod count when all are equal (Kueue's single-slice encoding).
 */
export function topologySlicesFrom(levels: string[], domains: Domain[]): Json[] {
  if (domains.length === 0) return [];
  const valuesPerLevel = levels.map((_, li) => {
    const values = domains.map((d) => d.values[li] ?? '');
    if (values.every((v) => v === values[0])) return { universal: values[0] };
    const { prefix, suffix } = affixes(values);
    const individual: Json = {};
    if (prefix) individual.prefix = prefix;
    if (suffix) individual.suffix = suffix;
    individual.roots = values.map((v) => v.slice(prefix.length, v.length - suffix.length));
    return { individual };
  });
  const counts = domains.map((d) => d.count);
  const podCounts = counts.every((c) => c === counts[0]) ? { universal: counts[0] } : { individual: counts };
  return [{ domainCount: domains.length, valuesPerLevel, podCounts }];
}

/** v1beta2's slices as v1beta1's list of domains, in order */
export function topologyDomainsFrom(levels: unknown[], slices: unknown[]): Domain[] {
  const out: Domain[] = [];
  for (const raw of slices) {
    const slice = obj(raw);
    if (!slice) continue;
    const n = typeof slice.domainCount === 'number' ? slice.domainCount : 0;
    const perLevel = Array.isArray(slice.valuesPerLevel) ? slice.valuesPerLevel : [];
    const counts = obj(slice.podCounts) ?? {};
    for (let i = 0; i < n; i++) {
      const values = levels.map((_, li) => {
        const lv = obj(perLevel[li]) ?? {};
        if (typeof lv.universal === 'string') return lv.universal;
        const ind = obj(lv.individual) ?? {};
        const roots = Array.isArray(ind.roots) ? ind.roots : [];
        return `${typeof ind.prefix === 'string' ? ind.prefix : ''}${String(roots[i] ?? '')}${typeof ind.suffix === 'string' ? ind.suffix : ''}`;
      });
      const count = typeof counts.universal === 'number' ? counts.universal : Array.isArray(counts.individual) ? Number(counts.individual[i] ?? 0) : 0;
      out.push({ values, count });
    }
  }
  return out;
}

function assignments(o: KObject): Json[] {
  const list = obj(obj(o.status)?.admission)?.podSetAssignments;
  return Array.isArray(list) ? list.filter(isPlainObject) : [];
}

function workloadUp(o: KObject): void {
  const spec = obj(o.spec);
  if (spec) {
    const source = spec.priorityClassSource;
    const name = spec.priorityClassName;
    delete spec.priorityClassSource;
    delete spec.priorityClassName;
    if (source === workloadPriorityClassSource) spec.priorityClassRef = { group, kind: 'WorkloadPriorityClass', name: name ?? '' };
    else if (source === podPriorityClassSource) spec.priorityClassRef = { group: 'scheduling.k8s.io', kind: 'PriorityClass', name: name ?? '' };
  }
  rename(obj(o.status), 'accumulatedPastExexcutionTimeSeconds', 'accumulatedPastExecutionTimeSeconds');
  for (const a of assignments(o)) {
    const ta = obj(a.topologyAssignment);
    if (!ta) continue;
    const levels = Array.isArray(ta.levels) ? ta.levels.map(String) : [];
    const domains = Array.isArray(ta.domains) ? ta.domains.filter(isPlainObject).map((d) => ({ values: Array.isArray(d.values) ? d.values.map(String) : [], count: typeof d.count === 'number' ? d.count : 0 })) : [];
    a.topologyAssignment = { levels, slices: topologySlicesFrom(levels, domains) };
  }
}

function workloadDown(o: KObject): void {
  const spec = obj(o.spec);
  if (spec) {
    const ref = obj(spec.priorityClassRef);
    delete spec.priorityClassRef;
    if (ref?.group === group && ref.kind === 'WorkloadPriorityClass') {
      spec.priorityClassSource = workloadPriorityClassSource;
      spec.priorityClassName = ref.name;
    } else if (ref?.group === 'scheduling.k8s.io' && ref.kind === 'PriorityClass') {
      spec.priorityClassSource = podPriorityClassSource;
      spec.priorityClassName = ref.name;
    }
    delete spec.preemptionGates;
    for (const ps of Array.isArray(spec.podSets) ? spec.podSets : []) delete obj(obj(ps)?.topologyRequest)?.podsetSliceRequiredTopologyConstraints;
  }
  const status = obj(o.status);
  rename(status, 'accumulatedPastExecutionTimeSeconds', 'accumulatedPastExexcutionTimeSeconds');
  if (status) delete status.preemptionGates;
  for (const a of assignments(o)) {
    const ta = obj(a.topologyAssignment);
    if (!ta) continue;
    const levels = Array.isArray(ta.levels) ? ta.levels : [];
    a.topologyAssignment = { levels, domains: topologyDomainsFrom(levels, Array.isArray(ta.slices) ? ta.slices : []) };
  }
}

const up: Record<string, ((o: KObject) => void) | undefined> = {
  ClusterQueue: clusterQueueUp,
  Cohort: cohortUp,
  LocalQueue: localQueueUp,
  Workload: workloadUp,
};

const down: Record<string, ((o: KObject) => void) | undefined> = {
  ClusterQueue: clusterQueueDown,
  LocalQueue: localQueueDown,
  Workload: workloadDown,
};

/** a kueue.x-k8s.io/v1beta1 object as v1beta2 (a copy) */
export function kueueToV1beta2(o: KObject): KObject {
  const out = clone(o);
  up[o.kind]?.(out);
  return withVersion(out, 'v1beta2');
}

/** a kueue.x-k8s.io/v1beta2 object as v1beta1 (a copy) */
export function kueueToV1beta1(o: KObject): KObject {
  const out = clone(o);
  down[o.kind]?.(out);
  return withVersion(out, 'v1beta1');
}
