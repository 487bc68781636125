// The port-forward protocol over a real HTTP upgrade and real TCP, with a stand-in for the substrate
// (which reaches real Pods in test/kubectl-portforward.test.ts): how streams pair, what reaches the
// Pod and back, and what the client hears when something fails.
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import WebSocket from 'ws';
import type { StoredObject } from '../../api/meta.js';
import type { PodPortForwarder } from '../../substrate/substrate.js';
import { servePortForward, type PortForwardDeps } from './portforward.js';
import type { Frame } from './spdy.js';
import { FrameParser, RstStatus, dataFrame, encodeHeaderBlock, headerDictionary, rstStreamFrame, synStreamFrame } from './spdy.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '1' }, spec: { nodeName: 'n1', containers: [] } } as unknown as StoredObject;

/** A SPDY client on a raw socket, as kubectl is after the upgrade. */
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

  static async open(port: number): Promise<Client> {
    const socket = connect(port, '127.0.0.1');
    socket.write('POST /api/v1/namespaces/default/pods/web/portforward HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n');
    const head = await new Promise<string>((resolve) => {
      let got = '';
      const onData = (d: Buffer): void => {
        got += d.toString('latin1');
        if (got.includes('\r\n\r\n')) {
          socket.off('data', onData);
          resolve(got);
        }
      };
      socket.on('data', onData);
    });
    assert.match(head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(head, /\r\nX-Stream-Protocol-Version: portforward\.k8s\.io\r\n/);
    return new Client(socket);
  }

  async syn(id: number, headers: Record<string, string>): Promise<void> {
    const raw = encodeHeaderBlock(new Map(Object.entries(headers).map(([k, v]) => [k, [v]])));
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

  /** a connection's two streams, as kubectl opens them: the error stream is closed at once */
  async pair(errorId: number, port: number, requestId?: string): Promise<void> {
    const h = (type: string): Record<string, string> => ({ streamtype: type, port: String(port), ...(requestId === undefined ? {} : { requestid: requestId }) });
    await this.syn(errorId, h('error'));
    this.socket.write(dataFrame(errorId, Buffer.alloc(0), true));
    await this.syn(errorId + 2, h('data'));
  }

  /** waits for a frame (the test runner's own timeout bounds it) */
  async until(what: string, pred: (f: Frame) => boolean): Promise<Frame> {
    for (;;) {
      const f = this.frames.find(pred);
      if (f) return f;
      if (this.socket.destroyed) throw new Error(`connection closed before ${what}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** everything a stream carried up to its FIN or reset */
  async received(id: number): Promise<{ text: string; end: 'fin' | 'rst' }> {
    const last = await this.until(`the end of stream ${id}`, (f) => (f.type === 'data' && f.streamId === id && f.fin) || (f.type === 'rst_stream' && f.streamId === id));
    const text = Buffer.concat(this.frames.filter((f): f is Extract<Frame, { type: 'data' }> => f.type === 'data' && f.streamId === id).map((f) => f.data)).toString();
    return { text, end: last.type === 'rst_stream' ? 'rst' : 'fin' };
  }
}

describe('pods/portforward', () => {
  let http: Server;
  let httpPort: number;
  let podPort: number;
  let podServer: ReturnType<typeof createTcpServer>;
  const podReceived: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const deps: PortForwardDeps = {
    forwarder: {
      async connect(_pod, port) {
        await gate;
        if (port !== podPort) throw new Error(`connect ECONNREFUSED 127.0.0.1:${port}`);
        const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        await new Promise((r) => s.once('connect', r));
        return s;
      },
    } satisfies PodPortForwarder,
    streamTimeoutMs: 100,
  };

  before(async () => {
    // the Pod's server: answers each chunk upper-cased, and "bye" when the client has finished
    podServer = createTcpServer({ allowHalfOpen: true }, (s) => {
      let got = '';
      s.on('data', (b: Buffer) => {
        got += b.toString();
        s.write(b.toString().toUpperCase());
      });
      s.on('end', () => {
        podReceived.push(got);
        s.end('bye');
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => podServer.listen(0, '127.0.0.1', r));
    podPort = (podServer.address() as AddressInfo).port;
    http = createServer((_req, res) => res.end());
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => servePortForward(deps, pod, req, socket, head, new URL(req.url ?? '/', 'http://x')));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpPort = (http.address() as AddressInfo).port;
  });
  after(async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
    await new Promise((r) => podServer.close(r));
  });

  it('pairs a connection\'s streams, carries bytes both ways, and hands the client\'s FIN to the Pod as a half-close', async () => {
    const c = await Client.open(httpPort);
    await c.pair(1, podPort, '0');
    await c.until('the data stream\'s reply', (f) => f.type === 'syn_reply' && f.streamId === 3);
    c.socket.write(dataFrame(3, Buffer.from('hello ')));
    c.socket.write(dataFrame(3, Buffer.from('pod'), true));
    assert.deepEqual(await c.received(3), { text: 'HELLO PODbye', end: 'fin' });
    assert.deepEqual(await c.received(1), { text: '', end: 'fin' });
    assert.ok(podReceived.includes('hello pod'));
    c.socket.destroy();
  });

  it('pairs streams by stream id when the client sends no request id, and serves several connections at once', async () => {
    const c = await Client.open(httpPort);
    await c.pair(1, podPort);
    await c.pair(5, podPort);
    c.socket.write(dataFrame(7, Buffer.from('second'), true));
    c.socket.write(dataFrame(3, Buffer.from('first'), true));
    assert.deepEqual(await c.received(7), { text: 'SECONDbye', end: 'fin' });
    assert.deepEqual(await c.received(3), { text: 'FIRSTbye', end: 'fin' });
    c.socket.destroy();
  });

  it('answers a port where nothing listens on the error stream, and resets the data stream', async () => {
    const c = await Client.open(httpPort);
    await c.pair(1, 1, '0');
    assert.deepEqual(await c.received(1), { text: 'error forwarding port 1 to pod web, uid u1: connect ECONNREFUSED 127.0.0.1:1', end: 'fin' });
    assert.equal((await c.received(3)).end, 'rst');
    c.socket.destroy();
  });

  it('keeps what the client sends before the Pod\'s port answers, in order', async () => {
    let open!: () => void;
    gate = new Promise((r) => { open = r; });
    const c = await Client.open(httpPort);
    await c.pair(1, podPort, '0');
    await c.until('the data stream\'s reply', (f) => f.type === 'syn_reply' && f.streamId === 3);
    c.socket.write(dataFrame(3, Buffer.from('a')));
    c.socket.write(dataFrame(3, Buffer.from('b'), true));
    await new Promise((r) => setImmediate(r));
    open();
    gate = Promise.resolve();
    assert.deepEqual(await c.received(3), { text: 'ABbye', end: 'fin' });
    c.socket.destroy();
  });

  it('refuses a second stream of one type for a request, a stream without a port, and a lone stream after the timeout', async () => {
    const c = await Client.open(httpPort);
    await c.syn(1, { streamtype: 'error', port: String(podPort), requestid: 'x' });
    await c.syn(3, { streamtype: 'error', port: String(podPort), requestid: 'x' });
    await c.syn(5, { streamtype: 'data' });
    assert.deepEqual(await c.until('the reset of stream 3', (f) => f.type === 'rst_stream' && f.streamId === 3), { type: 'rst_stream', streamId: 3, status: RstStatus.Cancel });
    assert.deepEqual(await c.until('the reset of stream 5', (f) => f.type === 'rst_stream' && f.streamId === 5), { type: 'rst_stream', streamId: 5, status: RstStatus.Cancel });
    const err = await c.received(1);
    assert.equal(err.end, 'fin');
    assert.match(err.text, /^error processing stream for request x: error stream already assigned/);
    assert.match(err.text, /timed out waiting for the data stream of request x$/);
    c.socket.destroy();
  });

  it('a client reset of the data stream closes the Pod connection; the connection itself goes on', async () => {
    const c = await Client.open(httpPort);
    await c.pair(1, podPort, '0');
    c.socket.write(dataFrame(3, Buffer.from('x')));
    await c.until('the echo', (f) => f.type === 'data' && f.streamId === 3 && f.data.length > 0);
    c.socket.write(rstStreamFrame(3, RstStatus.Cancel));
    assert.equal((await c.received(1)).end, 'fin');
    await c.pair(5, podPort, '1');
    c.socket.write(dataFrame(7, Buffer.from('again'), true));
    assert.deepEqual(await c.received(7), { text: 'AGAINbye', end: 'fin' });
    c.socket.destroy();
  });

  /** a v4 channel-protocol client: messages by channel, in arrival order */
  const channelClient = async (query: string, protocol: string): Promise<{ ws: WebSocket; got: { ch: number; data: Buffer }[]; until: (pred: () => boolean) => Promise<void> }> => {
    const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/api/v1/namespaces/default/pods/web/portforward?${query}`, [protocol]);
    const got: { ch: number; data: Buffer }[] = [];
    const waiters: (() => void)[] = [];
    ws.on('message', (raw: Buffer, isBinary) => {
      if (protocol.includes('base64')) {
        assert.equal(isBinary, false);
        const text = raw.toString('latin1');
        got.push({ ch: text.charCodeAt(0) - 48, data: Buffer.from(text.slice(1), 'base64') });
      } else got.push({ ch: raw[0] ?? -1, data: raw.subarray(1) });
      for (const w of waiters.splice(0)) w();
    });
    ws.on('close', () => {
      for (const w of waiters.splice(0)) w();
    });
    await new Promise((r) => ws.once('open', r));
    assert.equal(ws.protocol, protocol);
    const until = async (pred: () => boolean): Promise<void> => {
      while (!pred()) {
        if (ws.readyState === WebSocket.CLOSED) throw new Error('the WebSocket closed first');
        await new Promise<void>((r) => waiters.push(r));
      }
    };
    return { ws, got, until };
  };
  const le = (port: number): Buffer => Buffer.of(port & 0xff, port >> 8);

  it('the v4 channel protocol: the port on every channel first, then data on 2i and errors on 2i+1', async () => {
    const c = await channelClient(`ports=${podPort},1`, 'v4.channel.k8s.io');
    await c.until(() => c.got.some((m) => m.ch === 3 && m.data.length > 2));
    assert.deepEqual(c.got.slice(0, 4).map((m) => [m.ch, m.data]), [[0, le(podPort)], [1, le(podPort)], [2, le(1)], [3, le(1)]]);
    assert.equal(c.got.find((m) => m.ch === 3 && m.data.length > 2)?.data.toString(), 'error forwarding port 1 to pod web, uid u1: connect ECONNREFUSED 127.0.0.1:1');
    // 4 MiB up and back, more than either side buffers
    const size = 4 * 1024 * 1024;
    for (let at = 0; at < size; at += 64 * 1024) c.ws.send(Buffer.concat([Buffer.of(0), Buffer.alloc(64 * 1024, 'a')]));
    c.ws.send(Buffer.of(9, 1, 2)); // a channel nobody has: ignored
    c.ws.send(Buffer.of(1, 1, 2)); // the error channel is the server's to write: ignored
    const back = (): number => c.got.filter((m) => m.ch === 0).reduce((n, m) => n + m.data.length, 0) - 2;
    await c.until(() => back() >= size);
    assert.equal(back(), size);
    assert.ok(c.got.filter((m) => m.ch === 0).slice(1).every((m) => m.data.every((b) => b === 0x41)));
    c.ws.close();
  });

  it('the base64 twin of the channel protocol', async () => {
    const c = await channelClient(`ports=${podPort}`, 'v4.base64.channel.k8s.io');
    c.ws.send('0' + Buffer.from('base64 works').toString('base64'));
    await c.until(() => c.got.some((m) => m.ch === 0 && m.data.toString() === 'BASE64 WORKS'));
    assert.deepEqual(c.got[0], { ch: 0, data: le(podPort) });
    c.ws.close();
  });

  const upgradeStatus = (headers: Record<string, string>, path = '/api/v1/namespaces/default/pods/web/portforward'): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ port: httpPort, host: '127.0.0.1', path, method: headers.upgrade === 'websocket' ? 'GET' : 'POST', headers: { connection: 'Upgrade', ...headers } });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('upgrade', () => reject(new Error('the server switched protocols')));
      req.on('error', reject);
      req.end();
    });

  it('refuses handshakes as the kubelet does: no protocol version, an unknown one, no ports for the channel protocol', async () => {
    const none = await upgradeStatus({ upgrade: 'SPDY/3.1' });
    assert.equal(none.status, 400);
    assert.match(none.body, /unable to upgrade: header X-Stream-Protocol-Version does not exist/);
    const other = await upgradeStatus({ upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v9.example' });
    assert.equal(other.status, 403);
    assert.equal(other.headers['x-accepted-stream-protocol-versions'], 'portforward.k8s.io');
    const key = { upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' };
    const noPorts = await upgradeStatus({ ...key, 'sec-websocket-protocol': 'v4.channel.k8s.io' });
    assert.equal(noPorts.status, 400);
    assert.equal(JSON.parse(noPorts.body).message, 'query parameter "ports" is required');
    const badPort = await upgradeStatus({ ...key, 'sec-websocket-protocol': 'v4.channel.k8s.io' }, '/api/v1/namespaces/default/pods/web/portforward?ports=0');
    assert.equal(JSON.parse(badPort.body).message, 'port "0" must be > 0');
    const unknown = await upgradeStatus({ ...key, 'sec-websocket-protocol': 'v5.channel.k8s.io' });
    assert.equal(unknown.status, 400);
    assert.match(JSON.parse(unknown.body).message, /none of the requested WebSocket protocols \(v5.channel.k8s.io\) is supported/);
  });
});
