// The object client: what the API server and the controllers write through. It applies each kind's
// defaults and validation before the store sees an object, so nothing invalid is ever half-written.
import { randomUUID } from 'node:crypto';
import { ApiError, StatusReason } from '../api/errors.js';
import type { FieldError } from '../api/errors.js';
import type { KObject, ObjectKey, StoredObject } from '../api/meta.js';
import { clone } from '../api/meta.js';
import type { KindDef, KindRegistry } from '../api/registry.js';
import { apiVersionOf } from '../api/registry.js';
import { Validator } from '../api/validation.js';
import { defaultAdmission } from './admission.js';
import type { AdmissionPlugin } from './admission.js';
import { applyJsonPatch, mergePatch } from './patch.js';
import type { DeleteOptions, ListOptions, ListResult, Store, WatchEvent, WatchOptions } from './store.js';

export type PatchType = 'merge' | 'json';

const maxAnnotationBytes = 256 * 1024;

function validateMeta(def: KindDef, obj: KObject): FieldError[] {
  const v = new Validator();
  const m = obj.metadata;
  if (!v.object('metadata', m, true)) return v.errors;
  if (m.name === undefined && m.generateName === undefined) v.required('metadata.name', 'Required value: name or generateName is required');
  v.string('metadata.name', m.name);
  v.string('metadata.generateName', m.generateName);
  v.labels('metadata.labels', m.labels);
  if (v.stringMap('metadata.annotations', m.annotations)) {
    const size = Object.entries(m.annotations).reduce((n, [k, val]) => n + k.length + val.length, 0);
    if (size > maxAnnotationBytes) v.add('metadata.annotations', 'FieldValueTooLong', `Too long: must have at most ${maxAnnotationBytes} bytes`);
  }
  if (v.array('metadata.ownerReferences', m.ownerReferences)) {
    m.ownerReferences.forEach((r: any, i: number) => {
      const p = `metadata.ownerReferences[${i}]`;
      if (!v.object(p, r, true)) return;
      for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) v.string(`${p}.${f}`, r[f], true);
    });
    if (m.ownerReferences.filter((r: any) => r?.controller).length > 1) v.invalid('metadata.ownerReferences', '', 'Only one reference can have Controller set to true');
  }
  v.stringArray('metadata.finalizers', m.finalizers);
  if (def.namespaced && m.namespace !== undefined) v.dnsLabel('metadata.namespace', m.namespace);
  return v.errors;
}

/**
 * What every create and update goes through before the store sees it: metadata's checks, the kind's
 * defaults (filled into `obj`) and its validation; an ApiError (422, the fields in its causes) when
 * refused. The validating admission webhook Skiff serves on a cluster (src/server/kube/webhooks.ts)
 * runs this very function on what kubectl writes there directly.
 */
export function prepareWrite(def: KindDef, obj: KObject, old?: StoredObject): void {
  if (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata)) {
    throw ApiError.invalid(def.kind, def.group, '', [{ field: 'metadata', type: 'FieldValueRequired', message: 'Required value' }]);
  }
  const metaErrs = validateMeta(def, obj);
  if (metaErrs.length) throw ApiError.invalid(def.kind, def.group, obj.metadata.name ?? obj.metadata.generateName ?? '', metaErrs);
  def.default?.(obj);
  // validate a generateName as the name it will become
  const named = obj.metadata.name === undefined ? { ...obj, metadata: { ...obj.metadata, name: `${obj.metadata.generateName ?? ''}x2x4x` } } : obj;
  const errs = def.validate?.(named, old) ?? [];
  if (errs.length) throw ApiError.invalid(def.kind, def.group, obj.metadata.name ?? obj.metadata.generateName ?? '', errs);
}

export interface ClientOptions {
  /**
   * Fill each kind's defaults into what is read, as kube-apiserver fills a CRD's schema defaults when
   * it reads from etcd: on a cluster, objects kubectl writes there never passed Skiff's defaulting.
   */
  defaultOnRead?: boolean;
}

export class Client {
  /** the tail of each namespace's chain of admitted creates (see create) */
  private readonly admitting = new Map<string, Promise<unknown>>();

