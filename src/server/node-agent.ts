// `skiff node`: this machine as a node of a Kubernetes cluster, in the spirit of virtual-kubelet. The
// agent registers a Node with the capacity the local substrate finds, keeps its Lease in
// kube-node-lease renewed and its status current, runs the Pods the cluster's scheduler binds to it
// with the local substrate's kubelet (the same code that runs Pods on one machine, here reading and
// writing through the cluster's API server), and serves the kubelet API's containerLogs to the API
// server, so that `kubectl logs` reaches the Pods it runs, and its exec, attach and portForward, so
// that `kubectl exec`, `kubectl attach` and `kubectl port-forward` do. For pipeline task Pods that
// carry KFP's launcher plan it is their launcher: their input artifacts downloaded from S3 before their
// containers start, their outputs uploaded after.
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { lookup } from 'node:dns/promises';
import { isIP, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import os from 'node:os';
import { join } from 'node:path';
import { ApiError, StatusReason, isNotFound } from '../api/errors.js';
import { Kinds, defaultRegistry } from '../api/index.js';
import type { Pod } from '../api/core-types.js';
import type { StoredObject } from '../api/meta.js';
import { Manager } from '../control/controller.js';
import { EventRecorder } from '../control/events.js';
import { nodeObject, type NodeCapacity } from '../scheduler/node.js';
import { Client } from '../store/client.js';
import { KubeHttp } from '../store/kube/http.js';
import { KubeconfigError, loadKubeconfig, type ClusterConnection } from '../store/kube/kubeconfig.js';
import { KubeStore } from '../store/kube/store.js';
import { LocalArtifactStore } from '../artifacts/local.js';
import { Environments } from '../substrate/local/environments.js';
import { artifactSecret, secretS3Store } from '../workloads/pipelines/artifact-roots.js';
import { PodLauncher, nodeLauncher } from '../workloads/pipelines/launcher.js';
import { LocalSubstrate } from '../substrate/local/index.js';
import { isLoopbackCidr, localRouteArgs, makeRangeLocal, parseIpv4Cidr, podNetwork } from '../substrate/local/network.js';
import type { IssuedToken } from '../substrate/local/projected-tokens.js';
import { every, type Timer } from '../util/timers.js';
import { KeyUsage, createCertificate, keyPairFromPem, newKeyPair, privateKeyPem, toPem } from '../util/x509.js';
import { compileConfig } from './config.js';
import { claimVolumeDir, startNodeVolumes } from './node-volumes.js';
import { serveKubeletExec } from './kube/kubelet-exec.js';
import { servePodLog } from './kube/pods.js';
import { servePortForward } from './kube/portforward.js';
import { rejectUpgrade, rejectUpgradeText } from './kube/upgrade.js';
import { defaultPath, repoRoot, skiffVersion } from './main.js';

export interface NodeAgentOptions {
  kubeconfig: string;
  nodeName: string;
  /** the agent's own state: Pods' run directories and logs, Python environments, its serving certificate */
  dataDir: string;
  /** Skiff's config file: its `environments:` (images), `node:` (capacity overrides), crash-loop back-off,
   *  `artifacts.s3` (the S3 server of pipeline task Pods' artifacts) */
  configFile?: string;
  /** the node's address: its InternalIP, the Pods' hostIP, where the kubelet API listens (default 127.0.0.1) */
  nodeIp?: string;
  /** the range this node's Pods take their addresses from when the Node has no spec.podCIDR (a
   *  controller-manager with --allocate-node-cidrs gives each Node one); set on the Node */
  podCidr?: string;
  /** how long to wait for the controller-manager to give a new Node its podCIDR (default 10 s) */
  podCidrWaitMs?: number;
  /** the kubelet API's port (default 0: any free port, reported in the Node's daemonEndpoints) */
  kubeletPort?: number;
  /** the CA whose client certificates may use the kubelet API (kube-apiserver's --kubelet-client-certificate);
   *  without one any client that reaches the port may read logs, exec, attach and forward ports */
  clientCaFile?: string;
  /** how often the Lease is renewed (default 10 s, as the kubelet's nodeLeaseDurationSeconds / 4) */
  leaseRenewMs?: number;
  /** how often the Node's status is posted when nothing changed (default 60 s) */
  statusUpdateMs?: number;
  log?: (msg: string) => void;
}

export interface NodeAgent {
  nodeName: string;
  server: string;
  /** the kubelet API, https://IP:PORT */
  kubeletUrl: string;
  /** warnings for the start-up banner */
  warnings: string[];
  /** stops the agent; running containers keep running for the next start to adopt (their count) */
  stop(): Promise<number>;
}

/** A node agent that cannot start: the message says which cluster and why. */
export class NodeAgentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeAgentError';
  }
}

