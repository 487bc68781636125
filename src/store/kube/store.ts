// The store on a cluster's API server: every read and write goes to kube-apiserver, whose
// resourceVersions, compare-and-swap, finalizers, status subresource, preconditions and watch
// history are the promises the Store interface names; its 409s and 410s pass through unchanged.
//
// Beside that, one list+watch per kind (a mirror, as a reflector keeps) feeds subscribe() and the
// watches that start from "now": an informer's watch is then served from memory and is full when it
// returns, as on the SQLite store, and N informers cost the cluster one watch per kind, not N.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from '../selectors.js';
import type {
  DeleteOptions, ListOptions, ListResult, ResourceRef, Store, StoreChange, UpdateOptions, WatchEvent, WatchOptions,
} from '../store.js';
import { resourceKey, selectedEvent } from '../store.js';
import { KubeHttp } from './http.js';
import type { Query, WatchStream } from './http.js';
import type { ClusterConnection } from './kubeconfig.js';
import { collectionPath, objectPath } from './paths.js';

export interface KubeStoreOptions {
  connection: ClusterConnection;
  /** the kinds mirrored for subscribe() and for watches from now (the storage versions) */
  kinds: readonly ResourceRef[];
  /** a field selector per kind (by resourceKey) its mirror is narrowed to: a node agent keeps only
   *  the Pods bound to its Node (`spec.nodeName=NAME`), as a kubelet's informer does */
  fieldSelectors?: Record<string, string>;
  log?: (m: string) => void;
}

interface ObjectList {
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items?: StoredObject[];
  apiVersion?: string;
  kind?: string;
}

const numeric = (rv: string | undefined): number => (rv && /^\d+$/.test(rv) ? Number(rv) : 0);

/** kube-apiserver leaves apiVersion and kind off a list's items; Skiff's readers expect them */
function typed(res: ResourceRef, o: StoredObject): StoredObject {
  if (!o.apiVersion) o.apiVersion = res.group ? `${res.group}/${res.version}` : res.version;
  if (!o.kind) o.kind = res.kind;
  return o;
}

const keyOf = (o: { metadata: { namespace?: string; name?: string } }): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** One kind's objects as the cluster has them, kept current by a watch that resumes and relists. */
class Mirror {
  readonly objects = new Map<string, StoredObject>();
  rv = '';
  private stream?: WatchStream;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  private readySettled = false;
  private resolveReady!: () => void;
  private rejectReady!: (e: Error) => void;
  readonly ready = new Promise<void>((res, rej) => {
    this.resolveReady = res;
    this.rejectReady = rej;
  });

  constructor(
    private readonly http: KubeHttp,
    readonly res: ResourceRef,
    private readonly emit: (c: StoreChange) => void,
    private readonly seen: (rv: string) => void,
    private readonly log: (m: string) => void,
    private readonly fieldSelector?: string,
  ) {
    void this.ready.catch(() => undefined);
  }

  get synced(): boolean {
    return this.readySettled && this.rv !== '';
  }

  start(): void {
    void this.relist();
  }

  stop(): void {
    this.stopped = true;
    this.stream?.stop();
    if (this.retry) clearTimeout(this.retry);
  }

  private later(fn: () => void, ms: number): void {
    if (this.stopped) return;
    this.retry = setTimeout(fn, ms);
    this.retry.unref();
  }

  /** Lists the kind and makes the mirror agree, telling subscribers what changed meanwhile. */
  private async relist(attempt = 0): Promise<void> {
    if (this.stopped) return;
    let items: StoredObject[] = [];
    let rv = '';
    try {
      let cont: string | undefined;
      do {
        const page = await this.http.request<ObjectList>('GET', collectionPath(this.res), { query: { limit: 500, continue: cont, fieldSelector: this.fieldSelector } });
        items = items.concat((page.items ?? []).map((o) => typed(this.res, o)));
        cont = page.metadata?.continue || undefined;
        rv = page.metadata?.resourceVersion ?? rv;
      } while (cont);
    } catch (e) {
      // a CRD just established may answer 404 for a moment; anything else is retried with a backoff
      if (!this.readySettled && attempt >= 20) {
        this.readySettled = true;
        this.rejectReady(e as Error);
        return;
      }
      if (attempt > 0 && attempt % 10 === 0) this.log(`kubernetes store: listing ${resourceKey(this.res)}: ${(e as Error).message}`);
      this.later(() => void this.relist(attempt + 1), Math.min(200 * 2 ** Math.min(attempt, 5), 5000));
      return;
    }
    if (this.stopped) return;
    const fresh = new Map(items.map((o) => [keyOf(o), o]));
    for (const [k, old] of [...this.objects]) {
      if (!fresh.has(k)) {
        this.objects.delete(k);
        this.emit({ resource: resourceKey(this.res), type: 'DELETED', object: old });
      }
    }
    for (const [k, o] of fresh) {
      const old = this.objects.get(k);
      this.objects.set(k, o);
      if (!old) this.emit({ resource: resourceKey(this.res), type: 'ADDED', object: o });
      else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit({ resource: resourceKey(this.res), type: 'MODIFIED', object: o, prev: old });
    }
    this.rv = rv;
    this.seen(rv);
    if (!this.readySettled) {
      this.readySettled = true;
      this.resolveReady();
    }
    this.watch();
  }

