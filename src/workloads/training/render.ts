// The pure renderer of the training kinds: what a job creates (its replica Pods, their Services,
// MPI's ConfigMap, Secret and Service), and each kind's success rule. The controller creates what
// `render` returns; `skiff apply --dry-run=server` prints it.
import { jaxKind } from './jax.js';
import { mpiV1Kind, mpiV2Kind } from './mpi.js';
import { paddleKind } from './paddle.js';
import { pytorchKind } from './pytorch.js';
import { tensorflowKind } from './tensorflow.js';
import type { Rendered, TrainingJob, TrainingKind } from './types.js';
import { xgboostKind } from './xgboost.js';

export { jaxKind, mpiV1Kind, mpiV2Kind, paddleKind, pytorchKind, tensorflowKind, xgboostKind };

export const trainingKinds: readonly TrainingKind[] = [pytorchKind, tensorflowKind, xgboostKind, paddleKind, jaxKind, mpiV1Kind, mpiV2Kind];

/** The training kind of an object by its own apiVersion and kind (MPIJob v1 and v2beta1 differ). */
export function trainingKindFor(apiVersion: string, kind: string): TrainingKind | undefined {
  return trainingKinds.find((k) => k.apiVersion === apiVersion && k.kind === kind);
}

/** Renders a (defaulted) job of any training kind; throws when the kind is not one. */
export function renderTrainingJob(job: TrainingJob): Rendered {
  const k = trainingKindFor(job.apiVersion, job.kind);
  if (!k) throw new Error(`${job.apiVersion} ${job.kind} is not a training kind`);
  return k.render(job);
}
