// The kfp-kubernetes platform config of a container task (a KubernetesExecutorConfig from the
// PlatformSpec document of a compiled pipeline) applied to the task's Pod, and the IR container's
// `resources` turned into the main container's requests and limits.
//
// Everything here is pure: the caller resolves parameters (ResolveParam) and records the notes as
// Events. What the local substrate keeps on the Pod but cannot honour (node selection, tolerations,
// image pulling, user ids, memory-backed volumes...) is said in a note instead of being dropped.
import type { Container, EnvVar, Pod, Volume, VolumeMount } from '../../api/core-types.js';
import { deepEqual } from '../../api/meta.js';
import { formatCpu, parseQuantity } from '../../api/quantity.js';
import { envVarName, isDns1123Label, isQualifiedName } from '../../api/validation.js';
import { isPlainObject } from '../../util/objects.js';

/**
 * How the controller resolves a parameter spec found in a platform config: {runtimeValue:{constant}},
 * {componentInputParameter}, {taskOutputParameter:{producerTask, outputParameterKey}}; throws an
 * Error naming what is missing. It returns undefined (or null) for an optional input that was not
 * given: the entry that needed it is then skipped, with a note.
 */
export type ResolveParam = (spec: unknown, field: string) => unknown;

export interface PlatformResult {
  notes: string[];
  pvcNames: string[];
}

/** A malformed KubernetesExecutorConfig (or IR resources); the message starts with the field. */
export class PlatformConfigError extends Error {
  override readonly name = 'PlatformConfigError';
}

/** The annotation that keeps a task's node selector (it is not put in spec.nodeSelector). */
export const NODE_SELECTOR_ANNOTATION = 'pipelines.kubeflow.org/node-selector';

/** The fields of a KubernetesExecutorConfig this module knows (kfp-kubernetes, protojson names). */
export const KUBERNETES_CONFIG_FIELDS = [
  'secretAsVolume', 'secretAsEnv', 'pvcMount', 'nodeSelector', 'podMetadata', 'imagePullSecret', 'imagePullPolicy',
  'configMapAsVolume', 'configMapAsEnv', 'activeDeadlineSeconds', 'fieldPathAsEnv', 'tolerations', 'genericEphemeralVolume',
  'nodeAffinity', 'podAffinity', 'enabledSharedMemory', 'emptyDirMounts', 'securityContext', 'initContainers', 'podResourceClaims',
] as const;

/** Downward-API field paths an env var may name (what Kubernetes accepts, and src/substrate/local/env.ts serves). */
const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'];
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function fail(field: string, message: string): never {
  throw new PlatformConfigError(`${field}: ${message}`);
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
}

// --- small readers: each names the field it reads in its error --------------------------------

/** "runAsUser must..." inside an entry; just "must..." for a top-level field, whose name leads the message. */
function subject(key: string, field: string): string {
  return field === key ? '' : `${key} `;
}

function list(config: Record<string, unknown>, key: string): unknown[] {
  const v = config[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(key, `expected a list, got ${show(v)}`);
  return v;
}

function entry(v: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(v)) fail(field, `expected a mapping, got ${show(v)}`);
  return v;
}

function optString(obj: Record<string, unknown>, key: string, field: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') fail(field, `${subject(key, field)}must be a string, got ${show(v)}`);
  return v;
}

function reqString(obj: Record<string, unknown>, key: string, field: string): string {
  const v = optString(obj, key, field);
  if (v === undefined) fail(field, `${subject(key, field)}is required`);
  return v;
}

function optBool(obj: Record<string, unknown>, key: string, field: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') fail(field, `${subject(key, field)}must be true or false, got ${show(v)}`);
  return v;
}

/** int64 fields come as strings in protojson ("20"); integers are accepted too. */
function optInt(obj: Record<string, unknown>, key: string, field: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^[+-]?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) fail(field, `${subject(key, field)}must be an integer, got ${show(v)}`);
  return n;
}

function stringList(obj: Record<string, unknown>, key: string, field: string): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) fail(field, `${subject(key, field)}must be a list of strings, got ${show(v)}`);
  return v as string[];
}

function stringMap(v: unknown, field: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isPlainObject(v)) fail(field, `expected a mapping of strings, got ${show(v)}`);
  for (const [k, s] of Object.entries(v)) if (typeof s !== 'string') fail(`${field}[${JSON.stringify(k)}]`, `must be a string, got ${show(s)}`);
  return v as Record<string, string>;
}

function quantity(v: unknown, field: string): string {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return String(v);
  if (typeof v !== 'string' || parseQuantity(v) === undefined) fail(field, `${show(v)} is not a quantity (e.g. "500m", "1Gi")`);
  if ((parseQuantity(v) ?? 0) < 0) fail(field, `${show(v)} must not be negative`);
  return v;
}

/** A mount path as the container sees it; a relative one is taken from the root, as the sandbox does. */
function mountPathOf(obj: Record<string, unknown>, field: string, notes: Notes): string {
  const p = reqString(obj, 'mountPath', field);
  if (p.startsWith('/')) return p;
  const abs = `/${p.replace(/^\.\//, '')}`;
  notes.add(`${field}: mountPath ${JSON.stringify(p)} is not an absolute path; it is mounted at ${abs}`);
  return abs;
}

class Notes {
  readonly list: string[] = [];
  add(s: string): void {
    if (!this.list.includes(s)) this.list.push(s);
  }
}

// --- parameters --------------------------------------------------------------------------------

/**
 * Resolves one of the kfp-kubernetes "name" parameters: `<x>Parameter` (an InputParameterSpec)
 * first, else the deprecated plain string. undefined: an optional input that was not given.
 */
function nameFrom(resolve: ResolveParam, obj: Record<string, unknown>, paramKey: string, legacyKey: string, field: string): string | undefined {
  const spec = obj[paramKey];
  if (spec !== undefined && spec !== null) {
    const v = resolve(spec, `${field}.${paramKey}`);
    return asName(v, `${field}.${paramKey}`);
  }
  const legacy = optString(obj, legacyKey, field);
  if (legacy === undefined) fail(field, `${paramKey} (or ${legacyKey}) is required`);
  return legacy;
}

