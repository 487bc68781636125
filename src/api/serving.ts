// KServe's kinds: serving.kserve.io/v1beta1 InferenceService and serving.kserve.io/v1alpha1
// ServingRuntime / ClusterServingRuntime.
//
// An object goes through what the Kubernetes API server and KServe's webhooks do to it, in that
// order: the CRD's structural schema (src/api/structural-schema.ts: nulls dropped, schema defaults
// filled, wrong types rejected; unknown fields by src/api/field-validation.ts, which the server runs
// first with the request's fieldValidation), then KServe's defaulting (legacy framework keys
// such as `predictor.sklearn` become `predictor.model` with `modelFormat.name`, and `triton`, `onnx`
// and `huggingface` get `protocolVersion: v2` when none is set), then KServe's validation (name
// format, exactly one predictor implementation, replica bounds, storage URIs, autoscaler class...).
// Schema errors stop there, as the API server rejects such an object before any webhook sees it.
//
// Skiff does not fill KServe's resource defaults from its ConfigMap (cpu/memory requests and
// limits) nor `minReplicas`: the controller treats an absent minReplicas as 1.
import type { FieldError } from './errors.js';
import type { Condition } from './conditions.js';
import type { Container, EnvVar, PodSpec, ResourceRequirements } from './core-types.js';
import type { KObject } from './meta.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { unknownFieldErrors } from './field-validation.js';
import { schemaCatalog } from './openapi-schemas.js';
import { kserveSchemas } from './structural-schema.js';
import { Validator } from './validation.js';
import { isPlainObject as isObject } from '../util/objects.js';

export const ServingGroup = 'serving.kserve.io';

export type ServingProtocol = 'v1' | 'v2' | 'grpc-v1' | 'grpc-v2';
export const servingProtocols: readonly ServingProtocol[] = ['v1', 'v2', 'grpc-v1', 'grpc-v2'];

/** The legacy predictor keys, each a PredictorExtensionSpec; defaulting rewrites them into `model`. */
export const legacyPredictorKeys = ['sklearn', 'xgboost', 'tensorflow', 'pytorch', 'triton', 'onnx', 'huggingface', 'pmml', 'lightgbm', 'paddle'] as const;
export type LegacyPredictorKey = (typeof legacyPredictorKeys)[number];
/** legacy keys whose protocol defaults to v2 (their runtimes speak only v2) */
const v2LegacyKeys: readonly string[] = ['triton', 'onnx', 'huggingface'];

export const autoscalerClasses = ['hpa', 'external', 'keda', 'none', 'kpa'] as const;
export const AutoscalerClassAnnotation = 'serving.kserve.io/autoscalerClass';
export const DeploymentModeAnnotation = 'serving.kserve.io/deploymentMode';
export const DefaultModelMountPath = '/mnt/models';

const isvcNameFormat = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

// ---- types the controller reads ----

export interface ModelFormat {
  name: string;
  /** "major", "major.minor" or "major.minor.patch"; matched against runtimes as an exact string */
  version?: string;
}

export interface StorageSpec {
  key?: string;
  path?: string;
  parameters?: Record<string, string>;
  schemaPath?: string;
}

/** A container inlined into a predictor implementation; every field is optional there. */
export type InlineContainer = Partial<Container> & {
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  startupProbe?: unknown;
  [field: string]: unknown;
};

export interface PredictorExtensionSpec extends InlineContainer {
  storageUri?: string;
  /** image tag override for the runtime's container */
  runtimeVersion?: string;
  /** nil means v1 when matching runtimes */
  protocolVersion?: ServingProtocol;
  storage?: StorageSpec;
  confidential?: { enabled: boolean; resourceId?: string };
}

export interface ModelSpec extends PredictorExtensionSpec {
  modelFormat: ModelFormat;
  /** a ServingRuntime (namespace) or ClusterServingRuntime name; unset: auto-selected */
  runtime?: string;
}

export interface StorageUri {
  uri: string;
  /** defaults to /mnt/models */
  mountPath?: string;
}

export interface LoggerSpec {
  url?: string;
  mode?: 'all' | 'request' | 'response';
  metadataHeaders?: string[];
  metadataAnnotations?: string[];
  marshallerUrl?: string;
  batchSize?: number;
  batchInterval?: string;
  storage?: unknown;
}

export interface BatcherSpec {
  maxBatchSize?: number;
  maxLatency?: number;
  timeout?: number;
}

