// The registry's entity types as upstream's OpenAPI document declares them (api/openapi/model-registry.yaml,
// v1alpha3): the fields a create or an update may carry and their types, which are required, which
// are fixed once set, which names a parent, and the kind each is stored as. Request bodies are read
// here into the stored spec, with a 400 naming the field for anything upstream would refuse, and
// stored objects are shaped back into upstream's JSON.
import type { KindDef } from '../../api/registry.js';
import {
  ModelAliasKind, ModelAliasMoveKind, ModelArtifactKind, ModelVersionKind, RegisteredModelKind, RegistryArtifactKind, RegistryExperimentKind,
  RegistryExperimentRunKind, RegistryInferenceServiceKind, ServeModelKind, ServingEnvironmentKind,
  type MetadataValue, type RegistryObject,
} from '../../api/model-registry.js';
import type { StoredObject } from '../../api/meta.js';
import { isPlainObject } from '../../util/objects.js';
import { badRequest } from './errors.js';

/** how a field's value is checked: a JSON type, upstream's int64-as-a-decimal-string, an id, or one of an enum's names */
type FieldType = 'string' | 'id' | 'int64' | 'number' | 'integer' | 'boolean' | 'strings' | 'props' | readonly string[];

export const LiveArchived = ['LIVE', 'ARCHIVED'] as const;
export const ArtifactStates = ['UNKNOWN', 'PENDING', 'LIVE', 'MARKED_FOR_DELETION', 'DELETED', 'ABANDONED', 'REFERENCE'] as const;
const ExecutionStates = ['UNKNOWN', 'NEW', 'RUNNING', 'COMPLETE', 'FAILED', 'CACHED', 'CANCELED'] as const;
const RunStatuses = ['RUNNING', 'SCHEDULED', 'FINISHED', 'FAILED', 'KILLED'] as const;

export interface Entity {
  /** upstream's schema name, for messages: `RegisteredModel` */
  type: string;
  def: KindDef;
  fields: Record<string, FieldType>;
  required: readonly string[];
  /** set at creation and never changed (upstream's Update schemas leave them out) */
  fixed: readonly string[];
  /** the field naming the parent entity, and that entity's type: the object carries the parent's id as a label */
  parent?: { field: string; of: () => Entity };
  /** the fields a new entity gets when the request leaves them out */
  defaults: Record<string, unknown>;
  /** an artifact type's discriminator (`model-artifact`) */
  artifactType?: string;
  /** fields a filterQuery reads as the entity's own beyond the common ones; another name is a custom property's */
  filterable?: readonly string[];
}

/** what every entity's filterQuery reads as its own (upstream's RestEntityPropertyMap) */
const commonFilterable = ['id', 'name', 'externalId', 'createTimeSinceEpoch', 'lastUpdateTimeSinceEpoch'];

/**
 * The properties a filterQuery reads from the entity itself, as upstream maps them: the common ones
 * and the entity's own scalar fields, less its description and a registered model's model card
 * (readme, license, …), which upstream leaves to custom properties of those names.
 */
export function filterableOf(e: Entity): Set<string> {
  const own = e.filterable ?? Object.entries(e.fields).filter(([k, t]) => !['description', 'customProperties', 'artifactType'].includes(k) && t !== 'strings').map(([k]) => k);
  return new Set([...commonFilterable, ...own]);
}

const resourceFields: Record<string, FieldType> = { name: 'string', description: 'string', externalId: 'string', customProperties: 'props' };
/** fields the server makes: a body may carry them back (the Python client sends whole entities) and they are ignored */
const outputOnly = ['id', 'createTimeSinceEpoch', 'lastUpdateTimeSinceEpoch'];
const artifactCommon: Record<string, FieldType> = { ...resourceFields, uri: 'string', state: ArtifactStates, experimentId: 'id', experimentRunId: 'id', artifactType: 'string' };

