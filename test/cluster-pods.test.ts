// ClusterPods, the client Skiff in cluster mode reaches Pods through (pods/attach over
// v5.channel.k8s.io, pods/portforward over v4.channel.k8s.io with one WebSocket per connection),
// against a server that speaks the same API: `skiff up` on one machine, with real Pods. The same code
// against kube-apiserver and `skiff node` is tested in test/kubernetes-attach.test.ts, where the
// control plane is built.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { StoredObject } from '../src/api/meta.js';
import { ClusterPods } from '../src/server/kube/cluster-pods.js';
import { PortForwardFailure } from '../src/server/kube/portforward.js';
import { TestServer, podManifest } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';
const stopFile = `/tmp/skiff-cluster-pods-test-stop-${process.pid}`;

const podServer = `
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ('hello from the pod: ' + self.path).encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Connection', 'close')
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(('', 8000), H).serve_forever()
`;

/** what the connection says until it ends */
function readAll(sock: Duplex): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    sock.on('data', (d: Buffer) => (out += d.toString()));
    sock.once('end', () => resolve(out));
    sock.once('error', reject);
  });
}

describe('ClusterPods: attach and port-forward through an API server', () => {
  let s: TestServer;
  let cp: ClusterPods;
  const pod = async (name: string): Promise<StoredObject> => s.get(`${pods}/${name}`) as Promise<StoredObject>;
  const running = (name: string): Promise<unknown> => s.until(`${name} running`, async () => ((await pod(name)).status?.phase === 'Running' ? true : undefined));

  before(async () => {
    s = await TestServer.start();
    cp = new ClusterPods({ server: s.url, source: 'test' });
    await s.create(pods, podManifest('web', ['python3', '-c', podServer]));
    await s.create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'reader' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', stdin: true, command: ['sh', '-c', `while read l; do echo "got $l"; echo "err $l" >&2; [ "$l" = quit ] && exit 0; done`] }] } });
    await s.create(pods, podManifest('ticker', ['sh', '-c', `i=0; while [ ! -e ${stopFile} ]; do i=$((i+1)); echo tick-$i; sleep 0.2; done; echo bye`]));
    for (const n of ['web', 'reader', 'ticker']) await running(n);
  }, { timeout: 120_000 });

  after(async () => {
    cp?.close();
    await s?.cleanup();
    rmSync(stopFile, { force: true });
  });

  it('attaches: the output on its streams, stdin to a container that has one, the end when it exits', { timeout: 60_000 }, async () => {
    const session = await cp.attach(await pod('reader'), { container: 'main', stdin: true }, new AbortController().signal);
    assert.ok(session.stdin, 'the container has a stdin');
    session.stdin.write('one\nquit\n');
    const got: Record<string, string> = { stdout: '', stderr: '' };
    for await (const c of session.output) got[c.stream] += c.data.toString();
    assert.equal(got.stdout, 'got one\ngot quit\n');
    assert.equal(got.stderr, 'err one\nerr quit\n');
  });

  it('attaches without stdin to a container that has none, and detaches on abort', { timeout: 60_000 }, async () => {
    const abort = new AbortController();
    const session = await cp.attach(await pod('ticker'), { stdin: true }, abort.signal);
    assert.equal(session.stdin, undefined);
    let out = '';
    for await (const c of session.output) {
      out += c.data.toString();
      if (/tick-\d+\n[^]*tick-\d+\n/.test(out)) abort.abort();
    }
    assert.match(out, /tick-\d+\n/);
    // the container runs on
    assert.equal((await pod('ticker')).status?.phase, 'Running');
  });

  it('refuses a container the Pod does not have, naming it', async () => {
    await assert.rejects(cp.attach(await pod('ticker'), { container: 'nope', stdin: false }, new AbortController().signal), /container nope is not valid for pod ticker/);
  });

  it('forwards a connection to a Pod\'s port, and two at once', { timeout: 60_000 }, async () => {
    const web = await pod('web');
    const [a, b] = await Promise.all([cp.connect(web, 8000), cp.connect(web, 8000)]);
    const [ra, rb] = [readAll(a), readAll(b)];
    b.write('GET /second HTTP/1.1\r\nHost: x\r\n\r\n');
    a.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(await ra, /^HTTP\/1\.[01] 200 [^]*\r\n\r\nhello from the pod: \/first$/);
    assert.match(await rb, /^HTTP\/1\.[01] 200 [^]*\r\n\r\nhello from the pod: \/second$/);
  });

  it('fails a connection to a port nothing listens on with the server\'s message', { timeout: 60_000 }, async () => {
    // refused at once when the failure is known by the time the connection opens, else failed after
    const err = await cp.connect(await pod('web'), 9999).then((sock) => new Promise<Error>((resolve) => sock.once('error', resolve)), (e: Error) => e);
    assert.ok(err instanceof PortForwardFailure, String(err));
    assert.match(err.message, /^error forwarding port 9999 to pod web, uid [0-9a-f-]+: /);
  });
});