export interface ComponentExtensionSpec {
  /** undefined means 1 (KServe's default); 0 allows scale to zero */
  minReplicas?: number;
  /** 0 or undefined: unlimited */
  maxReplicas?: number;
  scaleTarget?: number;
  scaleMetric?: 'cpu' | 'memory' | 'concurrency' | 'rps';
  scaleMetricType?: 'Utilization' | 'Value' | 'AverageValue';
  autoScaling?: unknown;
  /** hard limit on requests in flight per replica; 0 or undefined: unlimited */
  containerConcurrency?: number;
  /** request timeout, seconds */
  timeout?: number;
  canaryTrafficPercent?: number;
  logger?: LoggerSpec;
  batcher?: BatcherSpec;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deploymentStrategy?: unknown;
}

/** A component's inlined PodSpec: like a Pod's, but containers are optional. */
export type ComponentPodSpec = Partial<PodSpec> & { [field: string]: unknown };

export interface PredictorSpec extends ComponentPodSpec, ComponentExtensionSpec {
  model?: ModelSpec;
  sklearn?: PredictorExtensionSpec;
  xgboost?: PredictorExtensionSpec;
  tensorflow?: PredictorExtensionSpec;
  pytorch?: PredictorExtensionSpec;
  triton?: PredictorExtensionSpec;
  onnx?: PredictorExtensionSpec;
  huggingface?: PredictorExtensionSpec;
  pmml?: PredictorExtensionSpec;
  lightgbm?: PredictorExtensionSpec;
  paddle?: PredictorExtensionSpec;
  storageUris?: StorageUri[];
  storageContainerName?: string;
  workerSpec?: unknown;
  /** only on predictors inside spec.canary[] */
  name?: string;
}

export interface TransformerSpec extends ComponentPodSpec, ComponentExtensionSpec {
  storageUris?: StorageUri[];
}

export interface ExplainerSpec extends ComponentPodSpec, ComponentExtensionSpec {
  art?: InlineContainer & { type?: string; storageUri?: string; runtimeVersion?: string; config?: Record<string, string> };
  storageUris?: StorageUri[];
}

export interface CanarySpec {
  trafficPercent: number;
  predictor: PredictorSpec;
}

export interface InferenceServiceSpec {
  predictor: PredictorSpec;
  transformer?: TransformerSpec;
  explainer?: ExplainerSpec;
  canary?: CanarySpec[];
}

/** knative duck-typed condition */
export interface ServingCondition extends Condition {
  severity?: 'Error' | 'Warning' | 'Info' | '';
}

export interface TrafficTarget {
  revisionName?: string;
  latestRevision?: boolean;
  percent?: number;
  tag?: string;
  url?: string;
}

export interface ComponentStatus {
  latestCreatedRevision?: string;
  latestReadyRevision?: string;
  latestRolledoutRevision?: string;
  previousRolledoutRevision?: string;
  url?: string;
  restUrl?: string;
  grpcUrl?: string;
  address?: { url?: string };
  traffic?: TrafficTarget[];
}

export type ModelState = 'Pending' | 'Standby' | 'Loading' | 'Loaded' | 'FailedToLoad';
export type FailureReason = 'ModelLoadFailed' | 'RuntimeUnhealthy' | 'RuntimeDisabled' | 'NoSupportingRuntime' | 'RuntimeNotRecognized' | 'InvalidPredictorSpec';

export interface ModelStatus {
  transitionStatus?: 'UpToDate' | 'InProgress' | 'BlockedByFailedLoad' | 'InvalidSpec';
  states?: { activeModelState?: ModelState | ''; targetModelState?: ModelState | '' };
  lastFailureInfo?: { reason?: FailureReason; message?: string; location?: string; exitCode?: number; time?: string; modelRevisionName?: string };
  copies?: { failedCopies?: number; totalCopies?: number };
}

export interface InferenceServiceStatus {
  url?: string;
  address?: { url?: string };
  deploymentMode?: string;
  servingRuntimeName?: string;
  clusterServingRuntimeName?: string;
  observedGeneration?: number;
  conditions?: ServingCondition[];
  components?: Record<string, ComponentStatus>;
  modelStatus?: ModelStatus;
  canaryStatuses?: { name: string; ready?: boolean; trafficPercent?: number; modelStatus?: ModelStatus }[];
  annotations?: Record<string, string>;
}