function asName(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v !== 'string') fail(field, `must resolve to a name (a string), got ${show(v)}`);
  return v;
}

/** A JSON-valued parameter (nodeSelectorJson, nodeAffinityJson, tolerationJson...): a struct, a list, or JSON text. */
function jsonFrom(resolve: ResolveParam, spec: unknown, field: string): unknown {
  const v = resolve(spec, field);
  if (typeof v !== 'string') return v ?? undefined;
  if (v.trim() === '') return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch (e) {
    return fail(field, `is not valid JSON: ${(e as Error).message}`);
  }
}

// --- volumes -----------------------------------------------------------------------------------

/** DNS-label form of a hint ("my.secret" → "my-secret"); "vol" when nothing is left. */
function labelFrom(hint: string): string {
  const s = hint.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-+/, '').slice(0, 63).replace(/-+$/, '');
  return s || 'vol';
}

type VolumeSource = Omit<Volume, 'name'>;

interface VolumeRequest {
  field: string;
  /** the name the config gives the volume (emptyDirMounts, genericEphemeralVolume, enabledSharedMemory) */
  explicit?: string;
  /** else a name derived from what it holds (claim, secret or ConfigMap name), as upstream does */
  hint: string;
  source: VolumeSource;
  mount?: Omit<VolumeMount, 'name'>;
  name?: string;
}

/**
 * Names the volumes: a name the config gives is kept (same name and same source is one volume
 * mounted twice; same name for different sources is an error), derived names get a `-2`, `-3`...
 * suffix when taken; a volume with the same source as one already there is reused.
 */
