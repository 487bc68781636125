// Kueue's kinds (kueue.x-k8s.io/v1beta2, the stored version) as TypeScript sees them: the JSON field
// names of Kueue's Go types (apis/kueue/v1beta2), so a stored object is read as it is. Quantities are
// what YAML gave: a string ("500m", "4Gi") or a number (src/api/quantity.ts parses both). The kinds'
// registration, defaulting and validation are in src/api/kueue.ts.
import type { Condition } from './conditions.js';
import type { PodTemplateSpec } from './core-types.js';
import type { KObject } from './meta.js';
import type { LabelSelector } from './networking.js';

export const KueueGroup = 'kueue.x-k8s.io';
/** the version objects are stored in; `v1beta1` is served and converted (src/api/kueue-conversion.ts) */
export const KueueStorageVersion = 'v1beta2';

/** a resource.Quantity as written */
export type Quantity = string | number;
/** a corev1.ResourceList: resource name to quantity */
export type ResourceList = Record<string, Quantity>;

/** the names Kueue's controllers, jobs and users agree on */
export const KueueNames = {
  /** the label a Job (Pod, training job, ...) names its LocalQueue with */
  queueLabel: 'kueue.x-k8s.io/queue-name',
  /** the label a job names its WorkloadPriorityClass with */
  priorityClassLabel: 'kueue.x-k8s.io/priority-class',
  /** the finalizer Kueue's webhook puts on ClusterQueues and ResourceFlavors, taken off once nothing uses them */
  resourceInUseFinalizer: 'kueue.x-k8s.io/resource-in-use',
  /** the pod set a one-template job gets */
  defaultPodSetName: 'main',
  /** the name of a namespace's default LocalQueue (jobs without a queue label go to it) */
  defaultLocalQueue: 'default',
  /** the scheduling gate a plain Pod waits behind until admitted */
  admissionGate: 'kueue.x-k8s.io/admission',
  /** partial admission: the least parallelism a batch Job accepts */
  jobMinParallelism: 'kueue.x-k8s.io/job-min-parallelism',
  maxExecTimeLabel: 'kueue.x-k8s.io/max-exec-time-seconds',
  /** on a Workload: the uid of the job it stands for */
  jobUidLabel: 'kueue.x-k8s.io/job-uid',
} as const;

/**
 * The owners whose Pods their own integration queues (`group/Kind`): batch Jobs and the Kubeflow
 * training kinds, suspended whole through the owner.
 */
const integratedOwners = new Set(['batch/Job', ...['PyTorchJob', 'TFJob', 'XGBoostJob', 'PaddleJob', 'JAXJob', 'MPIJob'].map((k) => `kubeflow.org/${k}`)]);

/**
 * Whether a Pod goes through a queue as a Pod of its own: as Kueue's Pod webhook decides, every Pod
 * but those whose controller is a kind Kueue integrates (IsPodOwnerManagedByKueue). So a Pod that no
 * controller owns, a Notebook's (Kueue queues a Notebook through its StatefulSet's Pods; Skiff's
 * Notebook controller makes the Pod itself, carrying the Notebook's labels), and a pipeline task's,
 * owned by its Run, a kind Kueue has no integration for.
 */
export function queuedAsPod(meta: { ownerReferences?: { apiVersion: string; kind: string; controller?: boolean }[] }): boolean {
  const owner = meta.ownerReferences?.find((r) => r.controller);
  if (!owner) return true;
  const slash = owner.apiVersion.indexOf('/');
  return !integratedOwners.has(`${slash < 0 ? '' : owner.apiVersion.slice(0, slash)}/${owner.kind}`);
}

export type QueueingStrategy = 'StrictFIFO' | 'BestEffortFIFO';
export type StopPolicy = 'None' | 'Hold' | 'HoldAndDrain';
export type PreemptionPolicy = 'Never' | 'LowerPriority' | 'LowerOrNewerEqualPriority' | 'Any';
export type BorrowWithinCohortPolicy = 'Never' | 'LowerPriority';
export type FlavorFungibilityPolicy = 'MayStopSearch' | 'TryNextFlavor';
export type FlavorFungibilityPreference = 'BorrowingOverPreemption' | 'PreemptionOverBorrowing';
export type AdmissionMode = 'UsageBasedAdmissionFairSharing' | 'NoAdmissionFairSharing';

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Equal' | 'Exists';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