  constructor(readonly store: Store, readonly registry: KindRegistry, readonly admission: readonly AdmissionPlugin[] = defaultAdmission, private readonly opts: ClientOptions = {}) {}

  /** The kind of an object, or a 400 naming what is not served. */
  kindOf(obj: { apiVersion?: unknown; kind?: unknown }): KindDef {
    if (typeof obj.apiVersion !== 'string' || !obj.apiVersion) throw new ApiError(StatusReason.BadRequest, "Object 'apiVersion' is missing in the object");
    if (typeof obj.kind !== 'string' || !obj.kind) throw new ApiError(StatusReason.BadRequest, "Object 'Kind' is missing in the object");
    const def = this.registry.forObject(obj.apiVersion, obj.kind);
    if (!def) {
      const sameKind = this.registry.all().filter((d) => d.kind === obj.kind).map(apiVersionOf);
      const hint = sameKind.length ? ` (served versions: ${sameKind.join(', ')})` : '';
      throw new ApiError(StatusReason.BadRequest, `no kind "${obj.kind}" is registered for version "${obj.apiVersion}"${hint}`);
    }
    return def;
  }

  private async checkNamespace(def: KindDef, obj: KObject): Promise<void> {
    if (!def.namespaced) return;
    const ns = obj.metadata.namespace;
    if (!ns) throw new ApiError(StatusReason.BadRequest, `${def.kind} "${obj.metadata.name ?? obj.metadata.generateName}": metadata.namespace is required`);
    const nsDef = this.registry.forObject('v1', 'Namespace');
    if (!nsDef) return;
    let found: StoredObject;
    try {
      found = await this.store.get(nsDef, { name: ns });
    } catch (e) {
      if (e instanceof ApiError && e.reason === StatusReason.NotFound) throw new ApiError(StatusReason.NotFound, `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
      throw e;
    }
    if (found.metadata.deletionTimestamp) {
      throw new ApiError(StatusReason.Conflict, `${def.kind} "${obj.metadata.name ?? ''}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
    }
  }

  private prepare(def: KindDef, obj: KObject, old?: StoredObject): void {
    prepareWrite(def, obj, old);
  }

  async create<T extends KObject = StoredObject>(input: KObject, opts: { dryRun?: boolean } = {}): Promise<T & StoredObject> {
    const def = this.kindOf(input);
    let obj = clone(input);
    obj.metadata ??= {};
    if (!def.namespaced) delete obj.metadata.namespace;
    // the server assigns these
    delete obj.metadata.resourceVersion;
    delete obj.metadata.deletionTimestamp;
    obj.metadata.uid = randomUUID();
    if (def.hasStatus) delete obj.status;
    this.prepare(def, obj);
    const stored = this.storageDef(def);
    if (def.conversion) obj = this.toStorage(def, stored, obj);
    await this.checkNamespace(stored, obj);
    let release = (): void => undefined;
    const released = new Promise<void>((r) => (release = r));
    const write = async (): Promise<T & StoredObject> => {
      try {
        await this.admit(stored, obj);
        if (opts.dryRun) return this.view(def, obj) as T & StoredObject;
        const made = this.store.create(stored, obj);
        // a store that applies a write when called (and answers once it is on disk) lets the next
        // create in the namespace count this one at once
        if (this.store.appliesOnCall) release();
        return this.view(def, await made) as T & StoredObject;
      } finally {
        release();
      }
    };
    const ns = obj.metadata.namespace;
    if (!def.namespaced || !ns || this.admission.length === 0) return write();
    // admission counts what the namespace holds, so creates in one namespace go one at a time: two
    // Pods admitted at once could otherwise both take a quota's last unit
    const prev = this.admitting.get(ns) ?? Promise.resolve();
    const next = prev.then(write, write);
    const tail = released;
    this.admitting.set(ns, tail);
    void tail.then(() => {
      if (this.admitting.get(ns) === tail) this.admitting.delete(ns);
    });
    return next;
  }

  /** the kind definition objects of `def`'s kind are stored under: itself, or the version it converts to */
  storageDef(def: KindDef): KindDef {
    if (!def.conversion) return def;
    const version = def.conversion.storageVersion;
    const stored = this.registry.forObject(def.group ? `${def.group}/${version}` : version, def.kind);
    if (!stored) throw new ApiError(StatusReason.InternalError, `${def.kind} ${def.version} is stored as ${version}, which is not served`);
    return stored;
  }

  /** an object of a converted version as it is stored, with the stored version's defaults */
  private toStorage(def: KindDef, stored: KindDef, obj: KObject): KObject {
    const out = def.conversion ? def.conversion.toStorage(obj) : obj;
    stored.default?.(out);
    return out;
  }

  /** a stored object as `def`'s version shows it */
  private view<T extends KObject>(def: KindDef, obj: T): T {
    return def.conversion ? (def.conversion.fromStorage(obj) as T) : obj;
  }

  /** a stored object as read: defaulted first when the store holds objects Skiff did not write */
  private read<T extends KObject>(def: KindDef, obj: T): T {
    if (!this.opts.defaultOnRead) return this.view(def, obj);
    const stored = this.storageDef(def);
    if (!stored.default) return this.view(def, obj);
    const out = clone(obj);
    try {
      stored.default(out);
    } catch {
      // an object too malformed to default is shown as it is: its controller reports what is wrong
      return this.view(def, obj);
    }
    return this.view(def, out);
  }

  private async admit(def: KindDef, obj: KObject): Promise<void> {
    const kindOf = (key: string): KindDef | undefined => this.registry.forStorageKey(key);
    for (const plugin of this.admission) await plugin.admit({ def, obj, store: this.store, kindOf });
  }

  async get<T extends KObject = StoredObject>(def: KindDef, key: ObjectKey): Promise<T & StoredObject> {
    return this.read(def, await this.store.get(this.storageDef(def), key)) as T & StoredObject;
  }

  /** get, or undefined when absent */
  async find<T extends KObject = StoredObject>(def: KindDef, key: ObjectKey): Promise<(T & StoredObject) | undefined> {
    try {
      return await this.get<T>(def, key);
    } catch (e) {
      if (e instanceof ApiError && e.reason === StatusReason.NotFound) return undefined;
      throw e;
    }
  }

  async list<T extends KObject = StoredObject>(def: KindDef, opts: ListOptions = {}): Promise<ListResult & { items: (T & StoredObject)[] }> {
    const out = await this.store.list(this.storageDef(def), opts);
    if (def.conversion || this.opts.defaultOnRead) out.items = out.items.map((o) => this.read(def, o));
    return out as ListResult & { items: (T & StoredObject)[] };
  }

  /** every matching object, following continue tokens */
  async listAll<T extends KObject = StoredObject>(def: KindDef, opts: ListOptions = {}): Promise<(T & StoredObject)[]> {
    const out: (T & StoredObject)[] = [];
    let cont: string | undefined;
    do {
      const page = await this.list<T>(def, { ...opts, limit: 1000, continue: cont });
      out.push(...page.items);
      cont = page.continue;
    } while (cont);
    return out;
  }

  async update<T extends KObject = StoredObject>(input: KObject, opts: { dryRun?: boolean } = {}): Promise<T & StoredObject> {
    const def = this.kindOf(input);
    let obj = clone(input);
    const stored = this.storageDef(def);
    const old = this.view(def, await this.store.get(stored, { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' }));
    this.prepare(def, obj, old);
    if (def.conversion) obj = this.toStorage(def, stored, obj);
    if (opts.dryRun) return this.view(def, obj) as T & StoredObject;
    return this.view(def, await this.store.update(stored, obj)) as T & StoredObject;
  }

  /** A Pod bound to a node: its spec, metadata and status written at once (Kubernetes' pods/binding). */
  async bind<T extends KObject = StoredObject>(input: KObject): Promise<T & StoredObject> {
    const def = this.kindOf(input);
    const obj = clone(input);
    const old = await this.store.get(def, { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' });
    this.prepare(def, obj, old);
    return (await this.store.update(def, obj, { subresource: 'binding' })) as T & StoredObject;
  }

  async updateStatus<T extends KObject = StoredObject>(input: KObject, opts: { dryRun?: boolean } = {}): Promise<T & StoredObject> {
    const def = this.kindOf(input);
    if (!def.hasStatus) throw new ApiError(StatusReason.NotFound, `${def.plural} have no status subresource`);
    const stored = this.storageDef(def);
    const obj = def.conversion ? this.toStorage(def, stored, clone(input)) : input;
    const key = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
    const old = stored.validateStatus || opts.dryRun ? await this.store.get(stored, key) : undefined;
    if (stored.validateStatus && old) {
      // judged as it would be stored: the status written, everything else as it is
      const errs = stored.validateStatus({ ...clone(old), status: clone(obj.status) }, old);
      if (errs.length) throw ApiError.invalid(def.kind, def.group, old.metadata.name, errs);
    }
    if (opts.dryRun && old) {
      // what the write would store (the status given, the rest as stored), and nothing written
      if (obj.metadata?.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion) {
        throw new ApiError(StatusReason.Conflict, `Operation cannot be fulfilled on ${def.group ? `${def.plural}.${def.group}` : def.plural} "${key.name}": the object has been modified; please apply your changes to the latest version and try again`, { name: key.name, group: def.group, kind: def.plural });
      }
      return this.view(def, { ...clone(old), status: clone(obj.status) }) as T & StoredObject;
    }
    return this.view(def, await this.store.update(stored, obj, { subresource: 'status' })) as T & StoredObject;
  }

  /** Applies a patch to the live object and writes it; retries when someone else wrote in between. */
  async patch(def: KindDef, key: ObjectKey, patch: unknown, type: PatchType, opts: { subresource?: 'status'; dryRun?: boolean; check?: (patched: KObject) => void } = {}): Promise<StoredObject> {
    for (let attempt = 0; ; attempt++) {
      // a patch applies to the object as its version shows it
      const live = await this.get(def, key);
      let next: KObject;
      try {
        next = (type === 'json' ? applyJsonPatch(live, patch) : mergePatch(live, patch)) as KObject;
      } catch (e) {
        if (e instanceof ApiError) throw e;
        throw new ApiError(StatusReason.BadRequest, `the patch could not be applied: ${(e as Error).message}`);
      }
      if (typeof next !== 'object' || next === null) throw new ApiError(StatusReason.BadRequest, 'the patch must produce an object');
      next.apiVersion = live.apiVersion;
      next.kind = live.kind;
      // the server's field validation sees (and prunes) what the patch produced
      opts.check?.(next);
      const pinned = (patch as any)?.metadata?.resourceVersion !== undefined;
      if (!pinned) next.metadata = { ...next.metadata, resourceVersion: live.metadata.resourceVersion };
      try {
        if (opts.subresource === 'status') return await this.updateStatus(next, { dryRun: opts.dryRun });
        return await this.update(next, { dryRun: opts.dryRun });
      } catch (e) {
        if (!pinned && e instanceof ApiError && e.reason === StatusReason.Conflict && attempt < 5) continue;
        throw e;
      }
    }
  }

  async delete(def: KindDef, key: ObjectKey, opts: DeleteOptions = {}): Promise<StoredObject> {
    if (def.kind === 'Namespace' && ['default', 'kube-system', 'kube-public'].includes(key.name)) {
      throw new ApiError(StatusReason.Conflict, `namespaces "${key.name}" is forbidden: this namespace may not be deleted`);
    }
    return this.view(def, await this.store.delete(this.storageDef(def), key, opts));
  }

  watch(def: KindDef, opts: WatchOptions, onEvent: (e: WatchEvent) => void): { stop(): void } {
    if (!def.conversion && !this.opts.defaultOnRead) return this.store.watch(def, opts, onEvent);
    // bookmarks and errors carry no object of the kind
    return this.store.watch(this.storageDef(def), opts, (e) => onEvent(e.type === 'BOOKMARK' || e.type === 'ERROR' ? e : { ...e, object: this.read(def, e.object) }));
  }
}
