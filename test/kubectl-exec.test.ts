// The subresources kubectl uses, with the real clients: kubectl exec (v5.channel.k8s.io over
// WebSocket, with and without a terminal), kubectl attach, kubectl logs -f, the Python client's
// stream() (v4.channel.k8s.io), pods/eviction, a PyTorchJob's /scale; and a broken or dropped stream
// ending only its own command.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { slaveOf } from '../src/substrate/local/tty.js';
import { TestServer, kubectlBin, podManifest, processesWith, runProgram } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';
// Pods share the host's /tmp: a file there tells a test's container to stop
const stopFile = (what: string): string => `/tmp/skiff-test-stop-${what}-${process.pid}`;

/** kubectl with its output readable while it runs */
function streaming(s: TestServer, args: string[]): { out: () => string; err: () => string; done: Promise<number> } {
  const p = spawn(kubectlBin, args, { env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (err += d));
  return { out: () => out, err: () => err, done: new Promise((resolve) => p.on('exit', (code) => resolve(code ?? -1))) };
}

/** a WebSocket to pods/exec of `pod`, open, with what arrives per channel */
async function openExec(s: TestServer, pod: string, command: string[], protocol = 'v5.channel.k8s.io'): Promise<{ ws: WebSocket; channels: Map<number, Buffer> }> {
  const q = new URLSearchParams();
  for (const c of command) q.append('command', c);
  q.set('stdin', 'true');
  q.set('stdout', 'true');
  q.set('stderr', 'true');
  const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}${pods}/${pod}/exec?${q}`, [protocol]);
  const channels = new Map<number, Buffer>();
  ws.on('message', (m: Buffer) => channels.set(m[0] ?? 0, Buffer.concat([channels.get(m[0] ?? 0) ?? Buffer.alloc(0), m.subarray(1)])));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, channels };
}

describe('kubectl exec, attach and logs -f', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
    await s.create(pods, podManifest('shell', ['sleep', '3600']));
    await running('shell');
  });
  after(async () => {
    await s?.cleanup();
    for (const f of ['ticker', 'writer']) rmSync(stopFile(f), { force: true });
  });

  const running = (name: string) => s.until(`${name} running`, async () => {
    const p = await s.get(`${pods}/${name}`);
    return p.status?.phase === 'Running' ? p : undefined;
  });

  it('runs a command: stdout and stderr apart, and kubectl exits with its code', async () => {
    const r = await s.kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /^err\n/);
    assert.match(r.stderr, /command terminated with exit code 3/);
    const ok = await s.kubectl(['exec', 'shell', '--', 'true']);
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('passes piped stdin with -i and ends the command at its end (the v5 close signal)', async () => {
    const input = 'first line\nsecond line\n'.repeat(2000);
    const r = await s.kubectl(['exec', '-i', 'shell', '--', 'cat'], input);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, input);
  });

  it('gives -it a terminal of the size kubectl sends, running an interactive shell', async () => {
    // kubectl wants a terminal of its own for -t: script gives it one, of a known size
    const r = await runProgram('script', ['--quiet', '--return', '--command', `stty rows 33 cols 101; ${kubectlBin} exec -it shell -- sh`, '/dev/null'],
      { KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, 'tty; stty size; echo marker-$((6*7)); exit 4\n');
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stdout, /\/dev\/pts\/\d+/);
    assert.match(r.stdout, /33 101/);
    assert.match(r.stdout, /marker-42/);
  });

  it('resizes the terminal when kubectl\'s does', async () => {
    const p = spawn('script', ['--quiet', '--return', '--command', `stty rows 33 cols 101; ${kubectlBin} exec -it shell -- sh -c 'while read x; do stty size; done'`, '/dev/null'],
      { env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number>((resolve) => p.on('exit', (code) => resolve(code ?? -1)));
    const sizeShown = (size: string) => s.until(`size ${size}`, async () => {
      p.stdin.write('\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      return out.includes(`${size}\r\n`);
    });
    await sizeShown('33 101');
    // kubectl's own terminal changes size: it gets SIGWINCH and sends the new size
    const outer = slaveOf(p.pid ?? 0) ?? assert.fail('no terminal for kubectl');
    const stty = await runProgram('stty', ['-F', outer, 'rows', '50', 'cols', '70']);
    assert.equal(stty.code, 0, stty.stderr);
    await sizeShown('50 70');
    p.stdin.write('\x04'); // ^D: the remote terminal's end of input ends the loop
    assert.equal(await exited, 0, out);
  });

  it('attaches to the running container: its output from then on, on the streams it was written to', async () => {
    await s.create(pods, podManifest('ticker', ['sh', '-c', `i=0; while [ ! -e ${stopFile('ticker')} ]; do i=$((i+1)); echo tick-$i; echo tock-$i >&2; sleep 0.2; done; echo bye`]));
    await running('ticker');
    await s.until('a few ticks logged', async () => (await s.kubectl(['logs', 'ticker'])).stdout.includes('tick-3\n'));
    const a = streaming(s, ['attach', 'ticker']);
    await s.until('attached output', async () => /tick-\d+\n[^]*tick-\d+\n/.test(a.out()) && /tock-\d+/.test(a.err()));
    const stop = await s.kubectl(['exec', 'ticker', '--', 'touch', stopFile('ticker')]);
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(await a.done, 0, a.err());
    assert.match(a.out(), /bye\n$/);
    assert.doesNotMatch(a.out(), /tock/);
    assert.doesNotMatch(a.err(), /tick/);
    // only what came after attaching: the first ticks were printed before
    assert.doesNotMatch(a.out(), /^tick-1\n/m);
  });

  it('attaches to a container\'s stdin (stdin: true, stdinOnce) and terminal (tty: true)', async () => {
    const pod = (name: string, command: string[], io: Record<string, boolean>) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command, ...io }] },
    });
    await s.create(pods, pod('reader', ['sh', '-c', 'while read l; do echo "got $l"; [ "$l" = quit ] && exit 0; done'], { stdin: true }));
    await s.create(pods, pod('once', ['sh', '-c', 'cat; echo eof-seen'], { stdin: true, stdinOnce: true }));
    await s.create(pods, pod('term', ['sh'], { stdin: true, tty: true }));
    for (const n of ['reader', 'once', 'term']) await running(n);
    // stdin stays open across sessions: the first one's end is not the container's
    const first = spawn(kubectlBin, ['attach', '-i', 'reader'], { env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, stdio: ['pipe', 'pipe', 'pipe'] });
    let firstOut = '';
    first.stdout.on('data', (d) => (firstOut += d));
    const firstDone = new Promise((resolve) => first.on('exit', resolve));
    first.stdin.write('one\n');
    await s.until('the first session\'s line read', async () => firstOut.includes('got one\n'));
    first.kill('SIGKILL');
    await firstDone;
    const second = await s.kubectl(['attach', '-i', 'reader'], 'two\nquit\n');
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /got two\ngot quit\n/);
    assert.match((await s.kubectl(['logs', 'reader'])).stdout, /^got one\ngot two\ngot quit\n$/);
    // stdinOnce: the first session's end is the program's end of input
    const once = await s.kubectl(['attach', '-i', 'once'], 'hello\n');
    assert.equal(once.code, 0, once.stderr);
    assert.equal(once.stdout, 'hello\neof-seen\n');
    // a terminal, sized as kubectl's
    const t = await runProgram('script', ['--quiet', '--return', '--command', `stty rows 21 cols 77; ${kubectlBin} attach -it term`, '/dev/null'],
      { KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, 'tty; stty size; echo marker-$((6*7)); exit 3\n');
    assert.equal(t.code, 0, t.stdout + t.stderr);
    assert.match(t.stdout, /\/dev\/pts\/\d+/);
    assert.match(t.stdout, /21 77/);
    assert.match(t.stdout, /marker-42/);
    await s.until('term exited 3', async () => (await s.get(`${pods}/term`)).status?.containerStatuses?.[0]?.state?.terminated?.exitCode === 3);
  });

  it('follows logs with -f as lines are written, with --timestamps and --tail, until the container ends', async () => {
    await s.create(pods, podManifest('writer', ['sh', '-c', `echo early-1; echo early-2; i=0; while [ ! -e ${stopFile('writer')} ]; do i=$((i+1)); echo late-$i; sleep 0.2; done; echo last`]));
    await running('writer');
    await s.until('early lines', async () => (await s.kubectl(['logs', 'writer'])).stdout.includes('late-1'));
    const f = streaming(s, ['logs', '-f', 'writer', '--tail=1', '--timestamps']);
    const seen = await s.until('new lines', async () => {
      const m = [...f.out().matchAll(/late-(\d+)/g)].map((x) => Number(x[1]));
      return m.length >= 3 ? m : undefined;
    });
    assert.ok(seen.every((n, i) => i === 0 || n === (seen[i - 1] ?? 0) + 1), `lines in order: ${seen.join(',')}`);
    assert.doesNotMatch(f.out(), /early/);
    assert.match(f.out(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z late-\d+$/m);
    await s.kubectl(['exec', 'writer', '--', 'touch', stopFile('writer')]);
    assert.equal(await f.done, 0, f.err());
    assert.match(f.out(), /Z last\n$/);
  });

  it('reads a restarted container\'s logs: --previous and -c', async () => {
    await s.create(pods, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'restarter' },
      spec: { restartPolicy: 'Always', containers: [
        { name: 'flaky', image: 'python', command: ['sh', '-c', 'echo run-$(cat /proc/sys/kernel/random/uuid); exit 1'] },
        { name: 'steady', image: 'python', command: ['sh', '-c', 'echo steady; sleep 3600'] },
      ] },
    });
    await s.until('a restart', async () => {
      const p = await s.get(`${pods}/restarter`);
      return (p.status?.containerStatuses ?? []).some((c: any) => c.name === 'flaky' && c.restartCount >= 1);
    });
    const prev = await s.kubectl(['logs', 'restarter', '-c', 'flaky', '--previous']);
    assert.equal(prev.code, 0, prev.stderr);
    assert.match(prev.stdout, /^run-[0-9a-f-]+\n$/);
    const steady = await s.kubectl(['logs', 'restarter', '-c', 'steady', '--since=1h']);
    assert.equal(steady.stdout, 'steady\n');
  });

  it('works with the Python client\'s stream() (v4.channel.k8s.io): stdin, both streams and the exit code', async () => {
    const r = await s.python(`
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config()
api = client.CoreV1Api()
out = stream(api.connect_get_namespaced_pod_exec, 'shell', 'default', command=['sh', '-c', 'echo py-out'], stderr=True, stdin=False, stdout=True, tty=False)
print(repr(out))
resp = stream(api.connect_get_namespaced_pod_exec, 'shell', 'default', command=['sh', '-c', 'read x; echo got-$x; echo to-err >&2; exit 7'],
              stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
resp.write_stdin('abc\\n')
resp.run_forever()
print(repr(resp.read_stdout()), repr(resp.read_stderr()), resp.returncode)
`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "'py-out\\n'\n'got-abc\\n' 'to-err\\n' 7\n");
  });

  it('speaks the base64 and the unversioned protocols as the kubelet does', async () => {
    const q = 'command=sh&command=-c&command=echo%20hi%3B%20exit%202&stdout=true&stderr=true';
    const collect = (protocols: string[]) => new Promise<{ messages: (string | Buffer)[]; code: number; protocol: string }>((resolve, reject) => {
      const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}${pods}/shell/exec?${q}`, protocols);
      const messages: (string | Buffer)[] = [];
      ws.on('message', (m: Buffer, binary: boolean) => messages.push(binary ? m : m.toString()));
      ws.on('close', (code) => resolve({ messages, code, protocol: ws.protocol }));
      ws.on('error', reject);
    });
    const b64 = await collect(['portforward.k8s.io', 'v4.base64.channel.k8s.io']);
    assert.equal(b64.protocol, 'v4.base64.channel.k8s.io');
    assert.equal(b64.code, 1000);
    assert.deepEqual(b64.messages.slice(0, 2), ['1', `1${Buffer.from('hi\n').toString('base64')}`]);
    const last = String(b64.messages[2]);
    assert.equal(last[0], '3');
    const status = JSON.parse(Buffer.from(last.slice(1), 'base64').toString());
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.deepEqual(status.details.causes, [{ reason: 'ExitCode', message: '2' }]);
    // before v4 the error channel carries the failure's text only
    const v1 = await collect(['channel.k8s.io']);
    assert.deepEqual(v1.messages.map((m) => Buffer.from(m).toString('latin1')), ['\x01', '\x01hi\n', "\x03command terminated with non-zero exit code: command 'sh -c echo hi; exit 2' exited with 2"]);
  });

  it('refuses what it cannot do with a Status kubectl prints', async () => {
    const missing = await s.kubectl(['exec', 'nosuchpod', '--', 'true']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /pods "nosuchpod" not found/);
    await s.create(pods, podManifest('done', ['true']));
    await s.until('done finished', async () => (await s.get(`${pods}/done`)).status?.phase === 'Succeeded');
    const finished = await s.kubectl(['exec', 'done', '--', 'true']);
    assert.notEqual(finished.code, 0);
    assert.match(finished.stderr, /completed pod/);
    // an unknown subprotocol: the handshake is refused
    const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}${pods}/shell/exec?command=true&stdout=true`, ['v9.channel.k8s.io']);
    const status = await new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    assert.equal(status, 403);
  });

  it('a malformed frame or a dropped connection kills only that command', async () => {
    const marker = `sleep 4${Date.now() % 100000}.5`;
    const other = await openExec(s, 'shell', ['cat']);
    // 1. a dropped connection
    const dropped = await openExec(s, 'shell', ['sh', '-c', `exec ${marker}`]);
    await s.until('the command running', async () => processesWith(marker).length > 0);
    dropped.ws.terminate();
    await s.until('the dropped command gone', async () => processesWith(marker).length === 0);
    // 2. a frame no WebSocket allows (reserved opcode 0x3), on a raw connection
    const url = new URL(s.url);
    const sock = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    const path = `${pods}/shell/exec?command=sh&command=-c&command=${encodeURIComponent(`exec ${marker}`)}&stdout=true&stdin=true`;
    sock.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`);
    let head = '';
    await new Promise<void>((resolve) => sock.on('data', (d) => { head += d.toString('latin1'); if (head.includes('\r\n\r\n')) resolve(); }));
    assert.match(head, /^HTTP\/1\.1 101/);
    await s.until('the second command running', async () => processesWith(marker).length > 0);
    sock.write(Buffer.from([0x83, 0x80, 1, 2, 3, 4]));
    await s.until('the malformed stream\'s command gone', async () => processesWith(marker).length === 0);
    sock.destroy();
    // 3. a handshake the WebSocket layer refuses (an unknown version), after the command started
    const refusedSock = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => refusedSock.once('connect', () => resolve()));
    refusedSock.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`);
    let refusedHead = '';
    await new Promise<void>((resolve) => refusedSock.on('data', (d) => { refusedHead += d.toString('latin1'); if (refusedHead.includes('\r\n\r\n')) resolve(); }));
    assert.match(refusedHead, /^HTTP\/1\.1 4\d\d/);
    await s.until('no command left by the refused handshake', async () => processesWith(marker).length === 0);
    refusedSock.destroy();
    // 4. a v5 close signal of the wrong length
    const bad = await openExec(s, 'shell', ['sh', '-c', `exec ${marker}`]);
    await s.until('the third command running', async () => processesWith(marker).length > 0);
    bad.ws.send(Buffer.from([255, 0, 0]));
    await s.until('the third command gone', async () => processesWith(marker).length === 0);
    // the other session went on all along
    other.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('still here\n')]));
    await s.until('echo from the other session', async () => other.channels.get(1)?.toString() === 'still here\n');
    other.ws.send(Buffer.from([255, 0]));
    const code = await new Promise<number>((resolve) => other.ws.on('close', (c) => resolve(c)));
    assert.equal(code, 1000);
    assert.deepEqual(JSON.parse(other.channels.get(3)?.toString() ?? '{}'), { metadata: {}, status: 'Success' });
    // and the server still serves new ones
    const again = await s.kubectl(['exec', 'shell', '--', 'echo', 'fine']);
    assert.equal(again.stdout, 'fine\n');
  });

  it('evicts a Pod (pods/eviction) and lists the subresources in discovery', async () => {
    const v1 = await s.get('/api/v1');
    const names = v1.resources.map((r: { name: string }) => r.name);
    for (const n of ['pods/exec', 'pods/attach', 'pods/eviction', 'pods/log']) assert.ok(names.includes(n), n);
    await s.create(pods, podManifest('evictee', ['sleep', '3600']));
    await running('evictee');
    const r = await s.python(`
