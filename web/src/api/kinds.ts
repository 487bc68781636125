// What the server serves, from its aggregated discovery (/api and /apis as apidiscovery.k8s.io/v2):
// one request each, then every page finds a kind's group, version and scope by its plural.

export interface KindInfo {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  /** the status subresource is served */
  hasStatus: boolean;
}

export function apiVersionOf(k: Pick<KindInfo, 'group' | 'version'>): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}

/** the collection's path: `/api/v1/namespaces/ns/pods`, `/apis/batch/v1/jobs` (all namespaces) */
export function collectionPath(k: KindInfo, namespace?: string): string {
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return k.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${k.plural}` : `${base}/${k.plural}`;
}

export function objectPath(k: KindInfo, namespace: string | undefined, name: string): string {
  return `${collectionPath(k, namespace)}/${encodeURIComponent(name)}`;
}

interface DiscoveryResource {
  resource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  scope?: 'Namespaced' | 'Cluster';
  verbs?: string[];
  shortNames?: string[];
  subresources?: { subresource: string }[];
}
interface DiscoveryGroup {
  metadata?: { name?: string };
  versions?: { version: string; resources?: DiscoveryResource[] }[];
}

/** the kinds of an APIGroupDiscoveryList; the first (preferred) version of each group wins a plural */
export function kindsFromDiscovery(lists: { items?: DiscoveryGroup[] }[]): KindInfo[] {
  const out: KindInfo[] = [];
  const seen = new Set<string>();
  for (const list of lists) {
    for (const g of list.items ?? []) {
      const group = g.metadata?.name ?? '';
      for (const v of g.versions ?? []) {
        for (const r of v.resources ?? []) {
          const key = `${group}|${r.resource}`;
          if (seen.has(key)) continue;
          seen.add(key);
          out.push({
            group,
            version: v.version,
            kind: r.responseKind?.kind ?? r.resource,
            plural: r.resource,
            namespaced: r.scope !== 'Cluster',
            verbs: r.verbs ?? [],
            shortNames: r.shortNames ?? [],
            hasStatus: (r.subresources ?? []).some((s) => s.subresource === 'status'),
          });
        }
      }
    }
  }
  return out;
}

/** which group a bare plural means when two serve it: core, then Kubeflow's, then the rest */
function groupRank(group: string): number {
  if (group === '') return 0;
  if (group === 'batch') return 1;
  if (group === 'pipelines.kubeflow.org') return 2;
  if (group.endsWith('kubeflow.org') || group.endsWith('kserve.io')) return 3;
  // Kueue's visibility API serves `clusterqueues` and `localqueues` too, only for their pending lists
  if (group === 'visibility.kueue.x-k8s.io') return 8;
  if (group === 'metrics.k8s.io') return 9;
  return 5;
}

/** the name a URL uses for a kind: its plural, or `plural.group` where another group has that plural */
export function urlName(k: KindInfo, kinds: Kinds): string {
  return kinds.plural(k.plural) === k ? k.plural : `${k.plural}.${k.group}`;
}

/** plural (or `plural.group`, as kubectl takes it) → kind */
export class Kinds {
  private readonly byPlural = new Map<string, KindInfo>();
  private readonly byKind = new Map<string, KindInfo>();
  constructor(readonly all: KindInfo[]) {
    const ranked = [...all].sort((a, b) => groupRank(a.group) - groupRank(b.group));
    for (const k of ranked) {
      if (!this.byPlural.has(k.plural)) this.byPlural.set(k.plural, k);
      if (k.group) this.byPlural.set(`${k.plural}.${k.group}`, k);
    }
    for (const k of all) {
      this.byKind.set(`${apiVersionOf(k)}|${k.kind}`, k);
      if (!this.byKind.has(`|${k.kind}`)) this.byKind.set(`|${k.kind}`, k);
    }
  }
  plural(p: string): KindInfo | undefined {
    return this.byPlural.get(p);
  }
  /** by an object's apiVersion and kind (an ownerReference, an involvedObject) */
  of(apiVersion: string | undefined, kind: string): KindInfo | undefined {
    return this.byKind.get(`${apiVersion ?? ''}|${kind}`) ?? this.byKind.get(`|${kind}`);
  }
  isClusterScoped(plural: string): boolean {
    const k = this.byPlural.get(plural);
    return k !== undefined && !k.namespaced;
  }
}
