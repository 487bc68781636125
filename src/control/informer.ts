// The informer cache, as controller-runtime's: one list+watch per kind, shared by every controller
// of a Manager, an in-memory copy of the kind's objects indexed by namespace, by controlling owner
// uid and by label, and the watch's events fanned out to the controllers' queues. Reconcilers read
// from it (no JSON parse, no SQL) and write through the store client; a read may lag a write made
// elsewhere, so reconcilers treat a conflict as "requeue" and create under deterministic names.
//
// Objects handed out are the cache's own: callers must not change them (clone first).
import type { KindDef } from '../api/registry.js';
import type { ObjectKey, StoredObject } from '../api/meta.js';
import type { Client } from '../store/client.js';
import type { Selector } from '../store/selectors.js';
import { matchLabels, parseLabelSelector } from '../store/selectors.js';
import type { WatchEvent } from '../store/store.js';
import { resourceKey } from '../store/store.js';

export type EventHandler = (e: WatchEvent) => void;

export interface CacheListOptions {
  namespace?: string;
  /** a label selector, as the API takes it */
  labelSelector?: string;
}

const keyOf = (ns: string | undefined, name: string): string => `${ns ?? ''}/${name}`;

function add<K>(index: Map<K, Set<string>>, k: K, key: string): void {
  let set = index.get(k);
  if (!set) index.set(k, (set = new Set()));
  set.add(key);
}

function drop<K>(index: Map<K, Set<string>>, k: K, key: string): void {
  const set = index.get(k);
  if (!set) return;
  set.delete(key);
  if (set.size === 0) index.delete(k);
}

const controllerUid = (o: StoredObject): string | undefined => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;

/** One kind's objects, kept current by a watch, with the indexes reconcilers look things up by. */
export class Informer {
  private readonly objects = new Map<string, StoredObject>();
  private readonly byNamespace = new Map<string, Set<string>>();
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly byLabel = new Map<string, Set<string>>();
  private readonly handlers = new Set<EventHandler>();
  private watch?: { stop(): void };

  constructor(private readonly client: Client, readonly kind: KindDef) {}

  /** Lists and starts watching. Synchronous for the SQLite store: the cache is full when this returns. */
  start(): void {
    if (this.watch) return;
    this.watch = this.client.watch(this.kind, {}, (e) => this.apply(e));
  }

  get started(): boolean {
    return this.watch !== undefined;
  }

  stop(): void {
    this.watch?.stop();
    this.watch = undefined;
    this.handlers.clear();
  }

  /** Adds a handler; it first sees every cached object as ADDED, as client-go's AddEventHandler does. */
  addHandler(fn: EventHandler): { stop(): void } {
    this.start();
    for (const o of this.objects.values()) fn({ type: 'ADDED', object: o });
    this.handlers.add(fn);
    return { stop: () => this.handlers.delete(fn) };
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: ObjectKey): StoredObject | undefined {
    this.start();
    return this.objects.get(keyOf(this.kind.namespaced ? key.namespace : undefined, key.name));
  }

  /** Objects in a namespace (or all) that match a label selector; the label index narrows the scan. */
  list(opts: CacheListOptions = {}): StoredObject[] {
    this.start();
    const sel = parseLabelSelector(opts.labelSelector);
    const ns = this.kind.namespaced ? opts.namespace : undefined;
    let keys: Iterable<string> | undefined = ns !== undefined ? this.byNamespace.get(ns) ?? [] : undefined;
    const narrowed = this.labelCandidates(sel);
    if (narrowed && (keys === undefined || narrowed.size < (keys as Set<string>).size)) keys = narrowed;
    const out: StoredObject[] = [];
    for (const k of keys ?? this.objects.keys()) {
      const o = this.objects.get(k);
      if (!o) continue;
      if (ns !== undefined && (o.metadata.namespace ?? '') !== ns) continue;
      if (matchLabels(sel, o.metadata.labels)) out.push(o);
    }
    return out;
  }

