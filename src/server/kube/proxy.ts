// kube-apiserver's proxy subresources for HTTP: `/api/v1/namespaces/{ns}/services/{name}/proxy/{path}`
// reaches the server behind a Service, `/api/v1/namespaces/{ns}/pods/{name}/proxy/{path}` a Pod's;
// what `kubectl proxy` users open in a browser, and what `kubectl get --raw` and the clients'
// `connect_get_namespaced_service_proxy_with_path` send. `{name}` is `[scheme:]name[:port]` as in
// Kubernetes: a Service's port by its number or name (none: its first), a Pod's by number (or a
// container port's name); only `http` is spoken.
//
// A Service is reached as its endpoints would route it: a ready, running Pod its selector selects (one
// at random, as kube-apiserver picks an endpoint), at the port's targetPort (a number, or the name of
// a container port). No ready Pod is 503 saying so, as kube-apiserver's "no endpoints available".
// The request is authorized before it gets here (App: `services/proxy` or `pods/proxy`, the verb
// the HTTP method's, as kube-apiserver's RequestInfo reads it); the caller's credentials are taken
// off it. WebSocket upgrades are spliced through as well. Status, headers (less the hop-by-hop ones) and bodies pass as they are: a `Location` or a
// page's links are not rewritten, as kube-apiserver leaves them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, StatusReason } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject } from '../../api/meta.js';
import type { Pod } from '../../api/core-types.js';
import type { Client } from '../../store/client.js';
import { sendError } from '../body.js';
import { relay, relayUpgrade, upstreamHeaders } from '../http-relay.js';
import { rejectUpgrade } from './upgrade.js';

export interface ProxyRoute {
  resource: 'services' | 'pods';
  namespace: string;
  /** the object's name, without scheme or port */
  name: string;
  /** `http`, `https` or '' (the default, http) */
  scheme: string;
  /** the port as given: a number, a name, or '' */
  port: string;
  /** the path after `/proxy` (with its leading slash, or '' for none), with the query */
  rest: string;
}

const routePath = /^\/api\/v1\/namespaces\/([^/?]+)\/(services|pods)\/([^/?]+)\/proxy(\/[^?]*)?(\?.*)?$/;

/** `[scheme:]name[:port]`, as kube-apiserver's net.SplitSchemeNamePort reads it */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0] as string;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (name === '' || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme, name, port };
}

/** the proxy request a URL is, by its path; undefined for every other path */
export function matchProxy(url: string): ProxyRoute | undefined {
  const m = routePath.exec(url);
  if (!m) return undefined;
  let namespace: string;
  let id: string;
  try {
    namespace = decodeURIComponent(m[1] ?? '');
    id = decodeURIComponent(m[3] ?? '');
  } catch {
    return undefined;
  }
  const parsed = splitSchemeNamePort(id);
  // a name kube-apiserver cannot split is its 400 (below, in the handler); keep it as the whole name
  const { scheme, name, port } = parsed ?? { scheme: '', name: id, port: '' };
  return { resource: m[2] as 'services' | 'pods', namespace, name, scheme, port, rest: `${m[4] ?? ''}${m[5] ?? ''}` };
}

interface ServicePort {
  name?: string;
  port?: number;
  targetPort?: number | string;
}

/** the part of a Service the proxy reads */
interface ServiceObject extends KObject {
  spec?: { selector?: Record<string, string>; ports?: ServicePort[]; type?: string; externalName?: string };
}

/** the Service port a request's `:port` names: by number, or by name; none names the first */
export function servicePort(svc: ServiceObject, port: string): ServicePort | undefined {
  const ports = svc.spec?.ports ?? [];
  if (port === '') return ports[0];
  if (/^\d+$/.test(port)) return ports.find((p) => p.port === Number(port));
  return ports.find((p) => p.name === port);
}

/** a container port of the Pod by name, or the number itself */
export function podPort(pod: Pod, port: number | string | undefined, fallback: number): number | undefined {
  if (port === undefined || port === '') return fallback;
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  for (const c of pod.spec.containers) for (const p of c.ports ?? []) if (p.name === port) return p.containerPort;
  return undefined;
}