// ---- ResourceFlavor (cluster-scoped, no status) ----

export interface ResourceFlavorSpec {
  nodeLabels?: Record<string, string>;
  nodeTaints?: Taint[];
  tolerations?: Toleration[];
  topologyName?: string;
}

export interface ResourceFlavor extends KObject {
  spec?: ResourceFlavorSpec;
}

// ---- quotas, shared by ClusterQueue and Cohort ----

export interface ResourceQuota {
  name: string;
  nominalQuota: Quantity;
  /** null/absent: no limit on borrowing; only with a cohort */
  borrowingLimit?: Quantity;
  /** null/absent: all of nominalQuota may be lent; only with a cohort */
  lendingLimit?: Quantity;
}

export interface FlavorQuotas {
  name: string;
  /** one per covered resource, in coveredResources' order */
  resources: ResourceQuota[];
}

export interface ResourceGroup {
  coveredResources: string[];
  flavors: FlavorQuotas[];
}

export interface FairSharing {
  /** default 1; 0 = an infinite share */
  weight?: Quantity;
}

export interface FairSharingStatus {
  weightedShare: number;
}

// ---- ClusterQueue (cluster-scoped) ----

export interface FlavorFungibility {
  whenCanBorrow?: FlavorFungibilityPolicy;
  whenCanPreempt?: FlavorFungibilityPolicy;
  preference?: FlavorFungibilityPreference;
}

export interface BorrowWithinCohort {
  policy?: BorrowWithinCohortPolicy;
  maxPriorityThreshold?: number;
}

export interface ClusterQueuePreemption {
  reclaimWithinCohort?: 'Never' | 'LowerPriority' | 'Any';
  borrowWithinCohort?: BorrowWithinCohort;
  withinClusterQueue?: 'Never' | 'LowerPriority' | 'LowerOrNewerEqualPriority';
}

export interface AdmissionCheckStrategyRule {
  name: string;
  onFlavors?: string[];
}

export interface ClusterQueueSpec {
  resourceGroups?: ResourceGroup[];
  cohortName?: string;
  /** defaulted to BestEffortFIFO */
  queueingStrategy?: QueueingStrategy;
  /** absent (null): no namespace may submit; `{}`: every namespace */
  namespaceSelector?: LabelSelector | null;
  flavorFungibility?: FlavorFungibility;
  preemption?: ClusterQueuePreemption;
  admissionChecksStrategy?: { admissionChecks: AdmissionCheckStrategyRule[] };
  /** defaulted to None */
  stopPolicy?: StopPolicy;
  fairSharing?: FairSharing;
  admissionScope?: { admissionMode?: AdmissionMode };
  concurrentAdmissionPolicy?: { migration: { mode: 'TryPreferredFlavors' | 'RetainFirstAdmission'; constraints?: { lastAcceptableFlavorName?: string } } };
}

export interface ResourceUsage {
  name: string;
  total?: Quantity;
  borrowed?: Quantity;
}

export interface FlavorUsage {
  name: string;
  resources: ResourceUsage[];
}

export interface ClusterQueueStatus {
  conditions?: Condition[];
  flavorsReservation?: FlavorUsage[];
  flavorsUsage?: FlavorUsage[];
  pendingWorkloads?: number;
  reservingWorkloads?: number;
  admittedWorkloads?: number;
  fairSharing?: FairSharingStatus;
}

export interface ClusterQueue extends KObject {
  spec: ClusterQueueSpec;
  status?: ClusterQueueStatus;
}

/** the ClusterQueue condition and its reasons */
export const ClusterQueueConditions = {
  Active: 'Active',
  reasons: {
    Ready: 'Ready',
    Terminating: 'Terminating',
    Stopped: 'Stopped',
    FlavorNotFound: 'FlavorNotFound',
    AdmissionCheckNotFound: 'AdmissionCheckNotFound',
    AdmissionCheckInactive: 'AdmissionCheckInactive',
    TopologyNotFound: 'TopologyNotFound',
    Unknown: 'Unknown',
  },
} as const;

