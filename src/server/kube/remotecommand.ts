// pods/exec and pods/attach over WebSocket, as kubectl (v5.channel.k8s.io), client-go and the Python
// client (v4.channel.k8s.io) speak them to kube-apiserver and the kubelet behind it.
//
// Every message starts with a channel byte: 0 stdin, 1 stdout, 2 stderr, 3 error (the command's end
// as a meta/v1 Status), 4 resize (JSON {Width, Height}); v5 adds 255 + a channel number, the client's
// half-close of that channel (stdin at EOF). The base64 protocols send text messages: the channel as
// an ASCII digit, then the payload in base64. Before v4 the error channel carries only the failure's
// text. What the server answers is the kubelet's: the first protocol the client offers that it
// serves, an empty message on the first output channel once the streams are up, the Status, then a
// normal close.
//
// A dropped connection, a malformed frame or a protocol error ends that one command (it is killed);
// nothing else is touched.
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable, Writable } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { Container, Pod } from '../../api/core-types.js';
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Client } from '../../store/client.js';
import type { PodAttachSession, PodAttachSource, PodExecSession, PodExecSource, TerminalSize } from '../../substrate/substrate.js';
import { after, type Timer } from '../../util/timers.js';
import type { UpgradeHandler } from './upgrade.js';

export const Channel = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

export interface ChannelProtocol {
  name: string;
  /** payloads in base64 in text messages */
  base64: boolean;
  /** the error channel carries a JSON Status (v4 and later), not just a failure's message */
  jsonStatus: boolean;
  /** the client may half-close a channel (v5) */
  closeSignal: boolean;
}

/** Served subprotocols: v5 as kube-apiserver itself serves it, the others as the kubelet does. */
export const PROTOCOLS: readonly ChannelProtocol[] = [
  { name: 'v5.channel.k8s.io', base64: false, jsonStatus: true, closeSignal: true },
  { name: 'v4.channel.k8s.io', base64: false, jsonStatus: true, closeSignal: false },
  { name: 'v4.base64.channel.k8s.io', base64: true, jsonStatus: true, closeSignal: false },
  { name: 'v3.channel.k8s.io', base64: false, jsonStatus: false, closeSignal: false },
  { name: 'v2.channel.k8s.io', base64: false, jsonStatus: false, closeSignal: false },
  { name: 'channel.k8s.io', base64: false, jsonStatus: false, closeSignal: false },
  { name: 'base64.channel.k8s.io', base64: true, jsonStatus: false, closeSignal: false },
];
/** what a client that names no subprotocol gets */
const UNNAMED: ChannelProtocol = { name: '', base64: false, jsonStatus: false, closeSignal: false };

/** The first protocol in the client's order that is served; undefined when it offers none at all. */
export function negotiate(offered: string[]): ChannelProtocol | null | undefined {
  const names = offered.map((p) => p.trim()).filter(Boolean);
  if (names.length === 0) return undefined;
  for (const n of names) {
    const p = PROTOCOLS.find((x) => x.name === n);
    if (p) return p;
  }
  return null;
}

/** A meta/v1 Status as the kubelet writes it on the error channel. */
export type ChannelStatus = Record<string, unknown>;

export function successStatus(): ChannelStatus {
  return { metadata: {}, status: 'Success' };
}

/** The Status for a command that exited non-zero: kubectl exits with the code in the ExitCode cause. */
export function exitStatus(command: string[], code: number): ChannelStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: command '${command.join(' ')}' exited with ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

export function internalErrorStatus(message: string): ChannelStatus {
  return { metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500 };
}

/** One message of a channel, as the protocol frames it. */
export function encodeFrame(p: ChannelProtocol, channel: number, data: Buffer): Buffer | string {
  if (p.base64) return String.fromCharCode(0x30 + channel) + data.toString('base64');
  const out = Buffer.allocUnsafe(data.length + 1);
  out[0] = channel;
  data.copy(out, 1);
  return out;
}

export type Decoded =
  | { kind: 'data'; channel: number; data: Buffer }
  | { kind: 'close'; channel: number }
  | { kind: 'empty' }
  | { kind: 'invalid'; reason: string };

