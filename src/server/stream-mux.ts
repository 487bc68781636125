// Many streaming GETs over one WebSocket, for the dashboard. A browser keeps at most six HTTP/1.1
// connections to a server, and every live view (a watch, a log followed, a usage stream) holds one
// for as long as it is open: a page with a few lists and a log would stall. Here the page opens one
// WebSocket at /skiff/v1/streams and asks for any number of GETs on it; each is made to this same
// server over loopback, so it is answered by the same handlers with the same semantics (selectors,
// resourceVersions, 410s, log follow), and its body comes back in tagged frames.
//
// Client → server: {"op":"open","id":N,"path":"/api/v1/...?watch=true"} | {"op":"close","id":N}
// Server → client: {"id":N,"status":200} then {"id":N,"data":"..."}… then {"id":N,"end":true}
//                  ({"id":N,"error":"..."} when the request could not be made)
//
// With tenancy on, each stream is made as the user who opened the WebSocket, so the mux shows no one
// more than their own requests would: a browser cannot set headers on a WebSocket, so its token
// rides in the `base64url.bearer.authorization.k8s.io.<token>` protocol, which authentication takes
// out of the request's headers once read; and a trusted proxy's user header would not be believed
// from loopback. The streams therefore carry Skiff's own credential impersonating the admitted user
// (as kube's aggregated API servers are reached), or, before that credential exists, the token the
// user presented.
import { request, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { requestUser } from './auth/types.js';

export const STREAMS_PATH = '/skiff/v1/streams';

/** what the page may ask for: the APIs, never the dashboard itself or the stream endpoint again */
const ALLOWED = /^\/(api|apis|skiff\/v1)\//;
/** a request's headers that carry who the user is, passed on to each stream */
const FORWARDED = ['authorization', 'cookie', 'impersonate-user', 'impersonate-group'];
/** at most this many streams per connection: a runaway page cannot open thousands */
const MAX_STREAMS = 200;
/** the WebSocket protocol a browser puts its bearer token in (authn.ts reads it) */
const TOKEN_PROTOCOL = 'base64url.bearer.authorization.k8s.io.';
/** the protocol the dashboard asks for beside its token: a browser fails a handshake that picks none */
export const STREAMS_PROTOCOL = 'skiff.streams.v1';

export interface StreamMuxOptions {
  /** tenancy is on: every stream must act as the admitted user */
  tenancy?: boolean;
  /** a token of Skiff's own that may impersonate any user (the kubeconfig's skiff-admin), once known */
  impersonator?: () => string | undefined;
}

/** the bearer token the upgrade presented, in its Authorization header or its protocols as sent */
export function presentedToken(req: IncomingMessage): string | undefined {
  const auth = /^bearer\s+(\S+)/i.exec(req.headers.authorization ?? '')?.[1];
  if (auth) return auth;
  // rawHeaders are as received: authentication removed the token's protocol from `headers` only
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if ((req.rawHeaders[i] as string).toLowerCase() !== 'sec-websocket-protocol') continue;
    for (const p of (req.rawHeaders[i + 1] as string).split(',').map((x) => x.trim())) {
      if (!p.startsWith(TOKEN_PROTOCOL)) continue;
      const t = Buffer.from(p.slice(TOKEN_PROTOCOL.length), 'base64url').toString('utf8');
      if (t) return t;
    }
  }
  return undefined;
}

/** the headers each stream of an upgrade is requested with: who the user is, and nothing they did not prove */
export function streamHeaders(req: IncomingMessage, opts: StreamMuxOptions): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { accept: 'application/json' };
  if (!opts.tenancy) {
    for (const h of FORWARDED) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    return headers;
  }
  const own = opts.impersonator?.();
  if (own) {
    // the user as admitted: impersonation (`kubectl --as`) on the upgrade is already applied to it
    const user = requestUser(req);
    headers.authorization = `Bearer ${own}`;
    headers['impersonate-user'] = user.username;
    if (user.groups.length) headers['impersonate-group'] = user.groups;
    if (user.uid) headers['impersonate-uid'] = user.uid;
    return headers;
  }
  const token = presentedToken(req);
  if (token) headers.authorization = `Bearer ${token}`;
  for (const h of ['impersonate-user', 'impersonate-group']) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  return headers;
}

export class StreamMux {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });

  /** `server`: the URL this server is reached at (the loopback target) */
  constructor(private readonly server: () => string, private readonly opts: StreamMuxOptions = {}) {}

  /** an `UpgradeHandler`: takes the upgrade when it is for the stream endpoint */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== STREAMS_PATH) return false;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, req));
    return true;
  };

  private serve(ws: WebSocket, upgradeReq: IncomingMessage): void {
    const open = new Map<number, ClientRequest>();
    const headers = streamHeaders(upgradeReq, this.opts);
    const send = (msg: Record<string, unknown>): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    ws.on('message', (raw) => {
      let m: { op?: string; id?: unknown; path?: unknown };
      try {
        m = JSON.parse(String(raw)) as typeof m;
      } catch {
        return send({ error: 'a message must be JSON: {"op":"open","id":1,"path":"/api/v1/..."}' });
      }
      const id = m.id;
      if (typeof id !== 'number' || !Number.isInteger(id)) return send({ error: 'id must be an integer' });
      if (m.op === 'close') {
        open.get(id)?.destroy();
        open.delete(id);
        return;
      }
      if (m.op !== 'open') return send({ id, error: `op must be "open" or "close", not ${JSON.stringify(m.op)}` });
      if (typeof m.path !== 'string' || !ALLOWED.test(m.path)) return send({ id, error: 'path must be an API path (/api/, /apis/ or /skiff/v1/)' });
      if (open.has(id)) return send({ id, error: `stream ${id} is already open` });
      if (open.size >= MAX_STREAMS) return send({ id, error: `at most ${MAX_STREAMS} streams per connection` });
      const req = request(new URL(m.path, this.server()), { method: 'GET', headers }, (res) => {
        send({ id, status: res.statusCode ?? 0 });
        res.setEncoding('utf8');
        res.on('data', (d: string) => send({ id, data: d }));
        res.on('end', () => {
          if (open.get(id) === req) {
            open.delete(id);
            send({ id, end: true });
          }
        });
        res.on('error', () => undefined);
      });
      req.on('error', (e) => {
        if (open.get(id) !== req) return;
        open.delete(id);
        send({ id, error: e.message });
      });
      req.end();
      open.set(id, req);
    });
    ws.on('close', () => {
      for (const r of open.values()) r.destroy();
      open.clear();
    });
  }
}
