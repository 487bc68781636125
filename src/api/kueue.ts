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
//   2. when that passes, Kueue's validating webhooks (src/api/kueue-webhooks.ts), on the object as
//      v1beta2: a resource or a flavor in one resource group only, a quota's resource named as its
//      group covers it, quantities >= 0, lendingLimit <= nominalQuota, limits of 256 flavors and 256
//      resources in all, fair-sharing weights, label and taint rules, the reserved resource `pods`, a
//      Workload's status and its changes while it holds quota.
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
import { validateClusterQueueSpec, validateCohortSpec, validateResourceFlavorSpec, validateWorkloadObject, validateWorkloadUpdate } from './kueue-webhooks.js';
import type { KObject, StoredObject } from './meta.js';
import { clone } from './meta.js';
import { schemaCatalog } from './openapi-schemas.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { Validator } from './validation.js';

export * from './kueue-types.js';
export { validateClusterQueueSpec, validateCohortSpec, validateResourceFlavorSpec, validateWorkloadObject, validateWorkloadUpdate } from './kueue-webhooks.js';

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
