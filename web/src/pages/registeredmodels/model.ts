// What the Model Registry pages show, as plain data: registry objects (modelregistry.skiff.dev kinds,
// whose names are registry ids and whose specs hold upstream's fields) grouped by model, custom
// properties as values without their tags, the REST paths the pages call, and the names a deploy
// proposes.
import { RegistryLabels, type MetadataValue, type RegistryObject } from '../../../../src/api/model-registry';

export type { RegistryObject };

/** the registry's REST API for one namespace (its registry), as the dashboard calls it */
export function registryPath(namespace: string, path: string): string {
  return `/model-registry/${encodeURIComponent(namespace)}/api/model_registry/v1alpha3${path}`;
}

export const idOf = (o: RegistryObject): string => o.metadata.name ?? '';
export const parentOf = (o: RegistryObject): string | undefined => o.metadata.labels?.[RegistryLabels.parent];
export const stateOf = (o: RegistryObject): string => (typeof o.spec.state === 'string' ? o.spec.state : 'LIVE');
export const str = (o: RegistryObject | undefined, field: string): string | undefined => {
  const v = o?.spec[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** newest first: by creation time, then by id (ids are handed out in order), as serving resolves `<model>` */
export const newestFirst = (a: RegistryObject, b: RegistryObject): number =>
  Number(b.spec.createTimeSinceEpoch) - Number(a.spec.createTimeSinceEpoch) || Number(idOf(b)) - Number(idOf(a));

/** the children of each parent id, newest first */
export function byParent(items: RegistryObject[]): Map<string, RegistryObject[]> {
  const out = new Map<string, RegistryObject[]>();
  for (const o of items) {
    const p = parentOf(o);
    if (p === undefined) continue;
    const list = out.get(p) ?? [];
    list.push(o);
    out.set(p, list);
  }
  for (const list of out.values()) list.sort(newestFirst);
  return out;
}

/** an epoch-milliseconds string (upstream's int64 encoding) as an ISO time; undefined when it is not one */
export function isoOf(ms: unknown): string | undefined {
  const n = typeof ms === 'string' || typeof ms === 'number' ? Number(ms) : NaN;
  return Number.isFinite(n) && n > 0 ? new Date(n).toISOString() : undefined;
}

/** one row of a model's list */
export interface ModelRow {
  model: RegistryObject;
  id: string;
  name: string;
  owner?: string;
  state: string;
  newest?: RegistryObject;
  versions: number;
  updated?: string;
}

export function modelRows(models: RegistryObject[], versions: RegistryObject[], showArchived: boolean): ModelRow[] {
  const children = byParent(versions);
  return models
    .filter((m) => showArchived || stateOf(m) !== 'ARCHIVED')
    .map((m) => {
      const vs = children.get(idOf(m)) ?? [];
      return { model: m, id: idOf(m), name: str(m, 'name') ?? idOf(m), owner: str(m, 'owner'), state: stateOf(m), newest: vs[0], versions: vs.length, updated: isoOf(m.spec.lastUpdateTimeSinceEpoch) };
    });
}

/** a custom property's value as a person reads it: the value, not upstream's tag around it */
export function showValue(v: MetadataValue | unknown): string {
  if (!v || typeof v !== 'object') return String(v ?? '');
  const m = v as Record<string, unknown>;
  switch (m.metadataType) {
    case 'MetadataStringValue':
      return String(m.string_value ?? '');
    case 'MetadataIntValue':
      return String(m.int_value ?? '');
    case 'MetadataDoubleValue':
      return String(m.double_value ?? '');
    case 'MetadataBoolValue':
      return String(m.bool_value ?? '');
    case 'MetadataStructValue': {
      // base64 of a JSON object
      const raw = String(m.struct_value ?? '');
      try {
        return atob(raw);
      } catch {
        return raw;
      }
    }
    case 'MetadataProtoValue':
      return `${String(m.type ?? 'proto')} (${String(m.proto_value ?? '').length} bytes, base64)`;
    default:
      return JSON.stringify(v);
  }
}

/** custom properties as sorted rows; the client's empty-string values for labels (`{"label": ""}`) stay */
export function propertyRows(o: RegistryObject | undefined): { key: string; value: string }[] {
  const props = o?.spec.customProperties ?? {};
  return Object.keys(props)
    .sort()
    .map((key) => ({ key, value: showValue(props[key]) }));
}

/**
 * A name an InferenceService may have from a model's: DNS-1035 (lowercase letters, digits and '-',
 * starting with a letter), short enough for the hostnames serving derives from it.
 */
export function dnsName(model: string, max = 45): string {
  let s = model
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^[^a-z]+/, '');
  s = s.slice(0, max).replace(/-+$/, '');
  return s || 'model';
}

/** the `storageUri` that serves a version from the registry */
export const registryUri = (model: string, version: string): string => `model-registry://${model}/${version}`;

/** what in a name the `model-registry://` grammar cannot carry (it splits on '/') */
export function uriProblem(model: string, version: string): string | undefined {
  if (model.includes('/') || version.includes('/')) return `a model-registry:// URI cannot name ${model.includes('/') ? `model "${model}"` : `version "${version}"`}: it contains '/'`;
  return undefined;
}

/** the InferenceService a deploy creates: the version's model artifact's format, the registry URI */
export function inferenceServiceFor(name: string, model: string, version: string, artifact: RegistryObject | undefined, format?: string): Record<string, unknown> {
  // a format given in the form (the artifact names none) has no version of the artifact's
  const formatName = format ?? str(artifact, 'modelFormatName');
  const formatVersion = format === undefined ? str(artifact, 'modelFormatVersion') : undefined;
  return {
    apiVersion: 'serving.kserve.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name },
    spec: {
      predictor: {
        model: {
          // without a format the API says what is missing, which the form shows
          ...(formatName ? { modelFormat: { name: formatName, ...(formatVersion ? { version: formatVersion } : {}) } } : {}),
          storageUri: registryUri(model, version),
        },
      },
    },
  };
}

/** where a model artifact came from, when Skiff (or its writer) recorded a pipeline run */
export interface RunSource {
  namespace: string;
  run: string;
  runName: string;
  task?: string;
}

/** modelSource* of kind `kfp` name a run: Group the namespace, Id the run's id, Name its display name */
export function runSourceOf(artifact: RegistryObject | undefined): RunSource | undefined {
  if (!artifact || str(artifact, 'modelSourceKind') !== 'kfp') return undefined;
  const namespace = str(artifact, 'modelSourceGroup');
  const run = str(artifact, 'modelSourceId');
  if (!namespace || !run) return undefined;
  const cls = str(artifact, 'modelSourceClass');
  // Skiff writes the class `pipelinerun`; a writer naming a task there gets it shown as the task
  return { namespace, run, runName: str(artifact, 'modelSourceName') ?? run, ...(cls && cls !== 'pipelinerun' ? { task: cls } : {}) };
}

// ---- aliases (the REST contract: GET/PUT/DELETE /registered_models/{id}/aliases[/{alias}], /alias_history) ----

export interface Alias {
  id: string;
  name: string;
  registeredModelId: string;
  modelVersionId: string;
  movedBy?: string;
  createTimeSinceEpoch?: string;
  lastUpdateTimeSinceEpoch?: string;
}

export interface AliasMove {
  id: string;
  name: string;
  registeredModelId: string;
  fromModelVersionId?: string;
  toModelVersionId?: string;
  movedBy?: string;
  createTimeSinceEpoch?: string;
}

/** the aliases on each version id */
export function aliasesByVersion(aliases: Alias[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const a of aliases) out.set(a.modelVersionId, [...(out.get(a.modelVersionId) ?? []), a.name].sort());
  return out;
}

/** a move in words: `production` set on v1, moved from v1 to v2, removed from v2 */
export function moveText(m: AliasMove, versionName: (id: string) => string): string {
  const from = m.fromModelVersionId ? versionName(m.fromModelVersionId) : undefined;
  const to = m.toModelVersionId ? versionName(m.toModelVersionId) : undefined;
  if (from && to) return `moved from ${from} to ${to}`;
  if (to) return `set on ${to}`;
  if (from) return `removed from ${from}`;
  return 'changed';
}
