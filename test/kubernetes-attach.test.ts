// `kubectl attach` and `kubectl port-forward` against a real control plane, reaching Pods that `skiff
// node` runs: straight at the cluster's API server (which calls the agent's kubelet API over SPDY, or
// passes a WebSocket on), and at Skiff's own API in cluster mode (which goes through the cluster's API
// server with its own credentials). Bad input gets what a kubelet answers. Skipped, saying why, where
// scripts/kubernetes.sh has not built the control plane.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { StoredObject } from '../src/api/meta.js';
import { KubeCluster, kubeClusterSkipReason } from '../src/testing/kube-cluster.js';
import { kubectlBin } from './harness.js';
import { eventually, removeDataDir, skiffDaemon, stopDaemon } from './kube-daemons.js';

const skip = kubeClusterSkipReason() ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`);
const run = promisify(execFile);
// Pods share the host's /tmp: a file there tells a test's container to stop
const stopFile = (what: string): string => `/tmp/skiff-attach-test-stop-${what}-${process.pid}`;

// GET /wait answers once GET /release has come in (two connections open at once through one
// forward), anything else answers its own path
const podServer = `
import http.server, threading
released = threading.Event()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == '/wait':
            released.wait(120)
        if self.path == '/release':
            released.set()
        body = ('hello from the pod: ' + self.path).encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(('', 8080), H)
