// A Pod's logs, exec, attach and port-forward on a cluster, for `skiff logs` and `skiff exec` (and
// kubectl pointed at Skiff): Skiff's API serves pods/log, pods/exec, pods/attach and pods/portforward
// as on one machine, and reaches the Pod through the cluster's API server, which asks the Pod's
// kubelet (or `skiff node`). Skiff's own credentials make the request, after Skiff's RBAC allowed the
// user's.
//
// Exec and attach speak the API server's WebSocket protocol, v5.channel.k8s.io: binary messages whose
// first byte is the stream (0 stdin, 1 stdout, 2 stderr, 3 the ending Status, 4 a terminal's size)
// and, from v5, 255 followed by a stream's number to close it (how the command sees the end of its
// stdin). Port-forward opens one WebSocket per forwarded connection with v4.channel.k8s.io and
// `?ports=P`, which the API server passes on to the kubelet: channel 0 carries the data, channel 1 a
// failure's text, and the first message on each is the port (two bytes, little-endian).
import http from 'node:http';
import https from 'node:https';
import { Duplex, PassThrough, Writable, type Readable } from 'node:stream';
import WebSocket from 'ws';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import { errorFromStatus } from '../../store/kube/http.js';
import type { ClusterConnection } from '../../store/kube/kubeconfig.js';
import type { Container, Pod } from '../../api/core-types.js';
import type { OutputChunk, PodAttachOptions, PodAttachSession, PodAttachSource, PodExecOptions, PodExecSession, PodExecSource, PodLogOptions, PodLogSource, PodPortForwarder, TerminalSize } from '../../substrate/substrate.js';
import { PortForwardFailure } from './portforward.js';

const Stream = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** what ends an exec: a Status, Success or NonZeroExitCode with the code in its causes */
interface ExecStatus {
  status?: string;
  reason?: string;
  message?: string;
  code?: number;
  details?: { causes?: { reason?: string; message?: string }[] };
}

export class ClusterPods implements PodLogSource, PodExecSource, PodAttachSource, PodPortForwarder {
  private readonly url: URL;
  private readonly agent: http.Agent;

  constructor(private readonly conn: ClusterConnection) {
    this.url = new URL(conn.server);
    this.agent = this.url.protocol === 'https:'
      ? new https.Agent({ keepAlive: true, ...this.tls() })
      : new http.Agent({ keepAlive: true });
  }

  private tls(): https.AgentOptions {
    const c = this.conn;
    return { ...(c.ca ? { ca: c.ca } : {}), ...(c.cert ? { cert: c.cert } : {}), ...(c.key ? { key: c.key } : {}), rejectUnauthorized: !c.insecureSkipTlsVerify };
  }

  private headers(): Record<string, string> {
    return this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {};
  }

  private podPath(pod: StoredObject, sub: string): string {
    const base = this.url.pathname.replace(/\/+$/, '');
    return `${base}/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? 'default')}/pods/${encodeURIComponent(pod.metadata.name)}/${sub}`;
  }

