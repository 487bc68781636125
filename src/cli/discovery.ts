/** API discovery documents, kind resolution (like kubectl's RESTMapper) and URL paths. Pure. */
import { CliError } from './errors.js';

export interface APIResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  kind?: string;
  group?: string;
  version?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

export interface APIResourceList {
  kind?: string;
  groupVersion?: string;
  resources?: APIResource[];
}

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  name: string;
  versions?: GroupVersionForDiscovery[];
  preferredVersion?: GroupVersionForDiscovery;
}

export interface APIGroupList {
  kind?: string;
  groups?: APIGroup[];
}

export interface APIVersions {
  kind?: string;
  versions?: string[];
}

/** One resource type the server serves, flattened with its group and version. */
export interface ResourceInfo {
  group: string;
  version: string;
  groupVersion: string;
  /** Plural resource name used in URLs, e.g. `jobs`. */
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  /** Whether this is the group's preferred version. */
  preferred: boolean;
}

export interface Discovery {
  /** In priority order: core first, then groups in server order, preferred version first. */
  resources: ResourceInfo[];
}

export function splitGroupVersion(gv: string): { group: string; version: string } {
  const slash = gv.indexOf('/');
  return slash < 0 ? { group: '', version: gv } : { group: gv.slice(0, slash), version: gv.slice(slash + 1) };
}

/**
 * Builds the resource table from discovery documents. `lists` are the APIResourceLists of
 * `/api/{v}` and `/apis/{g}/{v}` (any order); `coreVersions` and `groups` give the priority order.
 */
export function buildDiscovery(
  coreVersions: APIVersions,
  groups: APIGroupList,
  lists: APIResourceList[],
): Discovery {
  const byGV = new Map<string, APIResourceList>();
  for (const l of lists) if (l.groupVersion) byGV.set(l.groupVersion, l);

  const order: { gv: string; preferred: boolean }[] = [];
  const coreList = coreVersions.versions ?? [];
  coreList.forEach((v, i) => order.push({ gv: v, preferred: i === 0 }));
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.groupVersion ?? g.versions?.[0]?.groupVersion;
    if (preferred) order.push({ gv: preferred, preferred: true });
    for (const v of g.versions ?? []) if (v.groupVersion !== preferred) order.push({ gv: v.groupVersion, preferred: false });
  }
  // Lists we were given that the indexes did not mention still count, last.
  for (const gv of byGV.keys()) if (!order.some((o) => o.gv === gv)) order.push({ gv, preferred: true });

  const resources: ResourceInfo[] = [];
  const seen = new Set<string>();
  for (const { gv, preferred } of order) {
    if (seen.has(gv)) continue;
    seen.add(gv);
    const list = byGV.get(gv);
    if (!list) continue;
    const { group, version } = splitGroupVersion(gv);
    for (const r of list.resources ?? []) {
      if (!r.name || r.name.includes('/')) continue; // subresources are not kinds
      const kind = r.kind ?? '';
      resources.push({
        group: r.group ?? group,
        version: r.version ?? version,
        groupVersion: r.group !== undefined || r.version !== undefined
          ? joinGroupVersion(r.group ?? group, r.version ?? version)
          : gv,
        plural: r.name,
        singular: r.singularName || kind.toLowerCase(),
        kind,
        namespaced: r.namespaced === true,
        verbs: r.verbs ?? [],
        shortNames: r.shortNames ?? [],
        categories: r.categories ?? [],
        preferred,
      });
    }
  }
  return { resources };
}

export function joinGroupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

function nameMatches(r: ResourceInfo, name: string): boolean {
  return (
    r.plural.toLowerCase() === name ||
    r.singular.toLowerCase() === name ||
    r.kind.toLowerCase() === name ||
    r.shortNames.some((s) => s.toLowerCase() === name)
  );
}

