// Isolation on one machine, checked from inside a tenant's Pod: with tenancy on, a Pod of team-a tries
// to read Skiff's store, keys and token file, another Pod's volume and another namespace's claim, to
// write outside its volumes, to reach team-b's Pods (a server and a notebook), the host's loopback
// and the host's other ports, and to signal team-b's processes. Each attempt must be refused by the
// kernel (own user, mount and PID namespaces, network namespace and nftables), while what the Pod may
// do still works: its own volume, its own namespace's Pods, the API, and a NetworkPolicy that lets
// team-a in. The probe is Python, which links libc; Skiff's preload library is not in the picture.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { TestServer, repoRoot } from './harness.js';

const notebooksPython = join(repoRoot, '.venv-notebooks', 'bin', 'python');
const skip = process.getuid?.() !== 0 ? 'isolating Pods needs a server running as root'
  : !bwrapAvailable() ? 'bubblewrap cannot run here'
  : !existsSync('/usr/sbin/nft') && !existsSync('/usr/bin/nft') ? 'nftables is not installed (scripts/setup.sh installs it)'
  : !existsSync(notebooksPython) ? 'the notebooks environment (.venv-notebooks) is not set up' : false;

// Every attempt prints one line of JSON: {"check": ..., "ok": true when it succeeded, "detail": ...}
const PROBE = String.raw`
import json, os, socket, sys, urllib.request, ssl
def report(check, fn):
    try:
        detail = fn()
        print(json.dumps({"check": check, "ok": True, "detail": str(detail)[:200]}), flush=True)
    except Exception as e:
        print(json.dumps({"check": check, "ok": False, "detail": type(e).__name__ + ": " + str(e)[:200]}), flush=True)
def read(p):
    with open(p, "rb") as f:
        return len(f.read())
def connect(host, port):
    s = socket.create_connection((host, int(port)), timeout=3)
    s.close()
    return "connected"
def http(url, headers={}):
    req = urllib.request.Request(url, headers=headers)
    return urllib.request.urlopen(req, timeout=3, context=ssl._create_unverified_context()).status
def listing(p):
    names = os.listdir(p)
    # what would be a leak: the store, the keys, or any Pod directory but this Pod's own
    leaked = [n for n in names if n in ("skiff.db", "pki", "volumes", "tokens.csv")]
    if leaked:
        return "sees " + ",".join(leaked)
    raise PermissionError("only mount points: " + ",".join(sorted(names)))
def write(p):
    with open(p, "w") as f:
        f.write("x")
    return "written"
def setuid_root():
    os.setuid(0)
    return "root"
def caps():
    eff = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
    if int(eff, 16) != 0:
        return "capabilities " + eff
    raise PermissionError("no capabilities")
def sees_pid(pid):
    if os.path.exists("/proc/%d" % pid) and "victim" in open("/proc/%d/environ" % pid, "rb").read().decode(errors="replace"):
        return "visible"
    raise ProcessLookupError("no such process here")
e = os.environ
checks = {
    "uid is not root": lambda: os.getuid() if os.getuid() != 0 else (_ for _ in ()).throw(PermissionError("uid 0")),
    "capabilities": caps,
    "setuid(0)": setuid_root,
    "no preload library": lambda: e.get("LD_PRELOAD") and (_ for _ in ()).throw(RuntimeError(e["LD_PRELOAD"])) or "none",
    "read the store": lambda: read(e["DATA_DIR"] + "/skiff.db"),
    "list the data dir": lambda: listing(e["DATA_DIR"]),
    "read Skiff's CA key": lambda: read(e["DATA_DIR"] + "/pki/ca.key"),
    "read the token file": lambda: read(e["TOKEN_FILE"]),
    "read another Pod's volume": lambda: read(e["VICTIM_VOLUME"]),
    "list another namespace's claim": lambda: os.listdir(e["VICTIM_CLAIM"]),
    "write /etc": lambda: write("/etc/skiff-probe"),
    "write /usr": lambda: write("/usr/skiff-probe"),
    "write /tmp (private)": lambda: write("/tmp/" + e["TMP_NAME"]),
    "write own volume": lambda: write("/scratch/mine"),
    "connect to team-b's Pod": lambda: connect(e["VICTIM_IP"], 8080),
    "connect to team-b's notebook": lambda: http("http://%s:8888%s/api/status" % (e["NB_IP"], e["NB_PREFIX"])),
    "connect to own namespace's Pod": lambda: connect(e["NEIGHBOUR_IP"], 8080),
    "connect to the host's loopback": lambda: connect("127.0.0.1", e["SERVER_PORT"]),
    "connect to another port of the host": lambda: connect(e["KUBERNETES_SERVICE_HOST"], e["HOST_PORT"]),
    "call the API in-cluster": lambda: http("https://%s:%s/version" % (e["KUBERNETES_SERVICE_HOST"], e["KUBERNETES_SERVICE_PORT"])),
    "see team-b's process": lambda: sees_pid(int(e["VICTIM_PID"])),
    "signal team-b's process": lambda: os.kill(int(e["VICTIM_PID"]), 9) or "signalled",
}
only = sys.argv[1:]
for name, fn in checks.items():
    if not only or name in only:
        report(name, fn)
`;

