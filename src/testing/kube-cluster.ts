// A real Kubernetes control plane for tests: etcd, kube-apiserver and (by default) kube-controller-
// manager and kube-scheduler, on free loopback ports, with a PKI and an admin token made for the run.
// The binaries come from scripts/kubernetes.sh (${SKIFF_K8S_HOME:-~/.cache/skiff-k8s}/bin); tests
// that need them skip with `kubeClusterSkipReason()` when they are not built.
//
// Every process is stopped by its pid: by stop(), and on the test process's exit if a test failed
// before it could call stop().
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KubeHttp } from '../store/kube/http.js';
import { loadKubeconfig } from '../store/kube/kubeconfig.js';

export const kubeHome = (): string => process.env.SKIFF_K8S_HOME ?? join(homedir(), '.cache', 'skiff-k8s');
export const kubeBin = (name: string): string => join(kubeHome(), 'bin', name);

const controlPlane = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

/** why a test needing kwok's simulated Nodes cannot run here, or undefined when it can */
export function kwokSkipReason(): string | undefined {
  const why = kubeClusterSkipReason();
  if (why) return why;
  if (existsSync(kubeBin('kwok')) && existsSync(join(kubeHome(), 'kwok-stage', 'VERSION'))) return undefined;
  return `kwok is not built (no kwok or kwok-stage in ${kubeHome()}): run scripts/kubernetes.sh (it needs Go >= 1.26)`;
}

/** the annotation kwok's controller is told to manage Nodes by, and the taint that keeps real Pods off them */
export const kwokNodeAnnotation = 'kwok.x-k8s.io/node';
export const kwokTaint = { key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' };

/** a simulated Node: kwok keeps it Ready and "runs" the Pods bound to it through its Stages */
export function kwokNode(name: string, capacity: { cpu: string; memory: string; pods: string } = { cpu: '32', memory: '256Gi', pods: '110' }): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, annotations: { [kwokNodeAnnotation]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' }, labels: { type: 'kwok', 'kubernetes.io/hostname': name, 'kubernetes.io/role': 'agent' } },
    spec: { taints: [kwokTaint] },
    status: { allocatable: capacity, capacity, nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'kwok', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeProxyVersion: '', bootID: '', machineID: '', systemUUID: '' }, phase: 'Running' },
  };
}

/**
 * kwok's Stages as kwokctl configures them by default, from the stage files scripts/kubernetes.sh
 * copied out of kwok's module: Nodes initialised at once and their Leases renewed; Pods Running and
 * Ready as soon as they are bound, a Job's Pods Succeeded right after, deleted Pods removed.
 */
export const kwokStages = ['node/fast/node-initialize.yaml', 'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml', 'pod/fast/pod-ready.yaml', 'pod/fast/pod-complete.yaml', 'pod/fast/pod-delete.yaml'];

/** creates count simulated Nodes named prefix-0.. (concurrency requests at a time) and waits until kwok has them all Ready */
export async function kwokNodes(http: KubeHttp, prefix: string, count: number, opts: { concurrency?: number; timeoutMs?: number } = {}): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await http.request('POST', '/api/v1/nodes', { body: kwokNode(`${prefix}-${i}`) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 20, count) }, worker));
  const deadline = Date.now() + (opts.timeoutMs ?? 300_000);
  for (;;) {
    const list = await http.request<{ items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] }>('GET', `/api/v1/nodes?labelSelector=type%3Dkwok`);
    const ready = list.items.filter((n) => n.metadata.name.startsWith(`${prefix}-`) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    if (ready >= count) return;
    if (Date.now() > deadline) throw new Error(`${ready} of ${count} kwok Nodes Ready after ${(opts.timeoutMs ?? 300_000) / 1000}s`);
    await sleep(500);
  }
}

