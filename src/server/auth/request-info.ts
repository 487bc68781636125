// What a request asks to do, read from its method and path as kube-apiserver's RequestInfoFactory
// reads it (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), so that an RBAC rule written for a
// cluster means the same on Skiff: `GET /api/v1/namespaces/a/pods` is `list pods in a`, a GET with
// `?watch=true` or under `/watch/` is `watch`, `DELETE` on a collection is `deletecollection`, and
// `/api/v1/namespaces/a/pods/p/log` is `get pods/log`.
import type { NonResourceAttributes, ResourceAttributes } from './types.js';

/** the first path segment of resource requests; `/api` has no group */
const apiPrefixes = new Set(['api', 'apis']);
/** verbs that come first in the path: `/api/v1/watch/namespaces/a/pods` */
const specialVerbs = new Set(['proxy', 'watch']);
/** `namespaces/<ns>/<these>` is the Namespace's own subresource, not a resource in the namespace */
const namespaceSubresources = new Set(['status', 'finalize']);
/** streams that kubectl 1.30+ opens with a WebSocket GET; kube-apiserver asks for `create` too */
const streamingSubresources = new Set(['exec', 'attach', 'portforward']);

export type RequestInfo = { resource: ResourceAttributes; nonResource?: undefined } | { nonResource: NonResourceAttributes; resource?: undefined };

/** the verb of a request whose path names no verb */
export function methodVerb(method: string): string {
  switch (method) {
    case 'POST': return 'create';
    case 'GET':
    case 'HEAD': return 'get';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return 'delete';
    default: return '';
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Go's strconv.ParseBool, as the list options decoder reads `watch` */
function truthy(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/** `metadata.name=x` (or `==`) among a field selector's terms: a list of one named object */
function exactName(fieldSelector: string | null): string | undefined {
  if (!fieldSelector) return undefined;
  for (const term of fieldSelector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    // only names that could be a path segment, as kube-apiserver checks
    if (m && m[1] && m[1] !== '.' && m[1] !== '..' && !/[/%]/.test(m[1])) return m[1];
  }
  return undefined;
}

/**
 * The attributes of a request (its user aside). `method` is the HTTP method; `url` the request's
 * path and query, as received.
 */
export function requestInfo(method: string, url: string): RequestInfo {
  const u = new URL(url, 'http://skiff.local');
  const path = u.pathname;
  const nonResource = (): RequestInfo => ({ nonResource: { verb: method.toLowerCase(), path } });
  let parts = path.split('/').filter((p) => p !== '').map(decode);
  if (parts.length < 3 || !apiPrefixes.has(parts[0] as string)) return nonResource();
  const legacy = parts[0] === 'api';
  parts = parts.slice(1);
  let apiGroup = '';
  if (!legacy) {
    if (parts.length < 3) return nonResource();
    apiGroup = parts[0] as string;
    parts = parts.slice(1);
  }
  // the version
  parts = parts.slice(1);
  let verb: string;
  let verbFromMethod = false;
  if (specialVerbs.has(parts[0] as string)) {
    // kube-apiserver answers these with an error; as a resource request of no resource, nothing is allowed but to admins
    if (parts.length < 2) return { resource: { verb: parts[0] as string, apiGroup, resource: '' } };
    verb = parts[0] as string;
    parts = parts.slice(1);
  } else {
    verbFromMethod = true;
    verb = methodVerb(method);
  }
  let namespace: string | undefined;
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1];
      if (parts.length > 2 && !namespaceSubresources.has(parts[2] as string)) parts = parts.slice(2);
    }
  }
  const r: ResourceAttributes = { verb, apiGroup, resource: parts[0] ?? '' };
  if (namespace !== undefined && namespace !== '') r.namespace = namespace;
  if (parts.length >= 2 && parts[1]) r.name = parts[1];
  // `proxy` takes the rest of the path as the proxied path, not a subresource
  if (parts.length >= 3 && verb !== 'proxy' && parts[2]) r.subresource = parts[2];
  if (!r.name && verb === 'get') {
    const w = u.searchParams.get('watch');
    const watch = w === null ? false : truthy(w) ?? true;
    r.verb = watch ? 'watch' : 'list';
    const name = exactName(u.searchParams.get('fieldSelector'));
    if (name) r.name = name;
  }
  if (!r.name && verbFromMethod && r.verb === 'delete') r.verb = 'deletecollection';
  return { resource: r };
}

/**
 * Every check a request needs: its own attributes, and for a WebSocket GET of exec, attach or
 * portforward also `create`, since those streams can change the container (kube-apiserver 1.30+'s
 * AuthorizePodWebsocketUpgradeCreatePermission).
 */
export function requestChecks(method: string, url: string, upgrade: boolean): RequestInfo[] {
  const info = requestInfo(method, url);
  const r = info.resource;
  if (upgrade && r && r.verb === 'get' && r.resource === 'pods' && r.subresource && streamingSubresources.has(r.subresource)) {
    return [info, { resource: { ...r, verb: 'create' } }];
  }
  return [info];
}
