// metadata.managedFields: who set which field of an object, as kube-apiserver records it. Every
// write through the API is an operation by a manager: an `Update` (create, replace, a JSON, merge or
// strategic patch) takes the fields it changed away from everyone else, and an `Apply` (server-side
// apply) owns exactly the fields its configuration sets, removes the ones it set before and no
// longer sets (unless someone else owns them), and conflicts with any other manager whose fields it
// would change, unless forced. The sets are schema-walked field paths (./structured-merge.ts).
import { ApiError, StatusReason, UnclassifiedError } from './errors.js';
import type { KObject } from './meta.js';
import { clone, deepEqual } from './meta.js';
import type { SchemaCatalog, SchemaNode } from './openapi-schemas.js';
import { FieldSet, fieldPE, pathString } from './fieldset.js';
import type { FieldPath } from './fieldset.js';
import { Shape, compare, merge, removeItems, toFieldSet, typeError } from './structured-merge.js';
import { isPlainObject } from '../util/objects.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** how many Update managers an object keeps before the oldest are folded into `ancient-changes` */
const MAX_UPDATE_MANAGERS = 10;

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

type Managers = Map<string, Manager>;

function identity(m: { manager: string; operation: string; apiVersion: string; subresource?: string }): string {
  return JSON.stringify([m.manager, m.operation, m.apiVersion, m.subresource ?? '']);
}

/** fields kube-apiserver never records as anyone's */
const NEVER_OWNED: FieldPath[] = [
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['f:metadata', fieldPE(f)]),
];

function stripNeverOwned(set: FieldSet): FieldSet {
  return set.difference(FieldSet.of(...NEVER_OWNED));
}

/** `metadata.managedFields` read into managers; undefined when it is not a valid list */
export function decodeManagedFields(raw: unknown): Managers | undefined {
  const out: Managers = new Map();
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) return undefined;
  for (const e of raw) {
    if (!isPlainObject(e)) return undefined;
    if (e.operation !== 'Apply' && e.operation !== 'Update') return undefined;
    if (e.fieldsType !== 'FieldsV1' || typeof e.apiVersion !== 'string') return undefined;
    const set = FieldSet.fromJSON(e.fieldsV1 ?? {});
    if (!set) return undefined;
    const m: Manager = { manager: typeof e.manager === 'string' ? e.manager : '', operation: e.operation, apiVersion: e.apiVersion, set };
    if (typeof e.subresource === 'string' && e.subresource) m.subresource = e.subresource;
    if (typeof e.time === 'string') m.time = e.time;
    out.set(identity(m), m);
  }
  return out;
}

/** managers written back as `metadata.managedFields`, in kube-apiserver's order */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] {
  const entries = [...managers.values()].filter((m) => !m.set.empty()).map((m) => {
    const e = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion } as ManagedFieldsEntry;
    if (m.time) e.time = m.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = m.set.toJSON();
    if (m.subresource) e.subresource = m.subresource;
    return e;
  }) as ManagedFieldsEntry[];
  const secs = (t?: string): number => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  return entries.sort((p, q) => {
    if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
    if (secs(p.time) !== secs(q.time)) return secs(p.time) - secs(q.time);
    if (p.manager !== q.manager) return p.manager < q.manager ? -1 : 1;
    if (p.apiVersion !== q.apiVersion) return p.apiVersion < q.apiVersion ? -1 : 1;
    return (p.subresource ?? '') < (q.subresource ?? '') ? -1 : (p.subresource ?? '') > (q.subresource ?? '') ? 1 : 0;
  });
}

function managedFieldsOf(obj: KObject | undefined): unknown {
  return (obj?.metadata as Record<string, unknown> | undefined)?.managedFields;
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `kubectl/v1.37.1 (linux/amd64) kubernetes/abc` → `kubectl`: the manager of a write that names none */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  return [...prefix].filter((c) => c >= ' ' && c !== '\x7f').join('').slice(0, 128);
}