function nameVolumes(existing: Volume[], reqs: VolumeRequest[]): Map<string, string> {
  const taken = new Map<string, VolumeSource>(existing.map((v) => {
    const { name, ...src } = v;
    return [name, src];
  }));
  const aliases = new Map<string, string>();
  const sameSource = (src: VolumeSource): string | undefined => [...taken].find(([, s]) => deepEqual(s, src))?.[0];
  for (const r of reqs.filter((q) => q.explicit !== undefined)) {
    const want = r.explicit as string;
    if (!isDns1123Label(want)) fail(r.field, `volumeName ${JSON.stringify(want)} must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)`);
    const there = taken.get(want);
    if (there && !deepEqual(there, r.source)) fail(r.field, `volumeName ${JSON.stringify(want)} is already used by another volume of this Pod`);
    taken.set(want, r.source);
    r.name = want;
    aliases.set(want, want);
  }
  for (const r of reqs.filter((q) => q.explicit === undefined)) {
    let name = sameSource(r.source);
    if (name === undefined) {
      const base = labelFrom(r.hint);
      name = base;
      for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 63 - String(i).length - 1).replace(/-+$/, '')}-${i}`;
      taken.set(name, r.source);
    }
    r.name = name;
    if (!aliases.has(r.hint)) aliases.set(r.hint, name);
  }
  return aliases;
}

// --- the config --------------------------------------------------------------------------------

function mainContainer(pod: Pod): Container {
  const c = pod.spec.containers.find((x) => x.name === 'main') ?? pod.spec.containers[0];
  if (!c) throw new PlatformConfigError('the Pod has no container to apply the Kubernetes config to');
  return c;
}

function keyToEnv(list: unknown, field: string, keyField: 'secretKey' | 'configMapKey'): { key: string; env: string }[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) fail(`${field}.keyToEnv`, `expected a list, got ${show(list)}`);
  return list.map((x, i) => {
    const f = `${field}.keyToEnv[${i}]`;
    const e = entry(x, f);
    const env = reqString(e, 'envVar', f);
    if (!envVarName.test(env)) fail(f, `envVar ${JSON.stringify(env)} is not a valid environment variable name`);
    return { key: reqString(e, keyField, f), env };
  });
}

function selectorRequirements(v: unknown, field: string): { key: string; operator: string; values?: string[] }[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(field, `expected a list, got ${show(v)}`);
  return v.map((x, i) => {
    const f = `${field}[${i}]`;
    const e = entry(x, f);
    const key = reqString(e, 'key', f);
    const operator = reqString(e, 'operator', f);
    const values = stringList(e, 'values', f);
    return values && values.length ? { key, operator, values } : { key, operator };
  });
}

function weightOf(obj: Record<string, unknown>, field: string): number | undefined {
  const w = obj['weight'];
  if (w === undefined || w === null) return undefined;
  if (typeof w !== 'number' || !Number.isInteger(w) || w < 1 || w > 100) fail(field, `weight must be an integer from 1 to 100, got ${show(w)}`);
  return w;
}

function toleration(t: unknown, field: string): Record<string, unknown> {
  const e = entry(t, field);
  const out: Record<string, unknown> = {};
  const key = optString(e, 'key', field);
  const operator = optString(e, 'operator', field);
  const value = optString(e, 'value', field);
  const effect = optString(e, 'effect', field);
  const seconds = optInt(e, 'tolerationSeconds', field);
  if (operator !== undefined && operator !== 'Exists' && operator !== 'Equal') fail(field, `operator must be Exists or Equal, got ${JSON.stringify(operator)}`);
  if (operator === 'Exists' && value !== undefined) fail(field, 'value must be empty when operator is Exists');
  if (key === undefined && operator !== 'Exists') fail(field, 'operator must be Exists when key is empty');
  if (effect !== undefined && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) fail(field, `effect must be NoSchedule, PreferNoSchedule or NoExecute, got ${JSON.stringify(effect)}`);
  if (seconds !== undefined && effect !== 'NoExecute') fail(field, 'tolerationSeconds needs effect NoExecute');
  if (key !== undefined) out['key'] = key;
  if (operator !== undefined) out['operator'] = operator;
  if (value !== undefined) out['value'] = value;
  if (effect !== undefined) out['effect'] = effect;
  if (seconds !== undefined) out['tolerationSeconds'] = seconds;
  return out;
}

function describeSelector(sel: Record<string, string>): string {
  return Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(', ');
}

/**
 * Mutates `pod` (spec.volumes, the main container's volumeMounts/env/imagePullPolicy/securityContext,
 * spec.initContainers, spec.activeDeadlineSeconds, spec.imagePullSecrets, metadata.labels/annotations,
 * spec.tolerations, spec.affinity, spec.resourceClaims) per one KubernetesExecutorConfig. `notes` are
 * human sentences for Events about what the local substrate keeps but cannot honour; pvcNames are the
 * resolved claim names (sorted) for the cache fingerprint. Throws a PlatformConfigError whose message
 * names the config field for malformed input (e.g. `pvcMount[0]: mountPath is required`).
 */
export function applyKubernetesConfig(pod: Pod, config: unknown, resolve: ResolveParam): PlatformResult {
  const notes = new Notes();
  if (config === undefined || config === null) return { notes: [], pvcNames: [] };
  if (!isPlainObject(config)) fail('KubernetesExecutorConfig', `expected a mapping, got ${show(config)}`);
  const main = mainContainer(pod);
  const spec = pod.spec as Pod['spec'] & Record<string, any>;
  const skipped = (field: string, what: string): void => notes.add(`${field} is skipped: its ${what} resolved to no value (an optional input that was not given)`);

  for (const k of Object.keys(config)) {
    if (!(KUBERNETES_CONFIG_FIELDS as readonly string[]).includes(k)) notes.add(`the Kubernetes executor config field ${k} is not known to Skiff and is ignored`);
  }

  // Build every change first, so that a malformed entry leaves the Pod as it was.
  const volumes: VolumeRequest[] = [];
  const env: EnvVar[] = [];
  const pvcNames = new Set<string>();

  list(config, 'pvcMount').forEach((x, i) => {
    const f = `pvcMount[${i}]`;
    const e = entry(x, f);
    const mountPath = mountPathOf(e, f, notes);
    let claim: string | undefined;
    if (e['pvcNameParameter'] !== undefined && e['pvcNameParameter'] !== null) {
      claim = asName(resolve(e['pvcNameParameter'], `${f}.pvcNameParameter`), `${f}.pvcNameParameter`);
    } else if (e['constant'] !== undefined && e['constant'] !== null) {
      claim = reqString(e, 'constant', f);
    } else if (isPlainObject(e['taskOutputParameter'])) {
      claim = asName(resolve({ taskOutputParameter: e['taskOutputParameter'] }, `${f}.taskOutputParameter`), `${f}.taskOutputParameter`);
    } else if (typeof e['componentInputParameter'] === 'string') {
      claim = asName(resolve({ componentInputParameter: e['componentInputParameter'] }, `${f}.componentInputParameter`), `${f}.componentInputParameter`);
    } else {
      fail(f, 'the claim name is required: pvcNameParameter (or constant, taskOutputParameter, componentInputParameter)');
    }
    if (claim === undefined) return skipped(f, 'claim name');
    const subPath = optString(e, 'subPath', f);
    if (subPath !== undefined && (subPath.startsWith('/') || subPath.split('/').includes('..'))) fail(f, `subPath ${JSON.stringify(subPath)} must be a relative path without '..'`);
    pvcNames.add(claim);
    volumes.push({ field: f, hint: claim, source: { persistentVolumeClaim: { claimName: claim } }, mount: { mountPath, ...(subPath ? { subPath } : {}) } });
  });

  list(config, 'secretAsVolume').forEach((x, i) => {
    const f = `secretAsVolume[${i}]`;
    const e = entry(x, f);
    const mountPath = mountPathOf(e, f, notes);
    const name = nameFrom(resolve, e, 'secretNameParameter', 'secretName', f);
    if (name === undefined) return skipped(f, 'secret name');
    const optional = optBool(e, 'optional', f) ?? false;
    volumes.push({ field: f, hint: name, source: { secret: { secretName: name, optional } }, mount: { mountPath } });
  });

  list(config, 'configMapAsVolume').forEach((x, i) => {
    const f = `configMapAsVolume[${i}]`;
    const e = entry(x, f);
    const mountPath = mountPathOf(e, f, notes);
    const name = nameFrom(resolve, e, 'configMapNameParameter', 'configMapName', f);
    if (name === undefined) return skipped(f, 'ConfigMap name');
    const optional = optBool(e, 'optional', f) ?? false;
    volumes.push({ field: f, hint: name, source: { configMap: { name, optional } }, mount: { mountPath } });
  });

  list(config, 'emptyDirMounts').forEach((x, i) => {
    const f = `emptyDirMounts[${i}]`;
    const e = entry(x, f);
    const volumeName = reqString(e, 'volumeName', f);
    const mountPath = mountPathOf(e, f, notes);
    const medium = optString(e, 'medium', f);
    if (medium !== undefined && medium !== 'Memory' && !/^HugePages(-.+)?$/.test(medium)) fail(f, `medium must be "" or Memory, got ${JSON.stringify(medium)}`);
    const sizeLimit = e['sizeLimit'] === undefined || e['sizeLimit'] === null || e['sizeLimit'] === '' ? undefined : quantity(e['sizeLimit'], `${f}.sizeLimit`);
    const emptyDir: { medium?: string; sizeLimit?: string } = {};
    if (medium) emptyDir.medium = medium;
    if (sizeLimit) emptyDir.sizeLimit = sizeLimit;
    if (medium) notes.add(`emptyDir volume ${volumeName} asks for medium ${medium}; on this machine it is a directory on disk`);
    if (sizeLimit) notes.add(`emptyDir volume ${volumeName}: its sizeLimit ${sizeLimit} is not enforced on this machine`);
    volumes.push({ field: f, explicit: volumeName, hint: volumeName, source: { emptyDir }, mount: { mountPath } });
  });

  list(config, 'genericEphemeralVolume').forEach((x, i) => {
    const f = `genericEphemeralVolume[${i}]`;
    const e = entry(x, f);
    const volumeName = reqString(e, 'volumeName', f);
    const mountPath = mountPathOf(e, f, notes);
    const size = e['size'] === undefined || e['size'] === null || e['size'] === '' ? undefined : quantity(e['size'], `${f}.size`);
    const modes = stringList(e, 'accessModes', f) ?? [];
    for (const m of modes) if (!['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'].includes(m)) fail(`${f}.accessModes`, `unsupported access mode ${JSON.stringify(m)}`);
    const storageClass = optBool(e, 'defaultStorageClass', f) ? 'the default storage class' : optString(e, 'storageClassName', f) ? `storage class ${optString(e, 'storageClassName', f) ?? ''}` : undefined;
    if (e['metadata'] !== undefined && e['metadata'] !== null) {
      const md = entry(e['metadata'], `${f}.metadata`);
      stringMap(md['labels'], `${f}.metadata.labels`);
      stringMap(md['annotations'], `${f}.metadata.annotations`);
    }
    const asked = [size, modes.join('/'), storageClass].filter(Boolean).join(', ');
    notes.add(`generic ephemeral volume ${volumeName}${asked ? ` (${asked})` : ''} is backed by an empty directory on this machine (an emptyDir volume); no claim is created and its size is not enforced`);
    volumes.push({ field: f, explicit: volumeName, hint: volumeName, source: { emptyDir: {} }, mount: { mountPath } });
  });

  if (config['enabledSharedMemory'] !== undefined && config['enabledSharedMemory'] !== null) {
    const f = 'enabledSharedMemory';
    const e = entry(config['enabledSharedMemory'], f);
    const volumeName = optString(e, 'volumeName', f) ?? 'shm';
    const size = e['size'] === undefined || e['size'] === null || e['size'] === '' ? undefined : quantity(e['size'], `${f}.size`);
    notes.add(`shared memory volume ${volumeName} at /dev/shm is a directory on disk on this machine${size ? `; its size ${size} is not enforced` : ''}`);
    volumes.push({ field: f, explicit: volumeName, hint: volumeName, source: { emptyDir: { medium: 'Memory', ...(size ? { sizeLimit: size } : {}) } }, mount: { mountPath: '/dev/shm' } });
  }

  list(config, 'secretAsEnv').forEach((x, i) => {
    const f = `secretAsEnv[${i}]`;
    const e = entry(x, f);
    const pairs = keyToEnv(e['keyToEnv'], f, 'secretKey');
    const name = nameFrom(resolve, e, 'secretNameParameter', 'secretName', f);
    if (name === undefined) return skipped(f, 'secret name');
    const optional = optBool(e, 'optional', f);
    for (const p of pairs) env.push({ name: p.env, valueFrom: { secretKeyRef: { name, key: p.key, ...(optional !== undefined ? { optional } : {}) } } });
  });

  list(config, 'configMapAsEnv').forEach((x, i) => {
    const f = `configMapAsEnv[${i}]`;
    const e = entry(x, f);
    const pairs = keyToEnv(e['keyToEnv'], f, 'configMapKey');
    const name = nameFrom(resolve, e, 'configMapNameParameter', 'configMapName', f);
    if (name === undefined) return skipped(f, 'ConfigMap name');
    const optional = optBool(e, 'optional', f);
    for (const p of pairs) env.push({ name: p.env, valueFrom: { configMapKeyRef: { name, key: p.key, ...(optional !== undefined ? { optional } : {}) } } });
  });

  list(config, 'fieldPathAsEnv').forEach((x, i) => {
    const f = `fieldPathAsEnv[${i}]`;
    const e = entry(x, f);
    const name = reqString(e, 'name', f);
    if (!envVarName.test(name)) fail(f, `name ${JSON.stringify(name)} is not a valid environment variable name`);
    const fieldPath = reqString(e, 'fieldPath', f);
    const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
    if (m ? !isQualifiedName(m[2] ?? '') : !ENV_FIELD_PATHS.includes(fieldPath)) {
      fail(f, `fieldPath ${JSON.stringify(fieldPath)} is not supported: use metadata.labels['<key>'], metadata.annotations['<key>'] or one of ${ENV_FIELD_PATHS.join(', ')}`);
    }
    env.push({ name, valueFrom: { fieldRef: { fieldPath } } });
  });

  // names and mounts
  const existingVolumes = spec.volumes ?? [];
  const aliases = nameVolumes(existingVolumes, volumes);
  for (const v of existingVolumes) aliases.set(v.name, v.name);
  const newVolumes: Volume[] = [];
  const mounts: VolumeMount[] = [];
  const usedPaths = new Map<string, string>((main.volumeMounts ?? []).map((m) => [m.mountPath, `the volume ${m.name}`]));
  for (const r of volumes) {
    const name = r.name as string;
    if (!existingVolumes.some((v) => v.name === name) && !newVolumes.some((v) => v.name === name)) newVolumes.push({ name, ...r.source });
    if (!r.mount) continue;
    const clash = usedPaths.get(r.mount.mountPath);
    if (clash) fail(r.field, `mountPath ${r.mount.mountPath} is already used by ${clash}`);
    usedPaths.set(r.mount.mountPath, r.field);
    mounts.push({ name, ...r.mount });
  }

  // init containers
  const names = new Set([...pod.spec.containers, ...(spec.initContainers ?? [])].map((c) => c.name));
  const inits: Container[] = list(config, 'initContainers').map((x, i) => {
    const f = `initContainers[${i}]`;
    const e = entry(x, f);
    const name = reqString(e, 'name', f);
    if (!isDns1123Label(name)) fail(f, `name ${JSON.stringify(name)} must be a lowercase RFC 1123 label`);
    if (names.has(name)) fail(f, `name ${JSON.stringify(name)} is already used by another container of this Pod`);
    names.add(name);
    const c: Container = { name, image: reqString(e, 'image', f) };
    const command = stringList(e, 'command', f);
    const args = stringList(e, 'args', f);
    if (command) c.command = command;
    if (args) c.args = args;
    const envList = e['env'];
    if (envList !== undefined && envList !== null) {
      if (!Array.isArray(envList)) fail(`${f}.env`, `expected a list, got ${show(envList)}`);
      c.env = envList.map((y, j) => {
        const ef = `${f}.env[${j}]`;
        const ee = entry(y, ef);
        const n = reqString(ee, 'name', ef);
        if (!envVarName.test(n)) fail(ef, `name ${JSON.stringify(n)} is not a valid environment variable name`);
        const v = ee['value'];
        if (v !== undefined && v !== null && typeof v !== 'string') fail(ef, `value must be a string, got ${show(v)}`);
        return { name: n, value: v ?? '' };
      });
    }
    const vm = e['volumeMounts'];
    if (vm !== undefined && vm !== null) {
      if (!Array.isArray(vm)) fail(`${f}.volumeMounts`, `expected a list, got ${show(vm)}`);
      const seen = new Set<string>();
      c.volumeMounts = vm.map((y, j) => {
        const mf = `${f}.volumeMounts[${j}]`;
        const me = entry(y, mf);
        const volumeName = reqString(me, 'volumeName', mf);
        const target = aliases.get(volumeName);
        if (target === undefined) fail(mf, `volumeName ${JSON.stringify(volumeName)} is not a volume of this Pod (define it with emptyDirMounts, pvcMount, genericEphemeralVolume...)`);
        const mountPath = mountPathOf(me, mf, notes);
        if (seen.has(mountPath)) fail(mf, `mountPath ${mountPath} is mounted twice`);
        seen.add(mountPath);
        return { name: target, mountPath };
      });
    }
    const restartPolicy = optString(e, 'restartPolicy', f);
    if (restartPolicy !== undefined) {
      if (restartPolicy !== 'Always') fail(f, `restartPolicy must be Always (a sidecar) or unset, got ${JSON.stringify(restartPolicy)}`);
      fail(f, 'restartPolicy Always (a sidecar that runs beside the main container) is not supported by the local substrate: it runs init containers one at a time, each to completion, so the task would never start');
    }
    if (e['resources'] !== undefined && e['resources'] !== null) {
      const rf = `${f}.resources`;
      const re = entry(e['resources'], rf);
      const res: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
      for (const kind of ['requests', 'limits'] as const) {
        const m = stringMap(re[kind], `${rf}.${kind}`);
        if (Object.keys(m).length === 0) continue;
        for (const [k, q] of Object.entries(m)) quantity(q, `${rf}.${kind}[${JSON.stringify(k)}]`);
        res[kind] = m;
      }
      checkRequestsWithinLimits(res, rf);
      if (res.requests || res.limits) c.resources = res;
    }
    return c;
  });

  // scalars
  const deadline = optInt(config, 'activeDeadlineSeconds', 'activeDeadlineSeconds');
  if (deadline !== undefined && deadline < 0) fail('activeDeadlineSeconds', `must not be negative, got ${deadline}`);

  const pullPolicy = optString(config, 'imagePullPolicy', 'imagePullPolicy');
  if (pullPolicy !== undefined && !['Always', 'Never', 'IfNotPresent'].includes(pullPolicy)) fail('imagePullPolicy', `must be Always, Never or IfNotPresent, got ${JSON.stringify(pullPolicy)}`);

  const pullSecrets: string[] = [];
  list(config, 'imagePullSecret').forEach((x, i) => {
    const f = `imagePullSecret[${i}]`;
    const name = nameFrom(resolve, entry(x, f), 'secretNameParameter', 'secretName', f);
    if (name === undefined) return skipped(f, 'secret name');
    pullSecrets.push(name);
  });

  // pod metadata
  let labels: Record<string, string> = {};
  let annotations: Record<string, string> = {};
  if (config['podMetadata'] !== undefined && config['podMetadata'] !== null) {
    const md = entry(config['podMetadata'], 'podMetadata');
    labels = stringMap(md['labels'], 'podMetadata.labels');
    annotations = stringMap(md['annotations'], 'podMetadata.annotations');
    for (const [k, v] of Object.entries(labels)) {
      if (!isQualifiedName(k)) fail(`podMetadata.labels[${JSON.stringify(k)}]`, 'a label key must be a qualified name: [prefix/]name, the name at most 63 alphanumeric characters, "-", "_" or "."');
      if (v.length > 63 || !labelValue.test(v)) fail(`podMetadata.labels[${JSON.stringify(k)}]`, `${JSON.stringify(v)} is not a valid label value (at most 63 alphanumeric characters, "-", "_" or ".", starting and ending with an alphanumeric character)`);
    }
    for (const k of Object.keys(annotations)) if (!isQualifiedName(k)) fail(`podMetadata.annotations[${JSON.stringify(k)}]`, 'an annotation key must be a qualified name: [prefix/]name');
  }

  // node selection: kept, not enforced
  let nodeSelector: Record<string, string> | undefined;
  if (config['nodeSelector'] !== undefined && config['nodeSelector'] !== null) {
    const ns = entry(config['nodeSelector'], 'nodeSelector');
    if (ns['nodeSelectorJson'] !== undefined && ns['nodeSelectorJson'] !== null) {
      const v = jsonFrom(resolve, ns['nodeSelectorJson'], 'nodeSelector.nodeSelectorJson');
      if (v === undefined) skipped('nodeSelector', 'nodeSelectorJson');
      else nodeSelector = stringMap(v, 'nodeSelector.nodeSelectorJson');
    } else nodeSelector = stringMap(ns['labels'], 'nodeSelector.labels');
    if (nodeSelector) for (const k of Object.keys(nodeSelector)) if (!isQualifiedName(k)) fail(`nodeSelector[${JSON.stringify(k)}]`, 'a label key must be a qualified name');
    if (nodeSelector && Object.keys(nodeSelector).length === 0) nodeSelector = undefined;
  }

  const tolerations: Record<string, unknown>[] = [];
  list(config, 'tolerations').forEach((x, i) => {
    const f = `tolerations[${i}]`;
    const e = entry(x, f);
    if (e['tolerationJson'] !== undefined && e['tolerationJson'] !== null) {
      const v = jsonFrom(resolve, e['tolerationJson'], `${f}.tolerationJson`);
      if (v === undefined) return skipped(f, 'tolerationJson');
      const items = Array.isArray(v) ? v : isPlainObject(v) && Object.keys(v).length === 0 ? [] : [v];
      items.forEach((t, j) => tolerations.push(toleration(t, Array.isArray(v) ? `${f}.tolerationJson[${j}]` : `${f}.tolerationJson`)));
    } else tolerations.push(toleration(e, f));
  });

  const required: unknown[] = [];
  const preferred: unknown[] = [];
  list(config, 'nodeAffinity').forEach((x, i) => {
    const f = `nodeAffinity[${i}]`;
    const e = entry(x, f);
    if (e['nodeAffinityJson'] !== undefined && e['nodeAffinityJson'] !== null) {
      const v = jsonFrom(resolve, e['nodeAffinityJson'], `${f}.nodeAffinityJson`);
      if (v === undefined) return skipped(f, 'nodeAffinityJson');
      const na = entry(v, `${f}.nodeAffinityJson`);
      const req = na['requiredDuringSchedulingIgnoredDuringExecution'];
      if (req !== undefined && req !== null) {
        const terms = entry(req, `${f}.nodeAffinityJson.requiredDuringSchedulingIgnoredDuringExecution`)['nodeSelectorTerms'];
        if (!Array.isArray(terms)) fail(`${f}.nodeAffinityJson.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`, 'expected a list');
        required.push(...terms.map((t, j) => entry(t, `${f}.nodeAffinityJson.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${j}]`)));
      }
      const pref = na['preferredDuringSchedulingIgnoredDuringExecution'];
      if (pref !== undefined && pref !== null) {
        if (!Array.isArray(pref)) fail(`${f}.nodeAffinityJson.preferredDuringSchedulingIgnoredDuringExecution`, 'expected a list');
        pref.forEach((p, j) => {
          const pf = `${f}.nodeAffinityJson.preferredDuringSchedulingIgnoredDuringExecution[${j}]`;
          const pe = entry(p, pf);
          const weight = weightOf(pe, pf);
          if (weight === undefined) fail(pf, 'weight is required');
          preferred.push({ weight, preference: entry(pe['preference'], `${pf}.preference`) });
        });
      }
      return;
    }
    const matchExpressions = selectorRequirements(e['matchExpressions'], `${f}.matchExpressions`);
    const matchFields = selectorRequirements(e['matchFields'], `${f}.matchFields`);
    if (matchExpressions.length === 0 && matchFields.length === 0) return notes.add(`${f} is empty and is ignored`);
    const term = { ...(matchExpressions.length ? { matchExpressions } : {}), ...(matchFields.length ? { matchFields } : {}) };
    const weight = weightOf(e, f);
    if (weight !== undefined) preferred.push({ weight, preference: term });
    else required.push(term);
  });

  const podAff: { required: unknown[]; preferred: unknown[] } = { required: [], preferred: [] };
  const podAnti: { required: unknown[]; preferred: unknown[] } = { required: [], preferred: [] };
  list(config, 'podAffinity').forEach((x, i) => {
    const f = `podAffinity[${i}]`;
    const e = entry(x, f);
    const topologyKey = reqString(e, 'topologyKey', f);
    const podExpr = selectorRequirements(e['matchPodExpressions'], `${f}.matchPodExpressions`);
    const podLabels = stringMap(e['matchPodLabels'], `${f}.matchPodLabels`);
    const nsExpr = selectorRequirements(e['matchNamespaceExpressions'], `${f}.matchNamespaceExpressions`);
    const nsLabels = stringMap(e['matchNamespaceLabels'], `${f}.matchNamespaceLabels`);
    const namespaces = stringList(e, 'namespaces', f);
    const selector = (expr: unknown[], lbls: Record<string, string>): Record<string, unknown> => ({
      ...(expr.length ? { matchExpressions: expr } : {}), ...(Object.keys(lbls).length ? { matchLabels: lbls } : {}),
    });
    const term: Record<string, unknown> = { labelSelector: selector(podExpr, podLabels), topologyKey };
    if (namespaces && namespaces.length) term['namespaces'] = namespaces;
    if (nsExpr.length || Object.keys(nsLabels).length) term['namespaceSelector'] = selector(nsExpr, nsLabels);
    const weight = weightOf(e, f);
    const into = optBool(e, 'anti', f) ? podAnti : podAff;
    if (weight !== undefined) into.preferred.push({ weight, podAffinityTerm: term });
    else into.required.push(term);
  });

  let securityContext: Record<string, unknown> | undefined;
  if (config['securityContext'] !== undefined && config['securityContext'] !== null) {
    const f = 'securityContext';
    const e = entry(config[f], f);
    securityContext = {};
    for (const k of ['runAsUser', 'runAsGroup'] as const) {
      const n = optInt(e, k, f);
      if (n === undefined) continue;
      if (n < 0 || n > 2147483647) fail(f, `${k} must be between 0 and 2147483647, got ${n}`);
      securityContext[k] = n;
    }
    const nonRoot = optBool(e, 'runAsNonRoot', f);
    if (nonRoot !== undefined) securityContext['runAsNonRoot'] = nonRoot;
    if (nonRoot && securityContext['runAsUser'] === 0) fail(f, 'runAsNonRoot is true but runAsUser is 0 (root)');
  }

  const claims: { name: string; resourceClaimTemplateName?: string; resourceClaimName?: string }[] = [];
  list(config, 'podResourceClaims').forEach((x, i) => {
    const f = `podResourceClaims[${i}]`;
    const e = entry(x, f);
    if (e['resourceClaimJson'] !== undefined && e['resourceClaimJson'] !== null) {
      const v = jsonFrom(resolve, e['resourceClaimJson'], `${f}.resourceClaimJson`);
      if (v === undefined) return skipped(f, 'resourceClaimJson');
      const c = entry(v, `${f}.resourceClaimJson`);
      const tmpl = optString(c, 'resourceClaimTemplateName', `${f}.resourceClaimJson`);
      const claimName = optString(c, 'resourceClaimName', `${f}.resourceClaimJson`);
      if ((tmpl === undefined) === (claimName === undefined)) fail(`${f}.resourceClaimJson`, 'exactly one of resourceClaimTemplateName and resourceClaimName is required');
      const name = optString(c, 'name', `${f}.resourceClaimJson`) ?? labelFrom(tmpl ?? claimName ?? '');
      claims.push({ name, ...(tmpl ? { resourceClaimTemplateName: tmpl } : {}), ...(claimName ? { resourceClaimName: claimName } : {}) });
      return;
    }
    const tmpl = reqString(e, 'resourceClaimTemplateName', f);
    claims.push({ name: labelFrom(tmpl), resourceClaimTemplateName: tmpl });
  });
  const claimNames = new Set<string>();
  for (const [i, c] of claims.entries()) {
    if (!isDns1123Label(c.name)) fail(`podResourceClaims[${i}]`, `claim name ${JSON.stringify(c.name)} must be a lowercase RFC 1123 label`);
    if (claimNames.has(c.name)) fail(`podResourceClaims[${i}]`, `claim name ${JSON.stringify(c.name)} is used twice`);
    claimNames.add(c.name);
  }

  // --- apply ---------------------------------------------------------------------------------
  if (newVolumes.length) spec.volumes = [...existingVolumes, ...newVolumes];
  if (mounts.length) main.volumeMounts = [...(main.volumeMounts ?? []), ...mounts];
  if (env.length) main.env = [...(main.env ?? []), ...env];
  if (inits.length) spec.initContainers = [...(spec.initContainers ?? []), ...inits];
  if (deadline !== undefined && deadline > 0) spec.activeDeadlineSeconds = deadline;

  if (pullPolicy !== undefined) {
    main.imagePullPolicy = pullPolicy;
    notes.add(`imagePullPolicy ${pullPolicy} is kept on the container but has no effect: images are not pulled on this machine`);
  }
  if (pullSecrets.length) {
    const have: { name: string }[] = spec.imagePullSecrets ?? [];
    spec.imagePullSecrets = [...have, ...[...new Set(pullSecrets)].filter((n) => !have.some((h) => h.name === n)).map((name) => ({ name }))];
    notes.add(`image pull secrets ${[...new Set(pullSecrets)].join(', ')} are kept on the Pod but not used: images are not pulled on this machine`);
  }

  const md = pod.metadata;
  for (const [kind, want] of [['labels', labels], ['annotations', annotations]] as const) {
    const entries = Object.entries(want);
    if (entries.length === 0) continue;
    const have = (md[kind] ??= {});
    for (const [k, v] of entries) {
      if (have[k] !== undefined && have[k] !== v) notes.add(`podMetadata.${kind}[${JSON.stringify(k)}] is not applied: Skiff sets that key itself (to ${JSON.stringify(have[k])})`);
      else have[k] = v;
    }
  }

  if (nodeSelector) {
    (md.annotations ??= {})[NODE_SELECTOR_ANNOTATION] = JSON.stringify(nodeSelector);
    notes.add(`nodeSelector ${describeSelector(nodeSelector)} is not applied: this machine is one node, whose labels a cluster's node selector would never match, so the Pod would never start; it is kept in the annotation ${NODE_SELECTOR_ANNOTATION}`);
  }
  if (tolerations.length) {
    spec.tolerations = [...(spec.tolerations ?? []), ...tolerations];
    notes.add('tolerations are kept on the Pod but have no effect: the local node has no taints');
  }
  if (required.length || preferred.length) {
    const nodeAffinity: Record<string, unknown> = {};
    if (required.length) nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution'] = { nodeSelectorTerms: required };
    if (preferred.length) nodeAffinity['preferredDuringSchedulingIgnoredDuringExecution'] = preferred;
    spec.affinity = { ...(spec.affinity ?? {}), nodeAffinity };
    notes.add('node affinity is kept on the Pod but not enforced: this machine is one node');
  }
  for (const [key, terms] of [['podAffinity', podAff], ['podAntiAffinity', podAnti]] as const) {
    if (!terms.required.length && !terms.preferred.length) continue;
    const a: Record<string, unknown> = {};
    if (terms.required.length) a['requiredDuringSchedulingIgnoredDuringExecution'] = terms.required;
    if (terms.preferred.length) a['preferredDuringSchedulingIgnoredDuringExecution'] = terms.preferred;
    spec.affinity = { ...(spec.affinity ?? {}), [key]: a };
    notes.add(`${key === 'podAffinity' ? 'pod affinity' : 'pod anti-affinity'} is kept on the Pod but not enforced: this machine is one node`);
  }

  if (securityContext && Object.keys(securityContext).length) {
    // as kfp does: on the main container, with every capability dropped
    const m = main as Container & { securityContext?: Record<string, unknown> };
    m.securityContext = { ...(m.securityContext ?? {}), ...securityContext, capabilities: { drop: ['ALL'] } };
    const who = ['runAsUser', 'runAsGroup', 'runAsNonRoot'].filter((k) => securityContext?.[k] !== undefined).map((k) => `${k}=${String(securityContext?.[k])}`).join(', ');
    if (who) notes.add(`securityContext ${who} is kept on the container but not applied: containers run as the user that runs Skiff`);
  }

  if (claims.length) {
    spec.resourceClaims = [...(spec.resourceClaims ?? []), ...claims];
    const res = (main.resources ??= {}) as Record<string, unknown>;
    res['claims'] = [...((res['claims'] as unknown[] | undefined) ?? []), ...claims.map((c) => ({ name: c.name }))];
    notes.add(`resource claims ${claims.map((c) => c.name).join(', ')} are kept on the Pod but not allocated: dynamic resource allocation is not available on this machine`);
  }

  return { notes: notes.list, pvcNames: [...pvcNames].sort() };
}