export const RegisteredModel: Entity = {
  type: 'RegisteredModel', def: RegisteredModelKind,
  fields: {
    ...resourceFields, owner: 'string', state: LiveArchived, readme: 'string', maturity: 'string', language: 'strings', tasks: 'strings',
    provider: 'string', logo: 'string', license: 'string', licenseLink: 'string', libraryName: 'string',
  },
  required: ['name'], fixed: ['name'], defaults: { state: 'LIVE' }, filterable: ['state', 'owner'],
};

export const ModelVersion: Entity = {
  type: 'ModelVersion', def: ModelVersionKind,
  fields: { ...resourceFields, state: LiveArchived, author: 'string', registeredModelId: 'id' },
  required: ['name', 'registeredModelId'], fixed: ['name', 'registeredModelId'], defaults: { state: 'LIVE' },
  parent: { field: 'registeredModelId', of: () => RegisteredModel },
};

export const ModelArtifact: Entity = {
  type: 'ModelArtifact', def: ModelArtifactKind, artifactType: 'model-artifact',
  fields: {
    ...artifactCommon, modelFormatName: 'string', modelFormatVersion: 'string', storageKey: 'string', storagePath: 'string', serviceAccountName: 'string',
    modelSourceKind: 'string', modelSourceClass: 'string', modelSourceGroup: 'string', modelSourceId: 'string', modelSourceName: 'string',
  },
  required: [], fixed: ['name'], defaults: { state: 'UNKNOWN' },
};

const otherArtifact = (type: string, artifactType: string, extra: Record<string, FieldType>): Entity => ({
  type, def: RegistryArtifactKind, artifactType, fields: { ...artifactCommon, ...extra }, required: [], fixed: ['name'], defaults: { state: 'UNKNOWN' },
});

export const DocArtifact = otherArtifact('DocArtifact', 'doc-artifact', {});
export const DataSet = otherArtifact('DataSet', 'dataset-artifact', { digest: 'string', sourceType: 'string', source: 'string', schema: 'string', profile: 'string' });
export const Metric = otherArtifact('Metric', 'metric', { value: 'number', timestamp: 'int64', step: 'integer' });
export const Parameter = otherArtifact('Parameter', 'parameter', { value: 'string', parameterType: ['string', 'number', 'boolean', 'object'] });

/** every artifact type by its discriminator */
export const artifactTypes: Record<string, Entity> = Object.fromEntries([ModelArtifact, DocArtifact, DataSet, Metric, Parameter].map((e) => [e.artifactType as string, e]));

export const ServingEnvironment: Entity = { type: 'ServingEnvironment', def: ServingEnvironmentKind, fields: { ...resourceFields }, required: ['name'], fixed: ['name'], defaults: {} };

export const InferenceService: Entity = {
  type: 'InferenceService', def: RegistryInferenceServiceKind,
  fields: { ...resourceFields, modelVersionId: 'id', runtime: 'string', desiredState: ['DEPLOYED', 'UNDEPLOYED'], registeredModelId: 'id', servingEnvironmentId: 'id' },
  required: ['registeredModelId', 'servingEnvironmentId'], fixed: ['name', 'registeredModelId', 'servingEnvironmentId'], defaults: { desiredState: 'DEPLOYED' },
  parent: { field: 'servingEnvironmentId', of: () => ServingEnvironment },
};

export const ServeModel: Entity = {
  type: 'ServeModel', def: ServeModelKind,
  fields: { ...resourceFields, lastKnownState: ExecutionStates, modelVersionId: 'id' },
  required: ['modelVersionId'], fixed: ['name', 'modelVersionId'], defaults: { lastKnownState: 'UNKNOWN' },
};

export const Experiment: Entity = {
  type: 'Experiment', def: RegistryExperimentKind, fields: { ...resourceFields, owner: 'string', state: LiveArchived },
  required: ['name'], fixed: ['name'], defaults: { state: 'LIVE' },
};

export const ExperimentRun: Entity = {
  type: 'ExperimentRun', def: RegistryExperimentRunKind,
  fields: { ...resourceFields, experimentId: 'id', startTimeSinceEpoch: 'int64', endTimeSinceEpoch: 'int64', status: RunStatuses, state: LiveArchived, owner: 'string' },
  required: ['experimentId'], fixed: ['name', 'experimentId'], defaults: { state: 'LIVE', status: 'RUNNING' },
  parent: { field: 'experimentId', of: () => Experiment },
};