/** What one kind's managed fields are computed against. */
export interface KindFields {
  catalog: SchemaCatalog;
  /** the kind's whole-object schema; undefined for a kind without one (every shape deduced) */
  schema: SchemaNode | undefined;
  apiVersion: string;
  /** a built-in kind: its empty object has the struct fields a Go object always has */
  builtin: boolean;
  /** the kind has a status subresource, whose fields writes to the object itself do not own */
  hasStatus: boolean;
}

function rootShape(k: KindFields): Shape {
  return new Shape(k.catalog, k.schema);
}

/** the object without what is never owned, as compared and merged */
function typedView(obj: KObject | undefined, k: KindFields): Record<string, unknown> {
  if (!obj) return emptyObject(k);
  const o = clone(obj) as Record<string, unknown>;
  if (isPlainObject(o.metadata)) delete o.metadata.managedFields;
  return o;
}

/** the object a create compares against: what decoding `{}` into the kind's type gives */
function emptyObject(k: KindFields): Record<string, unknown> {
  const o: Record<string, unknown> = { metadata: {} };
  if (!k.builtin || !k.schema) return o;
  const props = k.catalog.deref(k.schema)?.properties ?? {};
  for (const f of ['spec', 'status']) {
    const node = k.catalog.deref(props[f]);
    if (!node || !(node.properties || node.type === 'object')) continue;
    // a required field is one Go always writes, as null when unset (a Pod's containers)
    const struct: Record<string, unknown> = {};
    for (const r of node.required ?? []) struct[r] = null;
    o[f] = struct;
  }
  return o;
}

function ignoreFilter(k: KindFields, subresource: string | undefined): (p: FieldPath) => boolean {
  if (subresource === 'status') return (p) => p[0] === 'f:status';
  if (k.hasStatus) return (p) => p[0] !== 'f:status';
  return () => true;
}

function filterComparison(c: ReturnType<typeof compare>, keep: (p: FieldPath) => boolean): ReturnType<typeof compare> {
  return { added: c.added.filter(keep), removed: c.removed.filter(keep), modified: c.modified.filter(keep) };
}

/** the managers of a write: those the request sets (when it sets a non-empty valid list, or resets it), else the live object's */
function managersOfWrite(live: KObject | undefined, next: KObject): Managers {
  const requested = managedFieldsOf(next);
  if (Array.isArray(requested) && (requested.length === 0 || (requested.length === 1 && isPlainObject(requested[0]) && Object.keys(requested[0]).length === 0))) {
    return new Map();
  }
  const fromRequest = decodeManagedFields(requested);
  if (fromRequest && fromRequest.size) return fromRequest;
  return decodeManagedFields(managedFieldsOf(live)) ?? new Map();
}

function capUpdateManagers(managers: Managers): void {
  const updaters = [...managers.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const secs = (t?: string): number => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  updaters.sort(([ia, a], [ib, b]) => secs(a.time) - secs(b.time) || (ia < ib ? -1 : 1));
  // the oldest managers of each version fold into one `ancient-changes` manager of that version
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, m] of updaters) {
    if (length <= MAX_UPDATE_MANAGERS) break;
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id);
      continue;
    }
    const bucketId = identity({ manager: 'ancient-changes', operation: 'Update', apiVersion: m.apiVersion });
    if (!managers.has(bucketId)) {
      const f = managers.get(first) as Manager;
      managers.delete(first);
      managers.set(bucketId, { ...f, manager: 'ancient-changes', subresource: undefined });
    }
    const bucket = managers.get(bucketId) as Manager;
    managers.set(bucketId, { ...bucket, set: bucket.set.union(m.set), time: m.time });
    managers.delete(id);
    length--;
  }
}

/**
 * Records a non-apply write by `manager` (create when `live` is undefined): sets
 * `next.metadata.managedFields` in place. `next` should already carry the kind's defaults.
 */