/** whether a Pod is an endpoint traffic goes to: running, ready, not going away, with an address */
export function podServes(p: Pod): boolean {
  return p.status?.phase === 'Running' && !p.metadata.deletionTimestamp && Boolean(p.status.podIP)
    && p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

function selects(selector: Record<string, string>, pod: Pod): boolean {
  return Object.entries(selector).every(([k, v]) => pod.metadata.labels?.[k] === v);
}

export class KubeProxy {
  constructor(private readonly client: Client) {}

  /** where the request goes: the Pod's address and port */
  private async upstream(route: ProxyRoute): Promise<{ host: string; port: number; what: string }> {
    const { namespace, name, port } = route;
    if (name.includes(':')) throw new ApiError(StatusReason.BadRequest, `invalid ${route.resource === 'pods' ? 'pod' : 'service'} request "${name}": the name is [scheme:]name[:port]`);
    if (route.scheme === 'https') throw new ApiError(StatusReason.BadRequest, `${route.resource}/proxy: the https scheme is not served (Skiff's Pods are reached over plain http)`);
    if (route.resource === 'pods') {
      const pod = await this.client.find<Pod>(Kinds.Pod, { namespace, name });
      if (!pod) throw new ApiError(StatusReason.NotFound, `pods "${name}" not found`);
      if (pod.status?.phase !== 'Running' || !pod.status.podIP || pod.metadata.deletionTimestamp) {
        throw new ApiError(StatusReason.ServiceUnavailable, `pod ${namespace}/${name} is not running (phase ${pod.status?.phase ?? 'Pending'}), so nothing serves on it`);
      }
      const p = podPort(pod, port, 80);
      if (p === undefined) throw new ApiError(StatusReason.BadRequest, `pod ${namespace}/${name} declares no container port named "${port}"`);
      return { host: pod.status.podIP, port: p, what: `pod ${namespace}/${name}` };
    }
    const svc = await this.client.find<ServiceObject>(Kinds.Service, { namespace, name });
    if (!svc) throw new ApiError(StatusReason.NotFound, `services "${name}" not found`);
    const sp = servicePort(svc, port);
    if (!sp) throw new ApiError(StatusReason.ServiceUnavailable, port === '' ? `no endpoints available for service "${name}": it declares no ports` : `no endpoints available for service "${name}": it has no port "${port}"`);
    const selector = svc.spec?.selector;
    if (!selector || Object.keys(selector).length === 0) {
      throw new ApiError(StatusReason.ServiceUnavailable, `no endpoints available for service "${name}": it has no selector, and Skiff routes a Service only to the Pods its selector selects`);
    }
    const pods = (await this.client.listAll<Pod>(Kinds.Pod, { namespace })) as Pod[];
    const all = pods.filter((p) => selects(selector, p));
    const ready = all.filter(podServes);
    const sel = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(',');
    if (ready.length === 0) {
      throw new ApiError(StatusReason.ServiceUnavailable, `no endpoints available for service "${name}": ${all.length === 0 ? `no Pod matches its selector ${sel}` : `none of the ${all.length} Pod(s) its selector ${sel} selects is ready (${all.map((p) => `${p.metadata.name}: ${p.status?.phase ?? 'Pending'}`).join(', ')})`}`);
    }
    const pod = ready[Math.floor(Math.random() * ready.length)] as Pod;
    const target = podPort(pod, sp.targetPort, sp.port ?? 80);
    if (target === undefined) throw new ApiError(StatusReason.ServiceUnavailable, `no endpoints available for service "${name}": its Pod ${pod.metadata.name} declares no container port named "${String(sp.targetPort)}"`);
    return { host: pod.status?.podIP as string, port: target, what: `service ${namespace}/${name} (pod ${pod.metadata.name})` };
  }

  /** serves an HTTP request for `route` */
  handle(req: IncomingMessage, res: ServerResponse, route: ProxyRoute): void {
    // kube-apiserver sends `.../proxy` on to the slash, so that a page's relative links resolve under it
    if (route.rest === '' || route.rest.startsWith('?')) {
      req.resume();
      const path = (req.url ?? '').split('?')[0] ?? '';
      res.writeHead(301, { location: `${path}/${route.rest}` });
      return void res.end();
    }
    this.upstream(route).then((up) => {
      relay(req, res, { host: up.host, port: up.port, path: route.rest, headers: upstreamHeaders(req, {}) }, {
        failed: (e) => sendError(res, new ApiError(StatusReason.ServiceUnavailable, `error trying to reach ${up.what} at ${up.host}:${up.port}: ${e.message}`)),
      });
    }, (e: unknown) => {
      req.resume();
      sendError(res, e);
    });
  }

  /**
   * The `upgrade` handler: a WebSocket to a Service's or Pod's server (a notebook-like app's kernel
   * channels, say), spliced once the server answers. It is authorized before it gets here, as its
   * GET (App.guardUpgrade).
   */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const route = matchProxy(req.url ?? '/');
    if (!route) return false;
    this.upstream(route).then((up) => {
      relayUpgrade(req, socket, head, { host: up.host, port: up.port, path: route.rest || '/', headers: upstreamHeaders(req, {}) },
        (e) => rejectUpgrade(socket, new ApiError(StatusReason.ServiceUnavailable, `error trying to reach ${up.what} at ${up.host}:${up.port}: ${e.message}`)));
    }, (e: unknown) => rejectUpgrade(socket, e));
    return true;
  };
}