// --- IR container resources ----------------------------------------------------------------------

function checkRequestsWithinLimits(res: { requests?: Record<string, string>; limits?: Record<string, string> }, field: string): void {
  for (const [k, q] of Object.entries(res.requests ?? {})) {
    const lim = res.limits?.[k];
    if (lim !== undefined && (parseQuantity(q) ?? 0) > (parseQuantity(lim) ?? Infinity)) fail(field, `the ${k} request ${q} is more than its limit ${lim}`);
  }
}

/** Resolves `{{$.inputs.parameters[...]}}` placeholders in a resources string field. */
export type ResolveString = (value: string, field: string) => string;

function unplaceholder(v: unknown, field: string, resolveString: ResolveString | undefined): unknown {
  if (typeof v !== 'string' || !v.includes('{{$')) return v;
  if (!resolveString) fail(field, `${JSON.stringify(v)} is an unresolved placeholder; pass a resolver for it`);
  const out = resolveString(v, field);
  if (out.includes('{{$')) fail(field, `${JSON.stringify(v)} resolved to ${JSON.stringify(out)}, still a placeholder`);
  return out;
}

/** A string quantity from the IR; Kubernetes spells decimal kilo "k", the kfp SDK also accepts "K". */
function irQuantity(raw: unknown, field: string, resolveString: ResolveString | undefined): string | undefined {
  const v = unplaceholder(raw, field, resolveString);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number') return quantity(v, field);
  if (typeof v !== 'string') fail(field, `must be a quantity string, got ${show(v)}`);
  return quantity(v.trim().replace(/K$/, 'k'), field);
}