export function recordUpdate(k: KindFields, live: KObject | undefined, next: KObject, manager: string, subresource?: string): void {
  const managers = managersOfWrite(live, next);
  const keep = ignoreFilter(k, subresource);
  const cmp = filterComparison(compare(typedView(live, k), typedView(next, k), rootShape(k)), keep);
  const changed = cmp.added.union(cmp.modified);
  const id = identity({ manager: manager || 'unknown', operation: 'Update', apiVersion: k.apiVersion, subresource });
  for (const [otherId, m] of managers) {
    if (otherId === id) continue;
    m.set = m.set.difference(changed).difference(cmp.removed);
    if (m.set.empty()) managers.delete(otherId);
  }
  const previous = managers.get(id)?.set ?? new FieldSet();
  const mine = stripNeverOwned(previous.difference(cmp.removed).union(changed)).filter(keep);
  if (mine.empty()) managers.delete(id);
  else if (!changed.empty() || !cmp.removed.empty() || !managers.has(id)) {
    // a write that changes nothing leaves the record (and its time) as it was, so it stays a no-op
    managers.set(id, { manager: manager || 'unknown', operation: 'Update', apiVersion: k.apiVersion, subresource, time: now(), set: mine });
  }
  capUpdateManagers(managers);
  setManagedFields(next, managers);
}

function setManagedFields(obj: KObject, managers: Managers): void {
  const entries = encodeManagedFields(managers);
  obj.metadata ??= {};
  const meta = obj.metadata as Record<string, unknown>;
  if (entries.length) meta.managedFields = entries;
  else delete meta.managedFields;
}

interface Conflict {
  manager: Manager;
  path: FieldPath;
}

