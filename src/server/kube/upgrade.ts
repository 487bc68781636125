// HTTP upgrades (WebSocket, SPDY) on the API's address. The Pod subresources that stream both ways
// (portforward, and exec/attach) are reached by upgrading the request, which node:http hands to its
// `upgrade` event rather than to the request handler: this routes them by subresource to their
// handler, after the Pod has been found. Any other upgrade request goes to the ordinary handler, as
// if nobody listened for upgrades.
import { STATUS_CODES, ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, StatusReason } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Client } from '../../store/client.js';

/** serves one upgrade request for a Pod subresource; owns the socket from here on */
export type PodUpgradeHandler = (pod: StoredObject, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void | Promise<void>;

/** Takes the connection and returns true when the request is its own (it finds the Pod itself);
 *  returns false, leaving the socket untouched, otherwise. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export interface UpgradeDeps {
  client: Client;
  /** asked first, in order (exec and attach, which answer their own refusals as the kubelet does) */
  handlers?: UpgradeHandler[];
  /** by subresource name: `portforward`, `exec`, `attach` */
  pods: Record<string, PodUpgradeHandler>;
  /** the server's ordinary request handler, for upgrade requests to anything else */
  fallback: (req: IncomingMessage, res: ServerResponse) => void;
}

const podSubresource = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/([^/]+)\/?$/;

/** Answers an upgrade request with an error instead of switching protocols: a Status, as for any
 *  other request, or plain text where the kubelet answers that way. */
export function rejectUpgrade(socket: Duplex, e: unknown, headers: Record<string, string> = {}): void {
  const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, `internal error: ${(e as Error)?.message ?? String(e)}`);
  writeAndClose(socket, err.code, 'application/json', JSON.stringify(err.toStatus()), headers);
}

export function rejectUpgradeText(socket: Duplex, code: number, text: string, headers: Record<string, string> = {}): void {
  writeAndClose(socket, code, 'text/plain; charset=utf-8', `${text}\n`, headers);
}

function writeAndClose(socket: Duplex, code: number, type: string, body: string, headers: Record<string, string>): void {
  if (!socket.writable) return void socket.destroy();
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  // ended and then destroyed: a client that keeps its half open would otherwise hold the socket forever
  socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`, () => socket.destroy());
}

/** Upgrade requests of one or more HTTP servers. An upgraded connection is no longer the HTTP
 *  server's to close, so `closeAll` ends them when the server stops. */
export class Upgrades {
  private readonly open = new Set<Duplex>();

  constructor(private readonly deps: UpgradeDeps) {}

  /** the listener for node:http's `upgrade` event */
  readonly listener = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    socket.on('error', () => socket.destroy());
    for (const h of this.deps.handlers ?? []) if (h(req, socket, head)) return;
    const url = new URL(req.url ?? '/', 'http://skiff.local');
    const m = podSubresource.exec(url.pathname);
    const handler = m ? this.deps.pods[m[3] ?? ''] : undefined;
    if (!m || !handler) {
      // served as a plain request: the client gets whatever the path answers without an upgrade
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as Socket);
      res.on('finish', () => {
        res.detachSocket(socket as Socket);
        socket.end(() => socket.destroy());
      });
      this.deps.fallback(req, res);
      return;
    }
    const [, namespace = '', name = ''] = m.map((s) => (s === undefined ? s : decodeURIComponent(s)));
    this.deps.client.get(Kinds.Pod, { namespace, name }).then(
      (pod) => handler(pod, req, socket, head, url),
      (e: unknown) => rejectUpgrade(socket, e),
    ).catch((e: unknown) => rejectUpgrade(socket, e));
  };

  closeAll(): void {
    for (const s of this.open) s.destroy();
    this.open.clear();
  }
}
