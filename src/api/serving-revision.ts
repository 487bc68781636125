// `serving.skiff.dev/v1alpha1 Revision`: one immutable snapshot of an InferenceService component
// (predictor, transformer or explainer), as a Knative Revision is. The InferenceService controller
// creates one whenever the component's spec changes (everything but `canaryTrafficPercent`) and
// splits traffic between them; the revision controller keeps the revision's replicas (model-server
// Pods, or a model loaded in the server's own process) at the count the autoscaler asks for.
// Revisions are owned by their InferenceService and go with it.
import type { PodSpec } from './core-types.js';
import type { KObject } from './meta.js';
import type { KindDef } from './registry.js';

export const RevisionGroup = 'serving.skiff.dev';

/** How the gateway talks to a revision's replicas. */
export type ServerKind =
  /** Skiff's model server: V1 and V2 REST; the gateway may batch and translate Seldon requests */
  | 'skiff'
  /** a model in the server's own process (onnxruntime-node); no Pods */
  | 'in-process'
  /** any other container: requests are proxied as they come (V1 `:predict` may still be batched) */
  | 'custom';

export interface RevisionSpec {
  inferenceService: string;
  component: 'predictor' | 'transformer' | 'explainer';
  /** 1, 2, 3, ... per component; the name is `<isvc>-<component>-<5 digits>` */
  number: number;
  /** hash of the component spec it was made from */
  specHash: string;
  serverKind: ServerKind;
  /** the model name the server registers (the InferenceService's name for Skiff's runtimes) */
  modelName: string;
  protocol: string;
  /** the port replicas serve HTTP on */
  port: number;
  /** the Pod each replica runs (absent for in-process revisions) */
  podTemplate?: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  /** where the model is, for in-process revisions and for the record */
  storageUri?: string;
  /**
   * a `model-registry://<model>@<alias>` storageUri: the version id the alias named when the revision
   * was made; the revision serves that version whatever the alias names later
   */
  registryVersionId?: string;
  modelFormat?: string;
  runtime?: string;
  runtimeKind?: string;
  containerConcurrency: number;
  timeoutSeconds: number;
  batcher?: { maxBatchSize: number; maxLatencyMs: number };
  minReplicas: number;
  /** 0: unlimited */
  maxReplicas: number;
  scaleMetric: 'concurrency' | 'rps' | 'cpu' | 'memory';
  scaleTarget?: number;
  /** the autoscaler's stable window */
  windowSeconds: number;
  /** set when the revision cannot run at all (e.g. no runtime, storage unreachable) */
  failure?: { reason: string; message: string };
}

export type ModelState = 'Pending' | 'Standby' | 'Loading' | 'Loaded' | 'FailedToLoad';

export interface RevisionStatus {
  /** true once a replica has loaded the model (stays true when scaled to zero, as Knative's Ready) */
  ready?: boolean;
  desiredReplicas?: number;
  replicas?: number;
  readyReplicas?: number;
  modelState?: ModelState;
  lastFailureInfo?: { reason: string; message: string; exitCode?: number; time?: string };
  failedCopies?: number;
  /** a `model-registry://` model: the registered model, version and model artifact it resolved to */
  registryModel?: RegistryModelRef;
}

/** what a `model-registry://` storageUri names in its namespace's registry (ids as the registry's API writes them) */
export interface RegistryModelRef {
  registeredModelId: string;
  modelVersionId: string;
  modelArtifactId: string;
  /** the model artifact's URI: where the files are */
  uri: string;
}

export interface Revision extends KObject {
  spec: RevisionSpec;
  status?: RevisionStatus;
}

export const RevisionKind: KindDef = {
  group: RevisionGroup,
  version: 'v1alpha1',
  kind: 'Revision',
  plural: 'revisions',
  singular: 'revision',
  shortNames: ['rev'],
  namespaced: true,
  hasStatus: true,
  // which InferenceService and component it serves, its model's state and its replicas
  printerColumns: [
    { name: 'InferenceService', type: 'string', jsonPath: '.spec.inferenceService' },
    { name: 'Component', type: 'string', jsonPath: '.spec.component' },
    { name: 'Model', type: 'string', jsonPath: '.status.modelState' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
    { name: 'Desired', type: 'integer', jsonPath: '.status.desiredReplicas' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

export const ServingLabels = {
  inferenceService: 'serving.kserve.io/inferenceservice',
  component: 'component',
  revision: 'serving.knative.dev/revision',
  revisionNumber: 'serving.skiff.dev/revision-number',
} as const;

export function revisionName(isvc: string, component: string, n: number): string {
  return `${isvc}-${component}-${String(n).padStart(5, '0')}`;
}
