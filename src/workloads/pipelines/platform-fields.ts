// The readers the kfp-kubernetes settings share (each names the field it reads in its error), how
// they resolve parameters, and the context a setting family reads into (platform.ts runs them).
import type { Container, Pod, Volume, VolumeMount } from '../../api/core-types.js';
import { parseQuantity } from '../../api/quantity.js';
import { isPlainObject } from '../../util/objects.js';

/**
 * How the controller resolves a parameter spec found in a platform config: {runtimeValue:{constant}},
 * {componentInputParameter}, {taskOutputParameter:{producerTask, outputParameterKey}}; throws an
 * Error naming what is missing. It returns undefined (or null) for an optional input that was not
 * given: the entry that needed it is then skipped, with a note.
 */
export type ResolveParam = (spec: unknown, field: string) => unknown;

/** A malformed KubernetesExecutorConfig (or IR resources); the message starts with the field. */
export class PlatformConfigError extends Error {
  override readonly name = 'PlatformConfigError';
}

export function fail(field: string, message: string): never {
  throw new PlatformConfigError(`${field}: ${message}`);
}

export function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
}

// --- small readers: each names the field it reads in its error --------------------------------

/** "runAsUser must..." inside an entry; just "must..." for a top-level field, whose name leads the message. */
export function subject(key: string, field: string): string {
  return field === key ? '' : `${key} `;
}

export function list(config: Record<string, unknown>, key: string): unknown[] {
  const v = config[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(key, `expected a list, got ${show(v)}`);
  return v;
}

export function entry(v: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(v)) fail(field, `expected a mapping, got ${show(v)}`);
  return v;
}

export function optString(obj: Record<string, unknown>, key: string, field: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') fail(field, `${subject(key, field)}must be a string, got ${show(v)}`);
  return v;
}

export function reqString(obj: Record<string, unknown>, key: string, field: string): string {
  const v = optString(obj, key, field);
  if (v === undefined) fail(field, `${subject(key, field)}is required`);
  return v;
}

export function optBool(obj: Record<string, unknown>, key: string, field: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') fail(field, `${subject(key, field)}must be true or false, got ${show(v)}`);
  return v;
}

/** int64 fields come as strings in protojson ("20"); integers are accepted too. */
export function optInt(obj: Record<string, unknown>, key: string, field: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^[+-]?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) fail(field, `${subject(key, field)}must be an integer, got ${show(v)}`);
  return n;
}

export function stringList(obj: Record<string, unknown>, key: string, field: string): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) fail(field, `${subject(key, field)}must be a list of strings, got ${show(v)}`);
  return v as string[];
}

export function stringMap(v: unknown, field: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isPlainObject(v)) fail(field, `expected a mapping of strings, got ${show(v)}`);
  for (const [k, s] of Object.entries(v)) if (typeof s !== 'string') fail(`${field}[${JSON.stringify(k)}]`, `must be a string, got ${show(s)}`);
  return v as Record<string, string>;
}

export function quantity(v: unknown, field: string): string {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return String(v);
  if (typeof v !== 'string' || parseQuantity(v) === undefined) fail(field, `${show(v)} is not a quantity (e.g. "500m", "1Gi")`);
  if ((parseQuantity(v) ?? 0) < 0) fail(field, `${show(v)} must not be negative`);
  return v;
}

/** A mount path as the container sees it; a relative one is taken from the root, as the sandbox does. */
export function mountPathOf(obj: Record<string, unknown>, field: string, notes: Notes): string {
  const p = reqString(obj, 'mountPath', field);
  if (p.startsWith('/')) return p;
  const abs = `/${p.replace(/^\.\//, '')}`;
  notes.add(`${field}: mountPath ${JSON.stringify(p)} is not an absolute path; it is mounted at ${abs}`);
  return abs;
}

export class Notes {
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
export function nameFrom(resolve: ResolveParam, obj: Record<string, unknown>, paramKey: string, legacyKey: string, field: string): string | undefined {
  const spec = obj[paramKey];
  if (spec !== undefined && spec !== null) {
    const v = resolve(spec, `${field}.${paramKey}`);
    return asName(v, `${field}.${paramKey}`);
  }
  const legacy = optString(obj, legacyKey, field);
  if (legacy === undefined) fail(field, `${paramKey} (or ${legacyKey}) is required`);
  return legacy;
}

export function asName(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v !== 'string') fail(field, `must resolve to a name (a string), got ${show(v)}`);
  return v;
}

/** A JSON-valued parameter (nodeSelectorJson, nodeAffinityJson, tolerationJson...): a struct, a list, or JSON text. */
export function jsonFrom(resolve: ResolveParam, spec: unknown, field: string): unknown {
  const v = resolve(spec, field);
  if (typeof v !== 'string') return v ?? undefined;
  if (v.trim() === '') return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch (e) {
    return fail(field, `is not valid JSON: ${(e as Error).message}`);
  }
}

// --- volumes and Pods ---------------------------------------------------------------------------

/** DNS-label form of a hint ("my.secret" → "my-secret"); "vol" when nothing is left. */
export function labelFrom(hint: string): string {
  const s = hint.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-+/, '').slice(0, 63).replace(/-+$/, '');
  return s || 'vol';
}

export type VolumeSource = Omit<Volume, 'name'>;

export interface VolumeRequest {
  field: string;
  /** the name the config gives the volume (emptyDirMounts, genericEphemeralVolume, enabledSharedMemory) */
  explicit?: string;
  /** else a name derived from what it holds (claim, secret or ConfigMap name), as upstream does */
  hint: string;
  source: VolumeSource;
  mount?: Omit<VolumeMount, 'name'>;
  name?: string;
}

/** A request above its limit is refused, naming the resource. */
export function checkRequestsWithinLimits(res: { requests?: Record<string, string>; limits?: Record<string, string> }, field: string): void {
  for (const [k, q] of Object.entries(res.requests ?? {})) {
    const lim = res.limits?.[k];
    if (lim !== undefined && (parseQuantity(q) ?? 0) > (parseQuantity(lim) ?? Infinity)) fail(field, `the ${k} request ${q} is more than its limit ${lim}`);
  }
}

export function mainContainer(pod: Pod): Container {
  const c = pod.spec.containers.find((x) => x.name === 'main') ?? pod.spec.containers[0];
  if (!c) throw new PlatformConfigError('the Pod has no container to apply the Kubernetes config to');
  return c;
}

/** What one task's config is read into. Nothing on the Pod changes until every setting has read its fields. */
export interface PlatformContext {
  pod: Pod;
  spec: Pod['spec'] & Record<string, any>;
  main: Container;
  config: Record<string, unknown>;
  resolve: ResolveParam;
  notes: Notes;
  /** the volumes the settings ask for; placeVolumes names them and mounts them in the main container */
  volumes: VolumeRequest[];
  /** the resolved claim names, for the cache fingerprint */
  pvcNames: Set<string>;
  /** a volume name as the config refers to it (an explicit name, or a claim/secret/ConfigMap name) → the Pod's volume */
  aliases: Map<string, string>;
}

/** the change a setting makes to the Pod, made only after every setting has read its fields */
export type Change = () => void;

/**
 * One setting family (pvcMount, secretAsEnv, tolerations...): reads and checks its fields in
 * `c.config`, throwing a PlatformConfigError naming a malformed one, and returns its change, if any.
 */
export type Setting = (c: PlatformContext) => Change | void;

export function skipped(c: PlatformContext, field: string, what: string): void {
  c.notes.add(`${field} is skipped: its ${what} resolved to no value (an optional input that was not given)`);
}
