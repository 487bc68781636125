// The local substrate: this machine as one Node, Pods as processes. It finds the machine's capacity
// and registers the Node, and owns what starting a Pod needs on this machine: the kubelet, the
// cached Python environments and the warm zygote for lightweight components, the `sh` shim.
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Manager } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import { gpuCards, nodeObject, type NodeCapacity } from '../../scheduler/node.js';
import type { NodeUsage, PodAttachOptions, PodAttachSession, PodExecOptions, PodExecSession, PodFile, PodLogOptions, PodMetricsSource, PodUsage } from '../substrate.js';
import type { Client } from '../../store/client.js';
import type { Substrate } from '../substrate.js';
import type { CapacityOverrides } from './capacity.js';
import { discoverCapacity } from './capacity.js';
import { GpuSampler } from './gpu-processes.js';
import type { Environments } from './environments.js';
import { Kubelet, type KubeletOptions } from './kubelet.js';
import type { ServiceView } from './network.js';
import { addClaimController } from './pvc.js';
import { PythonEnvironments } from './python-envs.js';
import { PythonPods } from './python-pods.js';
import type { InClusterContract } from './serviceaccount.js';
import { shellShim } from './shell.js';
import { UsageMonitor } from './usage.js';
import { PythonZygote } from './zygote.js';

export interface LocalSubstrateOptions {
  client: Client;
  recorder: Recorder;
  manager: Manager;
  dataDir: string;
  nodeName: string;
  /** what the config says instead of what the machine has */
  node?: CapacityOverrides;
  /** HAMi-core's libvgpu.so, to enforce GPU shares' memory and compute limits */
  libvgpu?: string;
  environments: Environments;
  /** the base Python environment for lightweight components: cached environments are layered over it */
  python?: {
    basePython: string;
    /** the warm zygote (python/skiff_zygote.py) and its client (build/skiff-pyfork), if wanted */
    zygote?: { script: string; client: string };
  };
  version: string;
  crashLoopBaseMs?: number;
  crashLoopMaxMs?: number;
  /** how often running containers' CPU and memory are sampled (default 5 s) */
  metricsIntervalMs?: number;
  /** tenancy's isolation of Pods (isolation.ts); the warm zygote is not used then (its children
   *  would run outside any sandbox) */
  isolation?: KubeletOptions['isolation'];
  log?: (msg: string) => void;
  /**
   * This machine as one node of a cluster (`skiff node`): the agent registers the Node with the
   * capacity found here (and keeps it current), the cluster binds PersistentVolumeClaims, and a
   * deleted Pod is removed by the kubelet once its processes are gone, as kube-apiserver expects.
   */
  cluster?: {
    /** registers the Node; resolves with the range its Pods' addresses come from (its podCIDR),
     *  or undefined for the default one */
    registerNode(capacity: NodeCapacity): Promise<string | undefined>;
    /** the node's address, each Pod's hostIP */
    hostIp: string;
    /** where Pods reach the cluster's API server (KUBERNETES_SERVICE_HOST and _PORT) */
    apiEndpoint?: { host: string; port: number };
    /** a token for a Pod's service account from the cluster's TokenRequest API, bound to the Pod */
    requestToken?: KubeletOptions['requestToken'];
    /** the directory of the PersistentVolume a bound claim names */
    claimVolumeDir?: KubeletOptions['claimVolumeDir'];
  };
  /** KFP's launcher on this node: the artifacts of the task Pods that carry its plan */
  podArtifacts?: KubeletOptions['podArtifacts'];
}

export class LocalSubstrate implements Substrate, PodMetricsSource {
  readonly nodeName: string;
  private agent?: Kubelet;
  private readonly zygote?: PythonZygote;
  private readonly python?: PythonPods;
  private readonly usage: UsageMonitor;
  /** set once the node has found real cards */
  private gpuSampler?: GpuSampler;

  constructor(private readonly opts: LocalSubstrateOptions) {
    this.nodeName = opts.nodeName;
    // the real cards are sampled once the node knows it has some
    this.usage = new UsageMonitor({
      nodeName: opts.nodeName, intervalMs: opts.metricsIntervalMs ?? 5000, containers: () => this.agent?.liveContainers() ?? [],
      gpus: async () => (this.gpuSampler ? this.gpuSampler.sample() : { cards: [], processes: [], perProcess: false }),
    });
    const py = opts.python;
    if (py) {
      const z = py.zygote && { python: py.basePython, ...py.zygote };
      if (z && !opts.isolation && PythonZygote.available(z)) this.zygote = new PythonZygote({ ...z, dir: join(opts.dataDir, 'python-zygote') });
      const envs = new PythonEnvironments({ root: join(opts.dataDir, 'python-envs'), basePython: py.basePython, log: opts.log });
      this.python = new PythonPods(envs, this.zygote);
    }
  }

  private get kubelet(): Kubelet {
    if (!this.agent) throw new Error(`the local substrate of node ${this.nodeName} has not been started`);
    return this.agent;
  }

  get sandboxed(): boolean {
    return this.kubelet.bubblewrap;
  }

