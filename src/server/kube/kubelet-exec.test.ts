// The kubelet API's attach as kube-apiserver calls it (SPDY/3.1, v4.channel.k8s.io), over a real
// HTTP upgrade and a SPDY client, with a stand-in for the substrate's attachment (real containers are
// attached in test/kubernetes-attach.test.ts): which streams open, what reaches the container and
// back, how the attachment ends, and what a kubelet answers before the upgrade.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import type { OutputChunk, PodAttachOptions, PodAttachSession } from '../../substrate/substrate.js';
import { serveKubeletExec } from './kubelet-exec.js';
import type { Frame } from './spdy.js';
import { FrameParser, dataFrame, encodeHeaderBlock, headerDictionary, synStreamFrame } from './spdy.js';

const pod = {
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '1' },
  spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'python', stdin: true }, { name: 'side', image: 'python' }] },
} as unknown as StoredObject;

/** the attached container: output the test pushes, stdin the test reads */
class Attached {
  readonly chunks: (OutputChunk | null)[] = [];
  private wake?: () => void;
  stdin?: PassThrough;
  stdinText = '';
  opts?: PodAttachOptions;
  signal?: AbortSignal;
  fail?: Error;

  push(c: OutputChunk | null): void {
    this.chunks.push(c);
    this.wake?.();
  }

  session(opts: PodAttachOptions, signal: AbortSignal, withStdin: boolean): PodAttachSession {
    if (this.fail) throw this.fail;
    this.opts = opts;
    this.signal = signal;
    signal.addEventListener('abort', () => this.push(null));
    if (withStdin && opts.stdin) {
      this.stdin = new PassThrough();
      this.stdin.on('data', (d: Buffer) => (this.stdinText += d.toString()));
    }
    const chunks = this.chunks;
    const more = (): Promise<void> => new Promise<void>((r) => { this.wake = r; });
    async function* output(): AsyncGenerator<OutputChunk> {
      for (;;) {
        const c = chunks.shift();
        if (c === null) return;
        if (c) {
          yield c;
          continue;
        }
        await more();
      }
    }
    return { output: output(), ...(this.stdin ? { stdin: this.stdin } : {}) };
  }
}