  async logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>> {
    const q = new URLSearchParams();
    if (opts.container) q.set('container', opts.container);
    if (opts.follow) q.set('follow', 'true');
    if (opts.previous) q.set('previous', 'true');
    if (opts.timestamps) q.set('timestamps', 'true');
    if (opts.tailLines !== undefined) q.set('tailLines', String(opts.tailLines));
    if (opts.sinceSeconds !== undefined) q.set('sinceSeconds', String(opts.sinceSeconds));
    if (opts.limitBytes !== undefined) q.set('limitBytes', String(opts.limitBytes));
    const lib = this.url.protocol === 'https:' ? https : http;
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = lib.request({
        method: 'GET', agent: this.agent, hostname: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port || (this.url.protocol === 'https:' ? 443 : 80),
        path: `${this.podPath(pod, 'log')}${q.size ? `?${q}` : ''}`, headers: { accept: 'text/plain, application/json', ...this.headers() }, signal,
      }, resolve);
      req.on('error', reject);
      req.end();
    });
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // plain text: the message
      }
      throw errorFromStatus(code, body, `the cluster's API server answered ${code} for the logs of pod ${pod.metadata.name}: ${text.slice(0, 200)}`);
    }
    res.setEncoding('utf8');
    return res as AsyncIterable<string>;
  }

  async exec(pod: StoredObject, opts: PodExecOptions): Promise<PodExecSession> {
    const q = new URLSearchParams();
    for (const c of opts.command) q.append('command', c);
    if (opts.container) q.set('container', opts.container);
    q.set('stdout', 'true');
    // with a terminal, its output is all on stdout: the API server refuses stderr with tty
    if (!opts.tty) q.set('stderr', 'true');
    if (opts.stdin) q.set('stdin', 'true');
    if (opts.tty) q.set('tty', 'true');
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let status: ExecStatus | undefined;
    const ws = await this.openSocket(pod, 'exec', q, 'v5.channel.k8s.io', `exec in pod ${pod.metadata.name}`, (data) => {
      const stream = data[0];
      const payload = data.subarray(1);
      if (stream === Stream.stdout) stdout.write(payload);
      else if (stream === Stream.stderr) stderr.write(payload);
      else if (stream === Stream.error) {
        try {
          status = JSON.parse(payload.toString('utf8')) as ExecStatus;
        } catch {
          status = { status: 'Failure', message: payload.toString('utf8') };
        }
      }
    });
    const done = new Promise<{ exitCode: number; signal?: string }>((settle, fail) => {
      ws.once('error', fail);
      ws.once('close', () => {
        stdout.end();
        stderr.end();
        if (!status || status.status === 'Success') return settle({ exitCode: 0 });
        const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
        if (status.reason === 'NonZeroExitCode' && code !== undefined) return settle({ exitCode: Number(code) });
        fail(new ApiError(StatusReason.InternalError, status.message ?? 'the command failed'));
      });
    });
    // read by whoever runs the command; a failure before anyone does is not unhandled
    void done.catch(() => undefined);
    const send = (stream: number, data: Buffer): Promise<void> => new Promise((resolve, reject) => {
      if (ws.readyState !== WebSocket.OPEN) return resolve();
      ws.send(Buffer.concat([Buffer.from([stream]), data]), (e) => (e ? reject(e) : resolve()));
    });
    const stdin = opts.stdin
      ? new Writable({
        write: (chunk: Buffer, _enc, cb) => void send(Stream.stdin, chunk).then(() => cb(), cb),
        // v5: the command reads the end of its input
        final: (cb) => void send(Stream.close, Buffer.from([Stream.stdin])).then(() => cb(), cb),
      })
      : undefined;
    return {
      stdout: stdout as Readable, stderr: stderr as Readable, ...(stdin ? { stdin } : {}), done,
      kill: () => ws.close(),
      ...(opts.tty ? { resize: (size: TerminalSize) => send(Stream.resize, Buffer.from(JSON.stringify({ Width: size.width, Height: size.height }))) } : {}),
    };
  }

  /** a WebSocket to the Pod's subresource through the cluster's API server, open; rejects with the
   *  API server's refusal. `onMessage` is set before the handshake: the first messages may come in
   *  the same read as its answer */
  private openSocket(pod: StoredObject, sub: string, q: URLSearchParams, protocol: string, what: string, onMessage: (data: Buffer) => void): Promise<WebSocket> {
    const scheme = this.url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${this.url.host}${this.podPath(pod, sub)}?${q}`, [protocol], {
      headers: this.headers(), ...this.tls(), perMessageDeflate: false,
    });
    ws.on('message', onMessage);
    return new Promise<WebSocket>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // plain text: the message
          }
          reject(errorFromStatus(res.statusCode ?? 500, body, `the cluster's API server refused ${what}: ${res.statusCode ?? ''} ${text.slice(0, 200)}`));
        });
      });
      ws.once('error', (e) => reject(new ApiError(StatusReason.InternalError, `${what} through the cluster's API server: ${e.message}`)));
      ws.once('open', () => resolve(ws));
    });
  }

  /** `kubectl attach`: the container's output from now on, and its stdin and terminal when its spec
   *  has them (a container without stdin takes none, as on one machine) */
  async attach(pod: StoredObject, opts: PodAttachOptions, signal: AbortSignal): Promise<PodAttachSession> {
    const p = pod as Pod & StoredObject;
    const all: Container[] = [...(p.spec.initContainers ?? []), ...p.spec.containers];
    const spec = opts.container ? all.find((c) => c.name === opts.container) : p.spec.containers[0];
    if (!spec) throw new ApiError(StatusReason.BadRequest, `container ${opts.container ?? ''} is not valid for pod ${p.metadata.name}`);
    const stdin = opts.stdin && Boolean(spec.stdin);
    const tty = Boolean(spec.tty);
    const q = new URLSearchParams({ container: spec.name, stdout: 'true' });
    // with a terminal, its output is all on stdout: the API server refuses stderr with tty
    if (!tty) q.set('stderr', 'true');
    if (stdin) q.set('stdin', 'true');
    if (tty) q.set('tty', 'true');
    // the output as it comes, ended by the connection's end; a failure Status ends it with an error
    const queue: OutputChunk[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let failure: Error | undefined;
    const ws = await this.openSocket(pod, 'attach', q, 'v5.channel.k8s.io', `attaching to container ${spec.name} of pod ${p.metadata.name}`, (data) => {
      const stream = data[0];
      const payload = data.subarray(1);
      if (stream === Stream.stdout || stream === Stream.stderr) {
        if (payload.length) queue.push({ stream: stream === Stream.stdout ? 'stdout' : 'stderr', data: Buffer.from(payload) });
      } else if (stream === Stream.error) {
        let status: ExecStatus;
        try {
          status = JSON.parse(payload.toString('utf8')) as ExecStatus;
        } catch {
          status = { status: 'Failure', message: payload.toString('utf8') };
        }
        if (status.status !== 'Success') failure = new Error(status.message ?? 'the attachment failed');
      }
      wake?.();
    });
    if (signal.aborted) ws.close();
    signal.addEventListener('abort', () => ws.close(), { once: true });
    ws.on('error', () => undefined);
    ws.once('close', () => {
      ended = true;
      wake?.();
    });
    if (ws.readyState === WebSocket.CLOSED) ended = true;
    const send = (stream: number, data: Buffer): Promise<void> => new Promise((resolve, reject) => {
      if (ws.readyState !== WebSocket.OPEN) return resolve();
      ws.send(Buffer.concat([Buffer.from([stream]), data]), (e) => (e ? reject(e) : resolve()));
    });
    async function* output(): AsyncGenerator<OutputChunk> {
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (ended) break;
        await new Promise<void>((resolve) => { wake = resolve; });
        wake = undefined;
      }
      if (failure && !signal.aborted) throw failure;
    }
    return {
      output: output(),
      ...(stdin ? {
        stdin: new Writable({
          write: (chunk: Buffer, _enc, cb) => void send(Stream.stdin, chunk).then(() => cb(), cb),
          // the session's end (a detach) closes the connection; the container's stdin stays open for the next one
          final: (cb) => cb(),
        }),
      } : {}),
      ...(tty ? { resize: (size: TerminalSize) => send(Stream.resize, Buffer.from(JSON.stringify({ Width: size.width, Height: size.height }))) } : {}),
    };
  }

  /** A connection to the Pod's port through the cluster's API server and its kubelet. */
  async connect(pod: StoredObject, port: number): Promise<Duplex> {
    // the first message on each channel is the port, not data
    const prefixed = new Set<number>();
    let failure = '';
    // data that comes before the connection is handed out waits here
    const early: Buffer[] = [];
    const made: { duplex?: Duplex } = {};
    const ws = await this.openSocket(pod, 'portforward', new URLSearchParams({ ports: String(port) }), 'v4.channel.k8s.io', `port-forward to port ${port} of pod ${pod.metadata.name}`, (data) => {
      const channel = data[0] ?? 0;
      let payload = data.subarray(1);
      if (!prefixed.has(channel)) {
        prefixed.add(channel);
        payload = payload.subarray(2);
      }
      if (payload.length === 0) return;
      if (channel === 0) {
        if (!made.duplex) early.push(Buffer.from(payload));
        else if (!made.duplex.push(Buffer.from(payload))) ws.pause();
      } else if (channel === 1) failure += payload.toString('utf8');
    });
    const d: Duplex = new Duplex({
      read: () => ws.resume(),
      write: (chunk: Buffer, _enc, cb) => {
        if (ws.readyState !== WebSocket.OPEN) return cb();
        ws.send(Buffer.concat([Buffer.from([0]), chunk]), (e) => cb(e ?? null));
      },
      // a WebSocket has no half-close: the client's end of sending ends the connection
      final: (cb) => {
        ws.close(1000);
        cb();
      },
      destroy: (err, cb) => {
        if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(1000);
        cb(err);
      },
    });
    made.duplex = d;
    for (const b of early.splice(0)) d.push(b);
    ws.on('error', (e) => d.destroy(e));
    ws.once('close', () => {
      // the kubelet could not reach the port: its message goes to the client as its own
      if (failure) d.destroy(new PortForwardFailure(failure));
      else d.push(null);
    });
    // a failure known already is the connection's refusal
    if (ws.readyState === WebSocket.CLOSED && failure) throw new PortForwardFailure(failure);
    if (ws.readyState === WebSocket.CLOSED) d.push(null);
    // whoever reads the connection hears of a failure; one nobody listens for is no crash
    d.on('error', () => undefined);
    return d;
  }

  close(): void {
    this.agent.destroy();
  }
}
