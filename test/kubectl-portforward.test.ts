// `kubectl port-forward` and the Python client's `portforward` against `skiff up`, reaching a real
// server in a real Pod.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { TestServer, kubectlBin } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';

// GET / says hello, GET /big?n=N answers N patterned bytes, POST echoes its body; one thread per request
const podServer = `
import http.server, sys
PATTERN = bytes(range(251))
class H(http.server.BaseHTTPRequestHandler):
    def reply(self, body):
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path.startswith('/big?n='):
            n = int(self.path.split('=')[1])
            return self.reply((PATTERN * (n // 251 + 1))[:n])
        self.reply(b'hello from the pod')
    def do_POST(self):
        self.reply(self.rfile.read(int(self.headers['Content-Length'])))
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(('', 8000), H)
print('serving', flush=True)
srv.serve_forever()
`;

const pattern = (n: number): Buffer => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
};

interface Forward {
  proc: ChildProcess;
  port: number;
  out: () => string;
  exited: Promise<number | null>;
}

/** starts `kubectl port-forward` in the background and waits for its "Forwarding from" line */
function portForward(s: TestServer, args: string[], env: Record<string, string> = {}): Promise<Forward> {
  const proc = spawn(kubectlBin, ['port-forward', ...args], { env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ proc, port: Number(m[1]), out: () => out, exited });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`kubectl port-forward exited with ${code}:\n${out}`)));
  });
}

async function stop(f: Forward): Promise<void> {
  f.proc.kill('SIGTERM');
  await f.exited;
}

async function get(port: number, path: string): Promise<Buffer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