export interface InferenceService extends KObject {
  spec: InferenceServiceSpec;
  status?: InferenceServiceStatus;
}

export interface SupportedModelFormat {
  name: string;
  version?: string;
  autoSelect?: boolean;
  /** ≥ 1; higher wins among auto-selected runtimes; absent sorts last */
  priority?: number;
}

export interface ServingRuntimeSpec {
  supportedModelFormats?: SupportedModelFormat[];
  protocolVersions?: ServingProtocol[];
  multiModel?: boolean;
  disabled?: boolean;
  /** the first is the model server, `kserve-container`; args are Go templates over the InferenceService */
  containers: Container[];
  volumes?: PodSpec['volumes'];
  nodeSelector?: Record<string, string>;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  storageHelper?: { disabled?: boolean };
  workerSpec?: unknown;
  [field: string]: unknown;
}

export interface ServingRuntime extends KObject {
  spec: ServingRuntimeSpec;
}

export interface ClusterServingRuntime extends KObject {
  spec: ServingRuntimeSpec;
}

export type { EnvVar, ResourceRequirements };

// ---- defaulting ----

/** Applies the schema's defaults (and drops nulls) to everything but status. */
function schemaDefaults(obj: KObject, root: string): void {
  const { status } = obj;
  const hadStatus = 'status' in obj;
  delete obj.status;
  kserveSchemas().applyDefaults(obj, root);
  if (hadStatus) obj.status = status;
}

/**
 * KServe's defaulting of a predictor: a legacy framework key becomes `model` (keeping all of its
 * fields, `modelFormat.name` the key), replacing a `model` already there — as KServe's defaulter
 * does on every update, so re-applying a manifest written with the legacy key works. Two legacy
 * keys are left alone for validation to report.
 */
export function defaultPredictor(predictor: unknown): void {
  if (!isObject(predictor)) return;
  const present = legacyPredictorKeys.filter((k) => isObject(predictor[k]));
  if (present.length === 1) {
    const key = present[0] as LegacyPredictorKey;
    const ext = predictor[key] as Record<string, unknown>;
    if (v2LegacyKeys.includes(key) && (ext.protocolVersion === undefined || ext.protocolVersion === null || ext.protocolVersion === '')) ext.protocolVersion = 'v2';
    predictor.model = { modelFormat: { name: key }, ...ext };
    delete predictor[key];
  }
  const model = predictor.model;
  if (isObject(model) && isObject(model.modelFormat) && model.modelFormat.name === 'triton' && (model.protocolVersion === undefined || model.protocolVersion === null)) {
    model.protocolVersion = 'v2';
  }
}

export function defaultInferenceService(obj: KObject): void {
  schemaDefaults(obj, 'InferenceService');
  const spec = obj.spec;
  if (!isObject(spec)) return;
  defaultPredictor(spec.predictor);
  if (Array.isArray(spec.canary)) for (const c of spec.canary) if (isObject(c)) defaultPredictor(c.predictor);
}

// ---- validation ----

const recognisedSchemes = ['gs://', 's3://', 'pvc://', 'http://', 'https://', 'hf://', 'file://', 'oci://', 'oci+fetch://', 'oci+native://', 'modelscope://', 'hdfs://', 'webhdfs://', 'model-registry://'];

/**
 * Whether the storage initializer knows the URI: one of its schemes (Azure Blob and Files are
 * https URLs), or a local path (absolute, or relative without a scheme).
 */
export function isRecognisedStorageUri(uri: string): boolean {
  if (recognisedSchemes.some((s) => uri.startsWith(s))) return true;
  return !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(uri);
}

function validateStorageUri(v: Validator, field: string, uri: unknown): void {
  if (typeof uri !== 'string') return;
  if (!isRecognisedStorageUri(uri)) v.invalid(field, uri, `Cannot recognize storage type for ${uri}`);
}