function groupMatches(r: ResourceInfo, qualifier: string): boolean {
  const q = qualifier.toLowerCase();
  if (r.group.toLowerCase() === q) return true;
  // `jobs.v1.batch` → version `v1`, group `batch`; `pods.v1` → core v1.
  if (`${r.version}.${r.group}`.toLowerCase() === q) return true;
  return r.group === '' && r.version.toLowerCase() === q;
}

/**
 * Resolves a kind argument (`jobs`, `job`, `Job`, a short name, or qualified `jobs.batch` /
 * `jobs.v1.batch`) to the resource it names. Throws `the server doesn't have a resource type`.
 */
export function resolveResource(d: Discovery, arg: string): ResourceInfo {
  const found = findResource(d, arg);
  if (!found) throw new CliError(`the server doesn't have a resource type "${arg}"`);
  return found;
}

export function findResource(d: Discovery, arg: string): ResourceInfo | undefined {
  const lower = arg.trim().toLowerCase();
  if (!lower) return undefined;
  // as kubectl's RESTMapper: the first group in the server's order wins, then its preferred version
  // (resources are listed in that order). A group whose preferred version lacks the resource still
  // wins over a later group: `experiments` is Katib's kubeflow.org/v1beta1, not pipelines.kubeflow.org's
  const pick = (matches: ResourceInfo[]): ResourceInfo | undefined => matches[0];

  const plain = d.resources.filter((r) => nameMatches(r, lower));
  if (plain.length > 0) {
    // An exact plural/singular/kind match beats a short name of another resource.
    const exact = plain.filter((r) => r.plural === lower || r.singular === lower || r.kind.toLowerCase() === lower);
    return pick(exact.length > 0 ? exact : plain);
  }
  const dot = lower.indexOf('.');
  if (dot > 0) {
    const name = lower.slice(0, dot);
    const qualifier = lower.slice(dot + 1);
    const qualified = d.resources.filter((r) => nameMatches(r, name) && groupMatches(r, qualifier));
    // A version qualifier selects that version, even if not preferred.
    const exactVersion = qualified.filter((r) => `${r.version}.${r.group}`.toLowerCase() === qualifier);
    return pick(exactVersion.length > 0 ? exactVersion : qualified);
  }
  return undefined;
}

/** Resources in a category such as `all`, or undefined if no resource is in it. */
export function resourcesInCategory(d: Discovery, category: string): ResourceInfo[] | undefined {
  const c = category.toLowerCase();
  const seen = new Set<string>();
  const out: ResourceInfo[] = [];
  for (const r of d.resources) {
    if (!r.categories.some((x) => x.toLowerCase() === c)) continue;
    const key = `${r.group}/${r.plural}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out.length > 0 ? out : undefined;
}

/** The resource serving `kind` in `apiVersion` (as written in a manifest). */
export function findByGVK(d: Discovery, apiVersion: string, kind: string): ResourceInfo | undefined {
  const { group, version } = splitGroupVersion(apiVersion);
  return d.resources.find((r) => r.group === group && r.version === version && r.kind === kind);
}

/** `job.batch` / `pod`: kubectl's name for a type in messages. */
export function typeName(r: ResourceInfo): string {
  const k = r.kind.toLowerCase();
  return r.group ? `${k}.${r.group}` : k;
}

/** `jobs.batch` / `pods`: the plural form used in server messages. */
export function pluralTypeName(r: ResourceInfo): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

/** `job.batch/pi`. */
export function objectRef(r: ResourceInfo, name: string): string {
  return `${typeName(r)}/${name}`;
}

export interface PathOptions {
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * The URL path of a collection or object. A namespaced resource without a namespace gives the
 * all-namespaces collection (`/api/v1/pods`).
 */
export function resourcePath(r: ResourceInfo, opts: PathOptions = {}): string {
  let p = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (r.namespaced && opts.namespace) p += `/namespaces/${encodeURIComponent(opts.namespace)}`;
  p += `/${r.plural}`;
  if (opts.name !== undefined) p += `/${encodeURIComponent(opts.name)}`;
  if (opts.subresource) p += `/${opts.subresource}`;
  return p;
}
