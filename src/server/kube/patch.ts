// PATCH as kube-apiserver serves it: JSON patch, merge patch, strategic merge patch (built-in kinds
// only, as for a cluster's custom resources) and server-side apply, each write recorded in
// metadata.managedFields under its field manager; and the Update managers of creates and replaces.
import type { IncomingMessage } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { FieldError } from '../../api/errors.js';
import { applyConfiguration, managerFromUserAgent, recordUpdate } from '../../api/managed-fields.js';
import type { KindFields } from '../../api/managed-fields.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import { schemaCatalog } from '../../api/openapi-schemas.js';
import type { KindDef } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Client } from '../../store/client.js';
import { JsonPatchError, applyJsonPatch, mergePatch } from '../../store/patch.js';
import { StrategicMergeError, strategicMergePatch } from '../../store/strategic-merge.js';
import { isPlainObject } from '../../util/objects.js';
import { parseBody, readBody } from '../body.js';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

const FIELD_MANAGER_MAX_LENGTH = 128;

/** the schema facts managed fields of a kind are computed with */
export function kindFields(def: KindDef): KindFields {
  const catalog = schemaCatalog();
  return {
    catalog,
    schema: catalog.kindSchema(def.group, def.version, def.kind),
    apiVersion: apiVersionOf(def),
    builtin: catalog.componentOf(def.group, def.version, def.kind) !== undefined,
    hasStatus: def.hasStatus,
  };
}

/** the patch types a kind accepts, in kube-apiserver's order: custom kinds have no strategic merge */
export function patchTypesOf(def: KindDef): string[] {
  const builtin = schemaCatalog().componentOf(def.group, def.version, def.kind) !== undefined;
  return builtin ? [JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH] : [JSON_PATCH, MERGE_PATCH, APPLY_PATCH];
}

/** Go's strconv.ParseBool, as kube-apiserver reads `force` */
function parseBool(name: string, v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new ApiError(StatusReason.BadRequest, `strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`, { causes: [{ reason: 'FieldValueInvalid', message: `strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`, field: name }] });
}

function fieldManagerErrors(fieldManager: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH) {
    errs.push({ field: 'fieldManager', type: 'FieldValueTooLong', message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` });
  }
  [...fieldManager].forEach((c, i) => {
    if (c < ' ' || c === '\x7f') errs.push({ field: 'fieldManager', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(fieldManager)}: invalid character U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')} (at position ${i})` });
  });
  return errs;
}

/** the manager of a write: `?fieldManager=`, else the program name of the client's user agent */
export function writeManager(req: IncomingMessage, url: URL, kind: 'CreateOptions' | 'UpdateOptions'): string {
  const fieldManager = url.searchParams.get('fieldManager') ?? '';
  const errs = fieldManagerErrors(fieldManager);
  if (errs.length) throw ApiError.invalid(kind, 'meta.k8s.io', '', errs);
  return fieldManager || managerFromUserAgent(req.headers['user-agent']);
}

/** the object with the kind's defaults, as kube-apiserver has decoded it before it records managers */
function defaulted(def: KindDef, obj: KObject): KObject {
  const d = clone(obj);
  try {
    def.default?.(d);
  } catch {
    // an object too malformed to default is refused by validation; record what was sent
    return clone(obj);
  }
  return d;
}

function copyManagedFields(from: KObject, to: KObject): void {
  const managed = (from.metadata as Record<string, unknown>).managedFields;
  const meta = to.metadata as Record<string, unknown>;
  if (managed === undefined) delete meta.managedFields;
  else meta.managedFields = managed;
}

/** a create records its manager's fields (the object is changed in place) */
export function recordCreate(def: KindDef, obj: KObject, req: IncomingMessage, url: URL): void {
  const manager = writeManager(req, url, 'CreateOptions');
  const d = defaulted(def, obj);
  recordUpdate(kindFields(def), undefined, d, manager);
  copyManagedFields(d, obj);
}