  private watch(): void {
    if (this.stopped) return;
    let gone = false;
    this.stream = this.http.watch(collectionPath(this.res), { resourceVersion: this.rv, fieldSelector: this.fieldSelector, allowWatchBookmarks: true, timeoutSeconds: 300 }, (e) => {
      if (e.type === 'ERROR') {
        const code = (e.object as { code?: number }).code;
        if (code === 410) gone = true;
        else this.log(`kubernetes store: watch of ${resourceKey(this.res)}: ${JSON.stringify(e.object)}`);
        return;
      }
      const o = e.object as StoredObject;
      const rv = o.metadata?.resourceVersion;
      if (rv) {
        this.rv = rv;
        this.seen(rv);
      }
      if (e.type === 'BOOKMARK') return;
      typed(this.res, o);
      const k = keyOf(o);
      const prev = this.objects.get(k);
      if (e.type === 'DELETED') this.objects.delete(k);
      else this.objects.set(k, o);
      const type = e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED' ? e.type : undefined;
      if (!type) return;
      this.emit(type === 'MODIFIED' && prev ? { resource: resourceKey(this.res), type, object: o, prev } : { resource: resourceKey(this.res), type, object: o });
    }, (err) => {
      if (this.stopped) return;
      // the history since our version is gone: list again; a stream the server ended: resume from it
      if (gone || (err instanceof ApiError && err.code === 410)) this.later(() => void this.relist(), 0);
      else this.later(() => this.watch(), err ? 1000 : 0);
    });
  }
}

export class KubeStore implements Store {
  readonly http: KubeHttp;
  private readonly mirrors = new Map<string, Mirror>();
  private readonly listeners = new Set<(c: StoreChange) => void>();
  private latest = 0;
  private readonly log: (m: string) => void;

  constructor(private readonly opts: KubeStoreOptions) {
    this.http = new KubeHttp(opts.connection);
    this.log = opts.log ?? (() => undefined);
  }

  /** Lists every mirrored kind and starts watching; resolves when all are listed. */
  async start(): Promise<void> {
    for (const res of this.opts.kinds) {
      const key = resourceKey(res);
      if (this.mirrors.has(key)) continue;
      const m = new Mirror(this.http, res, (c) => this.emit(c), (rv) => this.saw(rv), this.log, this.opts.fieldSelectors?.[key]);
      this.mirrors.set(key, m);
      m.start();
    }
    await Promise.all([...this.mirrors.values()].map((m) => m.ready));
  }

  private saw(rv: string): void {
    const n = numeric(rv);
    if (n > this.latest) this.latest = n;
  }

  private emit(c: StoreChange): void {
    for (const l of this.listeners) l(c);
  }

  resourceVersion(): string {
    return String(this.latest);
  }

  private ns(res: ResourceRef, key: ObjectKey | KObject['metadata']): string | undefined {
    if (!res.namespaced) return undefined;
    if (!key.namespace) throw new ApiError(StatusReason.BadRequest, `${res.plural}: a namespace is required`);
    return key.namespace;
  }

  private stored(res: ResourceRef, o: StoredObject): StoredObject {
    typed(res, o);
    this.saw(o.metadata?.resourceVersion ?? '');
    return o;
  }

