// Every kind Skiff serves, in one registry.
import { batchKinds } from './batch.js';
import { coreKinds } from './core.js';
import { kfpKinds } from './kfp-objects.js';
import { ClusterQueueKind, CohortKind, LocalQueueKind, ResourceFlavorKind, WorkloadKind, WorkloadPriorityClassKind, kueueKinds } from './kueue.js';
import { modelRegistryKinds } from './model-registry.js';
import { networkingKinds } from './networking.js';
import { notebookKinds } from './notebooks.js';
import { pipelineKinds } from './pipelines.js';
import { profileKinds } from './profiles.js';
import { rbacKinds } from './rbac.js';
import { KindRegistry } from './registry.js';
import { RevisionKind } from './serving-revision.js';
import { servingKinds } from './serving.js';
import { trainingKinds } from './training.js';
import { ExperimentKind, ObservationLogKind, SuggestionKind, TrialKind, tuningKinds } from './tuning.js';
import type { KindDef } from './registry.js';

/** The kinds the server serves: each has its controllers wired in src/server/main.ts. */
export function defaultRegistry(): KindRegistry {
  return new KindRegistry().register(...coreKinds, ...batchKinds, ...pipelineKinds, ...kfpKinds, ...trainingKinds, ...tuningKinds, ...servingKinds, RevisionKind, ...rbacKinds, ...networkingKinds, ...profileKinds, ...notebookKinds, ...kueueKinds, ...modelRegistryKinds);
}

function find(defs: KindDef[], kind: string, version?: string): KindDef {
  const def = defs.find((d) => d.kind === kind && (version === undefined || d.version === version));
  if (!def) throw new Error(`kind ${kind} is not defined`);
  return def;
}

/** The built-in kinds, for controllers to name what they read and write. */
export const Kinds = {
  Namespace: find(coreKinds, 'Namespace'),
  Pod: find(coreKinds, 'Pod'),
  ConfigMap: find(coreKinds, 'ConfigMap'),
  Secret: find(coreKinds, 'Secret'),
  PersistentVolumeClaim: find(coreKinds, 'PersistentVolumeClaim'),
  Service: find(coreKinds, 'Service'),
  Node: find(coreKinds, 'Node'),
  Event: find(coreKinds, 'Event'),
  ServiceAccount: find(coreKinds, 'ServiceAccount'),
  ResourceQuota: find(coreKinds, 'ResourceQuota'),
  NetworkPolicy: find(networkingKinds, 'NetworkPolicy'),
  Job: find(batchKinds, 'Job'),
  Run: find(pipelineKinds, 'Run'),
  TaskCache: find(pipelineKinds, 'TaskCache'),
  RunTask: find(pipelineKinds, 'RunTask'),
  Pipeline: find(kfpKinds, 'Pipeline'),
  PipelineVersion: find(kfpKinds, 'PipelineVersion'),
  Experiment: find(kfpKinds, 'Experiment'),
  RecurringRun: find(kfpKinds, 'RecurringRun'),
  PyTorchJob: find(trainingKinds, 'PyTorchJob'),
  TFJob: find(trainingKinds, 'TFJob'),
  XGBoostJob: find(trainingKinds, 'XGBoostJob'),
  PaddleJob: find(trainingKinds, 'PaddleJob'),
  JAXJob: find(trainingKinds, 'JAXJob'),
  /** kubeflow.org/v1 MPIJob; shares its storage (`kubeflow.org/mpijobs`) with MPIJobV2 */
  MPIJob: find(trainingKinds, 'MPIJob', 'v1'),
  /** the mpi-operator's kubeflow.org/v2beta1 MPIJob */
  MPIJobV2: find(trainingKinds, 'MPIJob', 'v2beta1'),
  InferenceService: find(servingKinds, 'InferenceService'),
  ServingRuntime: find(servingKinds, 'ServingRuntime'),
  ClusterServingRuntime: find(servingKinds, 'ClusterServingRuntime'),
  Revision: RevisionKind,
  /** Katib's kubeflow.org/v1beta1 Experiment (KFP's pipelines.kubeflow.org Experiment is `Experiment`) */
  KatibExperiment: ExperimentKind,
  Suggestion: SuggestionKind,
  Trial: TrialKind,
  ObservationLog: ObservationLogKind,
  /** Kueue's kinds, kueue.x-k8s.io/v1beta2 (v1beta1 is served too, converted) */
  ResourceFlavor: ResourceFlavorKind,
  ClusterQueue: ClusterQueueKind,
  Cohort: CohortKind,
  LocalQueue: LocalQueueKind,
  /** Kueue's Workload: the unit of admission a job stands for */
  Workload: WorkloadKind,
  WorkloadPriorityClass: WorkloadPriorityClassKind,
} as const;
