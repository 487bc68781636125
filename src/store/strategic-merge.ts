// Strategic merge patch (`application/strategic-merge-patch+json`) for the built-in kinds, with the
// semantics of Kubernetes' own implementation: a list whose schema says `x-kubernetes-patch-strategy:
// merge` is merged element by element (by its `x-kubernetes-patch-merge-key`, or as a set of
// primitives), every other list is replaced, maps merge key by key, null deletes, and the directives
// kubectl's three-way patches carry are honoured: `$patch: replace|delete|merge`,
// `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and `$retainKeys`.
//
// What kubectl's client-side apply sends is such a patch, computed from the last-applied annotation,
// the new file and the live object; applying it here exactly as a cluster would is what keeps a
// re-applied Pod's containers merged by name and its env by name, with nothing duplicated.
import { ApiError, StatusReason, UnclassifiedError } from '../api/errors.js';
import { clone, deepEqual } from '../api/meta.js';
import type { SchemaCatalog, SchemaNode } from '../api/openapi-schemas.js';
import { isPlainObject } from '../util/objects.js';

type JsonMap = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

/** A patch Kubernetes' implementation would refuse; `status` is the code it answers with. */
export class StrategicMergeError extends Error {
  constructor(message: string, readonly status: 400 | 422 | 500) {
    super(message);
  }

  toApiError(): ApiError {
    if (this.status === 400) return new ApiError(StatusReason.BadRequest, this.message);
    if (this.status === 422) return new ApiError(StatusReason.Invalid, this.message);
    return new UnclassifiedError(this.message);
  }
}

/** Go's `%v` of a decoded JSON value, which kube-apiserver's messages quote */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isPlainObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  return String(v);
}

/** where a field's patch metadata comes from: the kind's OpenAPI schema */
class PatchMeta {
  constructor(private readonly catalog: SchemaCatalog, readonly node: SchemaNode | undefined) {}

  field(name: string): PatchMeta {
    return new PatchMeta(this.catalog, this.catalog.field(this.node, name));
  }

  items(): PatchMeta {
    return new PatchMeta(this.catalog, this.catalog.items(this.node));
  }

  /** the field's strategies (`merge`, `retainKeys`, `replace`), ignoring retainKeys as Kubernetes does when merging */
  strategy(): string {
    const s = this.node?.['x-kubernetes-patch-strategy'];
    if (typeof s !== 'string') return '';
    const parts = s.split(',').filter((p) => p && p !== 'retainKeys');
    return parts[0] ?? '';
  }

  mergeKey(): string {
    const k = this.node?.['x-kubernetes-patch-merge-key'];
    return typeof k === 'string' ? k : '';
  }
}

/**
 * Applies a strategic merge patch to `original` (an object of the kind whose schema is `schema`).
 * Neither argument is modified. Throws StrategicMergeError for a patch Kubernetes would refuse.
 */
export function strategicMergePatch(original: unknown, patch: unknown, schema: SchemaNode | undefined, catalog: SchemaCatalog): JsonMap {
  if (!isPlainObject(patch)) {
    const what = Array.isArray(patch) ? 'array' : patch === null ? 'null' : typeof patch === 'string' ? 'string' : typeof patch === 'number' ? 'number' : 'bool';
    throw new StrategicMergeError(`json: cannot unmarshal ${what} into Go value of type map[string]interface {}`, 400);
  }
  const base = isPlainObject(original) ? clone(original) : {};
  return mergeMap(base, clone(patch), new PatchMeta(catalog, schema));
}

