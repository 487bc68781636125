// The objects behind the Model Registry REST API (src/server/model-registry/): Kubeflow Model
// Registry's entities as Skiff kinds in modelregistry.skiff.dev/v1alpha1, one namespace one registry.
// An object's name is the registry id (a decimal string, unique across every namespace and kind, as
// upstream's ids are unique in one database), so `GET /registered_models/{id}` is a store get; its
// `spec` holds the entity's fields under upstream's own names, the server-made times included.
import type { FieldError } from './errors.js';
import type { KObject } from './meta.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { Validator } from './validation.js';

export const modelRegistryGroup = 'modelregistry.skiff.dev';
const version = 'v1alpha1';
export const modelRegistryApiVersion = `${modelRegistryGroup}/${version}`;

/** Labels the registry keeps on its objects: what the nested lists select on. */
export const RegistryLabels = {
  /** a version's registered model, an artifact's model version, a run's experiment, an inference service's serving environment, a serve's inference service */
  parent: 'modelregistry.skiff.dev/parent-id',
  /** the experiment run an artifact was logged in */
  experimentRun: 'modelregistry.skiff.dev/experiment-run-id',
  /** on a metric's history record: the id of the metric it is a past value of (lists of artifacts leave these out) */
  history: 'modelregistry.skiff.dev/history-of',
  /** LIVE or ARCHIVED, or an artifact's state */
  state: 'modelregistry.skiff.dev/state',
  /** on a model artifact: who wrote its modelSource* fields, `pipeline` (Skiff, from the lineage of its URI) or `given` (the caller) */
  modelSource: 'modelregistry.skiff.dev/model-source',
  /** on an alias and its moves: the alias's name, so one alias's history is a label selector */
  alias: 'modelregistry.skiff.dev/alias',
} as const;

/**
 * An alias's name: what a label value may be, less `:` `/` `@` (it stands after `@` in a
 * `model-registry://` URI), and not `latest`, which names the newest LIVE version.
 */
const ALIAS_NAME = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/;
export const reservedAlias = 'latest';

/** why `name` cannot be an alias's name; undefined when it can */
export function aliasNameProblem(name: string): string | undefined {
  if (name === reservedAlias) return `"${reservedAlias}" is reserved: it names the newest LIVE version`;
  if (name.length < 1 || name.length > 63) return `${JSON.stringify(name)} must be 1 to 63 characters`;
  if (!ALIAS_NAME.test(name)) return `${JSON.stringify(name)} must be lower-case letters, digits, '-', '_' and '.', starting and ending with a letter or digit`;
  return undefined;
}

/** upstream's tagged custom property values (MetadataValue) */
export type MetadataValue =
  | { metadataType: 'MetadataStringValue'; string_value: string }
  | { metadataType: 'MetadataIntValue'; int_value: string }
  | { metadataType: 'MetadataDoubleValue'; double_value: number }
  | { metadataType: 'MetadataBoolValue'; bool_value: boolean }
  | { metadataType: 'MetadataStructValue'; struct_value: string }
  | { metadataType: 'MetadataProtoValue'; type: string; proto_value: string };

/** Any registry entity's stored fields: upstream's JSON, less its id (the object's name). */
export interface RegistrySpec {
  name?: string;
  description?: string;
  externalId?: string;
  customProperties?: Record<string, MetadataValue>;
  state?: string;
  /** milliseconds since the epoch, as a decimal string (upstream's int64 encoding) */
  createTimeSinceEpoch: string;
  lastUpdateTimeSinceEpoch: string;
  [field: string]: unknown;
}

export interface RegistryObject extends KObject { spec: RegistrySpec }

function validateEntity(obj: KObject): FieldError[] {
  const v = new Validator();
  // ids are decimal: the name is one, so a kubectl user cannot make an object the API could not name
  if (!/^[1-9][0-9]{0,17}$/.test(obj.metadata.name ?? '')) v.invalid('metadata.name', obj.metadata.name, 'must be a registry id: a decimal number without leading zeros');
  const spec = obj.spec;
  if (!v.object('spec', spec, true)) return v.errors;
  v.string('spec.name', spec.name);
  v.string('spec.description', spec.description);
  v.string('spec.externalId', spec.externalId);
  v.string('spec.state', spec.state);
  if (spec.customProperties !== undefined) v.object('spec.customProperties', spec.customProperties);
  v.string('spec.createTimeSinceEpoch', spec.createTimeSinceEpoch, true);
  v.string('spec.lastUpdateTimeSinceEpoch', spec.lastUpdateTimeSinceEpoch, true);
  return v.errors;
}

/** an alias and its moves: the model and version ids they name, who moved it, and a valid alias name */
function validateAlias(obj: KObject): FieldError[] {
  const errors = validateEntity(obj);
  if (errors.length) return errors;
  const v = new Validator();
  const spec = obj.spec as Record<string, unknown>;
  v.string('spec.name', spec.name, true);
  const problem = typeof spec.name === 'string' ? aliasNameProblem(spec.name) : undefined;
  if (problem) v.invalid('spec.name', spec.name, problem);
  v.string('spec.registeredModelId', spec.registeredModelId, true);
  v.string('spec.movedBy', spec.movedBy, true);
  if (obj.kind === 'ModelAlias') v.string('spec.modelVersionId', spec.modelVersionId, true);
  else {
    v.string('spec.fromModelVersionId', spec.fromModelVersionId);
    v.string('spec.toModelVersionId', spec.toModelVersionId);
  }
  return v.errors;
}