/** Skiff's aliases (aliases.ts): not upstream's, read and written by their own routes, not readBody */
export const ModelAlias: Entity = {
  type: 'ModelAlias', def: ModelAliasKind, fields: { name: 'string', registeredModelId: 'id', modelVersionId: 'id', movedBy: 'string' },
  required: ['name', 'registeredModelId', 'modelVersionId', 'movedBy'], fixed: ['name', 'registeredModelId'], defaults: {},
  parent: { field: 'registeredModelId', of: () => RegisteredModel },
};

export const ModelAliasMove: Entity = {
  type: 'ModelAliasMove', def: ModelAliasMoveKind, fields: { name: 'string', registeredModelId: 'id', fromModelVersionId: 'id', toModelVersionId: 'id', movedBy: 'string' },
  required: ['name', 'registeredModelId', 'movedBy'], fixed: ['name', 'registeredModelId', 'fromModelVersionId', 'toModelVersionId', 'movedBy'], defaults: {},
  parent: { field: 'registeredModelId', of: () => RegisteredModel },
};

const ID = /^[1-9][0-9]{0,17}$/;
const INT32 = /^-?([1-9][0-9]{0,9}|0)$/;
const INT64 = /^-?([1-9][0-9]{0,18}|0)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const isId = (v: string): boolean => ID.test(v);

/** one custom property's value, checked against its metadataType as upstream's MetadataValue schemas say */
function metadataValue(key: string, v: unknown): MetadataValue {
  const at = `customProperties.${key}`;
  if (!isPlainObject(v)) throw badRequest(`${at}: expected a MetadataValue object with a metadataType`);
  const only = (...keys: string[]): void => {
    for (const k of Object.keys(v)) if (k !== 'metadataType' && !keys.includes(k)) throw badRequest(`${at}: unknown field "${k}" in a ${String(v.metadataType)}`);
    for (const k of keys) if (v[k] === undefined || v[k] === null) throw badRequest(`${at}: ${k} is required in a ${String(v.metadataType)}`);
  };
  switch (v.metadataType) {
    case 'MetadataStringValue':
      only('string_value');
      if (typeof v.string_value !== 'string') throw badRequest(`${at}: string_value must be a string, not ${JSON.stringify(v.string_value)}`);
      return { metadataType: v.metadataType, string_value: v.string_value };
    case 'MetadataIntValue': {
      only('int_value');
      const n = v.int_value;
      // upstream encodes the int32 as a decimal string; a JSON number is accepted as the same value
      const s = typeof n === 'number' && Number.isInteger(n) ? String(n) : n;
      if (typeof s !== 'string' || !INT32.test(s) || Math.abs(Number(s)) > 2 ** 31) throw badRequest(`${at}: int_value must be an int32 written as a decimal string, not ${JSON.stringify(n)}`);
      return { metadataType: v.metadataType, int_value: s };
    }
    case 'MetadataDoubleValue':
      only('double_value');
      if (typeof v.double_value !== 'number' || !Number.isFinite(v.double_value)) throw badRequest(`${at}: double_value must be a number, not ${JSON.stringify(v.double_value)}`);
      return { metadataType: v.metadataType, double_value: v.double_value };
    case 'MetadataBoolValue':
      only('bool_value');
      if (typeof v.bool_value !== 'boolean') throw badRequest(`${at}: bool_value must be true or false, not ${JSON.stringify(v.bool_value)}`);
      return { metadataType: v.metadataType, bool_value: v.bool_value };
    case 'MetadataStructValue':
      only('struct_value');
      if (typeof v.struct_value !== 'string' || !BASE64.test(v.struct_value)) throw badRequest(`${at}: struct_value must be base64-encoded bytes`);
      return { metadataType: v.metadataType, struct_value: v.struct_value };
    case 'MetadataProtoValue':
      only('type', 'proto_value');
      if (typeof v.type !== 'string') throw badRequest(`${at}: type must be a string (the proto's type URL)`);
      if (typeof v.proto_value !== 'string' || !BASE64.test(v.proto_value)) throw badRequest(`${at}: proto_value must be base64-encoded bytes`);
      return { metadataType: v.metadataType, type: v.type, proto_value: v.proto_value };
    default:
      throw badRequest(`${at}: metadataType must be one of MetadataStringValue, MetadataIntValue, MetadataDoubleValue, MetadataBoolValue, MetadataStructValue, MetadataProtoValue, not ${JSON.stringify(v.metadataType)}`);
  }
}