  async create(res: ResourceRef, input: KObject): Promise<StoredObject> {
    const obj = clone(input);
    const ns = this.ns(res, obj.metadata);
    // what defaulting derived from a client-made uid is the cluster's to derive from its own
    if (obj.metadata.uid) withoutClientUid(obj, obj.metadata.uid);
    // the cluster assigns these; a client-made uid would be replaced anyway
    for (const f of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'deletionTimestamp'] as const) delete obj.metadata[f];
    if (!res.namespaced) delete obj.metadata.namespace;
    return this.stored(res, await this.http.request<StoredObject>('POST', collectionPath(res, ns), { body: obj }));
  }

  async get(res: ResourceRef, key: ObjectKey): Promise<StoredObject> {
    return this.stored(res, await this.http.request<StoredObject>('GET', objectPath(res, this.ns(res, key), key.name)));
  }

  async list(res: ResourceRef, opts: ListOptions = {}): Promise<ListResult> {
    const query: Query = {
      labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit && opts.limit > 0 ? opts.limit : undefined,
      continue: opts.continue, resourceVersion: opts.resourceVersion, resourceVersionMatch: opts.resourceVersionMatch || undefined,
    };
    const out = await this.http.request<ObjectList>('GET', collectionPath(res, res.namespaced ? opts.namespace : undefined), { query });
    const result: ListResult = { items: (out.items ?? []).map((o) => typed(res, o)), resourceVersion: out.metadata?.resourceVersion ?? '' };
    this.saw(result.resourceVersion);
    if (out.metadata?.continue) result.continue = out.metadata.continue;
    if (out.metadata?.remainingItemCount !== undefined) result.remainingItemCount = out.metadata.remainingItemCount;
    return result;
  }

  async update(res: ResourceRef, input: KObject, opts: UpdateOptions = {}): Promise<StoredObject> {
    const ns = this.ns(res, input.metadata);
    const name = input.metadata.name ?? '';
    if (opts.subresource === 'binding') {
      // a Pod bound to a node is a Binding on the cluster; the scheduler's other fields follow from it
      const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: ns }, target: { apiVersion: 'v1', kind: 'Node', name: input.spec?.nodeName } };
      await this.http.request('POST', objectPath(res, ns, name, 'binding'), { body: binding });
      return this.get(res, { namespace: ns, name });
    }
    const obj = clone(input);
    if (!res.namespaced) delete obj.metadata.namespace;
    const sub = opts.subresource === 'status' ? 'status' : undefined;
    return this.stored(res, await this.http.request<StoredObject>('PUT', objectPath(res, ns, name, sub), { body: obj }));
  }

  async delete(res: ResourceRef, key: ObjectKey, opts: DeleteOptions = {}): Promise<StoredObject> {
    const ns = this.ns(res, key);
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.uid || opts.resourceVersion) body.preconditions = { ...(opts.uid ? { uid: opts.uid } : {}), ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}) };
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    const before = this.mirrors.get(resourceKey(res))?.objects.get(`${ns ?? ''}/${key.name}`);
    const out = await this.http.request<StoredObject | { kind: 'Status' }>('DELETE', objectPath(res, ns, key.name), { body });
    if (out.kind !== 'Status') return this.stored(res, out as StoredObject);
    // some kinds answer a finished delete with a Status: the object as last seen stands for it
    const gone = before ? clone(before) : ({ apiVersion: res.group ? `${res.group}/${res.version}` : res.version, kind: res.kind, metadata: { name: key.name, ...(ns ? { namespace: ns } : {}), uid: opts.uid ?? '', resourceVersion: '', creationTimestamp: '' } } as StoredObject);
    gone.metadata.deletionTimestamp ??= new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    return gone;
  }

  watch(res: ResourceRef, opts: WatchOptions, onEvent: (e: WatchEvent) => void): { stop(): void } {
    const mirror = this.mirrors.get(resourceKey(res));
    const fromNow = !opts.resourceVersion || opts.resourceVersion === '0';
    if (fromNow && mirror?.synced) return this.watchMirror(mirror, opts, onEvent);
    return this.watchRemote(res, opts, onEvent);
  }

  /** the current objects, then live changes, from the kind's mirror; selection changes as kube-apiserver's watch cache shows them */
  private watchMirror(mirror: Mirror, opts: WatchOptions, onEvent: (e: WatchEvent) => void): { stop(): void } {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelector(opts.fieldSelector);
    const ns = mirror.res.namespaced ? opts.namespace ?? '' : '';
    const wanted = (o: StoredObject): boolean => (!ns || (o.metadata.namespace ?? '') === ns) && matchLabels(labels, o.metadata.labels) && matchFields(fields, o);
    const key = resourceKey(mirror.res);
    let stopped = false;
    const listener = (c: StoreChange): void => {
      if (stopped || c.resource !== key) return;
      const e = selectedEvent(c, wanted);
      if (e) onEvent(e);
    };
    this.listeners.add(listener);
    for (const o of mirror.objects.values()) if (wanted(o)) onEvent({ type: 'ADDED', object: o });
    return {
      stop: () => {
        stopped = true;
        this.listeners.delete(listener);
      },
    };
  }

  /**
   * A watch of the cluster's own, from a version: its history decides what is replayed, and a version
   * it no longer has is its 410, delivered as the ERROR event kube-apiserver sends. A stream the
   * server ends (its timeout) is resumed from the last version seen.
   */
  private watchRemote(res: ResourceRef, opts: WatchOptions, onEvent: (e: WatchEvent) => void): { stop(): void } {
    let stopped = false;
    let stream: WatchStream | undefined;
    let rv = opts.resourceVersion;
    let timer: NodeJS.Timeout | undefined;
    const open = (): void => {
      if (stopped) return;
      const query: Query = { resourceVersion: rv, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, allowWatchBookmarks: true, timeoutSeconds: 300 };
      stream = this.http.watch(collectionPath(res, res.namespaced ? opts.namespace : undefined), query, (e) => {
        if (stopped) return;
        if (e.type === 'ERROR') {
          stopped = true;
          stream?.stop();
          onEvent({ type: 'ERROR', object: e.object as StoredObject });
          return;
        }
        const o = e.object as StoredObject;
        if (o?.metadata?.resourceVersion) {
          rv = o.metadata.resourceVersion;
          this.saw(rv);
        }
        if (e.type === 'BOOKMARK') return;
        onEvent({ type: e.type as WatchEvent['type'], object: typed(res, o) });
      }, (err) => {
        if (stopped) return;
        if (err instanceof ApiError) {
          stopped = true;
          onEvent({ type: 'ERROR', object: err.toStatus() as unknown as StoredObject });
          return;
        }
        timer = setTimeout(open, err ? 1000 : 0);
        timer.unref();
      });
    };
    open();
    return {
      stop: () => {
        stopped = true;
        stream?.stop();
        if (timer) clearTimeout(timer);
      },
    };
  }

  subscribe(onChange: (c: StoreChange) => void): { stop(): void } {
    this.listeners.add(onChange);
    return { stop: () => this.listeners.delete(onChange) };
  }

  // The cluster's garbage collector follows ownerReferences; these answer from the mirrors for
  // callers that ask anyway.
  async dependents(ownerUid: string): Promise<{ resource: string; namespace: string; name: string }[]> {
    const out: { resource: string; namespace: string; name: string }[] = [];
    for (const [resource, m] of this.mirrors) {
      for (const o of m.objects.values()) {
        if (o.metadata.ownerReferences?.some((r) => r.uid === ownerUid)) out.push({ resource, namespace: o.metadata.namespace ?? '', name: o.metadata.name });
      }
    }
    return out;
  }

  async ownerUids(): Promise<string[]> {
    const uids = new Set<string>();
    for (const m of this.mirrors.values()) for (const o of m.objects.values()) for (const r of o.metadata.ownerReferences ?? []) uids.add(r.uid);
    return [...uids];
  }

  async uidExists(uid: string): Promise<boolean> {
    for (const m of this.mirrors.values()) for (const o of m.objects.values()) if (o.metadata.uid === uid) return true;
    return false;
  }

  async close(): Promise<void> {
    for (const m of this.mirrors.values()) m.stop();
    this.mirrors.clear();
    this.listeners.clear();
    this.http.close();
  }
}

/**
 * Takes out of a new object what defaulting derived from the uid the client gave it: a Job's generated
 * selector and the `controller-uid` labels of its Pod template. The API server generates them from the
 * uid it assigns, and refuses a Job that brings other values ("must be '<uid>'", "`selector` not
 * auto-generated"). A selector the user wrote (manualSelector) has no such uid and stays.
 */
export function withoutClientUid(obj: KObject, uid: string): void {
  const spec = obj.spec as { selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] }; template?: { metadata?: { labels?: Record<string, string> } } } | undefined;
  if (!spec || typeof spec !== 'object') return;
  const sel = spec.selector;
  if (sel && !sel.matchExpressions?.length && Object.values(sel.matchLabels ?? {}).includes(uid)) delete spec.selector;
  const labels = spec.template?.metadata?.labels;
  if (labels) for (const [k, v] of Object.entries(labels)) if (v === uid) delete labels[k];
}
