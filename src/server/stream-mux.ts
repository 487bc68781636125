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
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export const STREAMS_PATH = '/skiff/v1/streams';

/** what the page may ask for: the APIs, never the dashboard itself or the stream endpoint again */
const ALLOWED = /^\/(api|apis|skiff\/v1)\//;
/** a request's headers that carry who the user is, passed on to each stream */
const FORWARDED = ['authorization', 'cookie', 'impersonate-user', 'impersonate-group'];
/** at most this many streams per connection: a runaway page cannot open thousands */
const MAX_STREAMS = 200;

export class StreamMux {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });

  /** `server`: the URL this server is reached at (the loopback target) */
  constructor(private readonly server: () => string) {}

  /** an `UpgradeHandler`: takes the upgrade when it is for the stream endpoint */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== STREAMS_PATH) return false;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, req));
    return true;
  };

  private serve(ws: WebSocket, upgradeReq: IncomingMessage): void {
    const open = new Map<number, ClientRequest>();
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const h of FORWARDED) {
      const v = upgradeReq.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
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
