// Which namespaces the signed-in user works in. Whoever may list namespaces (a cluster admin; every
// caller of a single-user Skiff) sees them all; anyone else sees the namespaces KFAM's bindings give
// them (their own Profile's and those they contribute to), as Kubeflow's central dashboard does.
import { createContext, useContext, useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { useApi } from '../api/context';
import type { KfamBinding } from '../api/session';
import { namespacesOf } from '../api/session';
import { useSession } from './session';

export interface Scope {
  loaded: boolean;
  /** the user may list every namespace */
  all: boolean;
  /** the user's own namespaces, when not `all` */
  namespaces: string[];
}

const ScopeContext = createContext<Scope>({ loaded: false, all: true, namespaces: [] });

export function useScope(): Scope {
  return useContext(ScopeContext);
}

interface AccessReview {
  status?: { allowed?: boolean };
}

export function ScopeProvider({ children }: { children: ReactNode }) {
  const { api } = useApi();
  const { user } = useSession();
  const [scope, setScope] = useState<Scope>({ loaded: false, all: true, namespaces: [] });
  useEffect(() => {
    let stop = false;
    (async () => {
      const review = await api.json<AccessReview>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'namespaces' } } }),
      });
      if (review.status?.allowed || !user.username) return { loaded: true, all: true, namespaces: [] };
      const { bindings } = await api.json<{ bindings?: KfamBinding[] }>(`/kfam/v1/bindings?user=${encodeURIComponent(user.username)}`);
      return { loaded: true, all: false, namespaces: namespacesOf(bindings ?? [], user.username) };
    })().then(
      (s) => !stop && setScope(s),
      // a server without the reviews or KFAM is single-user: everything, as before
      () => !stop && setScope({ loaded: true, all: true, namespaces: [] }),
    );
    return () => {
      stop = true;
    };
  }, [api, user.username]);
  return <ScopeContext.Provider value={scope}>{children}</ScopeContext.Provider>;
}