/** A SPDY client on a raw socket, as kube-apiserver is after the upgrade. */
class Client {
  private readonly parser = new FrameParser();
  private readonly deflate = zlib.createDeflate({ dictionary: headerDictionary });
  readonly frames: Frame[] = [];
  private readonly waiters: (() => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (b: Buffer) => {
      this.frames.push(...this.parser.push(b));
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('close', () => {
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** the answer's head, and the client when it was 101 */
  static async open(port: number, path: string, version = 'v4.channel.k8s.io'): Promise<{ head: string; body: string; client?: Client }> {
    const socket = connect(port, '127.0.0.1');
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${version}\r\nContent-Length: 0\r\n\r\n`);
    const got = await new Promise<string>((resolve) => {
      let text = '';
      const onData = (d: Buffer): void => {
        text += d.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        if (end >= 0 && (text.startsWith('HTTP/1.1 101') || text.length >= end + 4 + Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0))) {
          socket.off('data', onData);
          resolve(text);
        }
      };
      socket.on('data', onData);
    });
    const [head = '', body = ''] = got.split('\r\n\r\n');
    if (!head.startsWith('HTTP/1.1 101')) {
      socket.destroy();
      return { head, body };
    }
    return { head, body, client: new Client(socket) };
  }

  async syn(id: number, type: string): Promise<void> {
    const raw = encodeHeaderBlock(new Map([['streamtype', [type]]]));
    const block = await new Promise<Buffer>((resolve) => {
      this.deflate.write(raw);
      this.deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        const out: Buffer[] = [];
        for (let c = this.deflate.read() as Buffer | null; c !== null; c = this.deflate.read() as Buffer | null) out.push(c);
        resolve(Buffer.concat(out));
      });
    });
    this.socket.write(synStreamFrame(id, block));
  }

  async until(what: string, pred: () => boolean): Promise<void> {
    while (!pred()) {
      if (this.socket.destroyed) throw new Error(`connection closed before ${what}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  text(id: number): string {
    return Buffer.concat(this.frames.filter((f): f is Extract<Frame, { type: 'data' }> => f.type === 'data' && f.streamId === id).map((f) => f.data)).toString();
  }

  finished(id: number): boolean {
    return this.frames.some((f) => f.type === 'data' && f.streamId === id && f.fin);
  }
}

describe('the kubelet API\'s attach', () => {
  let http: Server;
  let port: number;
  let attached: Attached;
  let withStdin = true;

  before(async () => {
    http = createServer((_req, res) => res.end());
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const [, kind = '', , , container = ''] = url.pathname.split('/');
      serveKubeletExec({
        exec: { exec: () => Promise.reject(new Error('no exec here')) },
        attach: { attach: (_pod, opts, signal) => Promise.resolve().then(() => attached.session(opts, signal, withStdin)) },
      }, pod, container, req, socket, head, url, kind as 'exec' | 'attach');
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    port = (http.address() as AddressInfo).port;
  });
  beforeEach(() => {
    attached = new Attached();
    withStdin = true;
  });
  after(async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });

  it('carries the output on its streams and stdin in, and ends with Success when the output does', async () => {
    const { head, client } = await Client.open(port, '/attach/default/web/main?input=1&output=1&error=1');
    assert.match(head, /^HTTP\/1\.1 101 /);
    assert.match(head, /\r\nX-Stream-Protocol-Version: v4\.channel\.k8s\.io/);
    assert.ok(client);
    await client.syn(1, 'error');
    await client.syn(3, 'stdin');
    await client.syn(5, 'stdout');
    await client.syn(7, 'stderr');
    assert.deepEqual(attached.opts, { container: 'main', stdin: true });
    attached.push({ stream: 'stdout', data: Buffer.from('out-1\n') });
    attached.push({ stream: 'stderr', data: Buffer.from('err-1\n') });
    await client.until('the output', () => client.text(5) === 'out-1\n' && client.text(7) === 'err-1\n');
    client.socket.write(dataFrame(3, Buffer.from('typed\n')));
    await new Promise<void>((r) => setTimeout(r, 50));
    while (attached.stdinText !== 'typed\n') await new Promise<void>((r) => setTimeout(r, 20));
    // the container exits: its output ends
    attached.push(null);
    await client.until('the Status', () => client.finished(1));
    assert.deepEqual(JSON.parse(client.text(1)), { metadata: {}, status: 'Success' });
    assert.ok(client.finished(5) && client.finished(7));
    client.socket.destroy();
  });

  it('drops stdin for a container that has none, and ends the attachment when the API server goes away', async () => {
    withStdin = false;
    const { client } = await Client.open(port, '/attach/default/web/side?input=1&output=1');
    assert.ok(client);
    await client.syn(1, 'error');
    await client.syn(3, 'stdin');
    await client.syn(5, 'stdout');
    await client.until('the attachment', () => attached.signal !== undefined);
    client.socket.write(dataFrame(3, Buffer.from('nobody reads this\n')));
    attached.push({ stream: 'stdout', data: Buffer.from('still here\n') });
    await client.until('the output', () => client.text(5) === 'still here\n');
    client.socket.destroy();
    while (!attached.signal?.aborted) await new Promise<void>((r) => setTimeout(r, 20));
  });

  it('answers a container the Pod does not have, and one the substrate cannot attach to, before the upgrade', async () => {
    const missing = await Client.open(port, '/attach/default/web/nope?output=1');
    assert.match(missing.head, /^HTTP\/1\.1 500 /);
    assert.equal(missing.body.trim(), 'container nope not found in pod web_default');
    attached.fail = new ApiError(StatusReason.BadRequest, 'container "main" in pod "web" is not running');
    const stopped = await Client.open(port, '/attach/default/web/main?output=1');
    assert.match(stopped.head, /^HTTP\/1\.1 500 /);
    assert.equal(stopped.body.trim(), 'container "main" in pod "web" is not running');
    const none = await Client.open(port, '/attach/default/web/main');
    assert.match(none.head, /^HTTP\/1\.1 400 /);
    assert.match(none.body, /you must specify at least 1 of stdin, stdout, stderr/);
    const old = await Client.open(port, '/attach/default/web/main?output=1', 'v3.channel.k8s.io');
    assert.match(old.head, /^HTTP\/1\.1 403 /);
    assert.match(old.body, /unable to negotiate protocol: client supports \[v3\.channel\.k8s\.io\], server accepts \[v4\.channel\.k8s\.io\]/);
  });
});
