// Kueue's own configuration, config.kueue.x-k8s.io Configuration, as Kueue reads its config file:
// the parts Skiff's queue controllers act on (waitForPodsReady, fair sharing, admission fair
// sharing, jobs without a queue name, integrations, resources), in v1beta2 with its defaults, from a
// v1beta2 document or a v1beta1 one converted as Kueue converts it (apis/config/v1beta1), and checked
// as Kueue checks it at start-up (pkg/config/validation.go). Fields Skiff has no use for (webhook,
// leader election, MultiKueue, ...) pass through untouched.
//
// v1beta1 -> v1beta2: `fairSharing.enable` and `waitForPodsReady.enable` are gone (the section's
// presence enables it); a v1beta1 section with enable false is dropped; fair sharing enabled without
// strategies gets [LessThanOrEqualToFinalShare, LessThanInitialShare]; waitForPodsReady enabled takes
// v1beta1's defaults (timeout 5m, blockAdmission true). A v1beta2 document gets v1beta2's defaults, in
// which waitForPodsReady is on (timeout 30m, blockAdmission false, recoveryTimeout = timeout).
import type { FieldError } from './errors.js';
import type { LabelSelector } from './networking.js';
import { Validator } from './validation.js';
import { parseDuration } from '../util/duration.js';
import { isPlainObject } from '../util/objects.js';

export const KueueConfigGroup = 'config.kueue.x-k8s.io';

export type PreemptionStrategy = 'LessThanOrEqualToFinalShare' | 'LessThanInitialShare';

export interface RequeuingStrategy {
  /** where a requeued Workload goes: by its eviction (default) or its creation time */
  timestamp?: 'Eviction' | 'Creation';
  /** null: requeue for ever; reaching it deactivates the Workload */
  backoffLimitCount?: number;
  backoffBaseSeconds?: number;
  backoffMaxSeconds?: number;
}

export interface WaitForPodsReady {
  /** a Go duration ("30m"): admitted to all Pods ready */
  timeout: string;
  /** true: no admission anywhere while an admitted Workload's Pods are not ready */
  blockAdmission?: boolean;
  recoveryTimeout?: string;
  requeuingStrategy?: RequeuingStrategy;
}

export interface ResourceTransformation {
  input: string;
  strategy?: 'Retain' | 'Replace';
  multiplyBy?: string;
  outputs?: Record<string, string | number>;
}

export interface KueueConfiguration {
  apiVersion: string;
  kind: 'Configuration';
  namespace?: string;
  manageJobsWithoutQueueName?: boolean;
  managedJobsNamespaceSelector?: LabelSelector;
  waitForPodsReady?: WaitForPodsReady;
  fairSharing?: { preemptionStrategies: PreemptionStrategy[] };
  admissionFairSharing?: { usageHalfLifeTime: string; usageSamplingInterval: string; resourceWeights?: Record<string, number> };
  integrations?: { frameworks?: string[]; externalFrameworks?: string[]; labelKeysToCopy?: string[] };
  resources?: { quotaCheckStrategy?: string; excludeResourcePrefixes?: string[]; transformations?: ResourceTransformation[] };
  objectRetentionPolicies?: { workloads?: { afterFinished?: string; afterDeactivatedByKueue?: string } };
  featureGates?: Record<string, boolean>;
  [field: string]: unknown;
}

/** the preemption strategies Kueue accepts, as whole lists */
export const fairSharingStrategySets: readonly PreemptionStrategy[][] = [
  ['LessThanOrEqualToFinalShare', 'LessThanInitialShare'],
  ['LessThanOrEqualToFinalShare'],
  ['LessThanInitialShare'],
];

type Json = Record<string, any>;

/** a v1beta1 Configuration as v1beta2, with v1beta1's defaults for what it enabled */
function fromV1beta1(doc: Json): Json {
  const out: Json = structuredClone(doc);
  out.apiVersion = `${KueueConfigGroup}/v1beta2`;
  const fs = out.fairSharing;
  if (!isPlainObject(fs) || fs.enable !== true) delete out.fairSharing;
  else {
    delete fs.enable;
    if (!Array.isArray(fs.preemptionStrategies) || fs.preemptionStrategies.length === 0) fs.preemptionStrategies = ['LessThanOrEqualToFinalShare', 'LessThanInitialShare'];
  }
  const w = out.waitForPodsReady;
  if (!isPlainObject(w) || w.enable !== true) out.waitForPodsReady = null;
  else {
    delete w.enable;
    w.timeout ??= '5m';
    w.blockAdmission ??= true;
  }
  return out;
}

