// The contract between the training kinds (src/api/training.ts: defaults, validation, and the
// pure renderer of what a job creates) and the training controller (src/workloads/training/):
// Kubeflow Training Operator jobs (kubeflow.org/v1 PyTorchJob, TFJob, XGBoostJob, PaddleJob,
// JAXJob, MPIJob) and the mpi-operator's kubeflow.org/v2beta1 MPIJob.
import type { Pod } from '../../api/core-types.js';
import type { KObject } from '../../api/meta.js';

export type { ReplicaRestartPolicy, ReplicaSpec, SchedulingPolicy, RunPolicy, ReplicaStatus, TrainingJobStatus, TrainingJob } from '../../api/training-types.js';
import type { ReplicaRestartPolicy, TrainingJob } from '../../api/training-types.js';

/** One replica as it would run: the Pod fully rendered (name, labels, env, ports, restartPolicy). */
export interface RenderedReplica {
  /** canonical replica type, e.g. `Master`, `Worker`, `Launcher` */
  type: string;
  index: number;
  pod: Pod;
  /** the replica's policy (the Pod's own restartPolicy is `Never` for ExitCode) */
  restartPolicy: ReplicaRestartPolicy;
}

/** What a job creates besides its replica Pods: Services, ConfigMaps (MPI hostfile), Secrets ... */
export interface Rendered {
  replicas: RenderedReplica[];
  objects: KObject[];
}

/** What the controller sees of one replica type when deciding the job's state. */
export interface ReplicaView {
  type: string;
  replicas: number;
  restartPolicy: ReplicaRestartPolicy;
  active: number;
  succeeded: number;
  failed: number;
  /** by index: the phase and the default container's exit code once it ended */
  pods: { index: number; phase?: string; exitCode?: number; reason?: string }[];
}

export interface TrainingKind {
  kind: string;
  apiVersion: string;
  /** e.g. `pytorchReplicaSpecs`, `tfReplicaSpecs`, `mpiReplicaSpecs` */
  replicaSpecsField: string;
  /** the container the operator looks at: `pytorch`, `tensorflow`, ... (MPI v2beta1: containers[0]) */
  defaultContainer: string;
  /** `<kind>job-controller`, the operator-name label */
  controllerName: string;
  /** what the job creates; pure; throws an Error naming the field when the job cannot be rendered */
  render(job: TrainingJob): Rendered;
  /** the per-kind success rule over the replica types */
  succeeded(job: TrainingJob, views: ReplicaView[]): boolean;
  /**
   * The kind's own rule for a replica failure that is not retried (restartPolicy Never, or ExitCode
   * with a code of 1-127), given whether a restart of some replica is under way: `fail` the job,
   * `ignore` the failure (the job goes on without that replica), or `defer` it (the job stays
   * Restarting and the failure is judged again once the restart is over). Without it such a failure
   * fails the job at once.
   */
  unretriedFailure?(job: TrainingJob, type: string, restarting: boolean): UnretriedFailureVerdict;
}

export type UnretriedFailureVerdict = 'fail' | 'ignore' | 'defer';

export const TrainingLabels = {
  operatorName: 'training.kubeflow.org/operator-name',
  jobName: 'training.kubeflow.org/job-name',
  replicaType: 'training.kubeflow.org/replica-type',
  replicaIndex: 'training.kubeflow.org/replica-index',
  jobRole: 'training.kubeflow.org/job-role',
} as const;