  /** Objects whose controlling ownerReference names this uid. */
  owned(ownerUid: string): StoredObject[] {
    this.start();
    const out: StoredObject[] = [];
    for (const k of this.byOwner.get(ownerUid) ?? []) {
      const o = this.objects.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  /**
   * Lists the kind again and makes the cache agree with it, telling handlers what differed; then, as
   * controller-runtime's periodic resync does, hands every object to the handlers once more.
   */
  async resync(): Promise<void> {
    this.start();
    const fresh = await this.client.listAll(this.kind);
    const seen = new Set<string>();
    for (const o of fresh) {
      const k = keyOf(o.metadata.namespace, o.metadata.name);
      seen.add(k);
      const old = this.objects.get(k);
      if (!old) this.apply({ type: 'ADDED', object: o });
      else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) this.apply({ type: 'MODIFIED', object: o });
      else for (const h of this.handlers) h({ type: 'MODIFIED', object: old });
    }
    for (const [k, o] of [...this.objects]) if (!seen.has(k)) this.apply({ type: 'DELETED', object: o });
  }

  private labelCandidates(sel: Selector): Set<string> | undefined {
    let best: Set<string> | undefined;
    for (const r of sel) {
      let set: Set<string> | undefined;
      if (r.op === '=') set = this.byLabel.get(`${r.key}=${r.value}`) ?? new Set();
      else if (r.op === 'in') {
        set = new Set();
        for (const v of r.values) for (const k of this.byLabel.get(`${r.key}=${v}`) ?? []) set.add(k);
      }
      if (set && (!best || set.size < best.size)) best = set;
    }
    return best;
  }

  private apply(e: WatchEvent): void {
    if (e.type !== 'ADDED' && e.type !== 'MODIFIED' && e.type !== 'DELETED') return;
    const o = e.object;
    const k = keyOf(o.metadata.namespace, o.metadata.name);
    const old = this.objects.get(k);
    if (old) this.unindex(k, old);
    if (e.type === 'DELETED') this.objects.delete(k);
    else {
      this.objects.set(k, o);
      this.index(k, o);
    }
    for (const h of this.handlers) h(e);
  }

  private index(k: string, o: StoredObject): void {
    add(this.byNamespace, o.metadata.namespace ?? '', k);
    const owner = controllerUid(o);
    if (owner) add(this.byOwner, owner, k);
    for (const [lk, lv] of Object.entries(o.metadata.labels ?? {})) add(this.byLabel, `${lk}=${lv}`, k);
  }

  private unindex(k: string, o: StoredObject): void {
    drop(this.byNamespace, o.metadata.namespace ?? '', k);
    const owner = controllerUid(o);
    if (owner) drop(this.byOwner, owner, k);
    for (const [lk, lv] of Object.entries(o.metadata.labels ?? {})) drop(this.byLabel, `${lk}=${lv}`, k);
  }
}

/** The informers of one Manager: one per kind, started on first use and shared by every reader. */
export class InformerCache {
  private readonly informers = new Map<string, Informer>();

  constructor(private readonly client: Client) {}

  informer(kind: KindDef): Informer {
    const k = resourceKey(kind);
    let inf = this.informers.get(k);
    if (!inf) {
      inf = new Informer(this.client, kind);
      this.informers.set(k, inf);
    }
    inf.start();
    return inf;
  }

  get(kind: KindDef, key: ObjectKey): StoredObject | undefined {
    return this.informer(kind).get(key);
  }

  list(kind: KindDef, opts?: CacheListOptions): StoredObject[] {
    return this.informer(kind).list(opts);
  }

  owned(kind: KindDef, ownerUid: string): StoredObject[] {
    return this.informer(kind).owned(ownerUid);
  }

  async resync(): Promise<void> {
    for (const inf of this.informers.values()) await inf.resync();
  }

  stop(): void {
    for (const inf of this.informers.values()) inf.stop();
    this.informers.clear();
  }
}
