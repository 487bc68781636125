// The store: Kubernetes-shaped objects with a global resourceVersion, compare-and-swap updates,
// finalizers and watch. SQLite implements it on one machine (sqlite/), a cluster's kube-apiserver on
// Kubernetes (kube/); anything that keeps these promises can replace them.
import type { KindDef } from '../api/registry.js';
import type { ObjectKey, StoredObject, KObject } from '../api/meta.js';
import { ApiError, StatusReason } from '../api/errors.js';

export type ResourceRef = Pick<KindDef, 'group' | 'version' | 'kind' | 'plural' | 'namespaced' | 'hasStatus' | 'deletionBlocked'>;

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  /** "" or "0": any version; otherwise the list must be at least this new (or exactly it, with match Exact) */
  resourceVersion?: string;
  resourceVersionMatch?: '' | 'NotOlderThan' | 'Exact';
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** replay changes after this version; absent or "0": start with ADDED for every current object */
  resourceVersion?: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  object: StoredObject;
}

/** A change to any kind, as the garbage collector and caches see it. */
export interface StoreChange extends WatchEvent {
  resource: string; // `${group}/${plural}`
  /** the object before a MODIFIED change, so a filtered watch sees it enter or leave its selection */
  prev?: StoredObject;
}

export interface DeleteOptions {
  /** Kubernetes preconditions */
  uid?: string;
  resourceVersion?: string;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}

export interface UpdateOptions {
  /**
   * `status`: write only status (the /status subresource); by default only spec and metadata;
   * `binding`: spec, metadata and status at once, as a Pod's binding sets `spec.nodeName` and the
   * PodScheduled condition in one write
   */
  subresource?: 'status' | 'binding';
}

export interface Store {
  /** a write is applied when the call returns (reads see it), though its promise settles only once
   *  it is durable: the SQLite store, whose writes in one turn of the event loop commit together */
  readonly appliesOnCall?: boolean;
  create(res: ResourceRef, obj: KObject): Promise<StoredObject>;
  get(res: ResourceRef, key: ObjectKey): Promise<StoredObject>;
  list(res: ResourceRef, opts?: ListOptions): Promise<ListResult>;
  /** compare-and-swap when obj.metadata.resourceVersion is set; 409 Conflict when it is stale */
  update(res: ResourceRef, obj: KObject, opts?: UpdateOptions): Promise<StoredObject>;
  /** removes the object, or marks it with deletionTimestamp while finalizers remain */
  delete(res: ResourceRef, key: ObjectKey, opts?: DeleteOptions): Promise<StoredObject>;
  /**
   * live changes of one kind; 410 Gone when resourceVersion is older than the kept history: thrown,
   * or (from a remote store, which learns it later) an ERROR event carrying the Status, as
   * kube-apiserver sends it
   */
  watch(res: ResourceRef, opts: WatchOptions, onEvent: (e: WatchEvent) => void): { stop(): void };
  /** every change of every kind, from now on */
  subscribe(onChange: (c: StoreChange) => void): { stop(): void };
  /** objects whose ownerReferences name this uid */
  dependents(ownerUid: string): Promise<{ resource: string; namespace: string; name: string }[]>;
  /** owner uids that dependents point at; for the garbage collector's resync */
  ownerUids(): Promise<string[]>;
  /** whether any object with this uid exists */
  uidExists(uid: string): Promise<boolean>;
  resourceVersion(): string;
  close(): Promise<void>;
}

export function resourceKey(res: Pick<ResourceRef, 'group' | 'plural'>): string {
  return `${res.group}/${res.plural}`;
}

/** where kube-apiserver keeps an object in etcd; its precondition errors name this key */
function etcdKey(res: Pick<ResourceRef, 'group' | 'plural'>, namespace: string | undefined, name: string): string {
  const builtIn = res.group === '' || !res.group.includes('.') || res.group.endsWith('.k8s.io');
  const prefix = res.group === '' && res.plural === 'services' ? 'services/specs' : res.group === '' && res.plural === 'nodes' ? 'minions' : builtIn ? res.plural : `${res.group}/${res.plural}`;
  return `/registry/${prefix}/${namespace ? namespace + '/' : ''}${name}`;
}

/**
 * A failed uid or resourceVersion precondition, worded as kube-apiserver words it: a Conflict whose
 * message carries the storage error it wraps.
 */
export function preconditionFailed(res: Pick<ResourceRef, 'group' | 'plural'>, namespace: string | undefined, name: string, field: 'UID' | 'ResourceVersion', wanted: string, actual: string): ApiError {
  const resource = res.group ? `${res.plural}.${res.group}` : res.plural;
  const storage = `StorageError: invalid object, Code: 4, Key: ${etcdKey(res, namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${field} in precondition: ${wanted}, ${field} in object meta: ${actual}`;
  return new ApiError(StatusReason.Conflict, `Operation cannot be fulfilled on ${resource} "${name}": ${storage}`, { name, group: res.group, kind: res.plural });
}

/**
 * What a watch filtered by `wanted` sees of a change, as kube-apiserver's watch cache does it: a
 * change that moves an object into the selection is ADDED, one that moves it out is DELETED (the
 * object as it was, at the new version); undefined when the watch sees nothing.
 */
export function selectedEvent(c: StoreChange, wanted: (o: StoredObject) => boolean): WatchEvent | undefined {
  const now = wanted(c.object);
  if (c.type !== 'MODIFIED' || !c.prev) return now ? { type: c.type, object: c.object } : undefined;
  const before = wanted(c.prev);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: c.object };
  if (before) return { type: 'DELETED', object: { ...c.prev, metadata: { ...c.prev.metadata, resourceVersion: c.object.metadata.resourceVersion } } };
  return undefined;
}