/** A WebSocket handshake by hand: the `ws` client, like the server, refuses a subprotocol with a '/'. */
function tunnel(base: string, path: string): Promise<{ socket: Socket; head: string }> {
  const u = new URL(base);
  const socket = connect(Number(u.port), u.hostname);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io\r\n\r\n`);
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (d: Buffer): void => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.off('data', onData);
        resolve({ socket, head: got.slice(0, end + 2) });
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** one masked binary WebSocket frame, as a client sends it */
function wsBinary(payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([Buffer.of(0x82, 0x80 | payload.length), mask, masked]);
}

describe('kubectl port-forward', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
    await s.create(pods, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' },
      spec: { containers: [{ name: 'main', image: 'python', command: ['python3', '-c', podServer], ports: [{ containerPort: 8000 }] }] },
    });
    await s.until('web serving', async () => (await s.req('GET', `${pods}/web/log`)).text.includes('serving'));
  });
  after(async () => {
    await s?.cleanup();
  });

  const exercise = async (port: number): Promise<void> => {
    assert.equal((await get(port, '/')).toString(), 'hello from the pod');
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => get(port, `/big?n=${1000 + i}`)));
    many.forEach((b, i) => assert.deepEqual(b, pattern(1000 + i)));
    const big = await get(port, `/big?n=${6 * 1024 * 1024 + 7}`);
    assert.equal(big.length, 6 * 1024 * 1024 + 7);
    assert.ok(big.equals(pattern(big.length)), 'the large body arrives intact');
    const upload = Buffer.from(pattern(3 * 1024 * 1024).map((x) => 255 - x));
    const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', body: upload });
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(upload), 'the uploaded body comes back intact');
  };

  it('forwards over a WebSocket tunnelling SPDY (kubectl\'s default): single, concurrent and large requests', async () => {
    const f = await portForward(s, ['pod/web', ':8000', '-v=4']);
    try {
      await exercise(f.port);
      assert.match(f.out(), /Negotiation complete" protocol="portforward.k8s.io"/);
      assert.doesNotMatch(f.out(), /fallback to secondary dialer/);
    } finally {
      await stop(f);
    }
  });

  it('forwards over plain SPDY when kubectl is told not to use WebSockets', async () => {
    const f = await portForward(s, ['pod/web', ':8000', '-v=4'], { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' });
    try {
      await exercise(f.port);
      assert.doesNotMatch(f.out(), /tunneling_dialer/);
    } finally {
      await stop(f);
    }
  });

  it('a port where nothing listens answers on the error stream, and kubectl prints it', async () => {
    const f = await portForward(s, ['pod/web', ':9999']);
    await assert.rejects(fetch(`http://127.0.0.1:${f.port}/`));
    // as on a cluster, kubectl gives up on the whole forward after an error
    await f.exited;
    assert.match(f.out(), /error forwarding port 9999 to pod web, uid [0-9a-f-]+: failed to connect to port 9999 of pod default\/web at 127\.1\.[0-9.]+: connect ECONNREFUSED/);
    // the server and other forwards are untouched
    const g = await portForward(s, ['pod/web', ':8000']);
    try {
      assert.equal((await get(g.port, '/')).toString(), 'hello from the pod');
    } finally {
      await stop(g);
    }
  });

  it('garbage in a SPDY tunnel, or a dropped connection, ends that connection only', async () => {
    const f = await portForward(s, ['pod/web', ':8000']);
    try {
      // a connection in flight when another client misbehaves
      const slow = connect(f.port, '127.0.0.1');
      await new Promise((r) => slow.once('connect', r));
      slow.write('GET /big?n=100 HTTP/1.0\r\n');
      // another client sends a SPDY/2 frame through the tunnel: its connection is closed
      const bad = await tunnel(s.url, `${pods}/web/portforward`);
      assert.match(bad.head, /^HTTP\/1\.1 101 /);
      assert.match(bad.head, /\r\nSec-WebSocket-Protocol: SPDY\/3\.1\+portforward\.k8s\.io\r\n/i);
      const closed = new Promise((r) => bad.socket.once('close', r));
      bad.socket.write(wsBinary(Buffer.from('80020001000000040000000000000000', 'hex')));
      await closed;
      // and one vanishes in the middle of a frame
      const dropped = await tunnel(s.url, `${pods}/web/portforward`);
      dropped.socket.write(wsBinary(Buffer.from('800300010000', 'hex')));
      dropped.socket.destroy();
      slow.end('\r\n');
      const chunks: Buffer[] = [];
      for await (const c of slow) chunks.push(c as Buffer);
      assert.match(Buffer.concat(chunks).toString('latin1'), /^HTTP\/1\.0 200 OK/);
      assert.deepEqual((await get(f.port, '/big?n=5000')), pattern(5000));
    } finally {
      await stop(f);
    }
  });

  it('is listed in discovery; answers a Pod that does not exist with 404, and a request that asks for no protocol with 400', async () => {
    const core = await s.get('/api/v1');
    assert.deepEqual(core.resources.find((r: { name: string }) => r.name === 'pods/portforward'), { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] });
    const r = await s.req('POST', `${pods}/web/portforward`);
    assert.equal(r.status, 400);
    assert.match(r.body.message, /unable to upgrade/);
    const missing = new WebSocket(`${s.url.replace('http', 'ws')}${pods}/nope/portforward?ports=80`, ['v4.channel.k8s.io']);
    const status = await new Promise<number | undefined>((resolve) => missing.once('unexpected-response', (_req, res) => resolve(res.statusCode)));
    assert.equal(status, 404);
    const k = await s.kubectl(['port-forward', 'pod/nope', '8000']);
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /pods "nope" not found/);
  });

  it('the Python client\'s portforward (v4.channel.k8s.io) reaches the Pod and reports a port with no listener', async () => {
    const r = await s.python(`
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config()
api = client.CoreV1Api()

def fetch(port, request):
    pf = portforward(api.connect_get_namespaced_pod_portforward, 'web', 'default', ports=str(port))
    sock = pf.socket(port)
    sock.setblocking(True)
    if request:
        sock.sendall(request)
    data = b''
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    sock.close()
    return data, pf.error(port)

data, err = fetch(8000, b'GET / HTTP/1.0\\r\\n\\r\\n')
assert err is None, err
assert data.endswith(b'hello from the pod'), data
n = 2 * 1024 * 1024
data, err = fetch(8000, b'GET /big?n=%d HTTP/1.0\\r\\n\\r\\n' % n)
body = data.split(b'\\r\\n\\r\\n', 1)[1]
assert body == (bytes(range(251)) * (n // 251 + 1))[:n], len(body)
data, err = fetch(9999, b'')
print('ERROR:', err)
`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /ERROR: error forwarding port 9999 to pod web, uid [0-9a-f-]+: failed to connect to port 9999 of pod default\/web/);
  });
});