// ---- Cohort (cluster-scoped) ----

export interface CohortSpec {
  /** the parent Cohort of a hierarchy */
  parentName?: string;
  /** quota the cohort itself adds to what its members share */
  resourceGroups?: ResourceGroup[];
  fairSharing?: FairSharing;
}

export interface Cohort extends KObject {
  spec: CohortSpec;
  status?: { fairSharing?: FairSharingStatus };
}

// ---- LocalQueue (namespaced) ----

export interface LocalQueueSpec {
  /** immutable */
  clusterQueue: string;
  /** defaulted to None */
  stopPolicy?: StopPolicy;
  fairSharing?: FairSharing;
}

export interface LocalQueueResourceUsage {
  name: string;
  total?: Quantity;
}

export interface LocalQueueFlavorUsage {
  name: string;
  resources?: LocalQueueResourceUsage[];
}

export interface LocalQueueStatus {
  conditions?: Condition[];
  pendingWorkloads?: number;
  reservingWorkloads?: number;
  admittedWorkloads?: number;
  flavorsReservation?: LocalQueueFlavorUsage[];
  flavorsUsage?: LocalQueueFlavorUsage[];
  fairSharing?: { weightedShare: number; admissionFairSharingStatus?: { consumedResources: ResourceList; lastUpdate: string } };
}

export interface LocalQueue extends KObject {
  spec: LocalQueueSpec;
  status?: LocalQueueStatus;
}

// ---- WorkloadPriorityClass (cluster-scoped, fields at the top level) ----

export interface WorkloadPriorityClass extends KObject {
  value: number;
  description?: string;
}

// ---- Workload (namespaced) ----

export type PriorityClassRef =
  | { group: 'kueue.x-k8s.io'; kind: 'WorkloadPriorityClass'; name: string }
  | { group: 'scheduling.k8s.io'; kind: 'PriorityClass'; name: string };

export interface PodSetTopologyRequest {
  required?: string;
  preferred?: string;
  unconstrained?: boolean;
  podIndexLabel?: string;
  subGroupIndexLabel?: string;
  subGroupCount?: number;
  podSetGroupName?: string;
  podSetSliceRequiredTopology?: string;
  podSetSliceSize?: number;
}

export interface PodSet {
  /** defaulted to "main"; unique within the Workload */
  name: string;
  template: PodTemplateSpec;
  /** defaulted to 1 */
  count: number;
  /** partial admission: the least count the pod set runs with */
  minCount?: number;
  topologyRequest?: PodSetTopologyRequest;
}

export interface WorkloadSpec {
  podSets: PodSet[];
  /** the LocalQueue, in the Workload's namespace */
  queueName?: string;
  priorityClassRef?: PriorityClassRef;
  priority?: number;
  /** defaulted to true; false evicts the Workload and keeps it out of queues */
  active?: boolean;
  maximumExecutionTimeSeconds?: number;
  preemptionGates?: { name: string }[];
}

export interface PodSetAssignment {
  name: string;
  /** resource name to the flavor it was assigned */
  flavors?: Record<string, string>;
  resourceUsage?: ResourceList;
  count?: number;
  topologyAssignment?: TopologyAssignment;
  delayedTopologyRequest?: 'Pending' | 'Ready';
}

export interface TopologyAssignment {
  levels: string[];
  slices: {
    domainCount: number;
    valuesPerLevel: { universal?: string; individual?: { prefix?: string; suffix?: string; roots: string[] } }[];
    podCounts: { universal?: number; individual?: number[] };
  }[];
}

export interface Admission {
  clusterQueue: string;
  podSetAssignments: PodSetAssignment[];
}

