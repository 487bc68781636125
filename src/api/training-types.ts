// The objects of the training kinds as stored: Kubeflow Training Operator jobs (kubeflow.org/v1
// PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob) and the mpi-operator's v2beta1 MPIJob.
// Their defaults and validation are in training.ts; what the controller does with them is in
// src/workloads/training/.
import type { Condition } from './conditions.js';
import type { PodTemplateSpec } from './core-types.js';
import type { KObject } from './meta.js';

export type ReplicaRestartPolicy = 'Always' | 'OnFailure' | 'Never' | 'ExitCode';

export interface ReplicaSpec {
  replicas?: number;
  restartPolicy?: ReplicaRestartPolicy;
  template: PodTemplateSpec;
}

export interface SchedulingPolicy {
  /** gang size: this many replicas start together or none does (default: all of them) */
  minAvailable?: number;
  queue?: string;
  minResources?: Record<string, string>;
  priorityClass?: string;
  scheduleTimeoutSeconds?: number;
}

export interface RunPolicy {
  cleanPodPolicy?: 'None' | 'Running' | 'All';
  ttlSecondsAfterFinished?: number;
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  schedulingPolicy?: SchedulingPolicy;
  suspend?: boolean;
  managedBy?: string;
}

export interface ReplicaStatus {
  active?: number;
  succeeded?: number;
  failed?: number;
  /** label selector of the replica type's Pods, as text */
  selector?: string;
}

export interface TrainingJobStatus {
  /** Created, Running, Restarting, Succeeded, Failed, Suspended; reasons `<Kind><Reason>` */
  conditions?: Condition[];
  replicaStatuses?: Record<string, ReplicaStatus>;
  startTime?: string;
  completionTime?: string;
  lastReconcileTime?: string;
  /**
   * Restarts the controller made by deleting and re-creating a failed Pod (ExitCode retries, a Pod
   * of an OnFailure/Always replica that still ended Failed), plus the container restarts that Pod
   * had. Counts toward `runPolicy.backoffLimit` with the live Pods' container restarts; kept here so
   * a restart of the server does not reset it.
   */
  restarts?: number;
  /** uids of failed Pods already counted in `restarts` whose deletion is still under way */
  countedFailures?: string[];
}

/** Any of the training kinds: its replica specs live under the kind's own field (see TrainingKind). */
export interface TrainingJob extends KObject {
  spec: { runPolicy?: RunPolicy; [field: string]: unknown };
  status?: TrainingJobStatus;
}