/** One message from the client. */
export function decodeFrame(p: ChannelProtocol, msg: Buffer): Decoded {
  if (msg.length === 0) return { kind: 'empty' };
  if (p.closeSignal && msg[0] === Channel.close) {
    if (msg.length !== 2) return { kind: 'invalid', reason: `a close signal is one channel byte, got ${msg.length - 1}` };
    return { kind: 'close', channel: msg[1] ?? 0 };
  }
  if (p.base64) {
    const channel = (msg[0] ?? 0) - 0x30;
    const text = msg.subarray(1).toString('latin1');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return { kind: 'invalid', reason: `channel ${channel}: the payload is not base64` };
    return { kind: 'data', channel, data: Buffer.from(text, 'base64') };
  }
  return { kind: 'data', channel: msg[0] ?? 0, data: msg.subarray(1) };
}

/**
 * The resize channel is a stream of JSON objects, which a client may split across messages or
 * pack several to one: complete objects are taken out as they close.
 */
export class ResizeDecoder {
  private buf = '';

  /** the sizes completed by this data; throws on something that is not a stream of objects */
  push(data: Buffer): TerminalSize[] {
    this.buf += data.toString('utf8');
    const out: TerminalSize[] = [];
    let depth = 0;
    let inString = false;
    let escaped = false;
    let start = -1;
    let consumed = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{') {
        if (depth === 0) start = i;
        depth++;
      } else if (c === '}') {
        depth--;
        if (depth < 0) throw new Error('unbalanced "}"');
        if (depth === 0) {
          const v = JSON.parse(this.buf.slice(start, i + 1)) as Record<string, unknown>;
          out.push({ width: Number(v.Width ?? v.width ?? 0), height: Number(v.Height ?? v.height ?? 0) });
          consumed = i + 1;
        }
      } else if (depth === 0 && !/\s/.test(c ?? '')) throw new Error(`unexpected ${JSON.stringify(c)} between objects`);
    }
    this.buf = this.buf.slice(consumed);
    return out;
  }
}

export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** What a request asks for. The flags read as kube-apiserver converts query parameters to options:
 *  absent, "0" and "false" (any case) are false, any other value (even empty) is true. */
export function streamOptions(url: URL): StreamOptions {
  const flag = (name: string): boolean => {
    const v = url.searchParams.get(name);
    return v !== null && v !== '0' && v.toLowerCase() !== 'false';
  };
  const o = { stdin: flag('stdin'), stdout: flag('stdout'), stderr: flag('stderr'), tty: flag('tty') };
  if (!o.stdin && !o.stdout && !o.stderr) throw new ApiError(StatusReason.BadRequest, 'you must specify at least 1 of stdin, stdout, stderr');
  // the kubelet's rule: a terminal has one output stream
  if (o.tty && o.stderr) o.stderr = false;
  return o;
}

/** The container a request names, or the Pod's only one, as kube-apiserver chooses it. */
export function chooseContainer(pod: Pod & StoredObject, container: string | undefined): string {
  const all: Container[] = [...(pod.spec.initContainers ?? []), ...pod.spec.containers, ...((pod.spec as { ephemeralContainers?: Container[] }).ephemeralContainers ?? [])];
  if (!container) {
    if (pod.spec.containers.length === 1) return pod.spec.containers[0]?.name ?? '';
    if (pod.spec.containers.length === 0) throw new ApiError(StatusReason.BadRequest, `a container name must be specified for pod ${pod.metadata.name}`);
    throw new ApiError(StatusReason.BadRequest, `a container name must be specified for pod ${pod.metadata.name}, choose one of: [${all.map((c) => c.name).join(' ')}]`);
  }
  if (!all.some((c) => c.name === container)) throw new ApiError(StatusReason.BadRequest, `container ${container} is not valid for pod ${pod.metadata.name}`);
  return container;
}

export interface RemoteCommandDeps {
  client: Client;
  exec?: PodExecSource;
  attach?: PodAttachSource;
  log?: (msg: string) => void;
}

const PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach)\/?$/;
/** output waiting in a connection's buffer before the command's output is paused */
const HIGH_WATER = 1 << 20;
/** how long a terminal's first input waits for the client's first resize */
const FIRST_RESIZE_WAIT_MS = 500;
/** how long a refused WebSocket request's reason is kept for the SPDY retry that follows it */
const RETRY_MEMORY_MS = 30_000;

