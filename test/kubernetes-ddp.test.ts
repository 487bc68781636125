// Two `skiff node` agents on one machine as two nodes of a real cluster the harness starts on
// loopback, with `skiff up --kubeconfig` as the control plane's Skiff: each Node gets a Pod range of
// its own from the controller-manager (so no two Pods share an address), a Pod on one agent reaches
// an HTTP server in a Pod on the other by its Service's name, and a PyTorchJob of a Master and two
// Workers spread over both agents trains with DDP (gloo, torch on the CPU) to the same weights on
// every rank. Skipped, saying why, where scripts/kubernetes.sh has not built the control plane.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { StoredObject } from '../src/api/meta.js';
import { parseIpv4Cidr } from '../src/substrate/local/network.js';
import { KubeCluster, kubeClusterSkipReason } from '../src/testing/kube-cluster.js';
import { kubectlBin, repoRoot } from './harness.js';
import { eventually, removeDataDir, skiffDaemon, stopDaemon } from './kube-daemons.js';

const skip = kubeClusterSkipReason() ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`)
  ?? (existsSync(join(repoRoot, '.venv', 'bin', 'python')) ? undefined : 'no .venv with torch (scripts/setup.sh)');
const run = promisify(execFile);

type Condition = { type: string; status: string; reason?: string; message?: string };

const inRange = (ip: string, cidr: string): boolean => {
  const { base, bits } = parseIpv4Cidr(cidr);
  const n = ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  return n >= base && n < base + 2 ** (32 - bits);
};

describe('skiff node: Pods on two agents reach each other, and DDP trains across them', { skip }, () => {
  let cluster: KubeCluster;
  let up: ReturnType<typeof skiffDaemon> | undefined;
  const agents: ReturnType<typeof skiffDaemon>[] = [];
  const dirs: string[] = [];
  const nodes = ['agent-a', 'agent-b'];
  const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 60_000 })).stdout;
  const getJson = async <T = StoredObject>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
  const apply = (obj: object): Promise<void> => new Promise((resolve, reject) => {
    const p = spawn(kubectlBin, ['--kubeconfig', cluster.kubeconfig, 'apply', '-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kubectl apply: ${err}`))));
    p.stdin.end(JSON.stringify(obj));
  });
  const podOutput = (): string => agents.map((a, i) => `--- ${nodes[i]}\n${a.output().slice(-3000)}`).join('\n');

  before(async () => {
    cluster = await KubeCluster.start();
    const upDir = mkdtempSync(join(tmpdir(), 'skiff-kube-ddp-up-'));
    dirs.push(upDir);
    up = skiffDaemon(['up', '--port', '0', '--data-dir', upDir, '--kubeconfig', cluster.kubeconfig], /ready at http/);
    for (const [i, name] of nodes.entries()) {
      const dir = mkdtempSync(join(tmpdir(), `skiff-kube-ddp-${name}-`));
      dirs.push(dir);
      // two node addresses on this machine (all of 127/8 is local; on one machine Pods reach
      // `skiff up` at 127.0.0.2): two kubelet APIs, two hostIPs
      agents.push(skiffDaemon(['node', '--kubeconfig', cluster.kubeconfig, '--name', name, '--data-dir', dir, '--node-ip', `127.0.0.${i + 3}`, '--client-ca-file', cluster.caFile], new RegExp(`Node ${name} is ready`)));
    }
    await Promise.all([up.ready, ...agents.map((a) => a.ready)]);
  }, { timeout: 240_000 });

  after(async () => {
    for (const a of agents) await stopDaemon(a);
    await stopDaemon(up);
    await cluster?.stop();
    for (const d of dirs) removeDataDir(d);
  });

  it('gives each Node its own loopback Pod range', { timeout: 30_000 }, async () => {
    const cidrs = await Promise.all(nodes.map(async (n) => (await getJson('node', n)).spec?.podCIDR as string));
    for (const c of cidrs) assert.match(c ?? '', /^127\.\d+\.\d+\.0\/24$/);
    assert.notEqual(cidrs[0], cidrs[1]);
    for (const [i, n] of nodes.entries()) assert.equal((await getJson('node', n)).status?.addresses?.[0]?.address, `127.0.0.${i + 3}`);
  });

  it('a Pod on one agent reaches an HTTP server in a Pod on the other by its Service\'s name', { timeout: 180_000 }, async () => {
    const [a, b] = nodes as [string, string];
    await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 8080, targetPort: 8080 }] } });
    const server = [
      'import http.server, socket',
      'class H(http.server.BaseHTTPRequestHandler):',
      '    def do_GET(self):',
      '        body = ("hello from " + socket.gethostname()).encode()',
      '        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)',
      'print("serving", flush=True)',
      'http.server.HTTPServer(("", 8080), H).serve_forever()',
    ].join('\n');
    await apply({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { nodeSelector: { 'kubernetes.io/hostname': b }, containers: [{ name: 'web', image: 'python:3', command: ['python3', '-c', server], ports: [{ containerPort: 8080 }] }] },
    });
    const client = [
      'import time, urllib.request',
      'for name in ("web", "web.default.svc.cluster.local"):',
      '    for i in range(120):',
      '        try:',
      '            print(name, urllib.request.urlopen(f"http://{name}:8080/", timeout=5).read().decode(), flush=True); break',
      '        except Exception as e:',
      '            last = e; time.sleep(0.5)',
      '    else:',
      '        raise SystemExit(f"{name}: {last}")',
    ].join('\n');
    await apply({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-client', namespace: 'default' },
      spec: { restartPolicy: 'Never', nodeSelector: { 'kubernetes.io/hostname': a }, containers: [{ name: 'client', image: 'python:3', command: ['python3', '-c', client] }] },
    });
    const done = await eventually('the client Pod to finish', async () => {
      const p = await getJson('pod', 'web-client');
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    }, 150_000);
    const logs = await kubectl('logs', 'web-client');
    assert.equal(done.status?.phase, 'Succeeded', `${logs}\n${podOutput()}`);
    assert.match(logs, /^web hello from web$/m);
    assert.match(logs, /^web\.default\.svc\.cluster\.local hello from web$/m);
    const web = await getJson('pod', 'web');
    assert.equal(web.spec?.nodeName, b);
    assert.equal(done.spec?.nodeName, a);
    // each Pod's address is from its own Node's range
    for (const p of [web, done]) assert.ok(inRange(p.status?.podIP ?? '', (await getJson('node', p.spec?.nodeName ?? '')).spec?.podCIDR as string), `${p.metadata.name}: ${p.status?.podIP}`);
    assert.equal(web.status?.hostIP, '127.0.0.4');
    await kubectl('delete', 'pod', 'web', '--wait=false');
  });

  it('a PyTorchJob of a Master and two Workers on both agents trains with DDP to the same weights on every rank', { timeout: 420_000 }, async (t) => {
    const job = 'ddp-two';
    const selector = { matchLabels: { 'training.kubeflow.org/job-name': job } };
    const template = {
      spec: {
        // one Pod on one agent, two on the other: the scheduler spreads them over the nodes
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector }],
        containers: [{
          name: 'pytorch', image: 'pytorch/pytorch:1.13.1-cpu', command: ['python3', '$(SKIFF_HOME)/examples/training/ddp_digits.py'],
          env: [{ name: 'EPOCHS', value: '3' }, { name: 'OMP_NUM_THREADS', value: '1' }],
        }],
      },
    };
    await apply({
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: job, namespace: 'default' },
      spec: { pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: 'OnFailure', template }, Worker: { replicas: 2, restartPolicy: 'OnFailure', template } } },
    });
    const pods = async (): Promise<StoredObject[]> => (await getJson<{ items: StoredObject[] }>('pods', '-l', `training.kubeflow.org/job-name=${job}`)).items;
    const logsOf = async (pod: string): Promise<string> => kubectl('logs', pod).catch((e: Error) => `(no logs: ${e.message})`);
    const state = await eventually('the PyTorchJob to finish', async () => {
      const j = await getJson('pytorchjob', job);
      const c = (j.status?.conditions as Condition[] | undefined)?.find((x) => (x.type === 'Succeeded' || x.type === 'Failed') && x.status === 'True');
      return c?.type;
    }, 360_000).catch((e: Error) => `${e.message}`);
    const all = await pods();
    // where the time went, for a run that is slow: each Pod's node, scheduling, start, end and restarts
    const at = (ts: unknown): string => (typeof ts === 'string' ? `${((Date.parse(ts) - Date.parse(String(all[0]?.metadata.creationTimestamp))) / 1000).toFixed(0)}s` : '-');
    for (const p of all) {
      const st = p.status as { conditions?: { type: string; lastTransitionTime?: string }[]; containerStatuses?: { restartCount: number; state?: { terminated?: { startedAt?: string; finishedAt?: string; exitCode?: number } } }[] } | undefined;
      const c = st?.containerStatuses?.[0];
      t.diagnostic(`${p.metadata.name} on ${p.spec?.nodeName}: made ${at(p.metadata.creationTimestamp)}, scheduled ${at(st?.conditions?.find((x) => x.type === 'PodScheduled')?.lastTransitionTime)}, started ${at(c?.state?.terminated?.startedAt)}, ended ${at(c?.state?.terminated?.finishedAt)} (exit ${c?.state?.terminated?.exitCode ?? '-'}), restarts ${c?.restartCount ?? '-'}`);
    }
    const logs = new Map(await Promise.all(all.map(async (p) => [p.metadata.name, await logsOf(p.metadata.name)] as const)));
    const detail = (): string => `${all.map((p) => `--- ${p.metadata.name} on ${p.spec?.nodeName} (${p.status?.phase}, ${p.status?.podIP})\n${logs.get(p.metadata.name)}`).join('\n')}\n${podOutput()}`;
    assert.equal(state, 'Succeeded', detail());
    assert.deepEqual(all.map((p) => p.metadata.name).sort(), [`${job}-master-0`, `${job}-worker-0`, `${job}-worker-1`]);
    // the Pods ran on both agents
    assert.deepEqual(new Set(all.map((p) => p.spec?.nodeName)), new Set(nodes), detail());
    // every rank joined the master by its Service's name, in a world of three
    const ranks = new Map<number, string>();
    for (const [name, log] of logs) {
      const joined = /^rank (\d)\/3 joined via ddp-two-master-0:\d+$/m.exec(log);
      assert.ok(joined, `${name} did not join:\n${detail()}`);
      const weights = /^rank (\d): .*weights ([0-9a-f]{16})$/m.exec(log);
      assert.ok(weights, `${name} did not finish:\n${detail()}`);
      assert.equal(weights[1], joined[1]);
      ranks.set(Number(weights[1]), weights[2] as string);
    }
    assert.deepEqual([...ranks.keys()].sort(), [0, 1, 2]);
    assert.equal(new Set(ranks.values()).size, 1, `the ranks ended with different weights: ${JSON.stringify([...ranks])}`);
    const master = logs.get(`${job}-master-0`) ?? '';
    assert.match(master, /weights identical on all 3 ranks: True/);
    const losses = [...master.matchAll(/^epoch \d+ loss ([\d.]+)$/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 3, master);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0), `the loss did not fall: ${losses.join(' ')}`);
  });
});
