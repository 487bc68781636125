// Requests that ask to switch protocols (`Upgrade:`), before the request handler sees them: Node
// gives every such request to the server's 'upgrade' listeners instead. Each handler claims what is
// its own (pods/exec and pods/attach over WebSocket, ...); what none claims is answered as the plain
// HTTP request it also is, so a client that offers an upgrade the server does not speak (h2c, say)
// still gets its answer.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ServerResponse as HttpResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Takes the connection and returns true when the request is its own; returns false untouched otherwise. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export function serveUpgrades(server: Server, handlers: UpgradeHandler[], plain: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    for (const h of handlers) if (h(req, socket, head)) return;
    if (head.length) socket.unshift(head);
    const res = new HttpResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Parameters<HttpResponse['assignSocket']>[0]);
    res.on('finish', () => socket.end());
    plain(req, res);
  });
}