function validateExtensions(v: Validator, path: string, c: Record<string, any>): void {
  if (typeof c.minReplicas === 'number' && c.minReplicas < 0) v.invalid(`${path}.minReplicas`, c.minReplicas, "'MinReplicas' cannot be less than 0");
  if (typeof c.maxReplicas === 'number' && c.maxReplicas < 0) v.invalid(`${path}.maxReplicas`, c.maxReplicas, "'MaxReplicas' cannot be less than 0");
  const min = typeof c.minReplicas === 'number' ? c.minReplicas : 1;
  const max = typeof c.maxReplicas === 'number' ? c.maxReplicas : 0;
  if (min >= 0 && max > 0 && min > max) v.invalid(`${path}.minReplicas`, min, `'MinReplicas' cannot be greater than MaxReplicas (${max})`);
  if (typeof c.containerConcurrency === 'number' && c.containerConcurrency < 0) v.invalid(`${path}.containerConcurrency`, c.containerConcurrency, 'parallelism cannot be less than 0');
  if (typeof c.canaryTrafficPercent === 'number' && (c.canaryTrafficPercent < 0 || c.canaryTrafficPercent > 100)) {
    v.invalid(`${path}.canaryTrafficPercent`, c.canaryTrafficPercent, 'must be between 0 and 100');
  }
}

function validateStorageUris(v: Validator, path: string, c: Record<string, any>, implementationUri: unknown): void {
  if (!Array.isArray(c.storageUris)) return;
  if (typeof implementationUri === 'string') v.invalid(`${path}.storageUris`, c.storageUris.length, 'Setting both StorageURI and StorageURIs is not supported.');
  c.storageUris.forEach((s: unknown, i: number) => {
    if (!isObject(s)) return;
    validateStorageUri(v, `${path}.storageUris[${i}].uri`, s.uri);
    if (typeof s.mountPath === 'string' && !s.mountPath.startsWith('/')) v.invalid(`${path}.storageUris[${i}].mountPath`, s.mountPath, 'must be an absolute path (start with "/")');
  });
}

const predictorImplementations = [...legacyPredictorKeys, 'model'] as const;

/** The implementation keys a predictor sets (legacy keys and `model`; not containers). */
export function predictorImplementationKeys(p: Record<string, any>): string[] {
  return predictorImplementations.filter((k) => isObject(p[k]));
}

function hasContainers(c: Record<string, any>): boolean {
  return Array.isArray(c.containers) && c.containers.length > 0;
}

function validatePredictorSpec(v: Validator, path: string, p: unknown, canary: boolean): void {
  if (!isObject(p)) return;
  const impls = predictorImplementationKeys(p);
  // containers count as the custom implementation only when nothing else is set; beside `model`
  // they override or extend the runtime's containers (e.g. a collocated transformer-container)
  if (impls.length > 1 || (impls.length === 0 && !hasContainers(p))) {
    v.invalid(path, impls, `exactly one of [${[...predictorImplementations, 'containers'].join(', ')}] must be specified in PredictorSpec`);
  }
  if (!canary && typeof p.name === 'string' && p.name !== '') v.add(`${path}.name`, 'FieldValueForbidden', "Forbidden: the 'name' field is not allowed in standard predictor");
  let uri: unknown;
  for (const k of impls) {
    const ext = p[k] as Record<string, any>;
    if (typeof ext.storageUri === 'string') {
      uri = ext.storageUri;
      validateStorageUri(v, `${path}.${k}.storageUri`, ext.storageUri);
    }
  }
  validateExtensions(v, path, p);
  validateStorageUris(v, path, p, uri);
}

function validateTransformer(v: Validator, path: string, t: unknown): void {
  if (!isObject(t)) return;
  if (!hasContainers(t)) v.required(`${path}.containers`, 'Required value: exactly one of [containers] must be specified in TransformerSpec');
  validateExtensions(v, path, t);
  validateStorageUris(v, path, t, undefined);
}

function validateExplainer(v: Validator, path: string, e: unknown): void {
  if (!isObject(e)) return;
  if (!isObject(e.art) && !hasContainers(e)) v.invalid(path, [], 'exactly one of [art, containers] must be specified in ExplainerSpec');
  let uri: unknown;
  if (isObject(e.art) && typeof e.art.storageUri === 'string') {
    uri = e.art.storageUri;
    validateStorageUri(v, `${path}.art.storageUri`, e.art.storageUri);
  }
  validateExtensions(v, path, e);
  validateStorageUris(v, path, e, uri);
}