/**
 * The 'upgrade' handler for pods/exec and pods/attach. kubectl retries a refused WebSocket upgrade
 * over SPDY, which Skiff does not speak, and shows only the second answer: a SPDY request for a URL
 * whose WebSocket request was just refused gets that refusal again, so the user reads why (the
 * container is not running, say) rather than that SPDY is not served.
 */
export function remoteCommandUpgrade(deps: RemoteCommandDeps): UpgradeHandler {
  const wss = new WebSocketServer({
    noServer: true, maxPayload: 16 << 20, perMessageDeflate: false,
    // the answer names the protocol negotiate() chose, not just the client's first
    handleProtocols: (offered: Set<string>) => negotiate([...offered])?.name ?? false,
  });
  const refused = new Map<string, { error: unknown; at: number }>();
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://skiff.local');
    const m = PATH.exec(url.pathname);
    if (!m) return false;
    const key = `${url.pathname}${url.search}`;
    const websocket = String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    const earlier = refused.get(key);
    if (!websocket && earlier && Date.now() - earlier.at < RETRY_MEMORY_MS) {
      refused.delete(key);
      refuse(socket, earlier.error);
      return true;
    }
    void accept(deps, wss, req, socket, head, url, m).catch((e) => {
      if (websocket) {
        for (const [k, v] of refused) if (Date.now() - v.at >= RETRY_MEMORY_MS) refused.delete(k);
        refused.set(key, { error: e, at: Date.now() });
      }
      refuse(socket, e);
    });
    return true;
  };
}

/** A refusal with a status code that has no StatusReason of Skiff's (the handshake's 403). */
class Refusal extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
  }
}

/** An HTTP answer on a connection that has not been upgraded: a Status, as kube-apiserver sends. */
function refuse(socket: Duplex, e: unknown): void {
  const err = e instanceof ApiError || e instanceof Refusal ? e : new ApiError(StatusReason.InternalError, `internal error: ${(e as Error)?.message ?? String(e)}`);
  const body = JSON.stringify(err.toStatus());
  const text = ({ 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 500: 'Internal Server Error' } as Record<number, string>)[err.code] ?? 'Error';
  if (!socket.writable) return void socket.destroy();
  socket.end(`HTTP/1.1 ${err.code} ${text}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

async function accept(deps: RemoteCommandDeps, wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, m: RegExpExecArray): Promise<void> {
  const [, ns = '', name = '', sub = ''] = m.map((s) => decodeURIComponent(s));
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'POST') throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on pods/${sub}`);
  const pod = await deps.client.get(Kinds.Pod, { namespace: ns, name }) as Pod & StoredObject;
  const container = chooseContainer(pod, url.searchParams.get('container') ?? undefined);
  const opts = streamOptions(url);
  if (!pod.spec.nodeName) throw new ApiError(StatusReason.BadRequest, `pod ${name} does not have a host assigned`);
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (upgrade !== 'websocket') {
    throw new ApiError(StatusReason.BadRequest, `pods/${sub} is served over WebSocket (v5.channel.k8s.io or v4.channel.k8s.io); this server does not speak ${req.headers.upgrade ?? 'a plain HTTP'} streaming`);
  }
  const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',');
  const protocol = negotiate(offered);
  if (protocol === null) {
    throw new Refusal(403, 'Forbidden', `requested protocol(s) are not supported: [${offered.map((p) => p.trim()).join(' ')}]; supports [${PROTOCOLS.map((p) => p.name).join(' ')}]`);
  }
  const abort = new AbortController();
  let run: Running;
  if (sub === 'exec') {
    if (!deps.exec) throw new ApiError(StatusReason.MethodNotAllowed, 'this server cannot run commands in pods');
    const command = url.searchParams.getAll('command');
    if (command.length === 0) throw new ApiError(StatusReason.BadRequest, 'you must specify at least one command for the container (query parameter command)');
    const session = await deps.exec.exec(pod, { container, command, stdin: opts.stdin, tty: opts.tty });
    run = execRun(session, command, opts);
  } else {
    if (!deps.attach) throw new ApiError(StatusReason.MethodNotAllowed, 'this server cannot attach to containers');
    const session = await deps.attach.attach(pod, { container, stdin: opts.stdin }, abort.signal);
    run = attachRun(session, opts, abort);
  }
  // the command runs from here: if the handshake fails (ws answers it) or the client is already
  // gone, nothing else will end it
  let upgraded = false;
  const orphaned = (): void => {
    if (!upgraded) run.kill();
  };
  if (socket.destroyed) return orphaned();
  socket.once('close', orphaned);
  wss.handleUpgrade(req, socket, head, (ws) => {
    upgraded = true;
    socket.off('close', orphaned);
    new Bridge(ws, protocol ?? UNNAMED, opts, run, deps.log).start();
  });
}

