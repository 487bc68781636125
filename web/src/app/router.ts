// The dashboard's URLs, as pure functions: /ui/<namespace>/<plural>/<name> for every object,
// /ui/<namespace>/<plural> for lists, /ui/cluster/<plural>[/<name>] for cluster-scoped kinds, and the
// KFP UI's fragments (#/runs/details/<id>) that kfp.Client prints.

export const BASE = '/ui';

export interface Route {
  /** undefined: every namespace (`/ui/all/...`); cluster-scoped pages have none */
  namespace?: string;
  cluster?: boolean;
  /** a kind's plural, or a page of its own (`compare`, `overview`) */
  plural?: string;
  name?: string;
  /** what follows the name: `/ui/ns/runs/r1/tasks/train` → ['tasks', 'train'] */
  rest: string[];
  query: URLSearchParams;
}

export const ALL_NAMESPACES = 'all';
export const CLUSTER = 'cluster';

export function parseRoute(pathname: string, search = '', isClusterScoped: (plural: string) => boolean = () => false): Route {
  const query = new URLSearchParams(search);
  let path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  path = path.replace(/^\/+|\/+$/g, '');
  const segs = path ? path.split('/').map(safeDecode) : [];
  const [first, plural, name, ...rest] = segs;
  if (first === undefined) return { rest: [], query };
  if (first === CLUSTER && (plural === undefined || isClusterScoped(plural))) {
    return { cluster: true, plural, name, rest, query };
  }
  return { namespace: first === ALL_NAMESPACES ? undefined : first, plural, name, rest, query };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export interface HrefTarget {
  namespace?: string;
  cluster?: boolean;
  plural?: string;
  name?: string;
  rest?: string[];
  query?: Record<string, string | undefined>;
}

export function href(t: HrefTarget): string {
  const segs: string[] = [t.cluster ? CLUSTER : t.namespace ?? ALL_NAMESPACES];
  if (t.plural) segs.push(t.plural);
  if (t.plural && t.name) segs.push(t.name, ...(t.rest ?? []));
  let s = `${BASE}/${segs.map(encodeURIComponent).join('/')}`;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(t.query ?? {})) if (v !== undefined && v !== '') q.set(k, v);
  const qs = q.toString();
  if (qs) s += `?${qs}`;
  return s;
}

/** an object's page */
export function objectHref(plural: string, namespace: string | undefined, name: string, clusterScoped = false): string {
  return clusterScoped ? href({ cluster: true, plural, name }) : href({ namespace, plural, name });
}

/** the KFP UI's hash routes, for the links kfp.Client prints: the kind and id they name */
export function legacyTarget(hash: string): { plural: string; id: string } | undefined {
  const m = /^#\/(runs|experiments|pipelines|recurringrun|recurringruns)\/details\/([^/?#]+)/.exec(hash);
  if (!m || !m[1] || !m[2]) return undefined;
  const plural = m[1] === 'recurringrun' ? 'recurringruns' : m[1];
  return { plural, id: safeDecode(m[2]) };
}