function validateCanaries(v: Validator, spec: Record<string, any>): void {
  if (!Array.isArray(spec.canary)) return;
  const stable = isObject(spec.predictor) && typeof spec.predictor.name === 'string' ? spec.predictor.name : undefined;
  const names = new Set<string>();
  let total = 0;
  spec.canary.forEach((c: unknown, i: number) => {
    if (!isObject(c)) return;
    const path = `spec.canary[${i}]`;
    if (typeof c.trafficPercent === 'number') total += c.trafficPercent;
    const p = c.predictor;
    if (!isObject(p)) return;
    validatePredictorSpec(v, `${path}.predictor`, p, true);
    if (typeof p.name !== 'string' || p.name === '') v.required(`${path}.predictor.name`, 'Required value: a canary predictor must be named');
    else if (names.has(p.name)) v.add(`${path}.predictor.name`, 'FieldValueDuplicate', `Duplicate value: "${p.name}"`);
    else if (p.name === stable) v.invalid(`${path}.predictor.name`, p.name, 'must differ from the stable predictor\'s name');
    if (typeof p.name === 'string') names.add(p.name);
  });
  if (total > 100) v.invalid('spec.canary', total, 'the trafficPercent of all canaries may add up to at most 100');
}

/** KServe's validating webhook, on an object that already passed the schema. */
export function validateInferenceServiceSemantics(obj: KObject): FieldError[] {
  const v = new Validator();
  validateIsvcName(v, obj);
  const annotations = obj.metadata.annotations;
  const cls = isObject(annotations) ? annotations[AutoscalerClassAnnotation] : undefined;
  if (cls !== undefined && !(autoscalerClasses as readonly string[]).includes(cls)) {
    v.add(`metadata.annotations.${AutoscalerClassAnnotation}`, 'FieldValueNotSupported', `Unsupported value: "${cls}": [${cls}] is not a supported autoscaler class type; supported values: ${autoscalerClasses.map((c) => `"${c}"`).join(', ')}`);
  }
  const spec = obj.spec;
  if (!isObject(spec)) {
    v.required('spec.predictor');
    return v.errors;
  }
  if (!isObject(spec.predictor)) v.required('spec.predictor');
  else validatePredictorSpec(v, 'spec.predictor', spec.predictor, false);
  validateTransformer(v, 'spec.transformer', spec.transformer);
  validateExplainer(v, 'spec.explainer', spec.explainer);
  validateCanaries(v, spec);
  return v.errors;
}

function validateIsvcName(v: Validator, obj: KObject): void {
  const name = obj.metadata.name;
  if (typeof name !== 'string') return;
  if (name.length > 63) v.add('metadata.name', 'FieldValueTooLong', 'Too long: may not be longer than 63');
  else if (!isvcNameFormat.test(name)) {
    v.invalid('metadata.name', name, `a InferenceService name must consist of lower case alphanumeric characters or '-', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation is '${isvcNameFormat.source.slice(1, -1)}')`);
  }
}

/** the deployment modes' current names (Serverless is now Knative, RawDeployment Standard) */
function canonicalMode(mode: string): string {
  return mode === 'Serverless' ? 'Knative' : mode === 'RawDeployment' ? 'Standard' : mode;
}

/** Once the controller has deployed an InferenceService in a mode, the annotation may not switch it. */
function validateDeploymentModeUpdate(obj: KObject, old: KObject): FieldError[] {
  const deployed = old.status?.deploymentMode;
  const wanted = obj.metadata.annotations?.[DeploymentModeAnnotation];
  if (typeof deployed !== 'string' || deployed === '' || wanted === undefined) return [];
  if (canonicalMode(wanted) === canonicalMode(deployed)) return [];
  const v = new Validator();
  v.add(`metadata.annotations.${DeploymentModeAnnotation}`, 'FieldValueForbidden', `Forbidden: update rejected: deploymentMode cannot be changed from '${deployed}' to '${wanted}'`);
  return v.errors;
}

/** the CRD's schema: fields it does not declare, then the values of those it does */
function schemaErrors(obj: KObject, version: string, root: 'InferenceService' | 'ServingRuntime' | 'ClusterServingRuntime'): FieldError[] {
  return [
    ...unknownFieldErrors(schemaCatalog(), ServingGroup, version, root, obj as Record<string, unknown>, ['status']),
    ...kserveSchemas().validate(obj, root, '', { skip: ['status'] }),
  ];
}

export function validateInferenceService(obj: KObject, old?: KObject): FieldError[] {
  const schemaErrs = schemaErrors(obj, 'v1beta1', 'InferenceService');
  if (schemaErrs.length) {
    const v = new Validator();
    validateIsvcName(v, obj);
    return [...schemaErrs, ...v.errors];
  }
  return [...(old ? validateDeploymentModeUpdate(obj, old) : []), ...validateInferenceServiceSemantics(obj)];
}