/** v1beta2's defaults (apis/config/v1beta2/defaults.go), for the fields Skiff reads */
function applyDefaults(cfg: Json): void {
  cfg.kind = 'Configuration';
  cfg.namespace ??= 'kueue-system';
  cfg.manageJobsWithoutQueueName ??= false;
  // null: v1beta1 said it was off; absent: v1beta2's default, on
  if (cfg.waitForPodsReady === null) delete cfg.waitForPodsReady;
  else {
    const w: Json = isPlainObject(cfg.waitForPodsReady) ? cfg.waitForPodsReady : (cfg.waitForPodsReady = {});
    if (w.timeout === undefined || w.timeout === '' || parseDuration(String(w.timeout)) === 0) w.timeout = '30m';
    w.blockAdmission ??= false;
    w.recoveryTimeout ??= w.timeout;
    const rs: Json = isPlainObject(w.requeuingStrategy) ? w.requeuingStrategy : (w.requeuingStrategy = {});
    rs.timestamp ??= 'Eviction';
    rs.backoffBaseSeconds ??= 60;
    rs.backoffMaxSeconds ??= 3600;
  }
  const integrations: Json = isPlainObject(cfg.integrations) ? cfg.integrations : (cfg.integrations = {});
  if (!Array.isArray(integrations.frameworks) || integrations.frameworks.length === 0) integrations.frameworks = ['batch/job'];
  cfg.managedJobsNamespaceSelector ??= { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', cfg.namespace] }] };
  if (isPlainObject(cfg.admissionFairSharing)) {
    const afs = cfg.admissionFairSharing;
    if (!afs.usageSamplingInterval || parseDuration(String(afs.usageSamplingInterval)) === 0) afs.usageSamplingInterval = '5m';
  }
  for (const t of Array.isArray(cfg.resources?.transformations) ? cfg.resources.transformations : []) {
    if (isPlainObject(t)) t.strategy ||= 'Retain';
  }
}

function duration(v: Validator, field: string, value: unknown, positive = false): void {
  if (value === undefined || value === null) return;
  const ms = parseDuration(String(value));
  if (ms === undefined) v.invalid(field, value, 'must be a duration such as "30m" or "1h30m"');
  else if (ms < 0) v.invalid(field, value, 'must be greater than or equal to 0');
  else if (positive && ms === 0) v.invalid(field, value, 'must be greater than 0');
}

function validate(cfg: Json): FieldError[] {
  const v = new Validator();
  const w = cfg.waitForPodsReady;
  if (isPlainObject(w)) {
    duration(v, 'waitForPodsReady.timeout', w.timeout);
    duration(v, 'waitForPodsReady.recoveryTimeout', w.recoveryTimeout);
    const rs = w.requeuingStrategy;
    if (isPlainObject(rs)) {
      if (rs.timestamp !== undefined && rs.timestamp !== 'Creation' && rs.timestamp !== 'Eviction') v.notSupported('waitForPodsReady.requeuingStrategy.timestamp', rs.timestamp, ['Creation', 'Eviction']);
      for (const f of ['backoffLimitCount', 'backoffBaseSeconds', 'backoffMaxSeconds'] as const) {
        if (rs[f] !== undefined && rs[f] !== null) v.int(`waitForPodsReady.requeuingStrategy.${f}`, rs[f], 0);
      }
    }
  }
  const fs = cfg.fairSharing;
  if (isPlainObject(fs)) {
    const list = fs.preemptionStrategies;
    if (!Array.isArray(list) || list.length === 0) v.required('fairSharing.preemptionStrategies', 'Required value: must be specified');
    else if (!fairSharingStrategySets.some((set) => set.length === list.length && set.every((s, i) => s === list[i]))) {
      v.add('fairSharing.preemptionStrategies', 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(list)}: supported values: ${fairSharingStrategySets.map((s) => `"${s.join(',')}"`).join(', ')}`);
    }
  }
  const afs = cfg.admissionFairSharing;
  if (isPlainObject(afs)) {
    duration(v, 'admissionFairSharing.usageHalfLifeTime', afs.usageHalfLifeTime);
    duration(v, 'admissionFairSharing.usageSamplingInterval', afs.usageSamplingInterval, true);
    for (const [res, weight] of Object.entries(isPlainObject(afs.resourceWeights) ? afs.resourceWeights : {})) {
      if (typeof weight === 'number' && weight < 0) v.invalid(`admissionFairSharing.resourceWeights[${res}]`, weight, 'must be greater than or equal to 0');
    }
  }
  const frameworks = cfg.integrations?.frameworks;
  if (Array.isArray(frameworks) && frameworks.length === 0) v.required('integrations.frameworks', 'Required value: cannot be empty');
  const seen = new Set<string>();
  (Array.isArray(cfg.resources?.transformations) ? cfg.resources.transformations : []).forEach((t: unknown, i: number) => {
    if (!isPlainObject(t)) return;
    if (t.strategy !== 'Retain' && t.strategy !== 'Replace') v.notSupported(`resources.transformations[${i}].strategy`, t.strategy, ['Retain', 'Replace']);
    if (seen.has(String(t.input))) v.add(`resources.transformations[${i}].input`, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(t.input)}`);
    seen.add(String(t.input));
  });
  if (cfg.managedJobsNamespaceSelector !== undefined) v.labelSelector('managedJobsNamespaceSelector', cfg.managedJobsNamespaceSelector);
  return v.errors;
}

/**
 * A Configuration document (v1beta2, or v1beta1 converted) as v1beta2 with its defaults, and what is
 * wrong with it (Kueue refuses to start on any).
 */
export function kueueConfiguration(doc: unknown): { config: KueueConfiguration; errors: FieldError[] } {
  const d: Json = isPlainObject(doc) ? doc : {};
  const apiVersion = d.apiVersion;
  if (apiVersion !== `${KueueConfigGroup}/v1beta2` && apiVersion !== `${KueueConfigGroup}/v1beta1`) {
    return { config: { apiVersion: `${KueueConfigGroup}/v1beta2`, kind: 'Configuration' }, errors: [{ field: 'apiVersion', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(apiVersion ?? null)}: supported values: "${KueueConfigGroup}/v1beta2", "${KueueConfigGroup}/v1beta1"` }] };
  }
  const cfg = apiVersion.endsWith('/v1beta1') ? fromV1beta1(d) : structuredClone(d);
  applyDefaults(cfg);
  return { config: cfg as KueueConfiguration, errors: validate(cfg) };
}
