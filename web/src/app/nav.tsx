// The browser's location as React state: links push history entries, back and forward re-render.
import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import type { AnchorHTMLAttributes, MouseEvent, ReactNode } from 'react';
import { useApi } from '../api/context';
import type { Route } from './router';
import { parseRoute } from './router';

interface Nav {
  route: Route;
  navigate: (to: string, opts?: { replace?: boolean }) => void;
}

const NavContext = createContext<Nav | null>(null);

/** `clusterPages`: pages of no kind reached at /ui/cluster/<plural> (the cluster overview) */
export function NavProvider({ children, clusterPages = [] }: { children: ReactNode; clusterPages?: string[] }) {
  const { kinds } = useApi();
  const [loc, setLoc] = useState(() => ({ path: window.location.pathname, search: window.location.search }));
  useEffect(() => {
    const on = (): void => setLoc({ path: window.location.pathname, search: window.location.search });
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  const navigate = useCallback((to: string, opts: { replace?: boolean } = {}) => {
    if (opts.replace) window.history.replaceState(null, '', to);
    else window.history.pushState(null, '', to);
    setLoc({ path: window.location.pathname, search: window.location.search });
    if (!opts.replace) window.scrollTo(0, 0);
  }, []);
  const route = useMemo(() => parseRoute(loc.path, loc.search, (p) => kinds.isClusterScoped(p) || clusterPages.includes(p)), [loc, kinds, clusterPages]);
  const value = useMemo(() => ({ route, navigate }), [route, navigate]);
  return <NavContext.Provider value={value}>{children}</NavContext.Provider>;
}

export function useNav(): Nav {
  const v = useContext(NavContext);
  if (!v) throw new Error('useNav outside NavProvider');
  return v;
}

export function useRoute(): Route {
  return useNav().route;
}

/** sets one query parameter of the current URL (tabs, selection), replacing the history entry */
export function useQueryParam(name: string): [string | undefined, (v: string | undefined) => void] {
  const { route, navigate } = useNav();
  const value = route.query.get(name) ?? undefined;
  const set = useCallback(
    (v: string | undefined) => {
      const q = new URLSearchParams(window.location.search);
      if (v === undefined || v === '') q.delete(name);
      else q.set(name, v);
      const s = q.toString();
      navigate(window.location.pathname + (s ? `?${s}` : ''), { replace: true });
    },
    [name, navigate],
  );
  return [value, set];
}

export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate } = useNav();
  const onClick = (e: MouseEvent<HTMLAnchorElement>): void => {
    rest.onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || rest.target) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} {...rest} onClick={onClick}>
      {children}
    </a>
  );
}
