/**
 * What `apply` sends when the object exists: a three-way merge of the live object, the manifest
 * and the manifest applied last time (kept, as kubectl does, in an annotation). Fields the
 * server filled in (defaults, generated labels) survive; fields removed from the manifest since
 * the last apply are removed; the live `status` and `resourceVersion` are kept.
 */
import type { KObject } from './types.js';
import { isPlainObject } from '../util/objects.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = unknown;

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Structural equality of JSON values, ignoring key order. */
export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Arrays merge element-wise only when they line up (same length, same `name`s); else replaced. */
function arraysAlign(live: Json[], desired: Json[]): boolean {
  if (live.length !== desired.length) return false;
  return desired.every((d, i) => {
    const l = live[i];
    if (isPlainObject(d) && isPlainObject(l)) {
      return d.name === undefined || l.name === undefined || d.name === l.name;
    }
    return !isPlainObject(d) && !isPlainObject(l);
  });
}

export function merge3(live: Json, desired: Json, last: Json): Json {
  if (isPlainObject(desired) && isPlainObject(live)) {
    const out: Record<string, Json> = { ...live };
    const lastObj = isPlainObject(last) ? last : undefined;
    for (const [k, v] of Object.entries(desired)) {
      out[k] = v === null ? null : merge3(live[k], v, lastObj?.[k]);
    }
    if (lastObj) for (const k of Object.keys(lastObj)) if (!(k in desired)) delete out[k];
    return out;
  }
  if (Array.isArray(desired) && Array.isArray(live) && arraysAlign(live, desired)) {
    const lastArr = Array.isArray(last) && last.length === desired.length ? last : undefined;
    return desired.map((d, i) => merge3(live[i], d, lastArr?.[i]));
  }
  return clone(desired);
}

/** The manifest as it is recorded in the last-applied annotation. */
export function lastAppliedOf(manifest: KObject): string {
  const copy = clone(manifest);
  const annotations = copy.metadata?.annotations;
  if (annotations) {
    delete annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(annotations).length === 0 && copy.metadata) delete copy.metadata.annotations;
  }
  delete copy.status;
  return JSON.stringify(copy);
}

/** The body to POST for a new object: the manifest plus the last-applied annotation. */
export function prepareCreate(manifest: KObject): KObject {
  const body = clone(manifest);
  const recorded = lastAppliedOf(manifest);
  body.metadata = { ...(body.metadata ?? {}) };
  body.metadata.annotations = { ...(body.metadata.annotations ?? {}), [LAST_APPLIED_ANNOTATION]: recorded };
  return body;
}

function parseLastApplied(live: KObject): Json {
  const raw = live.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Json;
  } catch {
    return undefined;
  }
}

/** The compared part: every top-level field but metadata and status, plus labels and annotations. */
function comparable(obj: KObject): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'metadata' || k === 'status' || k === 'apiVersion' || k === 'kind') continue;
    out[k] = v;
  }
  out['@labels'] = obj.metadata?.labels ?? {};
  const annotations: Record<string, Json> = { ...(obj.metadata?.annotations ?? {}) };
  const recorded = annotations[LAST_APPLIED_ANNOTATION];
  if (typeof recorded === 'string') {
    try {
      annotations[LAST_APPLIED_ANNOTATION] = JSON.parse(recorded) as Json; // key order does not matter
    } catch {
      // keep the string
    }
  }
  out['@annotations'] = annotations;
  return out;
}

/** The PUT body for an existing object, and whether it differs from the live one. */
export function prepareUpdate(live: KObject, manifest: KObject): { body: KObject; changed: boolean } {
  const desired = prepareCreate(manifest);
  delete desired.status;
  const body = merge3(live, desired, parseLastApplied(live)) as KObject;
  body.metadata = { ...(body.metadata ?? {}) };
  if (live.metadata?.resourceVersion !== undefined) body.metadata.resourceVersion = live.metadata.resourceVersion;
  if (live.metadata?.uid !== undefined) body.metadata.uid = live.metadata.uid;
  if ('status' in live) body.status = live.status;
  else delete body.status;
  return { body, changed: !deepEqual(comparable(body), comparable(live)) };
}