function mergeMap(original: JsonMap, patch: JsonMap, meta: PatchMeta): JsonMap {
  if (DIRECTIVE in patch) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return stripDirectives(patch) as JsonMap;
    }
    if (directive === 'delete') return {};
    if (directive !== 'merge') throw new StrategicMergeError(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(patch)}`, 500);
    delete patch[DIRECTIVE];
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, meta);
  for (const [rawKey, patchV] of Object.entries(patch)) {
    let key = rawKey;
    const isDeleteList = rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    if (isDeleteList) key = rawKey.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    if (patchV === null) {
      delete original[key];
      continue;
    }
    if (!(key in original)) {
      if (!isDeleteList) setStripped(original, key, patchV);
      continue;
    }
    const origV = original[key];
    if (kindOf(origV) !== kindOf(patchV)) {
      if (!isDeleteList) setStripped(original, key, patchV);
      continue;
    }
    const fieldMeta = meta.field(key);
    if (isPlainObject(origV) && isPlainObject(patchV)) {
      original[key] = fieldMeta.strategy() === 'replace' ? stripDirectives(patchV) : mergeMap(origV, patchV, fieldMeta);
    } else if (Array.isArray(origV) && Array.isArray(patchV)) {
      if (isDeleteList) {
        original[key] = origV.filter((v) => !patchV.some((d) => deepEqual(d, v)));
      } else if (fieldMeta.strategy() === 'merge') {
        original[key] = mergeList(origV, patchV, fieldMeta);
      } else {
        original[key] = stripDirectives(patchV);
      }
    } else {
      setStripped(original, key, patchV);
    }
  }
  return original;
}

function setStripped(target: JsonMap, key: string, value: unknown): void {
  if (isPlainObject(value) && DIRECTIVE in value) {
    delete target[key];
    return;
  }
  target[key] = stripDirectives(value);
}

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (isPlainObject(v)) return 'map';
  return typeof v;
}

/** a value added where nothing was merged into it: its directives and deleted elements dropped */
function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((e) => !(isPlainObject(e) && DIRECTIVE in e)).map(stripDirectives);
  if (!isPlainObject(v)) return v;
  const out: JsonMap = {};
  for (const [k, val] of Object.entries(v)) {
    if (k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    if (isPlainObject(val) && DIRECTIVE in val) continue;
    out[k] = stripDirectives(val);
  }
  return out;
}

function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!(RETAIN_KEYS in patch)) return;
  const keep = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(keep)) throw new StrategicMergeError('invalid patch format of retainKeys', 400);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.includes(k)) throw new StrategicMergeError('invalid patch format of retainKeys', 400);
  }
  for (const k of Object.keys(original)) if (!keep.includes(k)) delete original[k];
}

/** `$setElementOrder/<field>`: merges the field's list now and puts it in the order the patch gives */
function applySetElementOrder(original: JsonMap, patch: JsonMap, meta: PatchMeta): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw new StrategicMergeError(`expected a []interface {}, but received a ${goTypeName(order)}`, 500);
    const field = key.slice(SET_ELEMENT_ORDER.length);
    const fieldMeta = meta.field(field);
    const mergeKey = fieldMeta.mergeKey();
    const origList = original[field];
    const patchList = patch[field];
    if (origList !== undefined && !Array.isArray(origList)) throw new StrategicMergeError(`expected a []interface {}, but received a ${goTypeName(origList)}`, 500);
    if (patchList !== undefined && patchList !== null && !Array.isArray(patchList)) throw new StrategicMergeError(`expected a []interface {}, but received a ${goTypeName(patchList)}`, 500);
    checkOrderCoversPatch(patchList ?? [], order, mergeKey);
    let merged: unknown[];
    if (origList !== undefined && patchList !== undefined && patchList !== null) {
      merged = fieldMeta.strategy() === 'merge' ? mergeList(origList, patchList, fieldMeta) : (stripDirectives(patchList) as unknown[]);
    } else if (origList !== undefined) {
      merged = origList;
    } else if (patchList !== undefined && patchList !== null) {
      merged = stripDirectives(patchList) as unknown[];
    } else {
      continue;
    }
    const identity = (e: unknown): unknown => (mergeKey && isPlainObject(e) ? e[mergeKey] : e);
    const inOrder = (e: unknown): boolean => order.some((o) => deepEqual(identity(o), identity(e)));
    const patchItems = merged.filter(inOrder);
    const serverOnly = merged.filter((e) => !inOrder(e));
    original[field] = interleave(sortBy(patchItems, order, identity), sortBy(serverOnly, origList ?? [], identity), origList ?? [], identity);
    delete patch[field];
  }
}

function checkOrderCoversPatch(patchList: unknown[], order: unknown[], mergeKey: string): void {
  const identity = (e: unknown): unknown => (mergeKey && isPlainObject(e) ? e[mergeKey] : e);
  let next = 0;
  for (const item of patchList) {
    if (isPlainObject(item) && DIRECTIVE in item) continue;
    const at = order.findIndex((o, i) => i >= next && deepEqual(identity(o), identity(item)));
    if (at < 0) throw new StrategicMergeError('invalid patch format of setElementOrder list', 400);
    next = at + 1;
  }
}

function goTypeName(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (isPlainObject(v)) return 'map[string]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  return '<nil>';
}

/** the items in the order their identities take in `order` (items not found keep their place at the end) */
function sortBy(items: unknown[], order: unknown[], identity: (e: unknown) => unknown): unknown[] {
  const pos = (e: unknown): number => {
    const i = order.findIndex((o) => deepEqual(identity(o), identity(e)));
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return items.map((e, i) => ({ e, i, p: pos(e) })).sort((a, b) => a.p - b.p || a.i - b.i).map((x) => x.e);
}

/**
 * Puts the server-only items back among the patch's items: a server-only item goes before a patch
 * item only when both were in the live list and it came first there, as Kubernetes orders them.
 */
function interleave(patchItems: unknown[], serverOnly: unknown[], serverOrder: unknown[], identity: (e: unknown) => unknown): unknown[] {
  const index = (e: unknown): number => serverOrder.findIndex((o) => deepEqual(identity(o), identity(e)));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < patchItems.length) {
    if (i >= serverOnly.length) out.push(patchItems[j++]);
    else if (j >= patchItems.length) out.push(serverOnly[i++]);
    else {
      const li = index(serverOnly[i]);
      const ri = index(patchItems[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]);
      else out.push(patchItems[j++]);
    }
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], meta: PatchMeta): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const sample = [...original, ...patch][0];
  const elemKind = kindOf(sample);
  if ([...original, ...patch].some((e) => kindOf(e) !== elemKind)) {
    throw new StrategicMergeError(`list elements are not all of the same type: ${goFormat([...original, ...patch])}`, 500);
  }
  if (elemKind === 'list') throw new StrategicMergeError('lists of lists are not supported', 422);
  const mergeKey = meta.mergeKey();
  let merged: unknown[];
  let base = original;
  let patchItems = patch;
  if (elemKind !== 'map') {
    merged = [];
    for (const v of [...original, ...patch]) if (!merged.some((m) => deepEqual(m, v))) merged.push(v);
  } else {
    if (!mergeKey) throw new StrategicMergeError(`cannot merge lists without merge key for ${meta.node?.description ? 'field' : 'list'}`, 500);
    ({ base, patchItems } = specialElements(original, patch, mergeKey));
    merged = [...base];
    for (const p of patchItems as JsonMap[]) {
      if (!(mergeKey in p)) throw new StrategicMergeError(`map: ${goFormat(p)} does not contain declared merge key: ${mergeKey}`, 500);
      const at = merged.findIndex((o) => isPlainObject(o) && deepEqual(o[mergeKey], p[mergeKey]));
      if (at >= 0) merged[at] = mergeMap(merged[at] as JsonMap, p, meta.items());
      else merged.push(stripDirectives(p));
    }
  }
  const identity = (e: unknown): unknown => (mergeKey && isPlainObject(e) ? e[mergeKey] : e);
  const inPatch = (e: unknown): boolean => patchItems.some((p) => deepEqual(identity(p), identity(e)));
  const fromPatch = merged.filter(inPatch);
  const serverOnly = merged.filter((e) => !inPatch(e));
  return interleave(sortBy(fromPatch, patchItems, identity), sortBy(serverOnly, base, identity), base, identity);
}

/** `$patch: delete` and `$patch: replace` elements of a merged list */
function specialElements(original: unknown[], patch: unknown[], mergeKey: string): { base: unknown[]; patchItems: unknown[] } {
  let base = original;
  const plain: unknown[] = [];
  let replace = false;
  for (const p of patch) {
    if (!isPlainObject(p) || !(DIRECTIVE in p)) {
      plain.push(p);
      continue;
    }
    const directive = p[DIRECTIVE];
    if (directive === 'delete') {
      if (!(mergeKey in p)) throw new StrategicMergeError(`map: ${goFormat(p)} does not contain declared merge key: ${mergeKey}`, 500);
      base = base.filter((o) => !(isPlainObject(o) && deepEqual(o[mergeKey], p[mergeKey])));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw new StrategicMergeError('merging lists cannot yet be specified in the patch', 500);
    } else {
      throw new StrategicMergeError(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(p)}`, 500);
    }
  }
  if (replace) return { base: plain.map(stripDirectives), patchItems: [] };
  return { base, patchItems: plain };
}