const leaseNamespace = 'kube-node-lease';
const leaseDurationSeconds = 40;
const rfc3339 = (d = new Date()): string => d.toISOString().replace(/\.\d+Z$/, 'Z');
/** a Lease's MicroTime: RFC 3339 with microseconds */
const microTime = (d = new Date()): string => d.toISOString().replace(/\.(\d+)Z$/, (_, ms: string) => `.${ms.padEnd(6, '0')}Z`);

/** One thing the agent does through the API server, as a SelfSubjectAccessReview asks it. */
export interface AgentAccess {
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
  /** asked in this namespace only (a Role there suffices) */
  namespace?: string;
}

/**
 * What the agent does as a kubelet would, asked of the cluster's authorizer at start-up: register and
 * update its Node, renew its Lease, watch Pods and Services (hosts files), write Pods' status and
 * delete them when they end, read what their volumes name, ask for their service-account tokens
 * (projected volumes), record Events. deploy/kubernetes/node-agent grants these (a test holds
 * the two together).
 */
export const agentAccessNeeds: readonly AgentAccess[] = [
  ...['get', 'list', 'create', 'update'].map((verb) => ({ group: '', resource: 'nodes', verb })),
  { group: '', resource: 'nodes', subresource: 'status', verb: 'update' },
  ...['get', 'list', 'watch', 'delete'].map((verb) => ({ group: '', resource: 'pods', verb })),
  { group: '', resource: 'pods', subresource: 'status', verb: 'update' },
  ...['get', 'list', 'watch'].map((verb) => ({ group: '', resource: 'services', verb })),
  ...['configmaps', 'secrets', 'serviceaccounts'].map((resource) => ({ group: '', resource, verb: 'get' })),
  // claims: this node provisions the local volumes of those the scheduler placed here (node-volumes.ts)
  ...['get', 'list', 'watch'].map((verb) => ({ group: '', resource: 'persistentvolumeclaims', verb })),
  ...['get', 'list', 'create', 'delete'].map((verb) => ({ group: '', resource: 'persistentvolumes', verb })),
  { group: 'storage.k8s.io', resource: 'storageclasses', verb: 'get' },
  { group: '', resource: 'serviceaccounts', subresource: 'token', verb: 'create' },
  ...['get', 'create', 'update'].map((verb) => ({ group: '', resource: 'events', verb })),
  ...['get', 'create', 'update'].map((verb) => ({ group: 'coordination.k8s.io', resource: 'leases', verb, namespace: 'kube-node-lease' })),
];

const describeAccess = (n: AgentAccess): string => `${n.verb} ${n.resource}${n.group ? `.${n.group}` : ''}${n.subresource ? `/${n.subresource}` : ''}${n.namespace ? ` in namespace ${n.namespace}` : ''}`;

/** what RBAC refuses of agentAccessNeeds, as the agent's credentials */
async function refusedAccess(http: KubeHttp): Promise<string[]> {
  const answers = await Promise.all(agentAccessNeeds.map(async (n) => {
    const review = await http.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: n.group, resource: n.resource, verb: n.verb, ...(n.subresource ? { subresource: n.subresource } : {}), ...(n.namespace ? { namespace: n.namespace } : {}) } } },
    });
    return review.status?.allowed ? undefined : describeAccess(n);
  }));
  return answers.filter((a): a is string => a !== undefined);
}

/** where Pods on this machine reach the API server: the kubeconfig's server, its name resolved */
async function apiEndpointFor(server: string): Promise<{ host: string; port: number; ip?: string }> {
  const url = new URL(server);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || (url.protocol === 'http:' ? 80 : 443));
  if (isIP(host)) return { host, port, ip: host };
  try {
    return { host, port, ip: (await lookup(host)).address };
  } catch {
    return { host, port };
  }
}

