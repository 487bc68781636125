// pods/portforward: the kubelet's port-forward protocols, with the substrate reaching the Pod's port.
//
// - kubectl (1.31+): a WebSocket with subprotocol `SPDY/3.1+portforward.k8s.io`, SPDY frames carried
//   in binary messages; or, when that fails, plain SPDY after an HTTP upgrade (`Upgrade: SPDY/3.1`,
//   `X-Stream-Protocol-Version: portforward.k8s.io`). Every TCP connection kubectl accepts opens an
//   error stream and a data stream (headers `streamtype`, `port`, `requestid`); the data stream
//   carries the bytes both ways, and a failure is written as text on the error stream, which kubectl
//   prints.
// - The Python client (`kubernetes.stream.portforward`): a WebSocket with `v4.channel.k8s.io` (or its
//   base64 twin) and `?ports=A,B`: one TCP connection per port, on channels 2i (data) and 2i+1
//   (error); each message starts with its channel byte, and the first on each channel carries the
//   port, little-endian.
//
// A broken connection, a malformed frame or a port where nothing listens ends that forward only.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Pod } from '../../api/core-types.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import type { PodPortForwarder } from '../../substrate/substrate.js';
import type { SpdyHeaders } from './spdy.js';
import { RstStatus } from './spdy.js';
import { SpdySession, type SpdyStream, type SpdyTransport } from './spdy-session.js';
import { rejectUpgrade, rejectUpgradeText } from './upgrade.js';
import { after, type Timer } from '../../util/timers.js';

export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
/** KEP-4006: SPDY tunnelled through a WebSocket */
export const SPDY_TUNNEL_PROTOCOL = `SPDY/3.1+${PORT_FORWARD_PROTOCOL}`;
const V4_BINARY = 'v4.channel.k8s.io';
const V4_BASE64 = 'v4.base64.channel.k8s.io';

/** bytes queued on a WebSocket before a Pod's socket is paused */
const wsHighWater = 1024 * 1024;

export interface PortForwardDeps {
  forwarder: PodPortForwarder;
  log?: (msg: string) => void;
  /** how long a connection's first stream waits for its second (default streamCreationTimeoutMs) */
  streamTimeoutMs?: number;
}

// The subprotocol is chosen here and written into the handshake by hand: `ws` refuses a
// Sec-WebSocket-Protocol header with characters outside RFC 7230's tokens, and KEP-4006's
// `SPDY/3.1+portforward.k8s.io` has a '/'.
const chosen = new WeakMap<IncomingMessage, string>();
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
wss.on('headers', (headers, req) => {
  const p = chosen.get(req);
  if (p) headers.push(`Sec-WebSocket-Protocol: ${p}`);
});

function upgradeWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string | undefined, then: (ws: WebSocket) => void): void {
  delete req.headers['sec-websocket-protocol'];
  if (protocol) chosen.set(req, protocol);
  wss.handleUpgrade(req, socket, head, then);
}

