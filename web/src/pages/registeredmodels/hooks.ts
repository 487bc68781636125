// The registry pages' calls: what the signed-in user may do in a namespace (so a viewer sees no
// buttons it could only fail with), state changes through the registry's REST API (which stamps the
// update time as every other client's change), and a model's aliases with their history.
import { useCallback, useEffect, useState } from 'react';
import { useApi, useList } from '../../api/context';
import { ApiError, messageOf } from '../../api/errors';
import type { KObject } from '../../api/types';
import { registryPath, type Alias, type AliasMove } from './model';

interface AccessReview {
  status?: { allowed?: boolean };
}

/**
 * Whether the user may `verb` the resource in the namespace: undefined until the server answers (so
 * a viewer never sees a button flash by), true when it cannot say (the API's 403 is shown then).
 */
export function useCan(verb: string, group: string, resource: string, namespace: string | undefined): boolean | undefined {
  const { api } = useApi();
  const [allowed, setAllowed] = useState<boolean>();
  useEffect(() => {
    if (!namespace) return;
    let stop = false;
    api
      .json<AccessReview>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace, verb, group, resource } } }),
      })
      .then(
        (r) => !stop && setAllowed(r.status?.allowed !== false),
        () => !stop && setAllowed(true),
      );
    return () => {
      stop = true;
    };
  }, [api, verb, group, resource, namespace]);
  return allowed;
}

/** a registry REST call in the namespace's registry; errors carry the API's message */
export function useRegistryCall(namespace: string) {
  const { api } = useApi();
  return useCallback(
    async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const text = await api.text(registryPath(namespace, path), {
        method,
        headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      // a DELETE answers 204 with no body
      return (text ? JSON.parse(text) : undefined) as T;
    },
    [api, namespace],
  );
}

export interface AliasState {
  loaded: boolean;
  /** the server keeps no aliases (the endpoint answers 404): shown as none, nothing to set */
  unsupported: boolean;
  aliases: Alias[];
  history: AliasMove[];
  error?: string;
  reload: () => void;
}

/**
 * A model's aliases and their history. Read again after each change made here, and whenever the
 * namespace's ModelAlias objects change where the server has that kind (a move made elsewhere).
 */
export function useAliases(namespace: string, modelId: string | undefined): AliasState {
  const call = useRegistryCall(namespace);
  const live = useList<KObject>('modelaliases', namespace);
  const liveKey = live.items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).join(',');
  const [tick, setTick] = useState(0);
  const [state, setState] = useState<Omit<AliasState, 'reload'>>({ loaded: false, unsupported: false, aliases: [], history: [] });
  useEffect(() => {
    if (modelId === undefined) return;
    let stop = false;
    const base = `/registered_models/${encodeURIComponent(modelId)}`;
    Promise.all([call<{ items?: Alias[] }>('GET', `${base}/aliases`), call<{ items?: AliasMove[] }>('GET', `${base}/alias_history`)]).then(
      ([a, h]) => !stop && setState({ loaded: true, unsupported: false, aliases: a.items ?? [], history: h.items ?? [] }),
      (e: unknown) => {
        if (stop) return;
        if (e instanceof ApiError && e.notFound) setState({ loaded: true, unsupported: true, aliases: [], history: [] });
        else setState({ loaded: true, unsupported: false, aliases: [], history: [], error: messageOf(e) });
      },
    );
    return () => {
      stop = true;
    };
  }, [call, modelId, tick, liveKey]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