/** asks the cluster for a token for the Pod's service account, bound to the Pod, as the kubelet does */
export async function requestPodToken(http: KubeHttp, pod: Pod & StoredObject, req: { audience?: string; expirationSeconds: number }): Promise<IssuedToken> {
  const ns = pod.metadata.namespace ?? 'default';
  const sa = pod.spec.serviceAccountName ?? 'default';
  const out = await http.request<{ spec?: { expirationSeconds?: number }; status?: { token?: string; expirationTimestamp?: string } }>('POST', `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`, {
    body: {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
      spec: {
        ...(req.audience ? { audiences: [req.audience] } : {}), expirationSeconds: req.expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
      },
    },
  });
  if (!out.status?.token || !out.status.expirationTimestamp) throw new Error(`the API server answered the TokenRequest for serviceaccount ${ns}/${sa} without a token`);
  return { token: out.status.token, expirationTimestamp: out.status.expirationTimestamp, expirationSeconds: out.spec?.expirationSeconds ?? req.expirationSeconds };
}

/** The Node as a kubelet registers it: capacity, conditions, addresses, nodeInfo, its API's port. */
export function agentNode(name: string, capacity: NodeCapacity, version: string, nodeIp: string, kubeletPort: number): StoredObject {
  const node = nodeObject(name, capacity, version) as StoredObject;
  // an agent is a worker, not the machine the control plane runs on
  delete node.metadata.labels?.['node-role.kubernetes.io/control-plane'];
  const now = rfc3339();
  const condition = (type: string, status: string, reason: string, message: string): Record<string, string> => ({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now });
  node.status = {
    ...node.status,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'skiff node agent is posting ready status'),
    ],
    addresses: [{ type: 'InternalIP', address: nodeIp }, { type: 'Hostname', address: name }],
    daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
    nodeInfo: {
      machineID: machineId(), systemUUID: machineId(), bootID: bootId(),
      kernelVersion: os.release(), osImage: os.type(), containerRuntimeVersion: `skiff://${version}`,
      kubeletVersion: `skiff-${version}`, kubeProxyVersion: '', operatingSystem: process.platform, architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    },
  };
  return node;
}

function readTrimmed(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
const machineId = (): string => readTrimmed('/etc/machine-id');
const bootId = (): string => readTrimmed('/proc/sys/kernel/random/boot_id');

/** the kubelet API's serving certificate, self-signed, made once per data dir and node address */
function servingCertificate(dir: string, name: string, ip: string): { cert: string; key: string } {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const certFile = join(dir, 'kubelet.crt');
  const keyFile = join(dir, 'kubelet.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    try {
      const cert = readFileSync(certFile, 'utf8');
      const key = readFileSync(keyFile, 'utf8');
      const x = new X509Certificate(cert);
      if (x.checkIP(ip) && x.checkHost(name) && Date.parse(x.validTo) - Date.now() > 30 * 86400_000 && x.checkPrivateKey(keyPairFromPem(key).privateKey)) return { cert, key };
    } catch {
      // made anew below
    }
  }
  const pair = newKeyPair();
  const now = Date.now();
  const subject = { commonName: `${name}@${Math.floor(now / 1000)}` };
  const cert = toPem(createCertificate({
    subject, publicKey: pair.publicKey, selfSignKey: pair.privateKey,
    notBefore: new Date(now - 3600_000), notAfter: new Date(now + 365 * 86400_000),
    keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyEncipherment], extKeyUsage: ['serverAuth'],
    dnsNames: [name], ipAddresses: [ip],
  }));
  const key = privateKeyPem(pair.privateKey);
  writeFileSync(keyFile, key, { mode: 0o600 });
  writeFileSync(certFile, cert);
  return { cert, key };
}