function isWebSocket(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

function headerList(v: string | string[] | undefined): string[] {
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
}

/** `?ports=8000&ports=9000,9001` as the kubelet reads it (kube-apiserver hands the kubelet its
 *  `ports` as `port`) */
export function parsePorts(url: URL, param = 'ports'): number[] {
  const raw = url.searchParams.getAll(param);
  if (raw.length === 0) throw new ApiError(StatusReason.BadRequest, `query parameter "${param}" is required`);
  const out: number[] = [];
  for (const r of raw) {
    if (r === '') throw new ApiError(StatusReason.BadRequest, `query parameter "${param}" cannot be empty`);
    for (const p of r.split(',')) {
      const n = /^\d+$/.test(p) ? Number(p) : NaN;
      if (!(n <= 65535)) throw new ApiError(StatusReason.BadRequest, `unable to parse "${r}" as a port: ports are integers from 1 to 65535`);
      if (n < 1) throw new ApiError(StatusReason.BadRequest, `port "${r}" must be > 0`);
      out.push(n);
    }
  }
  return out;
}

export interface PortForwardOptions {
  /** the query parameter a WebSocket request names its ports in: `ports` at the API server, `port` at a kubelet */
  portsParam?: string;
}

/** An upgrade request to /api/v1/namespaces/{ns}/pods/{name}/portforward (or a kubelet's /portForward/{ns}/{name}). */
export function servePortForward(deps: PortForwardDeps, pod: StoredObject, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, opts: PortForwardOptions = {}): void {
  const p = pod as Pod & StoredObject;
  if (!p.spec?.nodeName) return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, `pod ${p.metadata.name} does not have a host assigned`));
  if (req.method !== 'GET' && req.method !== 'POST') return rejectUpgrade(socket, new ApiError(StatusReason.MethodNotAllowed, `${req.method} is not supported on pods/portforward: use GET (WebSocket) or POST (SPDY)`));
  if (isWebSocket(req)) {
    const offered = headerList(req.headers['sec-websocket-protocol']);
    if (offered.includes(SPDY_TUNNEL_PROTOCOL)) {
      upgradeWebSocket(req, socket, head, SPDY_TUNNEL_PROTOCOL, (ws) => spdyOverWebSocket(deps, p, ws));
      return;
    }
    const proto = offered.find((o) => o === V4_BINARY || o === V4_BASE64);
    if (offered.length && !proto) {
      return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, `unable to upgrade: none of the requested WebSocket protocols (${offered.join(', ')}) is supported; the server supports ${SPDY_TUNNEL_PROTOCOL}, ${V4_BINARY}, ${V4_BASE64}`));
    }
    let ports: number[];
    try {
      ports = parsePorts(url, opts.portsParam);
    } catch (e) {
      return rejectUpgrade(socket, e);
    }
    upgradeWebSocket(req, socket, head, proto, (ws) => channels(deps, p, ws, ports, proto === V4_BASE64));
    return;
  }
  const upgrade = (req.headers.upgrade ?? '').toLowerCase();
  if (!upgrade.includes('spdy/3.1') || !(req.headers.connection ?? '').toLowerCase().includes('upgrade')) {
    return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, 'unable to upgrade: missing upgrade headers in request (pods/portforward needs a WebSocket, or Upgrade: SPDY/3.1)'));
  }
  const versions = headerList(req.headers['x-stream-protocol-version']);
  if (req.headers['x-stream-protocol-version'] === undefined) {
    return rejectUpgradeText(socket, 400, `unable to upgrade: header X-Stream-Protocol-Version does not exist in request with ${Object.keys(req.headers).length} headers`);
  }
  if (!versions.includes(PORT_FORWARD_PROTOCOL)) {
    return rejectUpgradeText(socket, 403, `unable to upgrade: unable to negotiate protocol: client supports [${versions.join(' ')}], server accepts [${PORT_FORWARD_PROTOCOL}]`, { 'X-Accepted-Stream-Protocol-Versions': PORT_FORWARD_PROTOCOL });
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PORT_FORWARD_PROTOCOL}\r\n\r\n`);
  spdyOverSocket(deps, p, socket, head);
}

function spdyOverSocket(deps: PortForwardDeps, pod: Pod & StoredObject, socket: Duplex, head: Buffer): void {
  const transport: SpdyTransport = {
    send: (b) => socket.write(b),
    onDrain: (cb) => socket.on('drain', cb),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close: () => socket.end(() => socket.destroy()),
  };
  const session = forwardStreams(deps, pod, transport);
  socket.on('data', (b: Buffer) => session.receive(b));
  // the HTTP server's sockets allow half-open connections: the client's FIN ends this one
  socket.on('end', () => session.close());
  socket.on('error', () => session.close());
  socket.on('close', () => session.close());
  if (head.length) session.receive(head);
}

/** a WebSocket as a byte transport whose queue is measured, so a slow client holds back the Pod */
function wsTransport(ws: WebSocket): SpdyTransport & { sendMessage(b: Buffer | string): boolean } {
  let queued = 0;
  const drains: (() => void)[] = [];
  const sendMessage = (b: Buffer | string): boolean => {
    if (ws.readyState !== ws.OPEN) return true;
    const n = typeof b === 'string' ? b.length : b.length;
    queued += n;
    ws.send(b, { binary: typeof b !== 'string' }, () => {
      const was = queued >= wsHighWater;
      queued -= n;
      if (was && queued < wsHighWater) for (const d of drains) d();
    });
    return queued < wsHighWater;
  };
  return {
    sendMessage,
    send: sendMessage,
    onDrain: (cb) => drains.push(cb),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    close: () => ws.close(1000),
  };
}

function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function spdyOverWebSocket(deps: PortForwardDeps, pod: Pod & StoredObject, ws: WebSocket): void {
  const session = forwardStreams(deps, pod, wsTransport(ws));
  ws.on('message', (data, isBinary) => {
    if (!isBinary) {
      deps.log?.(`port-forward to pod ${pod.metadata.namespace}/${pod.metadata.name}: a text message in a SPDY tunnel; closing it`);
      session.close();
      return;
    }
    session.receive(asBuffer(data));
  });
  ws.on('error', () => session.close());
  ws.on('close', () => session.close());
}

/** the kubelet's checks on a new stream */
function vet(h: SpdyHeaders): string | undefined {
  const port = h.get('port')?.[0];
  if (!port) return '"port" header is required';
  const n = /^\d+$/.test(port) ? Number(port) : NaN;
  if (!(n <= 65535)) return `unable to parse "${port}" as a port`;
  if (n < 1) return `port "${port}" must be > 0`;
  const type = h.get('streamtype')?.[0];
  if (!type) return '"streamType" header is required';
  if (type !== 'error' && type !== 'data') return `invalid stream type "${type}"`;
  return undefined;
}

interface Pair {
  error?: SpdyStream;
  data?: SpdyStream;
  timer?: Timer;
}

/** A forwarded connection that failed after it was made, with the message to pass on to the client
 *  as the kubelet wrote it (a Pod reached through a cluster's API server, whose kubelet reports a
 *  port where nothing listens on its error channel). */
export class PortForwardFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortForwardFailure';
  }
}

/** how long the second stream of a connection may keep the first waiting (the kubelet's default) */
export const streamCreationTimeoutMs = 30_000;

/** Pairs each connection's error and data streams and forwards the data stream to the Pod. */
function forwardStreams(deps: PortForwardDeps, pod: Pod & StoredObject, transport: SpdyTransport): SpdySession {
  const pairs = new Map<string, Pair>();
  const session: SpdySession = new SpdySession(transport, {
    vet,
    log: deps.log,
    onStream: (s) => {
      const type = s.header('streamtype') as 'error' | 'data';
      // old clients send no request id: the kubelet derives it from the stream ids (error first)
      const id = s.header('requestid') ?? String(type === 'error' ? s.id : s.id - 2);
      let pair = pairs.get(id);
      if (!pair) {
        const p: Pair = {};
        p.timer = after(deps.streamTimeoutMs ?? streamCreationTimeoutMs, () => {
          if (pairs.get(id) !== p) return;
          pairs.delete(id);
          p.error?.write(Buffer.from(`timed out waiting for the ${p.error ? 'data' : 'error'} stream of request ${id}`));
          p.error?.end();
          p.data?.reset();
        }).unref();
        pairs.set(id, p);
        pair = p;
      }
      if (pair[type]) {
        pair.error?.write(Buffer.from(`error processing stream for request ${id}: ${type} stream already assigned`));
        s.reset();
        return;
      }
      pair[type] = s;
      if (pair.error && pair.data) {
        pair.timer?.clear();
        pairs.delete(id);
        void forwardPair(deps, pod, session, pair.error, pair.data);
      }
    },
    onClose: () => {
      for (const p of pairs.values()) p.timer?.clear();
      pairs.clear();
    },
  });
  return session;
}

function failure(pod: Pod & StoredObject, port: number, e: unknown): string {
  // a kubelet's own message, passed on as it wrote it
  if (e instanceof PortForwardFailure) return e.message;
  return `error forwarding port ${port} to pod ${pod.metadata.name}, uid ${pod.metadata.uid}: ${(e as Error).message ?? String(e)}`;
}

async function forwardPair(deps: PortForwardDeps, pod: Pod & StoredObject, session: SpdySession, error: SpdyStream, data: SpdyStream): Promise<void> {
  const port = Number(data.header('port'));
  // what the client sends while the Pod's port is being reached waits here
  const early: Buffer[] = [];
  let clientDone = false;
  let gone = false;
  data.onData = (b) => early.push(b);
  data.onEnd = () => { clientDone = true; };
  data.onReset = () => { gone = true; };
  error.onReset = () => undefined;
  let sock: Duplex;
  try {
    sock = await deps.forwarder.connect(pod, port);
  } catch (e) {
    const msg = failure(pod, port, e);
    deps.log?.(`port-forward: ${msg}`);
    error.write(Buffer.from(msg));
    error.end();
    data.reset();
    return;
  }
  if (gone) {
    sock.destroy();
    error.end();
    return;
  }
  let paused = false;
  const resumeClient = (): void => {
    if (paused) {
      paused = false;
      session.resume();
    }
  };
  const toPod = (b: Buffer): void => {
    if (!sock.write(b) && !paused) {
      paused = true;
      session.pause();
      sock.once('drain', resumeClient);
    }
  };
  for (const b of early.splice(0)) toPod(b);
  if (clientDone) sock.end();
  data.onData = toPod;
  data.onEnd = () => sock.end();
  data.onReset = () => sock.destroy();
  sock.on('data', (b: Buffer) => {
    if (!data.write(b)) {
      sock.pause();
      session.onDrain(() => sock.resume());
    }
  });
  sock.on('end', () => data.end());
  sock.on('error', (e) => {
    deps.log?.(`port-forward: connection to port ${port} of pod ${pod.metadata.namespace}/${pod.metadata.name}: ${e.message}`);
    // the Pod's node could not reach the port: the client hears why, as from a kubelet
    if (e instanceof PortForwardFailure) {
      error.write(Buffer.from(e.message));
      error.end();
    }
    // a reset from the Pod ends this connection only: kubectl would otherwise stop forwarding altogether
    data.reset(RstStatus.Cancel);
  });
  sock.on('close', () => {
    resumeClient();
    data.end();
    error.end();
  });
}

/** The v4 channel protocol: one connection per requested port, for the life of the WebSocket. */
function channels(deps: PortForwardDeps, pod: Pod & StoredObject, ws: WebSocket, ports: number[], base64: boolean): void {
  const t = wsTransport(ws);
  const frame = (ch: number, b: Buffer): boolean => t.sendMessage(base64 ? String.fromCharCode(48 + ch) + b.toString('base64') : Buffer.concat([Buffer.of(ch), b]));
  const socks: (Duplex | undefined)[] = ports.map(() => undefined);
  const early: Buffer[][] = ports.map(() => []);
  let open = ports.length;
  let closed = false;
  const done = (): void => {
    if (--open === 0 && !closed) ws.close(1000);
  };
  // Pod sockets paused until the WebSocket drains, and those holding the WebSocket's reading back
  const waitingForWs: Duplex[] = [];
  t.onDrain(() => {
    for (const s of waitingForWs.splice(0)) s.resume();
  });
  const holdingWs = new Set<Duplex>();
  const release = (sock: Duplex): void => {
    if (holdingWs.delete(sock) && holdingWs.size === 0) ws.resume();
  };
  ports.forEach((port, i) => {
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port);
    frame(2 * i, portBytes);
    frame(2 * i + 1, portBytes);
    deps.forwarder.connect(pod, port).then((sock) => {
      if (closed) return void sock.destroy();
      socks[i] = sock;
      for (const b of early[i]?.splice(0) ?? []) sock.write(b);
      sock.on('data', (b: Buffer) => {
        if (!frame(2 * i, b)) {
          sock.pause();
          waitingForWs.push(sock);
        }
      });
      sock.on('drain', () => release(sock));
      sock.on('error', (e) => {
        deps.log?.(`port-forward: connection to port ${port} of pod ${pod.metadata.namespace}/${pod.metadata.name}: ${e.message}`);
        if (e instanceof PortForwardFailure) frame(2 * i + 1, Buffer.from(e.message));
      });
      sock.on('close', () => {
        release(sock);
        done();
      });
    }, (e: unknown) => {
      const msg = failure(pod, port, e);
      deps.log?.(`port-forward: ${msg}`);
      frame(2 * i + 1, Buffer.from(msg));
      done();
    });
  });
  ws.on('message', (raw, isBinary) => {
    let msg = asBuffer(raw);
    let ch: number;
    if (base64) {
      if (isBinary || msg.length === 0) return;
      ch = (msg[0] ?? 0) - 48;
      msg = Buffer.from(msg.subarray(1).toString('latin1'), 'base64');
    } else {
      if (!isBinary || msg.length === 0) return;
      ch = msg[0] ?? 0;
      msg = msg.subarray(1);
    }
    // only data channels are read; anything else is ignored, as the kubelet does
    if (ch < 0 || ch % 2 !== 0 || ch / 2 >= ports.length || msg.length === 0) return;
    const sock = socks[ch / 2];
    if (sock) {
      if (!sock.write(msg) && !holdingWs.has(sock)) {
        if (holdingWs.size === 0) ws.pause();
        holdingWs.add(sock);
      }
    } else early[ch / 2]?.push(msg);
  });
  const shut = (): void => {
    closed = true;
    for (const s of socks) s?.destroy();
  };
  ws.on('close', shut);
  ws.on('error', shut);
}
