// The API client, the discovered kinds and the shared watches, given to every page.
import { createContext, useContext, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import type { ReactNode } from 'react';
import type { ApiClient, ListOptions } from './client';
import type { ApiError } from './errors';
import { messageOf } from './errors';
import type { KindInfo } from './kinds';
import { Kinds, kindsFromDiscovery } from './kinds';
import type { KObject } from './types';
import type { ListState } from './watch';
import { WatchCache } from './watch';

interface Api {
  api: ApiClient;
  kinds: Kinds;
  watches: WatchCache;
}

const ApiContext = createContext<Api | null>(null);

const DISCOVERY = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

export async function discover(api: ApiClient): Promise<Kinds> {
  const [core, groups] = await Promise.all([
    api.json<{ items?: [] }>('/api', { headers: { accept: DISCOVERY } }),
    api.json<{ items?: [] }>('/apis', { headers: { accept: DISCOVERY } }),
  ]);
  // Kubeflow's groups first: a plural such as `experiments` means theirs
  return new Kinds(kindsFromDiscovery([groups, core]));
}

export function ApiProvider({ api, children, fallback }: { api: ApiClient; children: ReactNode; fallback: (error?: string) => ReactNode }) {
  const [kinds, setKinds] = useState<Kinds>();
  const [error, setError] = useState<string>();
  const watches = useMemo(() => new WatchCache(api), [api]);
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tryOnce = (): void => {
      discover(api).then(
        (k) => !stop && setKinds(k),
        (e) => {
          if (stop) return;
          setError(messageOf(e));
          timer = setTimeout(tryOnce, 2000);
        },
      );
    };
    tryOnce();
    return () => {
      stop = true;
      if (timer) clearTimeout(timer);
    };
  }, [api]);
  const value = useMemo(() => (kinds ? { api, kinds, watches } : null), [api, kinds, watches]);
  if (!value) return <>{fallback(error)}</>;
  return <ApiContext.Provider value={value}>{children}</ApiContext.Provider>;
}

export function useApi(): Api {
  const v = useContext(ApiContext);
  if (!v) throw new Error('useApi outside ApiProvider');
  return v;
}

export function useKind(plural: string): KindInfo | undefined {
  return useApi().kinds.plural(plural);
}

const EMPTY: ListState<never> = { items: [], loaded: false };
const noop = (): (() => void) => () => {};

/**
 * A live list of a kind: listed once, then kept current by a watch (no polling). `namespace`
 * undefined lists every namespace; an unknown plural or `enabled: false` gives an empty, unloaded list.
 */
export function useList<T extends KObject>(plural: string | undefined, namespace: string | undefined, opts: ListOptions & { enabled?: boolean } = {}): ListState<T> {
  const { kinds, watches } = useApi();
  const kind = plural ? kinds.plural(plural) : undefined;
  const enabled = opts.enabled !== false && kind !== undefined;
  const w = enabled && kind ? watches.for<T>(kind, kind.namespaced ? namespace : undefined, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector }) : undefined;
  return useSyncExternalStore(w ? w.subscribe : noop, w ? w.getSnapshot : () => EMPTY as ListState<T>);
}

export interface ObjectState<T> {
  object?: T;
  loaded: boolean;
  /** it existed while the page was open and has since been deleted */
  deleted: boolean;
  error?: ApiError;
}

/** one object, live: a watch on `metadata.name=<name>` */
export function useObject<T extends KObject>(plural: string | undefined, namespace: string | undefined, name: string | undefined): ObjectState<T> {
  const list = useList<T>(plural, namespace, { fieldSelector: name ? `metadata.name=${name}` : undefined, enabled: name !== undefined });
  const object = list.items[0];
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    if (object) setSeen(true);
  }, [object]);
  useEffect(() => setSeen(false), [plural, namespace, name]);
  return { object, loaded: list.loaded, deleted: list.loaded && !object && seen, error: list.error };
}

/** true while the server cannot be reached */
export function useConnectionLost(): boolean {
  const { watches } = useApi();
  return useSyncExternalStore(watches.connection.subscribe, watches.connection.getSnapshot);
}
