// The shapes the admission engine reads and returns. Inputs are structural: any stored Kueue object
// (kueue.x-k8s.io/v1beta2 field names) fits them as it is, so the controllers pass what they read
// from the store without copying. Quantities are strings or numbers, as they come from YAML.

export type Quantity = string | number;

export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface ResourceFlavorLike {
  metadata: Meta;
  spec?: {
    nodeLabels?: Record<string, string>;
    nodeTaints?: Taint[];
    tolerations?: Toleration[];
    topologyName?: string;
  };
}

export interface ResourceQuotaLike {
  name: string;
  nominalQuota?: Quantity;
  borrowingLimit?: Quantity | null;
  lendingLimit?: Quantity | null;
}

export interface FlavorQuotasLike {
  name: string;
  resources: ResourceQuotaLike[];
}

export interface ResourceGroupLike {
  coveredResources: string[];
  flavors: FlavorQuotasLike[];
}

export type PreemptionPolicy = 'Never' | 'LowerPriority' | 'LowerOrNewerEqualPriority' | 'Any';

export interface ClusterQueuePreemptionLike {
  reclaimWithinCohort?: PreemptionPolicy | string;
  borrowWithinCohort?: { policy?: 'Never' | 'LowerPriority' | string; maxPriorityThreshold?: number } | null;
  withinClusterQueue?: PreemptionPolicy | string;
}

export interface FlavorFungibilityLike {
  /** v1beta1 wrote `Borrow` for MayStopSearch; both are read */
  whenCanBorrow?: 'MayStopSearch' | 'TryNextFlavor' | 'Borrow' | string;
  whenCanPreempt?: 'MayStopSearch' | 'TryNextFlavor' | 'Preempt' | string;
  preference?: 'BorrowingOverPreemption' | 'PreemptionOverBorrowing' | string;
}

export interface AdmissionCheckStrategyRule {
  name: string;
  onFlavors?: string[];
}

export interface ClusterQueueLike {
  metadata: Meta;
  spec?: {
    cohortName?: string;
    /** v1beta1's name for cohortName */
    cohort?: string;
    resourceGroups?: ResourceGroupLike[];
    /** absent or null: no namespace may submit; {}: every namespace */
    namespaceSelector?: LabelSelector | null;
    queueingStrategy?: 'StrictFIFO' | 'BestEffortFIFO' | string;
    preemption?: ClusterQueuePreemptionLike;
    flavorFungibility?: FlavorFungibilityLike;
    fairSharing?: { weight?: Quantity };
    stopPolicy?: 'None' | 'Hold' | 'HoldAndDrain' | string;
    admissionChecksStrategy?: { admissionChecks?: AdmissionCheckStrategyRule[] };
    /** v1beta1 only */
    admissionChecks?: string[];
  };
}

export interface CohortLike {
  metadata: Meta;
  spec?: {
    parentName?: string;
    resourceGroups?: ResourceGroupLike[];
    fairSharing?: { weight?: Quantity };
  };
}

export interface LocalQueueLike {
  metadata: Meta;
  spec?: {
    clusterQueue?: string;
    stopPolicy?: 'None' | 'Hold' | 'HoldAndDrain' | string;
    fairSharing?: { weight?: Quantity };
  };
}

export interface NamespaceLike {
  metadata: Meta;
}

export interface WorkloadPriorityClassLike {
  metadata: Meta;
  value: number;
  description?: string;
}

export interface ResourceRequirementsLike {
  requests?: Record<string, Quantity>;
  limits?: Record<string, Quantity>;
}

export interface ContainerLike {
  name?: string;
  resources?: ResourceRequirementsLike;
  restartPolicy?: string;
}

export interface NodeSelectorTermLike {
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
  matchFields?: unknown[];
}

export interface PodSpecLike {
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
  overhead?: Record<string, Quantity>;
  /** pod-level resources (Kubernetes 1.32+) */
  resources?: ResourceRequirementsLike;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTermLike[] } } };
}

export interface PodSetLike {
  name: string;
  count?: number;
  minCount?: number;
  template?: { metadata?: Meta; spec?: PodSpecLike };
}

export interface PodSetAssignment {
  name: string;
  flavors: Record<string, string>;
  /** the whole pod set's usage (requests times count), as quantities */
  resourceUsage: Record<string, string>;
  count: number;
}

export interface Admission {
  clusterQueue: string;
  podSetAssignments: PodSetAssignment[];
}

export interface PodSetAssignmentLike {
  name: string;
  flavors?: Record<string, string>;
  resourceUsage?: Record<string, Quantity>;
  count?: number;
}

export interface WorkloadLike {
  metadata: Meta;
  spec?: {
    podSets?: PodSetLike[];
    queueName?: string;
    priority?: number;
    priorityClassRef?: { group?: string; kind?: string; name?: string };
    /** v1beta1 */
    priorityClassName?: string;
    priorityClassSource?: string;
    active?: boolean;
  };
  status?: {
    admission?: { clusterQueue?: string; podSetAssignments?: PodSetAssignmentLike[] } | null;
    conditions?: Condition[];
    reclaimablePods?: { name: string; count: number }[];
    requeueState?: { count?: number; requeueAt?: string };
    admissionChecks?: { name: string; state?: string }[];
  };
}

/** Everything one scheduling decision reads. */
export interface Snapshot {
  resourceFlavors?: ResourceFlavorLike[];
  clusterQueues?: ClusterQueueLike[];
  cohorts?: CohortLike[];
  localQueues?: LocalQueueLike[];
  namespaces?: NamespaceLike[];
  workloadPriorityClasses?: WorkloadPriorityClassLike[];
  workloads?: WorkloadLike[];
}