/** a replace (PUT) records its manager's changes against the live object */
export async function recordReplace(client: Client, def: KindDef, key: ObjectKey, obj: KObject, req: IncomingMessage, url: URL): Promise<void> {
  const manager = writeManager(req, url, 'UpdateOptions');
  const live = await client.find(def, key);
  if (!live) return;
  const d = defaulted(def, obj);
  recordUpdate(kindFields(def), live, d, manager);
  copyManagedFields(d, obj);
}

function unprocessable(message: string): ApiError {
  return new ApiError(StatusReason.Invalid, 'the server rejected our request due to an error in our request', { causes: [{ reason: 'UnexpectedServerResponse', message, field: '' }] });
}

function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (isPlainObject(v)) return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(StatusReason.BadRequest, `error decoding patch: ${(e as Error).message}`);
  }
}

export interface PatchOutcome {
  code: 200 | 201;
  object: StoredObject;
}

/** Serves PATCH on an object (or its /status): every patch type, retried when another write lands in between. */
export async function servePatch(client: Client, def: KindDef, key: ObjectKey, req: IncomingMessage, url: URL, opts: { subresource?: 'status'; dryRun: boolean; fieldCheck?: (raw: Buffer) => (patched: KObject) => void }): Promise<PatchOutcome> {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const accepted = patchTypesOf(def);
  if (!accepted.includes(contentType)) {
    throw new ApiError(StatusReason.UnsupportedMediaType, `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  }
  const isApply = contentType === APPLY_PATCH;
  const fieldManager = url.searchParams.get('fieldManager') ?? '';
  const errs: FieldError[] = [];
  if (isApply && fieldManager === '') errs.push({ field: 'fieldManager', type: 'FieldValueRequired', message: 'Required value: is required for apply patch' });
  if (!isApply && url.searchParams.has('force')) errs.push({ field: 'force', type: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch' });
  errs.push(...fieldManagerErrors(fieldManager));
  if (errs.length) throw ApiError.invalid('PatchOptions', 'meta.k8s.io', '', errs);
  const force = url.searchParams.has('force') ? parseBool('force', url.searchParams.get('force') ?? '') : false;
  const manager = fieldManager || managerFromUserAgent(req.headers['user-agent']);
  const raw = await readBody(req);
  const check = opts.fieldCheck?.(raw);
  const fields = kindFields(def);

  let patch: unknown;
  if (isApply) {
    try {
      patch = parseBody(raw, 'application/yaml');
    } catch (e) {
      throw new ApiError(StatusReason.BadRequest, `error decoding YAML: ${(e as Error).message}`);
    }
    if (!isPlainObject(patch)) throw new ApiError(StatusReason.BadRequest, `error decoding YAML: json: cannot unmarshal ${goKind(patch)} into Go value of type map[string]interface {}`);
    const gvk = `${typeof patch.apiVersion === 'string' && patch.apiVersion.includes('/') ? patch.apiVersion : `/${String(patch.apiVersion ?? '')}`}, Kind=${String(patch.kind ?? '')}`;
    if (patch.apiVersion !== apiVersionOf(def) || patch.kind !== def.kind) throw new ApiError(StatusReason.BadRequest, `invalid object type: ${gvk}`);
    const meta = patch.metadata;
    if (meta !== undefined && !isPlainObject(meta)) throw new ApiError(StatusReason.BadRequest, 'error decoding YAML: metadata must be an object');
    // an applier states the fields it wants, never who owns what
    if (isPlainObject(meta) && meta.managedFields !== undefined && meta.managedFields !== null) throw new ApiError(StatusReason.BadRequest, 'metadata.managedFields must be nil');
    const name = isPlainObject(meta) ? meta.name : undefined;
    if (name !== undefined && name !== key.name) throw new ApiError(StatusReason.BadRequest, `the name of the object (${String(name)}) does not match the name on the URL (${key.name})`);
    const ns = isPlainObject(meta) ? meta.namespace : undefined;
    if (def.namespaced && ns !== undefined && ns !== key.namespace) throw new ApiError(StatusReason.BadRequest, `the namespace of the provided object (${String(ns)}) does not match the namespace sent on the request (${key.namespace})`);
  } else if (contentType === JSON_PATCH) {
    patch = parseJson(raw);
    if (!Array.isArray(patch)) throw new ApiError(StatusReason.BadRequest, `json: cannot unmarshal ${goKind(patch)} into Go value of type jsonpatch.Patch`);
  } else {
    patch = parseJson(raw);
    if (!isPlainObject(patch)) {
      if (contentType === MERGE_PATCH) throw new ApiError(StatusReason.BadRequest, 'Invalid JSON Patch');
      throw new ApiError(StatusReason.BadRequest, `json: cannot unmarshal ${goKind(patch)} into Go value of type map[string]interface {}`);
    }
  }

  const patchMeta = !isApply && isPlainObject(patch) ? (patch as Record<string, unknown>).metadata : undefined;
  const pinned = isPlainObject(patchMeta) && patchMeta.resourceVersion !== undefined;
  for (let attempt = 0; ; attempt++) {
    const live = await client.find(def, key);
    if (!live && !isApply) return { code: 200, object: await client.get(def, key) };
    try {
      if (!live) {
        const applied = clone(patch) as KObject;
        applied.metadata = { ...(applied.metadata ?? {}), name: key.name };
        if (def.namespaced) applied.metadata.namespace = key.namespace;
        const { object } = applyConfiguration(fields, undefined, applied, manager, force);
        check?.(object);
        return { code: 201, object: await client.create(object, { dryRun: opts.dryRun }) };
      }
      let next: KObject;
      if (isApply) {
        const applied = clone(patch) as KObject;
        applied.metadata = { ...(applied.metadata ?? {}), name: key.name };
        if (def.namespaced) applied.metadata.namespace = key.namespace;
        next = applyConfiguration(fields, live, applied, manager, force).object;
        check?.(next);
      } else {
        next = patchObject(def, live, patch, contentType) as KObject;
        // unknown fields are judged (and pruned) before anyone is recorded as owning them
        check?.(next);
        next.apiVersion = live.apiVersion;
        next.kind = live.kind;
        if (!opts.subresource) {
          const d = defaulted(def, next);
          recordUpdate(fields, live, d, manager);
          copyManagedFields(d, next);
        }
      }
      if (!pinned) next.metadata = { ...next.metadata, resourceVersion: live.metadata.resourceVersion };
      if (opts.subresource === 'status') return { code: 200, object: await client.updateStatus(next, { dryRun: opts.dryRun }) };
      return { code: 200, object: await client.update(next, { dryRun: opts.dryRun }) };
    } catch (e) {
      const retry = !pinned && e instanceof ApiError && (e.reason === StatusReason.Conflict || e.reason === StatusReason.AlreadyExists) && !e.details.causes?.length && attempt < 5;
      if (retry) continue;
      throw e;
    }
  }
}

function patchObject(def: KindDef, live: StoredObject, patch: unknown, contentType: string): unknown {
  if (contentType === STRATEGIC_PATCH) {
    const catalog = schemaCatalog();
    try {
      return strategicMergePatch(live, patch, catalog.kindSchema(def.group, def.version, def.kind), catalog);
    } catch (e) {
      if (e instanceof StrategicMergeError) throw e.toApiError();
      throw e;
    }
  }
  if (contentType === MERGE_PATCH) {
    const out = mergePatch(live, patch);
    if (!isPlainObject(out)) throw new ApiError(StatusReason.BadRequest, 'Invalid JSON Patch');
    return out;
  }
  try {
    return applyJsonPatch(live, patch);
  } catch (e) {
    // a well-formed JSON patch that does not apply to this object: 422, as kube-apiserver answers it
    if (e instanceof JsonPatchError) throw unprocessable(e.message);
    throw e;
  }
}