  async start(): Promise<void> {
    const { client, nodeName, version } = this.opts;
    // warmed now, so the first task does not wait for it
    if (this.zygote) void this.zygote.ensure();
    const capacity = await discoverCapacity(this.opts.node);
    if (capacity.found.length) this.gpuSampler = new GpuSampler({ cards: capacity.found, pmonTimeoutMs: Math.max(3000, this.opts.metricsIntervalMs ?? 5000) });
    this.agent = new Kubelet({
      client, recorder: this.opts.recorder, dataDir: this.opts.dataDir, nodeName, environments: this.opts.environments,
      gpuCount: capacity.gpus.length, gpuCards: gpuCards(capacity), ...(this.opts.libvgpu ? { libvgpu: this.opts.libvgpu } : {}), python: this.python, shellDir: shellShim(join(this.opts.dataDir, 'shell')),
      crashLoopBaseMs: this.opts.crashLoopBaseMs, crashLoopMaxMs: this.opts.crashLoopMaxMs, log: this.opts.log,
      onContainerStart: () => this.usage.wake(),
      ...(this.opts.isolation ? { isolation: this.opts.isolation } : {}),
      ...(this.opts.podArtifacts ? { podArtifacts: this.opts.podArtifacts } : {}),
      ...(this.opts.cluster ? {
        removeStopped: true, hostIp: this.opts.cluster.hostIp, clusterNames: true,
        ...(this.opts.cluster.apiEndpoint ? { apiEndpoint: this.opts.cluster.apiEndpoint } : {}),
        ...(this.opts.cluster.requestToken ? { requestToken: this.opts.cluster.requestToken } : {}),
        ...(this.opts.cluster.claimVolumeDir ? { claimVolumeDir: this.opts.cluster.claimVolumeDir } : {}),
      } : {}),
    });
    await this.agent.setUpNetwork();
    if (this.opts.cluster) {
      const range = await this.opts.cluster.registerNode(capacity);
      if (range) this.kubelet.usePodRange(range);
      await this.kubelet.register(this.opts.manager);
      return;
    }
    const desired = nodeObject(nodeName, capacity, version);
    const existing = await client.find(Kinds.Node, { name: nodeName });
    if (existing) {
      await client.update({ ...existing, metadata: { ...existing.metadata, labels: desired.metadata.labels, annotations: desired.metadata.annotations } });
      const fresh = await client.get(Kinds.Node, { name: nodeName });
      await client.updateStatus({ ...fresh, status: desired.status });
    } else {
      const created = await client.create(desired as StoredObject);
      await client.updateStatus({ ...created, status: desired.status });
    }
    addClaimController(this.opts.manager, client, this.opts.recorder, this.opts.dataDir);
    await this.kubelet.register(this.opts.manager);
  }

  async stop(): Promise<void> {
    // controllers stop with the manager; containers keep running for the next server to adopt. The
    // zygote finishes the tasks it forked, then exits; a later server starts another
    this.zygote?.stop();
    this.usage.stop();
    this.agent?.stop();
  }

  podUsage(): PodUsage[] {
    return this.usage.podUsage();
  }

  nodeUsage(): NodeUsage | undefined {
    return this.usage.nodeUsage();
  }

  runningContainers(): number {
    return this.kubelet.runningContainers();
  }

  async shutdown(): Promise<void> {
    await this.kubelet.stopAll();
  }

  exec(pod: StoredObject, opts: PodExecOptions): Promise<PodExecSession> {
    return this.kubelet.exec(pod, opts);
  }

  connect(pod: StoredObject, port: number): Promise<Duplex> {
    return this.kubelet.connectPort(pod, port);
  }

  attach(pod: StoredObject, opts: PodAttachOptions, signal: AbortSignal): Promise<PodAttachSession> {
    return this.kubelet.attach(pod, opts, signal);
  }

  /** names every Pod resolves to an address the platform serves itself (in each Pod's hosts file);
   *  `kfpByName`: KFP's API Service is among them, so Pods with a hosts file get no KF_PIPELINES_ENDPOINT */
  setPlatformServices(services: ServiceView[], opts: { kfpByName?: boolean } = {}): void {
    this.kubelet.platformServices = services;
    this.kubelet.kfpByName = opts.kfpByName ?? false;
  }

  /** the node's address on the Pods' network, when Pods have network namespaces: where they reach the host */
  get nodeIp(): string | undefined {
    return this.kubelet.nodeIp;
  }

  /** the ports of the node address isolated Pods may reach (the server's listeners there) */
  setNodePorts(ports: number[]): void {
    this.kubelet.setNodePorts(ports);
  }

  /** where containers reach the API server (SKIFF_SERVER in their environment) */
  setApiServer(url: string): void {
    this.kubelet.apiServer = url;
  }

  /** where containers reach the API server over HTTPS, and what proves who they are (serviceaccount.ts) */
  setInCluster(contract: InClusterContract): void {
    this.kubelet.inCluster = contract;
  }

  logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>> {
    return this.kubelet.logs(pod, opts, signal);
  }

  readPodFiles(pod: StoredObject, container: string, path: string): Promise<PodFile[]> {
    return this.kubelet.readPodFiles(pod, container, path);
  }
}