print('serving', flush=True)
srv.serve_forever()
`;

interface Proc { proc: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> }

function start(args: string[], stdin: 'ignore' | 'pipe' = 'ignore'): Proc {
  const proc = spawn(kubectlBin, args, { stdio: [stdin, 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, out: () => out, err: () => err, exited };
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** GET over a connection of its own */
function fetchOwn(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, agent: false, timeout: 90_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
  });
}

/** `kubectl port-forward pod/P LOCAL:REMOTE` in the background, once it says it forwards */
async function portForward(kubectlArgs: string[], pod: string, remote: number): Promise<Proc & { port: number }> {
  const port = await freePort();
  const p = start([...kubectlArgs, 'port-forward', `pod/${pod}`, `${port}:${remote}`]);
  await eventually(`kubectl port-forward ${port}:${remote} forwarding`, async () => {
    if (p.proc.exitCode !== null) throw new Error(`kubectl exited with ${p.proc.exitCode}: ${p.err()}`);
    return /Forwarding from 127\.0\.0\.1:\d+ -> \d+/.test(p.out());
  }, 60_000);
  return { ...p, port };
}

async function stop(p: Proc): Promise<void> {
  if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGTERM');
  await p.exited;
}

describe('kubectl attach and port-forward to Pods on a node agent', { skip }, () => {
  let cluster: KubeCluster;
  let up: ReturnType<typeof skiffDaemon> | undefined;
  let agent: ReturnType<typeof skiffDaemon> | undefined;
  let skiffUrl = '';
  const dirs: string[] = [];
  const node = 'agent-attach';
  const procs: Proc[] = [];
  const direct = (): string[] => ['--kubeconfig', cluster.kubeconfig];
  const viaSkiff = (): string[] => ['--server', skiffUrl];
  const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, [...direct(), ...args], { timeout: 60_000 })).stdout;
  const getJson = async (...args: string[]): Promise<StoredObject> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as StoredObject;
  const running = (pod: string): Promise<boolean> => eventually(`${pod} Running`, async () => (await getJson('pod', pod)).status?.phase === 'Running', 120_000);
  const apply = async (manifest: object): Promise<void> => {
    const p = start([...direct(), 'apply', '-f', '-'], 'pipe');
    p.proc.stdin?.end(JSON.stringify(manifest));
    assert.equal(await p.exited, 0, p.err());
  };
  const pod = (name: string, command: string[], io: Record<string, boolean> = {}): object => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { restartPolicy: 'Never', nodeName: node, containers: [{ name: 'main', image: 'python:3', command, ...io }] },
  });

  before(async () => {
    cluster = await KubeCluster.start();
    const upDir = mkdtempSync(join(tmpdir(), 'skiff-kube-attach-up-'));
    const agentDir = mkdtempSync(join(tmpdir(), 'skiff-kube-attach-'));
    dirs.push(upDir, agentDir);
    up = skiffDaemon(['up', '--port', '0', '--data-dir', upDir, '--kubeconfig', cluster.kubeconfig], /ready at (http:\/\/\S+)/);
    agent = skiffDaemon(['node', '--kubeconfig', cluster.kubeconfig, '--name', node, '--data-dir', agentDir, '--client-ca-file', cluster.caFile], new RegExp(`Node ${node} is ready`));
    [skiffUrl] = await Promise.all([up.ready, agent.ready]);
    await apply(pod('web', ['python3', '-c', podServer]));
    await apply(pod('ticker', ['sh', '-c', `i=0; while [ ! -e ${stopFile('ticker')} ]; do i=$((i+1)); echo tick-$i; echo tock-$i >&2; sleep 0.2; done; echo bye`]));
    await apply(pod('reader', ['sh', '-c', 'while read l; do echo "got $l"; [ "$l" = quit ] && exit 0; done'], { stdin: true }));
    await apply(pod('quiet', ['sh', '-c', `i=0; while [ ! -e ${stopFile('quiet')} ]; do i=$((i+1)); echo line-$i; sleep 0.2; done; echo done`]));
    for (const p of ['web', 'ticker', 'reader', 'quiet']) await running(p);
    await eventually('the web Pod serving', async () => (await kubectl('logs', 'web')).includes('serving'), 60_000);
  }, { timeout: 300_000 });

  after(async () => {
    for (const p of procs) await stop(p);
    await stopDaemon(agent);
    await stopDaemon(up);
    await cluster?.stop();
    for (const d of dirs) removeDataDir(d);
    for (const f of ['ticker', 'quiet']) rmSync(stopFile(f), { force: true });
  });

  it('kubectl attach shows a running container\'s output from then on, on its streams, until it exits', { timeout: 120_000 }, async () => {
    await eventually('a few ticks logged', async () => (await kubectl('logs', 'ticker')).includes('tick-3\n'), 60_000);
    const a = start([...direct(), 'attach', 'ticker']);
    procs.push(a);
    await eventually('attached output', async () => /tick-\d+\n[^]*tick-\d+\n/.test(a.out()) && /tock-\d+/.test(a.err()), 60_000);
    await kubectl('exec', 'ticker', '--', 'touch', stopFile('ticker'));
    assert.equal(await a.exited, 0, a.err());
    assert.match(a.out(), /bye\n$/);
    assert.doesNotMatch(a.out(), /tock/);
    assert.doesNotMatch(a.err(), /tick/);
    // only what came after attaching: the first ticks were printed before
    assert.doesNotMatch(a.out(), /^tick-1\n/m);
  });

  it('kubectl attach -i passes stdin to a container that has one', { timeout: 120_000 }, async () => {
    const a = start([...direct(), 'attach', '-i', 'reader'], 'pipe');
    procs.push(a);
    a.proc.stdin?.write('one\n');
    await eventually('the first line read', async () => a.out().includes('got one\n'), 60_000);
    a.proc.stdin?.write('quit\n');
    assert.equal(await a.exited, 0, a.err());
    assert.match(a.out(), /got one\ngot quit\n/);
    assert.match(await kubectl('logs', 'reader'), /^got one\ngot quit\n$/);
  });

  it('kubectl port-forward reaches a Pod\'s server, two connections at once', { timeout: 120_000 }, async () => {
    const f = await portForward(direct(), 'web', 8080);
    procs.push(f);
    const first = await fetchOwn(f.port, '/hello');
    assert.deepEqual(first, { status: 200, body: 'hello from the pod: /hello' });
    // /wait answers only once /release came in on another connection
    const waiting = fetchOwn(f.port, '/wait');
    await new Promise((r) => setTimeout(r, 500));
    const release = await fetchOwn(f.port, '/release');
    assert.equal(release.body, 'hello from the pod: /release');
    assert.deepEqual(await waiting, { status: 200, body: 'hello from the pod: /wait' });
    await stop(f);
  });

  it('kubectl port-forward to a port nothing listens on gives kubectl\'s error', { timeout: 120_000 }, async () => {
    const f = await portForward(direct(), 'web', 9999);
    procs.push(f);
    await assert.rejects(fetchOwn(f.port, '/'));
    // kubectl reports the kubelet's message and gives up on the Pod
    assert.equal(await f.exited, 1);
    assert.match(f.err(), new RegExp(`"An error occurred forwarding" err="error forwarding port 9999 to pod web, uid [0-9a-f-]+: failed to connect to port 9999 of pod default/web at [0-9.]+: connect ECONNREFUSED [0-9.:]+" localPort=${f.port} remotePort=9999`));
    assert.match(f.err(), /lost connection to pod/);
  });

  it('kubectl attach and port-forward pointed at Skiff go through to the cluster', { timeout: 180_000 }, async () => {
    const a = start([...viaSkiff(), 'attach', 'quiet']);
    procs.push(a);
    await eventually('attached output through Skiff', async () => /line-\d+\n[^]*line-\d+\n/.test(a.out()), 60_000);
    await kubectl('exec', 'quiet', '--', 'touch', stopFile('quiet'));
    assert.equal(await a.exited, 0, a.err());
    assert.match(a.out(), /done\n$/);
    const f = await portForward(viaSkiff(), 'web', 8080);
    procs.push(f);
    assert.deepEqual(await fetchOwn(f.port, '/via-skiff'), { status: 200, body: 'hello from the pod: /via-skiff' });
    const waiting = fetchOwn(f.port, '/wait');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await fetchOwn(f.port, '/release')).status, 200);
    assert.equal((await waiting).status, 200);
    await stop(f);
    // nothing listens: the kubelet's message comes back through Skiff
    const bad = await portForward(viaSkiff(), 'web', 9999);
    procs.push(bad);
    await assert.rejects(fetchOwn(bad.port, '/'));
    assert.equal(await bad.exited, 1);
    assert.match(bad.err(), /error forwarding port 9999 to pod web, uid [0-9a-f-]+: /);
  });

  it('kubectl attach -i to a container without stdin shows its output and drops the input, as with containerd', { timeout: 120_000 }, async () => {
    const a = start([...direct(), 'attach', '-i', 'web'], 'pipe');
    procs.push(a);
    a.proc.stdin?.write('ignored\n');
    // the server prints nothing more: the attachment stays up until kubectl goes
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(a.proc.exitCode, null, a.err());
    assert.match(a.err(), /If you don't see a command prompt, try pressing enter/);
    await stop(a);
    // the container did not get the input: it still serves
    const f = await portForward(direct(), 'web', 8080);
    procs.push(f);
    assert.equal((await fetchOwn(f.port, '/still')).status, 200);
    await stop(f);
  });

  it('refuses a container that is not there, as kubectl and the kubelet do', { timeout: 60_000 }, async () => {
    // kubectl checks the name itself, as it does against any cluster (the agent's own answer is below)
    await assert.rejects(kubectl('attach', 'web', '-c', 'nope'), (e: { stderr?: string }) => /cannot attach to the container: container nope is not valid for pod web out of: main/.test(e.stderr ?? ''));
    const atSkiff = start([...viaSkiff(), 'attach', 'web', '-c', 'nope']);
    assert.equal(await atSkiff.exited, 1);
    assert.match(atSkiff.err(), /cannot attach to the container: container nope is not valid for pod web out of: main/);
  });

  describe('the agent\'s kubelet API, asked directly', () => {
    /** an upgrade request to the agent's kubelet API with the API server's client certificate */
    const ask = async (path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> => {
      const n = await getJson('node', node);
      const port = n.status?.daemonEndpoints?.kubeletEndpoint?.Port as number;
      const pki = join(cluster.dir, 'pki');
      return new Promise((resolve, reject) => {
        const req = request({
          host: '127.0.0.1', port, path, method: 'POST', rejectUnauthorized: false,
          cert: readFileSync(join(pki, 'kubelet-client.crt')), key: readFileSync(join(pki, 'kubelet-client.key')),
          headers: { connection: 'Upgrade', ...headers },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
        });
        req.on('upgrade', (res, socket) => {
          socket.destroy();
          resolve({ status: res.statusCode ?? 0, body: '' });
        });
        req.on('error', reject);
        req.end();
      });
    };
    const spdy = { upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' };
    const forward = { upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'portforward.k8s.io' };

    it('answers a Pod it does not run as a kubelet does: 404 "pod does not exist"', { timeout: 60_000 }, async () => {
      await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'elsewhere' }, spec: { nodeName: 'some-other-node', containers: [{ name: 'main', image: 'python:3' }] } });
      for (const path of ['/attach/default/elsewhere/main?output=1', '/attach/default/no-such-pod/main?output=1', '/exec/default/elsewhere/main?output=1&command=true']) {
        assert.deepEqual(await ask(path, spdy), { status: 404, body: 'pod does not exist' }, path);
      }
      assert.deepEqual(await ask('/portForward/default/elsewhere', forward), { status: 404, body: 'pod does not exist' });
      await kubectl('delete', 'pod', 'elsewhere', '--wait=false');
    });

    it('answers a container the Pod does not have with the kubelet\'s 500', { timeout: 60_000 }, async () => {
      assert.deepEqual(await ask('/attach/default/reader/nope?output=1', spdy), { status: 500, body: 'container nope not found in pod reader_default' });
    });

    it('answers a uid that is not the Pod\'s with 404, and upgrades the Pod\'s own', { timeout: 60_000 }, async () => {
      const uid = (await getJson('pod', 'web')).metadata.uid;
      assert.deepEqual(await ask('/portForward/default/web/00000000-0000-0000-0000-000000000000', forward), { status: 404, body: 'pod not found' });
      assert.equal((await ask(`/portForward/default/web/${uid}`, forward)).status, 101);
      assert.equal((await ask('/attach/default/web/main?output=1&input=1', spdy)).status, 101);
    });
  });
});
