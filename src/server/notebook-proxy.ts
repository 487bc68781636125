// The notebook proxy: `/notebook/<namespace>/<name>/...` on Skiff's port reaches the server of that
// Notebook, HTTP and WebSocket alike (kernels' channels, terminals), as Kubeflow's Istio
// VirtualService routes it: the prefix kept (Jupyter serves under NB_PREFIX) or rewritten by the
// `notebooks.kubeflow.org/http-rewrite-uri` annotation, and the headers of
// `notebooks.kubeflow.org/http-headers-request-set` set. The request is authorized before it gets
// here (App: `notebooks/proxy`); Skiff's own credentials are taken off it, so the notebook's code
// never sees the token of the user who opened it. A server with a token (tenancy on: see
// src/workloads/notebooks/token.ts) gets it from the proxy, in place of any Authorization the client sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, StatusReason } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { KObject } from '../api/meta.js';
import type { Pod } from '../api/core-types.js';
import type { Notebook } from '../api/notebooks.js';
import { NotebookKind, NotebookNames, headersOf, notebookPrefix } from '../api/notebooks.js';
import type { Client } from '../store/client.js';
import { serverToken } from '../workloads/notebooks/token.js';
import { Authenticator, notebookCookie } from './auth/authn.js';
import { sendError } from './body.js';
import { relay, relayUpgrade, upstreamHeaders } from './http-relay.js';
import { rejectUpgrade } from './kube/upgrade.js';

// the request's headers as a server behind Skiff gets them (shared with the API's service proxy)
export { upstreamHeaders, withoutCookie } from './http-relay.js';

export interface NotebookRoute {
  namespace: string;
  name: string;
  /** the path after `/notebook/<ns>/<name>`, with the query */
  rest: string;
}

const routePath = /^\/notebook\/([^/?]+)\/([^/?]+)(\/[^?]*)?(\?.*)?$/;

/** the notebook a request is for, by its path */
export function matchNotebook(url: string): NotebookRoute | undefined {
  const m = routePath.exec(url);
  if (!m) return undefined;
  try {
    return { namespace: decodeURIComponent(m[1] ?? ''), name: decodeURIComponent(m[2] ?? ''), rest: `${m[3] ?? ''}${m[4] ?? ''}` };
  } catch {
    return undefined;
  }
}

/** the part of a Service the proxy reads */
interface ServiceObject extends KObject {
  spec?: { ports?: { targetPort?: number | string }[] };
}

/** where the server is and what to ask it for */
interface Upstream {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
}

/** the Set-Cookie of the notebook cookie: `token` to set it, none to clear it */
export function sessionCookie(token: string | undefined, secure: boolean): string {
  const attrs = ['Path=/notebook/', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  return token === undefined ? [`${notebookCookie}=`, 'Max-Age=0', ...attrs].join('; ') : [`${notebookCookie}=${encodeURIComponent(token)}`, ...attrs].join('; ');
}

/** Istio's prefix rewrite: the matched `/notebook/<ns>/<name>/` replaced by the annotation's URI */
export function upstreamPath(route: NotebookRoute, rewrite: string | undefined): string {
  const prefix = notebookPrefix(route.namespace, route.name);
  if (rewrite === undefined) return `${prefix}${route.rest}`;
  const rest = route.rest.startsWith('/') ? route.rest.slice(1) : route.rest;
  return `${rewrite}${rewrite.endsWith('/') || rest === '' || rest.startsWith('?') ? '' : '/'}${rest}`;
}

export class NotebookProxy {
  constructor(private readonly client: Client) {}

  /** the Notebook's server, or why it cannot be reached now */
  private async upstream(route: NotebookRoute, req: IncomingMessage): Promise<Upstream> {
    const key = { namespace: route.namespace, name: route.name };
    const nb = await this.client.find<Notebook>(NotebookKind, key);
    if (!nb) throw new ApiError(StatusReason.NotFound, `notebooks.kubeflow.org "${route.name}" not found`);
    const annotations = nb.metadata.annotations ?? {};
    if (annotations[NotebookNames.stopped] !== undefined) throw new ApiError(StatusReason.ServiceUnavailable, `notebook ${route.namespace}/${route.name} is stopped`);
    const pod = await this.client.find<Pod>(Kinds.Pod, { namespace: route.namespace, name: `${route.name}-0` });
    const ip = pod?.status?.phase === 'Running' && !pod.metadata.deletionTimestamp ? pod.status.podIP : undefined;
    if (!pod || !ip) throw new ApiError(StatusReason.ServiceUnavailable, `notebook ${route.namespace}/${route.name} is not running yet`);
    const svc = await this.client.find<ServiceObject>(Kinds.Service, key);
    const target = svc?.spec?.ports?.[0]?.targetPort;
    const port = typeof target === 'number' ? target : pod.spec.containers[0]?.ports?.[0]?.containerPort ?? NotebookNames.defaultPort;
    const set = annotations[NotebookNames.headersRequestSet];
    // what the Pod's server got as its token; a Secret gone meanwhile is a 503 that says so
    const token = await serverToken(this.client, pod);
    return { host: ip, port, path: upstreamPath(route, annotations[NotebookNames.rewriteUri]), headers: upstreamHeaders(req, set ? headersOf(set) ?? {} : {}, token) };
  }

  /**
   * `/notebook/_session`: POST with the dashboard's token as a bearer token sets it as the notebook
   * cookie (a session cookie: gone with the browser, as the dashboard's own copy is); DELETE clears
   * it, on sign-out. Only the Authorization header is taken, so a cross-site form (which can send no
   * such header) cannot plant a cookie of its choosing.
   */
  session(req: IncomingMessage, res: ServerResponse): void {
    const secure = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
    if (req.method === 'DELETE') {
      res.writeHead(204, { 'set-cookie': sessionCookie(undefined, secure), 'cache-control': 'no-store' });
      return void res.end();
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST, DELETE' });
      return void res.end();
    }
    const token = req.headers.authorization ? Authenticator.bearerToken({ headers: { authorization: req.headers.authorization } } as IncomingMessage) : undefined;
    if (!token) return sendError(res, new ApiError(StatusReason.BadRequest, 'POST the token to keep as Authorization: Bearer <token>'));
    res.writeHead(204, { 'set-cookie': sessionCookie(token, secure), 'cache-control': 'no-store' });
    res.end();
  }

  /** serves an HTTP request for a notebook */
  handle(req: IncomingMessage, res: ServerResponse, route: NotebookRoute): void {
    // Istio's route matches the prefix with its slash; the bare path is sent there, as a browser expects
    if (route.rest === '' || route.rest.startsWith('?')) {
      res.writeHead(301, { location: `${notebookPrefix(route.namespace, route.name)}/${route.rest}` });
      return void res.end();
    }
    this.upstream(route, req).then((up) => {
      relay(req, res, { host: up.host, port: up.port, path: up.path, headers: up.headers }, {
        failed: (e) => sendError(res, new ApiError(StatusReason.ServiceUnavailable, `notebook ${route.namespace}/${route.name}: ${e.message}`)),
      });
    }, (e: unknown) => sendError(res, e));
  }

  /** the `upgrade` handler (WebSocket): takes requests for notebooks and splices them to the server */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const route = matchNotebook(req.url ?? '/');
    if (!route) return false;
    this.upstream(route, req).then((up) => {
      relayUpgrade(req, socket, head, up, (e) => rejectUpgrade(socket, new ApiError(StatusReason.ServiceUnavailable, `notebook ${route.namespace}/${route.name}: ${e.message}`)));
    }, (e: unknown) => rejectUpgrade(socket, e));
    return true;
  };
}
