// Passing an HTTP request (or a WebSocket's upgrade) on to a server and its answer back, as a reverse
// proxy does: the one copy of that forwarding the notebook proxy, the API's service and pod proxy (kube/proxy.ts) and a
// standby's inference forwarder (inference/forward.ts) share. Bodies stream both ways; the
// hop-by-hop headers end here, each way.
import { request as httpRequest, type Agent, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { notebookCookie } from './auth/authn.js';

// RFC 9110 7.6.1: these describe one connection, not the message; so do the ones `Connection` names
export const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** the headers that travel on: all but the hop-by-hop ones and those the `Connection` header names */
export function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(String(headers.connection ?? '').split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== ''));
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || hopByHop.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  return out;
}

export interface RelayTarget {
  host: string;
  port: number;
  /** the path and query to ask for */
  path: string;
  /** the request's headers as the server gets them (see endToEnd) */
  headers: OutgoingHttpHeaders;
  agent?: Agent;
}

export interface RelayHooks {
  /** the server could not be reached, or broke off before answering: answer in the caller's words */
  failed(e: Error): void;
  /** changes the answer's headers before they go back (they are end-to-end already) */
  answerHeaders?(headers: OutgoingHttpHeaders, answer: IncomingMessage): void;
  /** sees the request on its way (a connect timeout, say) */
  started?(up: ReturnType<typeof httpRequest>): void;
}

/**
 * Sends `req` (its method, its body as it streams) to `to`, and the server's status, headers and body
 * back as they come. Either side going away ends the other.
 */
export function relay(req: IncomingMessage, res: ServerResponse, to: RelayTarget, hooks: RelayHooks): void {
  const up = httpRequest({ ...(to.agent ? { agent: to.agent } : {}), host: to.host.replace(/^\[|\]$/g, ''), port: to.port, method: req.method ?? 'GET', path: to.path, headers: to.headers });
  hooks.started?.(up);
  up.on('response', (answer) => {
    if (res.destroyed) {
      answer.destroy();
      return;
    }
    const back = endToEnd(answer.headers);
    hooks.answerHeaders?.(back, answer);
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
    // a streamed answer (server-sent events, a long download) is passed on as it comes
    res.flushHeaders();
    answer.pipe(res);
    answer.on('error', () => res.destroy());
  });
  up.on('error', (e) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    hooks.failed(e);
  });
  // the client went away before the answer was complete: so does the request to the server
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.on('error', () => up.destroy());
  req.pipe(up);
}

/**
 * The request's headers as a server behind Skiff gets them: Skiff's credentials off (the bearer token
 * and the notebook cookie: the server's code must not see its caller's token, as kube-apiserver takes
 * Authorization off before its proxy), `set` set, and the server's own token last, so that neither
 * the client nor `set` can send another.
 */
export function upstreamHeaders(req: { headers: IncomingHttpHeaders; socket?: { remoteAddress?: string } }, set: Record<string, string>, token?: string): Record<string, string> {
  const named = new Set(String(req.headers.connection ?? '').split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== ''));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || hopByHop.has(k) || named.has(k) || k === 'authorization') continue;
    if (k === 'cookie') {
      const kept = withoutCookie(Array.isArray(v) ? v.join('; ') : v, notebookCookie);
      if (kept) out[k] = kept;
      continue;
    }
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const forwarded = req.socket?.remoteAddress;
  if (forwarded) out['x-forwarded-for'] = out['x-forwarded-for'] ? `${out['x-forwarded-for']}, ${forwarded}` : forwarded;
  out['x-forwarded-proto'] ??= 'http';
  for (const [k, v] of Object.entries(set)) out[k.toLowerCase()] = v;
  if (token !== undefined) out.authorization = `token ${token}`;
  return out;
}

/** a Cookie header without cookie `name` */
export function withoutCookie(header: string, name: string): string {
  return header
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '' && p.slice(0, p.indexOf('=') < 0 ? p.length : p.indexOf('=')).trim() !== name)
    .join('; ');
}

/**
 * An upgrade (a WebSocket) passed on: the request's line and headers (plus `Connection: Upgrade` and
 * its `Upgrade`) written to a new connection to `to`, then the two sockets spliced both ways; the
 * server's 101 (or refusal) reaches the client as it was sent. `failed` hears a connection that could
 * not be made, before anything was spliced.
 */
export function relayUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, to: { host: string; port: number; path: string; headers: Record<string, string> }, failed: (e: Error) => void): void {
  const conn = connect(to.port, to.host);
  const fail = (): void => {
    conn.destroy();
    socket.destroy();
  };
  conn.once('error', (e) => (conn.connecting ? failed(e) : fail()));
  socket.once('error', fail);
  conn.once('connect', () => {
    const headers = { ...to.headers, connection: 'Upgrade', upgrade: req.headers.upgrade ?? 'websocket' };
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    conn.write(`${req.method ?? 'GET'} ${to.path} HTTP/1.1\r\n${lines}\r\n`);
    if (head.length) conn.write(head);
    conn.pipe(socket);
    socket.pipe(conn);
    conn.once('close', () => socket.destroy());
    socket.once('close', () => conn.destroy());
  });
}
