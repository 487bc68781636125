// Live lists: list, then watch from the list's resourceVersion; events fold into a map by
// namespace/name. A 410 (the version is too old) relists; a dropped connection retries with backoff
// and reports itself to the connection banner. Subscribers share one ListWatch per query.
import type { ApiClient, ListOptions, WatchEvent } from './client';
import { ApiError } from './errors';
import type { KindInfo } from './kinds';
import { collectionPath } from './kinds';
import type { KObject } from './types';

export interface ListState<T> {
  items: T[];
  /** the first list has answered */
  loaded: boolean;
  error?: ApiError;
  resourceVersion?: string;
}

export function keyOf(o: KObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

/** applies one watch event to a map of objects; returns whether anything changed */
export function applyEvent(items: Map<string, KObject>, e: WatchEvent): boolean {
  if (e.type === 'BOOKMARK' || e.type === 'ERROR') return false;
  const key = keyOf(e.object);
  if (e.type === 'DELETED') return items.delete(key);
  const old = items.get(key);
  if (old && old.metadata?.resourceVersion === e.object.metadata?.resourceVersion) return false;
  items.set(key, e.object);
  return true;
}

/** newest first, then by name: how lists read */
export function byCreation(a: KObject, b: KObject): number {
  const ta = a.metadata?.creationTimestamp ?? '';
  const tb = b.metadata?.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? 1 : -1;
  return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

type Listener = () => void;

/** the connection to the server as the banner shows it */
export class Connection {
  private lost = false;
  private readonly listeners = new Set<Listener>();
  readonly subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  readonly getSnapshot = (): boolean => this.lost;
  set(lost: boolean): void {
    if (this.lost === lost) return;
    this.lost = lost;
    for (const l of this.listeners) l();
  }
}

export class ListWatch<T extends KObject = KObject> {
  private readonly items = new Map<string, KObject>();
  private state: ListState<T> = { items: [], loaded: false };
  private dirty = false;
  private readonly listeners = new Set<Listener>();
  private abort?: AbortController;
  private stopTimer?: ReturnType<typeof setTimeout>;
  private notifyQueued = false;

  constructor(
    private readonly api: ApiClient,
    private readonly kind: KindInfo,
    private readonly namespace: string | undefined,
    private readonly opts: ListOptions,
    private readonly connection: Connection,
    private readonly onIdle: () => void,
  ) {}

  readonly subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    if (this.stopTimer) clearTimeout(this.stopTimer);
    this.stopTimer = undefined;
    if (!this.abort) this.start();
    return () => {
      this.listeners.delete(l);
      // a page that re-renders or a route change keeps the watch for a moment instead of relisting
      if (this.listeners.size === 0) this.stopTimer = setTimeout(() => this.stop(), 5000);
    };
  };

  readonly getSnapshot = (): ListState<T> => {
    if (this.dirty) {
      this.dirty = false;
      this.state = { ...this.state, items: ([...this.items.values()] as T[]).sort(byCreation) };
    }
    return this.state;
  };

  private notify(): void {
    if (this.notifyQueued) return;
    this.notifyQueued = true;
    // many events in one burst (a 1,000-task run starting) make one render
    setTimeout(() => {
      this.notifyQueued = false;
      for (const l of this.listeners) l();
    }, 16);
  }

  private start(): void {
    const abort = new AbortController();
    this.abort = abort;
    void this.loop(abort.signal);
  }

  stop(): void {
    this.abort?.abort();
    this.abort = undefined;
    this.onIdle();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let backoff = 500;
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          rv = await this.relist();
          this.connection.set(false);
        }
        const one = new AbortController();
        const stopOne = (): void => one.abort();
        signal.addEventListener('abort', stopOne);
        try {
        await this.api.watch(collectionPath(this.kind, this.namespace), this.watchParams(rv ?? ""), (e) => {
          if (e.type === 'ERROR') {
            const st = e.object as unknown as { code?: number; message?: string };
            throw new ApiError(st.code ?? 500, st.message ?? 'watch error');
          }
          const next = e.object.metadata?.resourceVersion;
          if (next) rv = next;
          if (applyEvent(this.items, e)) {
            this.dirty = true;
            this.notify();
          }
        }, one.signal);
        } finally {
          signal.removeEventListener('abort', stopOne);
          one.abort();
        }
        backoff = 500;
        // the server ended the watch (its timeout): resume from the last version seen
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof ApiError && e.code === 410) {
          rv = undefined; // too old: list again
          continue;
        }
        if (e instanceof ApiError && e.code > 0) {
          this.state = { ...this.getSnapshot(), loaded: true, error: e };
          this.notify();
          if (e.code === 403 || e.code === 404) return;
        } else {
          this.connection.set(true);
          rv = undefined; // after an outage, list again: deletions may have been missed
        }
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 10_000);
      }
    }
  }

  private watchParams(rv: string): Record<string, string> {
    const p: Record<string, string> = { ...(rv ? { resourceVersion: rv } : {}), allowWatchBookmarks: 'true' };
    if (this.opts.labelSelector) p.labelSelector = this.opts.labelSelector;
    if (this.opts.fieldSelector) p.fieldSelector = this.opts.fieldSelector;
    return p;
  }

  private async relist(): Promise<string | undefined> {
    const fresh = new Map<string, KObject>();
    let cont: string | undefined;
    let rv: string | undefined;
    do {
      const page = await this.api.list(this.kind, this.namespace, { ...this.opts, limit: 500, ...(cont ? { continue: cont } : {}) });
      for (const o of page.items) fresh.set(keyOf(o), o);
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion;
    } while (cont);
    this.items.clear();
    for (const [k, v] of fresh) this.items.set(k, v);
    this.dirty = true;
    this.state = { items: this.state.items, loaded: true, resourceVersion: rv };
    this.notify();
    return rv;
  }
}

/** one ListWatch per (kind, namespace, selectors), shared by every component that asks */
export class WatchCache {
  private readonly watches = new Map<string, ListWatch>();
  readonly connection = new Connection();
  constructor(private readonly api: ApiClient) {}

  for<T extends KObject>(kind: KindInfo, namespace: string | undefined, opts: ListOptions = {}): ListWatch<T> {
    const key = [kind.group, kind.plural, namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
    let w = this.watches.get(key);
    if (!w) {
      w = new ListWatch(this.api, kind, namespace, opts, this.connection, () => this.watches.delete(key));
      this.watches.set(key, w);
    }
    return w as unknown as ListWatch<T>;
  }
}