from kubernetes import client, config
config.load_kube_config()
api = client.CoreV1Api()
body = client.V1Eviction(metadata=client.V1ObjectMeta(name='evictee', namespace='default'), delete_options=client.V1DeleteOptions(grace_period_seconds=0))
api.create_namespaced_pod_eviction('evictee', 'default', body, dry_run='All')
pod = api.read_namespaced_pod('evictee', 'default')
print('dry run', pod.metadata.deletion_timestamp, [c.type for c in pod.status.conditions if c.type == 'DisruptionTarget'])
api.create_namespaced_pod_eviction('evictee', 'default', body)
print('evicted')
for name, target in (('evictee', 'other'), ('gone', 'gone')):
    try:
        api.create_namespaced_pod_eviction(target, 'default', client.V1Eviction(metadata=client.V1ObjectMeta(name=name)))
    except client.ApiException as e:
        print(e.status)
`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'dry run None []\nevicted\n400\n404\n');
    await s.until('evictee deleted', async () => (await s.req('GET', `${pods}/evictee`)).status === 404);
  });

  it('scales a PyTorchJob through /scale (kubectl scale), refusing a negative count and a stale resourceVersion', async () => {
    const jobs = '/apis/kubeflow.org/v1/namespaces/default/pytorchjobs';
    await s.create(jobs, {
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'elastic' },
      spec: { pytorchReplicaSpecs: { Worker: { replicas: 1, template: { spec: { containers: [{ name: 'pytorch', image: 'python', command: ['sleep', '3600'] }] } } } } },
    });
    const scaled = await s.kubectl(['scale', 'pytorchjob/elastic', '--replicas=3']);
    assert.equal(scaled.code, 0, scaled.stderr);
    assert.equal((await s.get(`${jobs}/elastic`)).spec.pytorchReplicaSpecs.Worker.replicas, 3);
    const scale = await s.get(`${jobs}/elastic/scale`);
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.spec.replicas, 3);
    const guarded = await s.kubectl(['scale', 'pytorchjob/elastic', '--current-replicas=5', '--replicas=4']);
    assert.notEqual(guarded.code, 0);
    assert.match(guarded.stderr, /Expected replicas to be 5, was 3/);
    const negative = await s.req('PATCH', `${jobs}/elastic/scale`, { spec: { replicas: -1 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(negative.status, 422);
    assert.equal(negative.body.message, 'Scale.autoscaling "elastic" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    const stale = await s.req('PUT', `${jobs}/elastic/scale`, { ...scale, metadata: { ...scale.metadata, resourceVersion: '1' }, spec: { replicas: 2 } });
    assert.equal(stale.status, 409, stale.text);
    const v1 = await s.get('/apis/kubeflow.org/v1');
    assert.deepEqual(v1.resources.filter((r: { name: string }) => r.name.endsWith('/scale')).map((r: { name: string }) => r.name), ['pytorchjobs/scale']);
    // kinds without one upstream have none here
    assert.equal((await s.req('GET', '/apis/batch/v1/namespaces/default/jobs/x/scale')).status, 404);
  });
});