function printManager(m: Manager): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion}`;
  return s;
}

/** the 409 kube-apiserver answers an apply that would change other managers' fields */
export function conflictError(conflicts: Conflict[]): ApiError {
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0] as Conflict;
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  } else {
    const byManager = new Map<string, Conflict[]>();
    for (const c of conflicts) {
      const id = identity(c.manager);
      byManager.set(id, [...(byManager.get(id) ?? []), c]);
    }
    const lines: string[] = [];
    for (const id of [...byManager.keys()].sort()) {
      const cs = byManager.get(id) as Conflict[];
      lines.push(`conflicts with ${printManager((cs[0] as Conflict).manager)}:`);
      for (const c of cs) lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(StatusReason.Conflict, message, { causes });
}

export interface ApplyResult {
  /** the object to store (managed fields set), or the live object unchanged but for them */
  object: KObject;
  /** whether anything but managedFields changed */
  changed: boolean;
}

/**
 * Server-side apply of `applied` by `manager` onto `live` (undefined: the object does not exist yet).
 * Throws the 409 Conflict kube-apiserver answers when other managers own fields the configuration
 * would change, unless `force`.
 */
export function applyConfiguration(k: KindFields, live: KObject | undefined, applied: KObject, manager: string, force: boolean): ApplyResult {
  const shape = rootShape(k);
  const config = dropNulls(clone(applied)) as KObject;
  if (isPlainObject(config.metadata)) delete (config.metadata as Record<string, unknown>).managedFields;
  const untyped = typeError(config, shape);
  if (untyped) {
    const slash = k.apiVersion.includes('/') ? k.apiVersion : `/${k.apiVersion}`;
    throw new UnclassifiedError(`failed to create typed patch object (${slash}, Kind=${String(applied.kind)}): ${untyped}`);
  }
  const managers = decodeManagedFields(managedFieldsOf(live)) ?? new Map<string, Manager>();
  const keep = ignoreFilter(k, undefined);
  const liveView = typedView(live, k);
  const id = identity({ manager, operation: 'Apply', apiVersion: k.apiVersion });
  const attempt = (forced: boolean): { merged: Record<string, unknown>; managers: Managers; conflicts: Conflict[] } => {
    const ms: Managers = new Map([...managers].map(([i, m]) => [i, { ...m, set: m.set.clone() }]));
    let merged = merge(liveView, config, shape) as Record<string, unknown>;
    const lastSet = ms.get(id)?.set;
    const set = stripNeverOwned(toFieldSet(config, shape)).filter(keep);
    const previousTime = ms.get(id)?.time;
    ms.set(id, { manager, operation: 'Apply', apiVersion: k.apiVersion, time: previousTime, set });
    if (lastSet && !lastSet.empty()) {
      let owned = new FieldSet();
      for (const m of ms.values()) owned = owned.union(m.set);
      // what the applier set before and nobody owns now goes, item by item: a map or list that
      // still holds someone's items stays even when the applier had owned it as a whole
      const orphaned = lastSet.difference(owned).intersection(toFieldSet(merged, shape));
      merged = (removeItems(merged, orphaned, shape) ?? {}) as Record<string, unknown>;
    }
    const cmp = filterComparison(compare(liveView, merged, shape), keep);
    const changed = cmp.added.union(cmp.modified);
    const conflicts: Conflict[] = [];
    for (const [otherId, m] of ms) {
      if (otherId === id) continue;
      const c = m.set.intersection(changed);
      for (const path of c.paths()) conflicts.push({ manager: m, path });
      if (forced) {
        m.set = m.set.difference(c);
      }
      m.set = m.set.difference(cmp.removed);
      if (m.set.empty()) ms.delete(otherId);
    }
    return { merged, managers: ms, conflicts };
  };
  let result = attempt(force);
  if (result.conflicts.length && !force) {
    // kubectl moving from client-side to server-side apply may take over the fields its
    // last-applied annotation says it set, as long as they still hold the values it set
    const allowed = manager === 'kubectl' && live ? fieldsOfLastApplied(k, live) : undefined;
    const remaining = allowed ? result.conflicts.filter((c) => !allowed.has(c.path)) : result.conflicts;
    if (remaining.length) throw conflictError(remaining);
    result = attempt(true);
  }
  const { merged, managers: ms } = result;
  if (live) {
    const lm = (live.metadata ?? {}) as Record<string, unknown>;
    const mm = (merged.metadata ?? (merged.metadata = {})) as Record<string, unknown>;
    // the server's own metadata is not the applier's to change
    for (const f of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds']) {
      if (lm[f] !== undefined) mm[f] = lm[f];
    }
  }
  const mergedMeta = merged.metadata as Record<string, unknown> | undefined;
  const annotations = mergedMeta?.annotations as Record<string, string> | undefined;
  if (manager === 'kubectl' && annotations?.[LAST_APPLIED_ANNOTATION]) {
    annotations[LAST_APPLIED_ANNOTATION] = lastAppliedOf(applied);
  }
  const changed = !deepEqual(typedView(live, k), typedView(merged as KObject, k));
  const self = ms.get(id);
  if (self && (changed || !self.time)) self.time = now();
  const object = merged as KObject;
  setManagedFields(object, ms);
  return { object, changed };
}

/** the fields kubectl's last-applied annotation set that still hold the values it set */
function fieldsOfLastApplied(k: KindFields, live: KObject): FieldSet | undefined {
  const text = live.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!text) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(last) || last.apiVersion !== k.apiVersion) return undefined;
  const shape = rootShape(k);
  const liveView = typedView(live, k);
  const cmp = compare(last, liveView, shape);
  return toFieldSet(last, shape).difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
}

function lastAppliedOf(applied: KObject): string {
  const o = clone(applied);
  if (o.metadata?.annotations) {
    delete o.metadata.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(o.metadata.annotations).length === 0) delete o.metadata.annotations;
  }
  return JSON.stringify(o);
}

/** an applied configuration's explicit nulls say nothing: the fields are left out */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) if (val !== null) out[k] = dropNulls(val);
  return out;
}