interface Outcome { check: string; ok: boolean; detail: string }

describe('isolation of Pods on one machine, from inside a tenant\'s Pod', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let kubeconfig = '';
  let hostListener: Server;
  let hostPort = 0;
  const kubectl = (args: string[], input?: string): ReturnType<TestServer['kubectl']> => s.kubectl(args, input, { KUBECONFIG: kubeconfig });
  const apply = async (obj: unknown): Promise<void> => {
    const r = await kubectl(['apply', '-f', '-'], YAML.stringify(obj));
    assert.equal(r.code, 0, r.stderr);
  };
  const pod = async (ns: string, name: string): Promise<any> => JSON.parse((await kubectl(['get', 'pod', name, '-n', ns, '-o', 'json'])).stdout || '{}');
  const running = (ns: string, name: string): Promise<any> => s.until(`${ns}/${name} running`, async () => {
    const p = await pod(ns, name);
    return p.status?.phase === 'Running' && p.status?.podIP ? p : undefined;
  }, 60_000);
  const env: Record<string, string> = {};

  /** runs the probe in a fresh Pod of `ns` and returns its outcomes by check */
  const probe = async (name: string, ns: string, only: string[] = []): Promise<Map<string, Outcome>> => {
    await apply({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
      spec: {
        restartPolicy: 'Never',
        containers: [{
          name: 'probe', image: 'python:3.11', command: ['python3', '-c', PROBE, ...only],
          env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
          volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
        }],
        volumes: [{ name: 'scratch', emptyDir: {} }],
      },
    });
    await s.until(`probe ${name} to finish`, async () => ['Succeeded', 'Failed'].includes((await pod(ns, name)).status?.phase), 90_000);
    const logs = (await kubectl(['logs', name, '-n', ns])).stdout;
    const out = new Map<string, Outcome>();
    for (const line of logs.split('\n')) {
      if (!line.startsWith('{')) continue;
      const o = JSON.parse(line) as Outcome;
      out.set(o.check, o);
    }
    assert.ok(out.size > 0, `probe ${name} printed nothing:\n${logs}\n${s.output.slice(-2000)}`);
    return out;
  };

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-isolation-'));
    writeFileSync(join(dataDir, 'tokens.csv'), 'admin-token,admin,1,"system:masters"\n');
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: 'tokens.csv' } });
    kubeconfig = join(s.dataDir, 'kubeconfig');
    // a host service on every address, which Pods must not reach
    hostListener = createServer((c) => c.end('host\n'));
    await new Promise<void>((resolve) => hostListener.listen(0, '0.0.0.0', () => resolve()));
    hostPort = (hostListener.address() as { port: number }).port;
    for (const ns of ['team-a', 'team-b']) await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'home-b', namespace: 'team-b' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    const server = (name: string, ns: string, extra: Record<string, unknown> = {}): unknown => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: name } },
      spec: {
        containers: [{
          name: 'c', image: 'python:3.11', command: ['sh', '-c', 'echo s3cret > /data/secret; echo mine > /home-b/file 2>/dev/null; exec python3 -m http.server 8080'],
          ports: [{ containerPort: 8080, name: 'http' }],
          volumeMounts: [{ name: 'data', mountPath: '/data' }, ...(ns === 'team-b' ? [{ name: 'home', mountPath: '/home-b' }] : [])],
        }],
        volumes: [{ name: 'data', emptyDir: {} }, ...(ns === 'team-b' ? [{ name: 'home', persistentVolumeClaim: { claimName: 'home-b' } }] : [])],
        ...extra,
      },
    });
    await apply(server('victim', 'team-b'));
    await apply(server('neighbour', 'team-a'));
    await apply({ apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'nb', namespace: 'team-b' }, spec: { template: { spec: { containers: [{ name: 'nb', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } } });
    const victim = await running('team-b', 'victim');
    const neighbour = await running('team-a', 'neighbour');
    const nb = await running('team-b', 'nb-0');
    // the victim's files and process, as the host sees them
    const victimDir = join(s.dataDir, 'pods', victim.metadata.uid);
    // its containers' run state is in the runtime directory, which the data directory links as `run`
    const meta = JSON.parse(readFileSync(join(s.dataDir, 'run', 'pods', victim.metadata.uid, 'containers', 'c', '0', 'meta.json'), 'utf8')) as { pid: number };
    Object.assign(env, {
      DATA_DIR: s.dataDir, TOKEN_FILE: join(s.dataDir, 'tokens.csv'),
      VICTIM_VOLUME: join(victimDir, 'volumes', 'data', 'secret'),
      VICTIM_CLAIM: join(s.dataDir, 'volumes', 'team-b', 'home-b'),
      VICTIM_IP: victim.status.podIP, NEIGHBOUR_IP: neighbour.status.podIP, NB_IP: nb.status.podIP, NB_PREFIX: '/notebook/team-b/nb',
      VICTIM_PID: String(meta.pid), SERVER_PORT: new URL(s.url).port, HOST_PORT: String(hostPort),
      TMP_NAME: `skiff-probe-${process.pid}`,
    });
    // the host itself reaches them all (the positive side of the network cells)
    assert.ok(existsSync(env.VICTIM_VOLUME as string), 'the victim wrote its secret');
  });
  after(async () => {
    hostListener?.close();
    await s?.cleanup();
  });

  it('refuses every attempt on Skiff\'s files, other Pods\' volumes, the network and other processes', async () => {
    const out = await probe('probe', 'team-a');
    const expectRefused = [
      'setuid(0)', 'read the store', 'list the data dir', 'read Skiff\'s CA key', 'read the token file', 'read another Pod\'s volume',
      'list another namespace\'s claim', 'write /etc', 'write /usr', 'connect to team-b\'s Pod', 'connect to team-b\'s notebook',
      'connect to the host\'s loopback', 'connect to another port of the host', 'see team-b\'s process', 'signal team-b\'s process',
    ];
    const expectAllowed = ['uid is not root', 'no preload library', 'write /tmp (private)', 'write own volume', 'connect to own namespace\'s Pod', 'call the API in-cluster'];
    const leaks = expectRefused.filter((c) => out.get(c)?.ok !== false);
    const broken = expectAllowed.filter((c) => out.get(c)?.ok !== true);
    assert.deepEqual({ leaks, broken }, { leaks: [], broken: [] }, JSON.stringify([...out.values()], null, 1));
    assert.equal(out.get('capabilities')?.ok, false, out.get('capabilities')?.detail);
    // the private /tmp is not the host's
    assert.equal(existsSync(join('/tmp', env.TMP_NAME as string)), false);
    // team-b's Pods and their processes are untouched
    assert.equal((await pod('team-b', 'victim')).status.phase, 'Running');
    const r = await fetch(`http://${env.VICTIM_IP}:8080/`);
    assert.equal(r.status, 200);
    assert.ok(existsSync(`/proc/${env.VICTIM_PID}`), 'the victim process still runs');
    console.log(`isolation cells from inside a tenant Pod: ${expectRefused.length} refused, ${expectAllowed.length + 1} allowed as they should be`);
  });

  it('lets a NetworkPolicy open team-b to team-a, and closes team-a to itself with a deny-all', async () => {
    await apply({
      apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'from-team-a', namespace: 'team-b' },
      spec: { podSelector: { matchLabels: { app: 'victim' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } }], ports: [{ port: 'http' }] }] },
    });
    await apply({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny-all', namespace: 'team-a' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } });
    const out = await s.until('the policies to be enforced', async () => {
      const o = await probe(`probe-${Date.now() % 100000}`, 'team-a', ['connect to team-b\'s Pod', 'connect to own namespace\'s Pod', 'connect to team-b\'s notebook']);
      return o.get('connect to team-b\'s Pod')?.ok === true && o.get('connect to own namespace\'s Pod')?.ok === false ? o : undefined;
    }, 60_000);
    // the notebook is not selected by the policy: still closed
    assert.equal(out.get('connect to team-b\'s notebook')?.ok, false);
  });

  it('refuses a Pod that asks to run as root, or mounts the data dir', async () => {
    await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'as-root', namespace: 'team-a' }, spec: { securityContext: { runAsUser: 0 }, containers: [{ name: 'c', image: 'python:3.11', command: ['id'] }] } });
    await apply({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'data-dir', namespace: 'team-a' },
      spec: { containers: [{ name: 'c', image: 'python:3.11', command: ['ls', '/x'], volumeMounts: [{ name: 'x', mountPath: '/x' }] }], volumes: [{ name: 'x', hostPath: { path: s.dataDir } }] },
    });
    const root = await s.until('as-root to be refused', async () => (await pod('team-a', 'as-root')).status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError' ? pod('team-a', 'as-root') : undefined, 30_000);
    assert.match(root.status.containerStatuses[0].state.waiting.message, /runAsUser 0/);
    const events = async (): Promise<string[]> => (JSON.parse((await kubectl(['get', 'events', '-n', 'team-a', '--field-selector', 'involvedObject.name=data-dir', '-o', 'json'])).stdout || '{}').items ?? []).map((e: any) => String(e.message));
    await s.until('the data dir mount to be refused', async () => (await events()).some((m) => /hostPath volume "x".*not allowed/.test(m)), 30_000);
    assert.notEqual((await pod('team-a', 'data-dir')).status?.phase, 'Running');
  });
});