export interface AdmissionCheckState {
  name: string;
  state: 'Pending' | 'Ready' | 'Retry' | 'Rejected';
  lastTransitionTime: string;
  message: string;
  requeueAfterSeconds?: number;
  retryCount?: number;
  podSetUpdates?: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; nodeSelector?: Record<string, string>; tolerations?: Toleration[] }[];
}

export interface WorkloadStatus {
  conditions?: Condition[];
  admission?: Admission;
  requeueState?: { count?: number; requeueAt?: string };
  /** pods of a pod set that finished and no longer need their quota; only grows while reserved */
  reclaimablePods?: { name: string; count: number }[];
  admissionChecks?: AdmissionCheckState[];
  resourceRequests?: { name: string; resources?: ResourceList }[];
  accumulatedPastExecutionTimeSeconds?: number;
  schedulingStats?: { evictions?: { reason: string; underlyingCause: string; count: number }[] };
  nominatedClusterNames?: string[];
  clusterName?: string;
  unhealthyNodes?: { name: string }[];
  preemptionGates?: { name: string; position?: 'Open' | 'Closed'; lastTransitionTime?: string }[];
}

export interface Workload extends KObject {
  spec: WorkloadSpec;
  status?: WorkloadStatus;
}

/** Workload condition types, and the reasons Kueue gives them */
export const WorkloadConditions = {
  QuotaReserved: 'QuotaReserved',
  Admitted: 'Admitted',
  PodsReady: 'PodsReady',
  Evicted: 'Evicted',
  Preempted: 'Preempted',
  Requeued: 'Requeued',
  Finished: 'Finished',
  DeactivationTarget: 'DeactivationTarget',
} as const;

export const WorkloadReasons = {
  // QuotaReserved=False
  Pending: 'Pending',
  Inadmissible: 'Inadmissible',
  OnHold: 'OnHold',
  Waiting: 'Waiting',
  NoMatchingFlavor: 'NoMatchingFlavor',
  WaitingForQuota: 'WaitingForQuota',
  ExceedsMaxQuota: 'ExceedsMaxQuota',
  WaitingForPreemptedWorkloads: 'WaitingForPreemptedWorkloads',
  Misconfigured: 'Misconfigured',
  // QuotaReserved=True / Admitted
  QuotaReserved: 'QuotaReserved',
  Admitted: 'Admitted',
  NoReservation: 'NoReservation',
  UnsatisfiedAdmissionChecks: 'UnsatisfiedAdmissionChecks',
  // Evicted
  Preempted: 'Preempted',
  PodsReadyTimeout: 'PodsReadyTimeout',
  AdmissionCheck: 'AdmissionCheck',
  ClusterQueueStopped: 'ClusterQueueStopped',
  LocalQueueStopped: 'LocalQueueStopped',
  NodeFailures: 'NodeFailures',
  Deactivated: 'Deactivated',
  // Requeued
  Reactivated: 'Reactivated',
  BackoffFinished: 'BackoffFinished',
  RequeuingLimitExceeded: 'RequeuingLimitExceeded',
  MaximumExecutionTimeExceeded: 'MaximumExecutionTimeExceeded',
  // PodsReady
  WaitForStart: 'WaitForStart',
  WaitForRecovery: 'WaitForRecovery',
  Started: 'Started',
  Recovered: 'Recovered',
  // Finished
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  OutOfSync: 'OutOfSync',
  OwnerNotFound: 'OwnerNotFound',
} as const;

/** the reasons of a Preempted condition */
export const PreemptedReasons = {
  InClusterQueue: 'InClusterQueue',
  InCohortReclamation: 'InCohortReclamation',
  InCohortFairSharing: 'InCohortFairSharing',
  InCohortReclaimWhileBorrowing: 'InCohortReclaimWhileBorrowing',
} as const;

/** the LocalQueue condition (Active, reasons Ready / ClusterQueueDoesNotExist / ClusterQueueIsInactive / Stopped) */
export const LocalQueueConditions = {
  Active: 'Active',
  reasons: { Ready: 'Ready', ClusterQueueDoesNotExist: 'ClusterQueueDoesNotExist', ClusterQueueIsInactive: 'ClusterQueueIsInactive', Stopped: 'Stopped' },
} as const;