/** A runtime's own rules beyond its schema: protocols are KServe's, a format names itself once per version. */
export function validateServingRuntime(obj: KObject, root: 'ServingRuntime' | 'ClusterServingRuntime'): FieldError[] {
  const errs = schemaErrors(obj, 'v1alpha1', root);
  if (errs.length) return errs;
  const v = new Validator();
  const spec = obj.spec as Record<string, any>;
  if (Array.isArray(spec.protocolVersions)) {
    spec.protocolVersions.forEach((p: unknown, i: number) => v.oneOf(`spec.protocolVersions[${i}]`, p, servingProtocols));
  }
  if (Array.isArray(spec.containers) && spec.containers.length === 0) v.required('spec.containers', 'Required value: a runtime needs at least one container');
  if (Array.isArray(spec.supportedModelFormats)) {
    const seen = new Map<string, number>();
    spec.supportedModelFormats.forEach((f: unknown, i: number) => {
      if (!isObject(f)) return;
      const key = `${f.name}|${f.version ?? ''}`;
      const prev = seen.get(key);
      if (prev !== undefined) v.add(`spec.supportedModelFormats[${i}]`, 'FieldValueDuplicate', `Duplicate value: format "${f.name}"${f.version ? ` version "${f.version}"` : ''} is already listed at [${prev}]`);
      else seen.set(key, i);
    });
  }
  return v.errors;
}

/** `kubectl get` columns, as KServe's CRDs declare them (kserve/kserve 0.20, config/crd/full/serving.kserve.io_*.yaml) */
const inferenceServiceColumns: PrinterColumn[] = [
  { name: 'URL', type: 'string', jsonPath: '.status.url' },
  { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
  { name: 'Prev', type: 'integer', jsonPath: ".status.components.predictor.traffic[?(@.tag=='prev')].percent" },
  { name: 'Latest', type: 'integer', jsonPath: '.status.components.predictor.traffic[?(@.latestRevision==true)].percent' },
  { name: 'PrevRolledoutRevision', type: 'string', jsonPath: ".status.components.predictor.traffic[?(@.tag=='prev')].revisionName" },
  { name: 'LatestReadyRevision', type: 'string', jsonPath: '.status.components.predictor.traffic[?(@.latestRevision==true)].revisionName' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const servingRuntimeColumns: PrinterColumn[] = [
  { name: 'Disabled', type: 'boolean', jsonPath: '.spec.disabled' },
  { name: 'ModelType', type: 'string', jsonPath: '.spec.supportedModelFormats[*].name' },
  { name: 'Containers', type: 'string', jsonPath: '.spec.containers[*].name' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

export const InferenceServiceKind: KindDef = {
  group: ServingGroup,
  version: 'v1beta1',
  kind: 'InferenceService',
  plural: 'inferenceservices',
  singular: 'inferenceservice',
  shortNames: ['isvc'],
  namespaced: true,
  hasStatus: true,
  default: defaultInferenceService,
  validate: (obj, old) => validateInferenceService(obj, old),
  printerColumns: inferenceServiceColumns,
};

export const ServingRuntimeKind: KindDef = {
  group: ServingGroup,
  version: 'v1alpha1',
  kind: 'ServingRuntime',
  plural: 'servingruntimes',
  singular: 'servingruntime',
  namespaced: true,
  hasStatus: true,
  default: (obj) => schemaDefaults(obj, 'ServingRuntime'),
  validate: (obj) => validateServingRuntime(obj, 'ServingRuntime'),
  printerColumns: servingRuntimeColumns,
};

export const ClusterServingRuntimeKind: KindDef = {
  group: ServingGroup,
  version: 'v1alpha1',
  kind: 'ClusterServingRuntime',
  plural: 'clusterservingruntimes',
  singular: 'clusterservingruntime',
  namespaced: false,
  hasStatus: true,
  default: (obj) => schemaDefaults(obj, 'ClusterServingRuntime'),
  validate: (obj) => validateServingRuntime(obj, 'ClusterServingRuntime'),
  printerColumns: servingRuntimeColumns,
};

export const servingKinds: KindDef[] = [InferenceServiceKind, ServingRuntimeKind, ClusterServingRuntimeKind];