export async function startNodeAgent(opts: NodeAgentOptions): Promise<NodeAgent> {
  const log = opts.log ?? ((m: string): void => void process.stderr.write(`${m}\n`));
  const { nodeName } = opts;
  const nodeIp = opts.nodeIp ?? '127.0.0.1';
  const version = skiffVersion();
  const config = compileConfig({ dataDir: opts.dataDir, ...(opts.configFile ? { configFile: opts.configFile } : {}) });
  let conn: ClusterConnection;
  try {
    conn = loadKubeconfig(opts.kubeconfig);
  } catch (e) {
    if (e instanceof KubeconfigError) throw new NodeAgentError(e.message);
    throw e;
  }
  // the cluster answers and accepts the credentials before anything starts
  const http = new KubeHttp(conn);
  try {
    await http.request('GET', '/api/v1/nodes', { query: { limit: 1 }, timeoutMs: 15_000 });
  } catch (e) {
    http.close();
    if (e instanceof ApiError) throw new NodeAgentError(`the Kubernetes API server at ${conn.server} (${conn.source}) refuses to list Nodes: ${e.message}`);
    throw new NodeAgentError((e as Error).message);
  }
  let refused: string[];
  try {
    refused = await refusedAccess(http);
  } catch (e) {
    http.close();
    throw new NodeAgentError(`the Kubernetes API server at ${conn.server} (${conn.source}) did not answer a SelfSubjectAccessReview: ${(e as Error).message}`);
  }
  if (refused.length) {
    http.close();
    throw new NodeAgentError(`RBAC on ${conn.server} refuses what the node agent needs (${conn.source}): ${refused.join(', ')}; bind its user to a role that allows them (deploy/kubernetes/node-agent has one)`);
  }
  const apiEndpoint = await apiEndpointFor(conn.server);
  mkdirSync(opts.dataDir, { recursive: true });
  const warnings: string[] = [];
  // the kubelet's informers: every node's Pods (a Pod here resolves a Service's or a peer's Pods
  // wherever they run: their addresses go in its hosts file) and the Services. EndpointSlices cannot
  // stand in for the Pods: the API server refuses loopback addresses in them, and Pod addresses on
  // one machine are loopback ones
  const store = new KubeStore({ connection: conn, kinds: [Kinds.Pod, Kinds.Service, Kinds.PersistentVolumeClaim], log });
  const client = new Client(store, defaultRegistry(), [], { defaultOnRead: true });
  const manager = new Manager(client, log);
  const recorder = new EventRecorder(client, 'kubelet');
  let kubeletServer: Server | undefined;
  let leaseTimer: Timer | undefined;
  let statusTimer: Timer | undefined;
  let substrate: LocalSubstrate | undefined;
  let s3Stores: { destroy(): void } | undefined;
  let volumes: { stop(): void } | undefined;
  const cleanup = async (): Promise<void> => {
    volumes?.stop();
    leaseTimer?.clear();
    statusTimer?.clear();
    if (kubeletServer) {
      kubeletServer.closeAllConnections();
      await new Promise<void>((r) => kubeletServer?.close(() => r()));
    }
    await manager.stop();
    await recorder.flush();
    await substrate?.stop();
    await store.close();
    s3Stores?.destroy();
    http.close();
  };
  try {
    await store.start();
    // the kubelet API first: the Node names its port
    const tls = servingCertificate(join(opts.dataDir, 'pki'), nodeName, nodeIp);
    const clientCa = opts.clientCaFile ? readFileSync(opts.clientCaFile, 'utf8') : undefined;
    if (!clientCa) warnings.push(`the kubelet API at ${nodeIp} does not authenticate its callers (no --client-ca-file): anyone who reaches it may read the logs of this node's Pods, run commands in them, attach to them and reach their ports`);
    /** the Pod when it is one of this node's: a kubelet knows no other ("pod does not exist") */
    const ownPod = async (namespace: string, name: string): Promise<StoredObject | undefined> => {
      try {
        const pod = await client.get(Kinds.Pod, { namespace, name });
        return pod.spec?.nodeName === nodeName ? pod : undefined;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    };
    const server = createServer({ cert: tls.cert, key: tls.key, ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: true } : {}) }, (req, res) => {
      void serveKubeletApi(req, res).catch((e) => {
        const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, (e as Error).message);
        if (res.headersSent) res.end();
        else {
          res.writeHead(err.code, { 'content-type': 'text/plain; charset=utf-8' });
          res.end(err.message);
        }
      });
    });
    // the streaming endpoints kube-apiserver upgrades to SPDY/3.1 (or, for port-forward, also a
    // WebSocket): /exec/{namespace}/{pod}/{container}?command=... for `kubectl exec`,
    // /attach/{namespace}/{pod}/{container} for `kubectl attach`, /portForward/{namespace}/{pod}[/{uid}]
    // for `kubectl port-forward`
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const stream = /^\/(exec|attach)\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
      const forward = /^\/portForward\/([^/]+)\/([^/]+)(?:\/([^/]+))?\/?$/.exec(url.pathname);
      if ((!stream && !forward) || !substrate) return rejectUpgrade(socket, new ApiError(StatusReason.NotFound, `the node agent does not serve ${url.pathname}`));
      const [namespace, name] = (stream ? stream.slice(2, 4) : (forward as RegExpExecArray).slice(1, 3)).map(decodeURIComponent) as [string, string];
      const local = substrate;
      ownPod(namespace, name).then((pod) => {
        if (!pod) return rejectUpgradeText(socket, 404, 'pod does not exist');
        if (forward) {
          // a uid in the path names one incarnation of the Pod
          if (forward[3] && decodeURIComponent(forward[3]) !== pod.metadata.uid) return rejectUpgradeText(socket, 404, 'pod not found');
          return servePortForward({ forwarder: local, log }, pod, req, socket, head, url, { portsParam: 'port' });
        }
        const [, kind, , , container] = stream as RegExpExecArray;
        serveKubeletExec({ exec: local, attach: local, log }, pod, decodeURIComponent(container ?? ''), req, socket, head, url, kind as 'exec' | 'attach');
      }).catch((e: unknown) => rejectUpgrade(socket, e));
    });
    kubeletServer = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.kubeletPort ?? 0, nodeIp, () => resolve());
    });
    const kubeletPort = (server.address() as AddressInfo).port;

    // GET /containerLogs/{namespace}/{pod}/{container}: what kube-apiserver asks for `kubectl logs`
    async function serveKubeletApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      if (url.pathname === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
        return;
      }
      const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
      if (!m || req.method !== 'GET') throw new ApiError(StatusReason.NotFound, `the node agent does not serve ${req.method ?? ''} ${url.pathname}`);
      const [namespace, name, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
      const pod = await ownPod(namespace, name);
      if (!pod) throw new ApiError(StatusReason.NotFound, `pod "${name}" does not exist`);
      url.searchParams.set('container', container);
      if (!substrate) throw new ApiError(StatusReason.ServiceUnavailable, 'the node agent is starting');
      await servePodLog(substrate, pod, req, res, url);
    }

    let nodeUid = '';
    let desired: StoredObject | undefined;
    const registerNode = async (capacity: NodeCapacity): Promise<string | undefined> => {
      desired = agentNode(nodeName, capacity, version, nodeIp, kubeletPort);
      if (opts.podCidr) desired.spec = { ...desired.spec, podCIDR: opts.podCidr, podCIDRs: [opts.podCidr] };
      let node: StoredObject;
      try {
        // a Node's status is kept on create, as a kubelet registers it
        node = await http.request<StoredObject>('POST', '/api/v1/nodes', { body: desired });
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 409)) throw e;
        // registered before (a restarted agent): its labels and annotations, then its status
        const live = await http.request<StoredObject>('GET', `/api/v1/nodes/${encodeURIComponent(nodeName)}`);
        live.metadata.labels = { ...live.metadata.labels, ...desired.metadata.labels };
        live.metadata.annotations = { ...live.metadata.annotations, ...desired.metadata.annotations };
        // a podCIDR is set once: the one the Node has stays
        if (opts.podCidr && !live.spec?.podCIDR) live.spec = { ...live.spec, podCIDR: opts.podCidr, podCIDRs: [opts.podCidr] };
        node = await http.request<StoredObject>('PUT', `/api/v1/nodes/${encodeURIComponent(nodeName)}`, { body: live });
      }
      nodeUid = node.metadata.uid;
      await postStatus(true);
      await renewLease();
      const range = await podRange(node);
      // registered again after a deletion, the Node keeps the range its running Pods' addresses are from
      if (range) desired.spec = { ...desired.spec, podCIDR: range, podCIDRs: [range] };
      return range;
    };

    /** The range this node's Pods get addresses from: the Node's podCIDR, which the
     *  controller-manager's node IPAM (--allocate-node-cidrs) gives each Node from its
     *  --cluster-cidr, so that two nodes never hand out one address. */
    const podRange = async (registered: StoredObject): Promise<string | undefined> => {
      let node = registered;
      const deadline = Date.now() + (opts.podCidrWaitMs ?? 10_000);
      while (!node.spec?.podCIDR && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        node = await http.request<StoredObject>('GET', `/api/v1/nodes/${encodeURIComponent(nodeName)}`);
      }
      const cidr = node.spec?.podCIDR as string | undefined;
      if (!cidr) {
        warnings.push(`the Node has no podCIDR (no --pod-cidr, and the controller-manager does not run with --allocate-node-cidrs): Pods get addresses from ${podNetwork} at random, and two agents on this machine may give two Pods the same one`);
        return undefined;
      }
      if (opts.podCidr && opts.podCidr !== cidr) warnings.push(`--pod-cidr ${opts.podCidr} is not the Node's podCIDR ${cidr}: Pods get addresses from ${cidr}`);
      try {
        parseIpv4Cidr(cidr);
      } catch (e) {
        warnings.push(`the Node's podCIDR: ${(e as Error).message}; Pods get addresses from ${podNetwork} at random`);
        return undefined;
      }
      if (!isLoopbackCidr(cidr)) {
        // a Pod is processes in this machine's network namespace: the routable range is made local
        // here, as 127.0.0.0/8 is (other machines route it to this one: the README says how). The
        // route stays when the agent stops, as its Pods do.
        const problem = makeRangeLocal(cidr);
        if (problem) {
          warnings.push(`the Node's podCIDR ${cidr} is not a loopback range (127.0.0.0/8), and it could not be made local to this machine (${problem}): Pods get addresses from ${podNetwork} at random, reachable on this machine only`);
          return undefined;
        }
        log(`node ${nodeName}: Pods get addresses from ${cidr}, made local to this machine (ip ${localRouteArgs(cidr, 'replace').join(' ')})`);
        return cidr;
      }
      log(`node ${nodeName}: Pods get addresses from ${cidr}`);
      return cidr;
    };

    /** the Node's status as this agent sees it; `fresh`: every condition's heartbeat moves too */
    const postStatus = async (fresh = false): Promise<void> => {
      if (!desired) return;
      const path = `/api/v1/nodes/${encodeURIComponent(nodeName)}`;
      for (let attempt = 0; attempt < 5; attempt++) {
        let live: StoredObject;
        try {
          live = await http.request<StoredObject>('GET', path);
        } catch (e) {
          if (!isNotFound(e)) throw e;
          // someone deleted the Node (kubectl delete node): registered again, as a kubelet does
          live = await http.request<StoredObject>('POST', '/api/v1/nodes', { body: desired });
          nodeUid = live.metadata.uid;
          log(`node ${nodeName}: the Node was deleted; registered it again`);
        }
        const now = rfc3339();
        type Condition = { type: string; status: string; lastHeartbeatTime?: string; lastTransitionTime?: string; [k: string]: unknown };
        const before = new Map(((live.status?.conditions ?? []) as Condition[]).map((c) => [c.type, c]));
        const conditions: Condition[] = (desired.status?.conditions as Condition[]).map((c) => {
          const old = before.get(c.type);
          // a transition is when the status changed (the node lifecycle controller sets Unknown when it lost us)
          const kept = !fresh && old?.status === c.status ? old?.lastTransitionTime : undefined;
          return { ...c, lastHeartbeatTime: now, lastTransitionTime: kept ?? now };
        });
        // conditions others set (none of the kubelet's) are kept
        for (const [type, c] of before) if (!conditions.some((x) => x.type === type)) conditions.push(c);
        try {
          await http.request('PUT', `${path}/status`, { body: { ...live, status: { ...live.status, ...desired.status, conditions } } });
          return;
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 409)) throw e;
        }
      }
    };

    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases/${encodeURIComponent(nodeName)}`;
    /** the heartbeat the node lifecycle controller reads: the Lease's renewTime */
    const renewLease = async (): Promise<void> => {
      let lease: StoredObject | undefined;
      try {
        lease = await http.request<StoredObject>('GET', leasePath);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      const spec = { holderIdentity: nodeName, leaseDurationSeconds, renewTime: microTime() };
      if (!lease) {
        await http.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases`, {
          body: {
            apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
            // the Lease goes with its Node (the garbage collector follows the reference)
            metadata: { name: nodeName, namespace: leaseNamespace, ...(nodeUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }] } : {}) },
            spec,
          },
        });
        return;
      }
      await http.request('PUT', leasePath, { body: { ...lease, spec: { ...lease.spec, ...spec } } });
    };

    // KFP's launcher for the task Pods of runs whose pipeline root is in S3: the namespace's
    // credentials (its mlpipeline-minio-artifact Secret) or the config's, on the config's S3 server
    const s3 = config.artifacts.s3 ? new (await import('../artifacts/s3.js')).S3Stores(config.artifacts.s3, { stagingDir: join(opts.dataDir, 'artifact-staging'), cacheDir: join(opts.dataDir, 'artifact-cache') }) : undefined;
    s3Stores = s3;
    const launcher = new PodLauncher(new LocalArtifactStore(join(opts.dataDir, 'pods')), async (namespace, root) => {
      if (!s3) throw new Error(`node ${nodeName} has no S3 server configured (artifacts.s3 in the config given to skiff node --config), so it cannot reach pipeline root ${root}`);
      let secret: StoredObject | undefined;
      try {
        secret = await http.request<StoredObject>('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${artifactSecret}`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      return secretS3Store(secret as { data?: Record<string, string> } | undefined, s3, namespace, root);
    });
    const podArtifacts = nodeLauncher(launcher);
    const pythonBase = join(repoRoot, '.venv', 'bin', 'python');
    substrate = new LocalSubstrate({
      client, recorder, manager, dataDir: opts.dataDir, nodeName, node: config.node,
      ...(config.gpuSharing.libvgpu ? { libvgpu: config.gpuSharing.libvgpu } : {}),
      environments: new Environments(config.environments, { path: defaultPath(), env: { SKIFF_HOME: repoRoot } }),
      ...(existsSync(pythonBase) ? { python: { basePython: pythonBase, ...(config.pythonZygote ? { zygote: { script: join(repoRoot, 'python', 'skiff_zygote.py'), client: join(repoRoot, 'build', 'skiff-pyfork') } } : {}) } } : {}),
      version, crashLoopBaseMs: config.crashLoopBackoffMs, crashLoopMaxMs: config.crashLoopBackoffMaxMs, metricsIntervalMs: config.metricsResolutionMs, log,
      cluster: {
        registerNode, hostIp: nodeIp, apiEndpoint: { host: apiEndpoint.host, port: apiEndpoint.port },
        requestToken: (pod, req) => requestPodToken(http, pod, req),
        claimVolumeDir: (claim) => claimVolumeDir(http, claim),
      },
      podArtifacts,
    });
    await substrate.start();
    // the `kubernetes` Service's names, as cluster DNS answers them, at the API server's address (its
    // own port, which KUBERNETES_SERVICE_PORT names: no proxy makes it 443)
    if (apiEndpoint.ip) substrate.setPlatformServices([{ name: 'kubernetes', namespace: 'default', ips: [apiEndpoint.ip] }]);
    volumes = startNodeVolumes({ http, client, manager, recorder, nodeName, dataDir: opts.dataDir, log });
    manager.start();
    // a heartbeat that fails (the API server is away) is tried again at the next tick; Pods keep running
    leaseTimer = every(opts.leaseRenewMs ?? 10_000, () => void renewLease().catch((e) => log(`node ${nodeName}: renewing its Lease: ${(e as Error).message}`))).unref();
    statusTimer = every(opts.statusUpdateMs ?? 60_000, () => void postStatus().catch((e) => log(`node ${nodeName}: posting its status: ${(e as Error).message}`))).unref();
    const running = substrate;
    return {
      nodeName, server: conn.server, kubeletUrl: `https://${nodeIp.includes(':') ? `[${nodeIp}]` : nodeIp}:${kubeletPort}`, warnings,
      async stop() {
        const left = running.runningContainers();
        await cleanup();
        return left;
      },
    };
  } catch (e) {
    await cleanup().catch(() => undefined);
    throw e;
  }
}