const base = { group: modelRegistryGroup, version, namespaced: true, hasStatus: false, validate: validateEntity } as const;
const nameCol: PrinterColumn = { name: 'Model-Name', type: 'string', jsonPath: '.spec.name' };
const stateCol: PrinterColumn = { name: 'State', type: 'string', jsonPath: '.spec.state' };
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const parentCol = (name: string, description: string): PrinterColumn => ({ name, type: 'string', jsonPath: `.metadata.labels.modelregistry\\.skiff\\.dev/parent-id`, description });

export const RegisteredModelKind: KindDef = { ...base, kind: 'RegisteredModel', plural: 'registeredmodels', singular: 'registeredmodel', printerColumns: [nameCol, stateCol, { name: 'Owner', type: 'string', jsonPath: '.spec.owner' }, age] };
export const ModelVersionKind: KindDef = {
  ...base, kind: 'ModelVersion', plural: 'modelversions', singular: 'modelversion',
  printerColumns: [{ ...nameCol, name: 'Version' }, parentCol('Model', 'the registered model id'), stateCol, { name: 'Author', type: 'string', jsonPath: '.spec.author' }, age],
};
export const ModelArtifactKind: KindDef = {
  ...base, kind: 'ModelArtifact', plural: 'modelartifacts', singular: 'modelartifact',
  printerColumns: [{ ...nameCol, name: 'Artifact' }, parentCol('Version', 'the model version id'), { name: 'Format', type: 'string', jsonPath: '.spec.modelFormatName' }, { name: 'URI', type: 'string', jsonPath: '.spec.uri' }, age],
};
/** the other artifact types of the generic `/artifacts`: doc-artifact, dataset-artifact, metric, parameter */
export const RegistryArtifactKind: KindDef = {
  ...base, kind: 'RegistryArtifact', plural: 'registryartifacts', singular: 'registryartifact',
  printerColumns: [{ ...nameCol, name: 'Artifact' }, { name: 'Type', type: 'string', jsonPath: '.spec.artifactType' }, { name: 'URI', type: 'string', jsonPath: '.spec.uri' }, age],
};
export const ServingEnvironmentKind: KindDef = { ...base, kind: 'ServingEnvironment', plural: 'servingenvironments', singular: 'servingenvironment', printerColumns: [{ ...nameCol, name: 'Environment' }, age] };
/** the registry's record of a deployment (upstream's InferenceService), not KServe's InferenceService */
export const RegistryInferenceServiceKind: KindDef = {
  ...base, kind: 'RegistryInferenceService', plural: 'registryinferenceservices', singular: 'registryinferenceservice',
  printerColumns: [{ ...nameCol, name: 'Service' }, { name: 'Model', type: 'string', jsonPath: '.spec.registeredModelId' }, { name: 'Version', type: 'string', jsonPath: '.spec.modelVersionId' }, { name: 'Desired', type: 'string', jsonPath: '.spec.desiredState' }, age],
};
export const ServeModelKind: KindDef = { ...base, kind: 'ServeModel', plural: 'servemodels', singular: 'servemodel', printerColumns: [parentCol('Service', 'the inference service id'), { name: 'Version', type: 'string', jsonPath: '.spec.modelVersionId' }, { name: 'State', type: 'string', jsonPath: '.spec.lastKnownState' }, age] };
export const RegistryExperimentKind: KindDef = { ...base, kind: 'RegistryExperiment', plural: 'registryexperiments', singular: 'registryexperiment', printerColumns: [{ ...nameCol, name: 'Experiment' }, stateCol, age] };
export const RegistryExperimentRunKind: KindDef = {
  ...base, kind: 'RegistryExperimentRun', plural: 'registryexperimentruns', singular: 'registryexperimentrun',
  printerColumns: [{ ...nameCol, name: 'Run' }, parentCol('Experiment', 'the experiment id'), { name: 'Status', type: 'string', jsonPath: '.spec.status' }, stateCol, age],
};

/**
 * Skiff's own beside upstream's entities (upstream has no aliases; MLflow's registry does): a name on
 * one version of a registered model, one per (model, alias), and the append-only record of each move.
 */
export const ModelAliasKind: KindDef = {
  ...base, validate: validateAlias, kind: 'ModelAlias', plural: 'modelaliases', singular: 'modelalias',
  printerColumns: [{ name: 'Alias', type: 'string', jsonPath: '.spec.name' }, parentCol('Model', 'the registered model id'), { name: 'Version', type: 'string', jsonPath: '.spec.modelVersionId' }, { name: 'Moved-By', type: 'string', jsonPath: '.spec.movedBy' }, age],
};
export const ModelAliasMoveKind: KindDef = {
  ...base, validate: validateAlias, kind: 'ModelAliasMove', plural: 'modelaliasmoves', singular: 'modelaliasmove',
  printerColumns: [
    { name: 'Alias', type: 'string', jsonPath: '.spec.name' }, parentCol('Model', 'the registered model id'),
    { name: 'From', type: 'string', jsonPath: '.spec.fromModelVersionId' }, { name: 'To', type: 'string', jsonPath: '.spec.toModelVersionId' },
    { name: 'Moved-By', type: 'string', jsonPath: '.spec.movedBy' }, age,
  ],
};

export const modelRegistryKinds: KindDef[] = [
  RegisteredModelKind, ModelVersionKind, ModelArtifactKind, RegistryArtifactKind, ServingEnvironmentKind,
  RegistryInferenceServiceKind, ServeModelKind, RegistryExperimentKind, RegistryExperimentRunKind,
  ModelAliasKind, ModelAliasMoveKind,
];