/** A started command or attachment, seen from the connection. */
interface Running {
  /** pumps the output into `send` and resolves with the Status to end on */
  output(send: (channel: number, data: Buffer) => Promise<void> | void): Promise<ChannelStatus>;
  /** resolves when the command has taken the data in, if it is not taking input as fast as it comes */
  stdin?(data: Buffer): Promise<void> | void;
  closeStdin?(): void;
  /** resolves once the terminal has the size */
  resize?(size: TerminalSize): Promise<void>;
  /** the connection went away before the end */
  kill(): void;
}

/** stdin and its half-close on a writable, with backpressure */
function stdinOf(input: Writable): Pick<Running, 'stdin' | 'closeStdin'> {
  input.on('error', () => { /* the reader went away early */ });
  return {
    stdin: (data: Buffer) => {
      if (input.writableEnded || input.destroyed || input.write(data)) return undefined;
      return new Promise<void>((resolve) => {
        const done = (): void => {
          input.off('drain', done);
          input.off('close', done);
          resolve();
        };
        input.on('drain', done);
        input.on('close', done);
      });
    },
    closeStdin: () => { if (!input.writableEnded) input.end(); },
  };
}

function execRun(session: PodExecSession, command: string[], opts: StreamOptions): Running {
  const pump = (stream: Readable, channel: number | undefined, send: (channel: number, data: Buffer) => Promise<void> | void): Promise<void> => new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      if (channel === undefined) return;
      const waiting = send(channel, chunk);
      if (waiting) {
        stream.pause();
        void waiting.then(() => stream.resume());
      }
    });
    stream.once('end', resolve);
    stream.once('error', () => resolve());
    stream.once('close', resolve);
  });
  const input = session.stdin;
  return {
    async output(send) {
      const [end] = await Promise.all([
        session.done,
        pump(session.stdout, opts.stdout ? Channel.stdout : undefined, send),
        pump(session.stderr, opts.stderr ? Channel.stderr : opts.tty && opts.stdout ? Channel.stdout : undefined, send),
      ]);
      return end.exitCode === 0 ? successStatus() : exitStatus(command, end.exitCode);
    },
    ...(input && opts.stdin ? stdinOf(input) : {}),
    ...(session.resize ? { resize: (size: TerminalSize) => session.resize?.(size) ?? Promise.resolve() } : {}),
    kill: () => session.kill(),
  };
}

function attachRun(session: PodAttachSession, opts: StreamOptions, abort: AbortController): Running {
  const input = session.stdin;
  return {
    async output(send) {
      for await (const chunk of session.output) {
        // on a terminal there is one output stream
        const channel = chunk.stream === 'stderr' && !opts.tty ? (opts.stderr ? Channel.stderr : undefined) : (opts.stdout ? Channel.stdout : undefined);
        if (channel !== undefined) await send(channel, chunk.data);
      }
      input?.destroy();
      return successStatus();
    },
    ...(input ? stdinOf(input) : {}),
    ...(session.resize ? { resize: (size: TerminalSize) => session.resize?.(size) ?? Promise.resolve() } : {}),
    kill: () => {
      abort.abort();
      input?.destroy();
    },
  };
}

/** One connection: the client's messages into the command, its output and end out. */
class Bridge {
  private finished = false;
  private readonly resizes = new ResizeDecoder();
  private resizeBroken = false;
  /** the client's stdin, half-close and resizes, applied in the order they were sent: input sent
   *  after a resize reaches the command once the terminal has that size */
  private inbox: Promise<void> = Promise.resolve();
  /** on a terminal, holds the inbox until the client's first resize is applied */
  private gate?: { open: () => void; timer: Timer };