export type FairSharingStrategy = 'LessThanOrEqualToFinalShare' | 'LessThanInitialShare';

export interface EngineOptions {
  /**
   * Kueue's `fairSharing` configuration: present turns fair sharing on (admission ordered by share,
   * preemption by share). The default strategies are both, in Kueue's order.
   */
  fairSharing?: { preemptionStrategies?: FairSharingStrategy[] };
  /** Kueue's PartialAdmission feature (default on): pod sets with minCount may be admitted smaller */
  partialAdmission?: boolean;
  /**
   * The rule of Kueue before v0.4: once a workload of a cohort was admitted in a cycle, a borrowing
   * one of the same cohort waits for the next. Off by default: Kueue now re-checks the fit instead.
   */
  oneBorrowingAdmissionPerCohort?: boolean;
  /** Kueue's `waitForPodsReady.requeuingStrategy.timestamp` (default Eviction) */
  requeuingTimestamp?: 'Eviction' | 'Creation';
  /** upper bound on scheduling cycles in one call (default: enough to drain every queue) */
  maxCycles?: number;
  /**
   * A last word outside the ClusterQueue's quota, asked once a workload fits and before its quota is
   * reserved: a message refuses it (it stays pending with that message and is looked at again after
   * `gateRetryMs`), undefined lets it through. Skiff uses it for the namespace's ResourceQuota.
   */
  admissionGate?: (w: WorkloadLike, now: number) => string | undefined;
  /** how long a workload the gate refused waits before it is tried again (default 5 s) */
  gateRetryMs?: number;
}

export interface WorkloadRef {
  namespace: string;
  name: string;
  uid?: string;
}

export interface AdmissionDecision extends WorkloadRef {
  clusterQueue: string;
  localQueue: string;
  admission: Admission;
  /** the assignment uses quota borrowed from the cohort */
  borrowing: boolean;
  /** admission checks that must report Ready before the workload is Admitted (none: admitted now) */
  admissionChecks: string[];
  /** the QuotaReserved event's text */
  message: string;
  /** the cycle, counted from 1 in this call, that decided it */
  cycle: number;
}

export type PreemptedReason = 'InClusterQueue' | 'InCohortReclamation' | 'InCohortFairSharing' | 'InCohortReclaimWhileBorrowing';

export interface PreemptionDecision extends WorkloadRef {
  clusterQueue: string;
  /** the Preempted condition's reason; the Evicted condition's reason is `Preempted` */
  reason: PreemptedReason;
  message: string;
  preemptor: WorkloadRef;
  cycle: number;
}

/** A stopPolicy of HoldAndDrain evicts what its queue has admitted. */
export interface EvictionDecision extends WorkloadRef {
  clusterQueue: string;
  /** the Evicted condition's reason */
  reason: 'ClusterQueueStopped' | 'LocalQueueStopped';
  message: string;
}

/** QuotaReserved=False reasons, as Kueue's scheduler and workload controller write them. */
export type PendingReasonCode =
  | 'NoMatchingFlavor'
  | 'WaitingForQuota'
  | 'ExceedsMaxQuota'
  | 'WaitingForPreemptedWorkloads'
  | 'Misconfigured'
  | 'Suspended'
  | 'PendingEvaluation'
  | 'Deactivated'
  | 'Pending';

export interface PendingWorkload extends WorkloadRef {
  localQueue: string;
  /** absent when the LocalQueue does not exist */
  clusterQueue?: string;
  reason: PendingReasonCode;
  message: string;
  /** the visibility API's positions, from 0; absent when the workload is in no ClusterQueue's queue */
  positionInClusterQueue?: number;
  positionInLocalQueue?: number;
  priority: number;
}

/** an entry of the visibility API's pendingworkloads list */
export interface PendingPosition extends WorkloadRef {
  localQueue: string;
  clusterQueue: string;
  priority: number;
  positionInClusterQueue: number;
  positionInLocalQueue: number;
}

export interface ResourceUsageStatus {
  name: string;
  total: string;
  borrowed?: string;
}

export interface FlavorUsageStatus {
  name: string;
  resources: ResourceUsageStatus[];
}

export interface ClusterQueueStatus {
  pendingWorkloads: number;
  reservingWorkloads: number;
  admittedWorkloads: number;
  flavorsReservation: FlavorUsageStatus[];
  flavorsUsage: FlavorUsageStatus[];
  /** only with fair sharing on */
  fairSharing?: { weightedShare: number };
  conditions: Condition[];
}

export interface LocalQueueStatus {
  pendingWorkloads: number;
  reservingWorkloads: number;
  admittedWorkloads: number;
  flavorsReservation: FlavorUsageStatus[];
  flavorsUsage: FlavorUsageStatus[];
  conditions: Condition[];
}

export interface CohortStatus {
  fairSharing?: { weightedShare: number };
}

export interface CycleResult {
  /** quota reservations made now, in the order they were decided */
  admissions: AdmissionDecision[];
  /** admitted workloads to evict so that others fit */
  preemptions: PreemptionDecision[];
  /** admitted workloads to evict because their queue is stopped with HoldAndDrain */
  evictions: EvictionDecision[];
  /** every pending workload that stays pending, with Kueue's reason and message, and its positions */
  pending: PendingWorkload[];
  clusterQueues: Record<string, ClusterQueueStatus>;
  /** keyed `namespace/name` */
  localQueues: Record<string, LocalQueueStatus>;
  cohorts: Record<string, CohortStatus>;
  /** scheduling cycles run */
  cycles: number;
}