function fieldValue(e: Entity, name: string, type: FieldType, v: unknown): unknown {
  const at = `${e.type}.${name}`;
  if (Array.isArray(type)) {
    if (typeof v !== 'string' || !type.includes(v)) throw badRequest(`${at}: must be one of ${type.join(', ')}, not ${JSON.stringify(v)}`);
    return v;
  }
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw badRequest(`${at}: expected a string, not ${JSON.stringify(v)}`);
      if (name === 'name' && v === '') throw badRequest(`${at}: must not be empty`);
      return v;
    case 'id':
      if (typeof v !== 'string' || !ID.test(v)) throw badRequest(`${at}: expected an id (a decimal string), not ${JSON.stringify(v)}`);
      return v;
    case 'int64': {
      const s = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
      if (typeof s !== 'string' || !INT64.test(s)) throw badRequest(`${at}: expected an int64 written as a decimal string, not ${JSON.stringify(v)}`);
      return s;
    }
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${at}: expected a number, not ${JSON.stringify(v)}`);
      return v;
    case 'integer':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw badRequest(`${at}: expected an integer, not ${JSON.stringify(v)}`);
      return v;
    case 'boolean':
      if (typeof v !== 'boolean') throw badRequest(`${at}: expected true or false, not ${JSON.stringify(v)}`);
      return v;
    case 'strings':
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw badRequest(`${at}: expected an array of strings`);
      return v;
    case 'props': {
      if (!isPlainObject(v)) throw badRequest(`${at}: expected an object of MetadataValues`);
      const out: Record<string, MetadataValue> = {};
      for (const [k, x] of Object.entries(v)) out[k] = metadataValue(k, x);
      return out;
    }
  }
}

/**
 * A request body's fields for `e`, each checked: unknown fields are refused (upstream's server
 * decodes with unknown fields disallowed), output-only ones dropped, and on an update the fixed
 * ones must be absent or unchanged. `null` leaves a field out.
 */
export function readBody(e: Entity, body: unknown, mode: 'create' | 'update', current?: Record<string, unknown>): Record<string, unknown> {
  if (!isPlainObject(body)) throw badRequest(`the request body must be a JSON object (a ${e.type})`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (outputOnly.includes(k) || v === null || v === undefined) continue;
    const type = e.fields[k];
    if (type === undefined) throw badRequest(`${e.type}: unknown field "${k}"`);
    const val = fieldValue(e, k, type, v);
    if (k === 'artifactType' && e.artifactType && val !== e.artifactType) throw badRequest(`${e.type}.artifactType: must be ${JSON.stringify(e.artifactType)}, not ${JSON.stringify(val)}`);
    if (mode === 'update' && e.fixed.includes(k) && current && current[k] !== undefined && current[k] !== val) throw badRequest(`${e.type}.${k}: cannot be changed once set (${JSON.stringify(current[k])})`);
    out[k] = val;
  }
  if (e.artifactType) out.artifactType = e.artifactType;
  if (mode === 'create') for (const r of e.required) if (out[r] === undefined) throw badRequest(`${e.type}.${r}: required`);
  return out;
}

/** a stored object as upstream's JSON: its id, its fields, its times as strings */
export function shape(o: StoredObject | RegistryObject): Record<string, unknown> {
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  return { id: o.metadata.name, customProperties: {}, ...spec };
}