/** The deprecated numbers: CPU cores and memory in GB (10^9 bytes). */
function cpuNumber(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(field, `must be a number of CPU cores, got ${show(v)}`);
  return formatCpu(v);
}

function memoryNumber(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(field, `must be a number of gigabytes, got ${show(v)}`);
  const bytes = Math.round(v * 1e9);
  if (bytes % 1e9 === 0) return `${bytes / 1e9}G`;
  if (bytes % 1e6 === 0) return `${bytes / 1e6}M`;
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}Mi`;
  return String(bytes);
}

/** The Kubernetes resource an accelerator type names: `nvidia.com/gpu` as is, or a kfp/Vertex name such as NVIDIA_TESLA_T4. */
function acceleratorResource(type: string, field: string): string {
  if (type.includes('/')) {
    if (!isQualifiedName(type)) fail(field, `${JSON.stringify(type)} is not a valid resource name`);
    return type;
  }
  const t = type.toUpperCase();
  if (t === 'GPU' || t === 'NVIDIA' || t.startsWith('NVIDIA_')) return 'nvidia.com/gpu';
  if (t === 'AMD' || t.startsWith('AMD_')) return 'amd.com/gpu';
  const tpu = /^TPU_(V\d+[A-Z]*)/.exec(t);
  if (tpu) return `cloud-tpus.google.com/${(tpu[1] ?? '').toLowerCase()}`;
  return fail(field, `unknown accelerator type ${JSON.stringify(type)}: use a resource name such as nvidia.com/gpu`);
}

/**
 * IR container.resources (PipelineContainerSpec.ResourceSpec) → the main container's resources:
 * requests/limits of cpu, memory and the accelerator's resource (nvidia.com/gpu...). The string
 * fields (resourceCpuLimit...) win over the deprecated numbers (cpuLimit, memoryLimit in GB).
 * Placeholders (`{{$.inputs.parameters[...]}}`, set with task.set_cpu_limit(pipeline_input)) go
 * through `resolveString`; without one they are an error naming the field.
 */
export function containerResources(resources: unknown, resolveString?: ResolveString): { requests?: Record<string, string>; limits?: Record<string, string> } | undefined {
  if (resources === undefined || resources === null) return undefined;
  if (!isPlainObject(resources)) fail('resources', `expected a mapping, got ${show(resources)}`);
  const r = resources;
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const set = (into: Record<string, string>, key: string, v: string | undefined): void => {
    if (v !== undefined) into[key] = v;
  };
  set(limits, 'cpu', irQuantity(r['resourceCpuLimit'], 'resources.resourceCpuLimit', resolveString) ?? cpuNumber(r['cpuLimit'], 'resources.cpuLimit'));
  set(requests, 'cpu', irQuantity(r['resourceCpuRequest'], 'resources.resourceCpuRequest', resolveString) ?? cpuNumber(r['cpuRequest'], 'resources.cpuRequest'));
  set(limits, 'memory', irQuantity(r['resourceMemoryLimit'], 'resources.resourceMemoryLimit', resolveString) ?? memoryNumber(r['memoryLimit'], 'resources.memoryLimit'));
  set(requests, 'memory', irQuantity(r['resourceMemoryRequest'], 'resources.resourceMemoryRequest', resolveString) ?? memoryNumber(r['memoryRequest'], 'resources.memoryRequest'));
  const acc = r['accelerator'];
  if (acc !== undefined && acc !== null) {
    if (!isPlainObject(acc)) fail('resources.accelerator', `expected a mapping, got ${show(acc)}`);
    const typeKey = acc['resourceType'] !== undefined && acc['resourceType'] !== '' ? 'resourceType' : 'type';
    const countKey = acc['resourceCount'] !== undefined && acc['resourceCount'] !== '' ? 'resourceCount' : 'count';
    const type = unplaceholder(acc[typeKey], `resources.accelerator.${typeKey}`, resolveString);
    const rawCount = unplaceholder(acc[countKey], `resources.accelerator.${countKey}`, resolveString);
    const count = rawCount === undefined || rawCount === null || rawCount === '' ? 1 : typeof rawCount === 'string' && /^\d+$/.test(rawCount.trim()) ? Number(rawCount) : rawCount;
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) fail(`resources.accelerator.${countKey}`, `must be a whole number of devices, got ${show(rawCount)}`);
    if (type === undefined || type === null || type === '') {
      if (count > 0 && rawCount !== undefined) fail('resources.accelerator', 'an accelerator count needs a type (resourceType), e.g. nvidia.com/gpu');
    } else {
      if (typeof type !== 'string') fail(`resources.accelerator.${typeKey}`, `must be a string, got ${show(type)}`);
      if (count > 0) limits[acceleratorResource(type, `resources.accelerator.${typeKey}`)] = String(count);
    }
  }
  const out: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
  if (Object.keys(requests).length) out.requests = requests;
  if (Object.keys(limits).length) out.limits = limits;
  checkRequestsWithinLimits(out, 'resources');
  return out.requests || out.limits ? out : undefined;
}

/** The executor's config in a PlatformSpec doc ({platforms:{kubernetes:{deploymentSpec:{executors:{...}}}}}), or undefined. */
export function executorConfig(platformSpec: unknown, executorLabel: string): unknown {
  if (!isPlainObject(platformSpec)) return undefined;
  const executors = platformSpec.platforms?.kubernetes?.deploymentSpec?.executors;
  if (!isPlainObject(executors) || !Object.prototype.hasOwnProperty.call(executors, executorLabel)) return undefined;
  const cfg: unknown = executors[executorLabel];
  return isPlainObject(cfg) ? cfg : undefined;
}