  constructor(private readonly ws: WebSocket, private readonly protocol: ChannelProtocol, private readonly opts: StreamOptions,
    private readonly run: Running, private readonly log?: (msg: string) => void) {}

  start(): void {
    const { ws } = this;
    if (this.opts.tty && this.run.resize) {
      // kubectl sends its first resize with its first input, in either order: input waits for the
      // size (a shell's first `stty size` must not see an unsized terminal), but not for long, as
      // a client that never resizes (the Python client) sends none
      let open = (): void => undefined;
      this.inbox = new Promise<void>((resolve) => { open = resolve; });
      const timer = after(FIRST_RESIZE_WAIT_MS, () => this.openGate());
      this.gate = { open, timer };
    }
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => this.receive(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)));
    ws.on('error', (e) => this.drop(`connection error: ${e.message}`));
    ws.on('close', () => this.drop('connection closed'));
    // the kubelet's "streams are up" signal: an empty message on the first output channel
    void this.send(this.opts.stdout ? Channel.stdout : this.opts.stderr ? Channel.stderr : Channel.error, Buffer.alloc(0));
    void this.run.output((channel, data) => this.send(channel, data)).then(
      (status) => this.end(status),
      (e: Error) => this.end(internalErrorStatus(`error executing command in container: ${e.message}`)),
    );
  }

  private receive(msg: Buffer): void {
    if (this.finished) return;
    const f = decodeFrame(this.protocol, msg);
    if (f.kind === 'invalid') {
      this.log?.(`remotecommand: ${f.reason}; closing the stream`);
      this.ws.close(1002, f.reason.slice(0, 120));
      this.drop(f.reason);
      return;
    }
    if (f.kind === 'close') {
      if (f.channel === Channel.stdin) this.then(() => this.run.closeStdin?.());
      return;
    }
    if (f.kind !== 'data') return;
    if (f.channel === Channel.stdin) {
      this.then(() => {
        const taken = this.run.stdin?.(f.data);
        if (!taken) return undefined;
        // a command slower than its input: stop reading the connection until it catches up
        this.ws.pause();
        return taken.then(() => this.ws.resume());
      });
    }
    else if (f.channel === Channel.resize && !this.resizeBroken) {
      try {
        for (const size of this.resizes.push(f.data)) {
          if (this.gate) void this.run.resize?.(size).then(() => this.openGate());
          else this.then(() => this.run.resize?.(size));
        }
      } catch {
        // as the kubelet does: a resize stream that does not decode ends resizing, not the command
        this.resizeBroken = true;
      }
    }
  }

  private openGate(): void {
    const g = this.gate;
    this.gate = undefined;
    g?.timer.clear();
    g?.open();
  }

  private then(step: () => Promise<void> | void): void {
    this.inbox = this.inbox.then(() => (this.finished ? undefined : step())).catch(() => undefined);
  }

  /** resolves once the data is handed to the socket when the socket's buffer is full */
  private send(channel: number, data: Buffer): Promise<void> | undefined {
    if (this.ws.readyState !== WebSocket.OPEN) return undefined;
    const frame = encodeFrame(this.protocol, channel, data);
    if (this.ws.bufferedAmount < HIGH_WATER) {
      this.ws.send(frame, { binary: !this.protocol.base64 });
      return undefined;
    }
    return new Promise((resolve) => this.ws.send(frame, { binary: !this.protocol.base64 }, () => resolve()));
  }

  private end(status: ChannelStatus): void {
    if (this.finished) return;
    this.finished = true;
    this.openGate();
    if (this.protocol.jsonStatus) void this.send(Channel.error, Buffer.from(JSON.stringify(status)));
    else if (status.status !== 'Success') void this.send(Channel.error, Buffer.from(String(status.message ?? '')));
    this.ws.close(1000);
  }

  /** the connection ended before the command did: the command goes with it */
  private drop(why: string): void {
    if (this.finished) return;
    this.finished = true;
    this.openGate();
    this.log?.(`remotecommand: ${why}; stopping the command`);
    this.run.kill();
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }
}