/** why a test needing the control plane cannot run here, or undefined when it can */
export function kubeClusterSkipReason(): string | undefined {
  const missing = controlPlane.filter((b) => !existsSync(kubeBin(b)));
  if (!missing.length) return undefined;
  return `the Kubernetes control plane is not built (${missing.join(', ')} missing in ${join(kubeHome(), 'bin')}): run SKIFF_KUBERNETES=1 scripts/setup.sh or scripts/kubernetes.sh`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface KubeClusterOptions {
  /** start kube-controller-manager and kube-scheduler too (default true) */
  controllers?: boolean;
  /** ms to wait for each component (default 60 s: a busy two-core machine is slow) */
  timeoutMs?: number;
  /** kube-controller-manager's --node-monitor-grace-period: how long a Node's Lease may go unrenewed
   *  before it is NotReady (default: the controller-manager's own, 50 s) */
  nodeMonitorGracePeriod?: string;
  /** the controller-manager's --cluster-cidr, from which its node IPAM gives each Node a /24
   *  spec.podCIDR (default 127.64.0.0/10: loopback, so node agents on this machine reach each
   *  other's Pods, and clear of 127.1.0.0/16, the Pods of `skiff up` on one machine) */
  clusterCidr?: string;
  /** start kwok's controller too, for the Nodes annotated kwok.x-k8s.io/node=fake (kwokNode) */
  kwok?: boolean;
  /** the controller-manager's and scheduler's client rate limits (--kube-api-qps and -burst; their
   *  defaults, 20 and 50 queries a second, make thousands of Pods a matter of their pacing, not of work) */
  apiQps?: number;
}

const running = new Set<ChildProcess>();
let exitHook = false;
function killOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const p of running) if (p.pid && p.exitCode === null) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A CA, the API server's serving certificate, the service-account key pair and an admin token. */
function makePki(dir: string): { token: string; nobodyToken: string } {
  const ssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '30', '-subj', '/CN=skiff-test-ca');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'apiserver.crt', '-days', '30', '-extfile', 'ext.cnf');
  // what kube-apiserver shows the kubelets it calls (logs, exec): node agents trust this CA's clients
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'kubelet-client.key', '-out', 'kubelet-client.csr', '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client');
  writeFileSync(join(dir, 'client.cnf'), 'extendedKeyUsage=clientAuth\n');
  ssl('x509', '-req', '-in', 'kubelet-client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'kubelet-client.crt', '-days', '30', '-extfile', 'client.cnf');
  ssl('genrsa', '-out', 'sa.key', '2048');
  ssl('rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
  const token = randomBytes(16).toString('hex');
  // and a user RBAC grants nothing, for the refusals
  const nobodyToken = randomBytes(16).toString('hex');
  writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin-uid,system:masters\n${nobodyToken},nobody,nobody-uid\n`);
  return { token, nobodyToken };
}

export function writeKubeconfigFile(file: string, server: string, caFile: string, token: string): void {
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: test', '  cluster:', `    server: ${server}`, `    certificate-authority: ${caFile}`,
    'users:', '- name: admin', '  user:', `    token: ${token}`,
    'contexts:', '- name: test', '  context: {cluster: test, user: admin}',
    'current-context: test', '',
  ].join('\n'));
}

export class KubeCluster {
  private readonly procs: { name: string; proc: ChildProcess; logged?: Promise<void> }[] = [];

  private constructor(
    /** the run's directory: PKI, etcd's data, each component's log */
    readonly dir: string,
    readonly server: string,
    /** the admin kubeconfig (a token in system:masters) */
    readonly kubeconfig: string,
    readonly token: string,
    /** a kubeconfig for a user no role is bound to */
    readonly nobodyKubeconfig: string,
  ) {}

  static async start(opts: KubeClusterOptions = {}): Promise<KubeCluster> {
    const why = kubeClusterSkipReason();
    if (why) throw new Error(why);
    killOnExit();
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-'));
    const pki = join(dir, 'pki');
    mkdirSync(pki);
    const { token, nobodyToken } = makePki(pki);
    const apiPort = await freePort();
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfigFile(kubeconfig, server, join(pki, 'ca.crt'), token);
    const nobody = join(dir, 'kubeconfig-nobody');
    writeKubeconfigFile(nobody, server, join(pki, 'ca.crt'), nobodyToken);
    const c = new KubeCluster(dir, server, kubeconfig, token, nobody);
    try {
      // a free port may be taken by another process before etcd binds it (test files run side by
      // side): etcd that exits at once is started again on other ports
      let etcdUrl = '';
      for (let attempt = 1; ; attempt++) {
        const [etcdPort, peerPort] = [await freePort(), await freePort()];
        etcdUrl = `http://127.0.0.1:${etcdPort}`;
        const url = etcdUrl;
        c.spawn('etcd', [
          '--name', 'test', '--data-dir', join(dir, 'etcd'), '--listen-client-urls', url, '--advertise-client-urls', url,
          '--listen-peer-urls', `http://127.0.0.1:${peerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`,
          '--initial-cluster', `test=http://127.0.0.1:${peerPort}`, '--unsafe-no-fsync', '--log-level', 'warn',
        ]);
        try {
          await c.waitFor('etcd', timeoutMs, async () => (await fetch(`${url}/health`)).ok);
          break;
        } catch (e) {
          const failed = c.procs.findIndex((p) => p.name === 'etcd');
          if (attempt >= 3 || failed < 0 || c.procs[failed]?.proc.exitCode === null) throw e;
          c.procs.splice(failed, 1);
          rmSync(join(dir, 'etcd'), { recursive: true, force: true });
        }
      }
      c.spawn('kube-apiserver', [
        `--etcd-servers=${etcdUrl}`, `--secure-port=${apiPort}`, '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1',
        `--tls-cert-file=${pki}/apiserver.crt`, `--tls-private-key-file=${pki}/apiserver.key`, `--client-ca-file=${pki}/ca.crt`,
        `--token-auth-file=${pki}/tokens.csv`, '--authorization-mode=RBAC',
        `--service-account-key-file=${pki}/sa.pub`, `--service-account-signing-key-file=${pki}/sa.key`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        '--service-cluster-ip-range=10.0.0.0/24', '--allow-privileged=true', '--profiling=false',
        // without a real node address the endpoint reconciler logs an error every ten seconds
        '--endpoint-reconciler-type=none',
        // node agents (skiff node) listen at their InternalIP; a Hostname may not resolve to it
        '--kubelet-preferred-address-types=InternalIP,Hostname',
        `--kubelet-client-certificate=${pki}/kubelet-client.crt`, `--kubelet-client-key=${pki}/kubelet-client.key`,
        // webhooks named by a Service are reached at its endpoints (a Pod's address), not through a
        // cluster IP and DNS, which this machine has neither of
        '--enable-aggregator-routing=true',
      ]);
      const http = new KubeHttp(loadKubeconfig(kubeconfig));
      try {
        await c.waitFor('kube-apiserver', timeoutMs, async () => {
          await http.request('GET', '/readyz', { timeoutMs: 5000 });
          return true;
        });
        if (opts.controllers !== false) {
          c.spawn('kube-controller-manager', [
            `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
            `--service-account-private-key-file=${pki}/sa.key`, `--root-ca-file=${pki}/ca.crt`, '--use-service-account-credentials=true',
            '--leader-elect=false', '--bind-address=127.0.0.1', '--secure-port=0',
            `--cluster-signing-cert-file=${pki}/ca.crt`, `--cluster-signing-key-file=${pki}/ca.key`,
            ...(opts.nodeMonitorGracePeriod ? [`--node-monitor-grace-period=${opts.nodeMonitorGracePeriod}`] : []),
            ...(opts.apiQps ? [`--kube-api-qps=${opts.apiQps}`, `--kube-api-burst=${opts.apiQps * 2}`, '--concurrent-job-syncs=20'] : []),
            // each Node a Pod range of its own: node agents hand out Pod addresses from it
            '--allocate-node-cidrs=true', `--cluster-cidr=${opts.clusterCidr ?? '127.64.0.0/10'}`, '--node-cidr-mask-size=24',
          ]);
          c.spawn('kube-scheduler', [
            `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
            '--leader-elect=false', '--bind-address=127.0.0.1', '--secure-port=0',
            ...(opts.apiQps ? [`--kube-api-qps=${opts.apiQps}`, `--kube-api-burst=${opts.apiQps * 2}`] : []),
          ]);
          // Pods cannot be created before the controller-manager made the namespace's service account
          await c.waitFor('kube-controller-manager', timeoutMs, async () => {
            await http.request('GET', '/api/v1/namespaces/default/serviceaccounts/default');
            return true;
          });
        }
      } finally {
        http.close();
      }
      if (opts.kwok) {
        const why = kwokSkipReason();
        if (why) throw new Error(why);
        const stages = join(kubeHome(), 'kwok-stage');
        // kwok plays four Pods' stages at a time by default: thousands of Pods queue behind them
        const config = join(dir, 'kwok.yaml');
        writeFileSync(config, [
          'apiVersion: config.kwok.x-k8s.io/v1alpha1', 'kind: KwokConfiguration', 'options:',
          // a configuration file's options are not defaulted one by one: kwok's other defaults, spelled out
          '  podPlayStageParallelism: 32', '  nodePlayStageParallelism: 4', '  nodeLeaseParallelism: 8',
          '  podsOnNodeSyncParallelism: 1', '  enablePodsOnNodeSyncListPager: true', '  nodeStatusUpdateFrequencyMilliseconds: 10000', '',
        ].join('\n'));
        c.spawn('kwok', [
          `--kubeconfig=${kubeconfig}`, `--config=${config}`, ...kwokStages.map((f) => `--config=${join(stages, f)}`),
          // at INFO it logs every Lease renewal and status patch: a thousand Nodes' worth of log lines
          '--v=WARN',
          // only the simulated Nodes: node agents (skiff node) are real kubelets of their own
          '--manage-all-nodes=false', `--manage-nodes-with-annotation-selector=${kwokNodeAnnotation}=fake`,
          '--manage-nodes-with-label-selector=', '--manage-single-node=',
          '--cidr=10.244.0.0/16', '--node-ip=10.1.0.1', '--node-lease-duration-seconds=40',
        ]);
        // it has no readiness endpoint of its own: its Nodes going Ready is the sign (kwokNodesReady)
        const since = Date.now();
        await c.waitFor('kwok', timeoutMs, async () => Date.now() - since > 500);
      }
      return c;
    } catch (e) {
      await c.stop();
      throw e;
    }
  }

  private spawn(name: string, args: string[]): void {
    const log = createWriteStream(join(this.dir, `${name}.log`), { flags: 'a' });
    const proc = spawn(kubeBin(name), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // the log is whole once the process's output has closed and the file is written
    const logged = new Promise<void>((resolve) => {
      proc.once('close', () => log.end(() => resolve()));
      proc.once('error', () => resolve());
    });
    proc.stdout?.pipe(log, { end: false });
    proc.stderr?.pipe(log, { end: false });
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    this.procs.push({ name, proc, logged });
  }

  /** the CA that signs the API server's certificate and its kubelet client certificate */
  get caFile(): string {
    return join(this.dir, 'pki', 'ca.crt');
  }

  /** the tail of a component's log, for a failure message */
  logTail(name: string, lines = 20): string {
    try {
      return readFileSync(join(this.dir, `${name}.log`), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  private async waitFor(name: string, timeoutMs: number, ready: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const proc = this.procs.find((p) => p.name === name)?.proc;
    let last = '';
    for (;;) {
      if (proc && proc.exitCode !== null) {
        await Promise.race([this.procs.find((p) => p.proc === proc)?.logged, sleep(2000)]);
        throw new Error(`${name} exited with ${proc.exitCode}:\n${this.logTail(name)}`);
      }
      try {
        if (await ready()) return;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`${name} not ready within ${timeoutMs / 1000}s (${last}):\n${this.logTail(name)}`);
      await sleep(100);
    }
  }

  /** Stops every component by its pid (the newest first) and removes the run's directory. */
  async stop(opts: { keepDir?: boolean } = {}): Promise<void> {
    for (const { proc } of [...this.procs].reverse()) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!killed) {
        proc.kill('SIGKILL');
        await exited;
      }
    }
    this.procs.length = 0;
    if (!opts.keepDir) rmSync(this.dir, { recursive: true, force: true });
  }
}
