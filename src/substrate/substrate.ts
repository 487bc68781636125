// The seam between the control plane and whatever runs Pods. `local/` runs them as processes on this
// machine; a Kubernetes substrate would hand them to a real cluster.
//
// Controllers write Pods as Kubernetes (and KFP's backend) would, and ask the substrate only for what
// is here: logs and exec. Everything that starts a process is the substrate's: finding the node's
// capacity (CPUs, memory, GPUs) and registering its Node, and starting a Pod with what that takes on
// its machine. On the local substrate that includes making a lightweight component's Python
// environment from its pip bootstrap, as a kubelet pulls an image (the Pod waits, with `Pulling`
// and `Pulled` Events), the warm zygote it forks components from, and the shell images expect.
import type { Duplex, Readable, Writable } from 'node:stream';
import type { StoredObject } from '../api/meta.js';

export interface PodLogOptions {
  container?: string;
  follow?: boolean;
  previous?: boolean;
  tailLines?: number;
  timestamps?: boolean;
  sinceSeconds?: number;
  limitBytes?: number;
}

/** Where pod logs come from: the substrate that ran the pod. */
export interface PodLogSource {
  logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>>;
}

export interface PodExecOptions {
  container?: string;
  command: string[];
  /** the request body is the command's standard input */
  stdin: boolean;
  /** run it on a pseudo-terminal: stdout carries the terminal's output (stderr stays empty) and
   *  resize() sets its size, as `kubectl exec -t` expects */
  tty?: boolean;
}

/** a terminal's size in character cells, as remotecommand's resize channel sends it */
export interface TerminalSize {
  width: number;
  height: number;
}

/** A command started in a Pod's container (`skiff exec`). */
export interface PodExecSession {
  stdout: Readable;
  stderr: Readable;
  /** present when stdin was asked for */
  stdin?: Writable;
  /** the command's end: its exit code, or the signal that killed it */
  done: Promise<{ exitCode: number; signal?: string }>;
  /** kills the command and what it started */
  kill(): void;
  /** present with a terminal: sets its size (the command gets SIGWINCH); resolves once it has it */
  resize?(size: TerminalSize): Promise<void>;
}

export interface PodAttachOptions {
  container?: string;
  /** write to the container's standard input (only a container with `stdin: true` has one) */
  stdin: boolean;
}

/** One piece of what a container printed, on the stream it printed it to. */
export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

/** `kubectl attach`: the running container's output from now on, until it exits. */
export interface PodAttachSession {
  output: AsyncIterable<OutputChunk>;
  /** the container's standard input, when it has one and it was asked for */
  stdin?: Writable;
  /** present when the container has a terminal (`tty: true`): sets its size */
  resize?(size: TerminalSize): Promise<void>;
}

/** A file a container wrote: its path as the container sees it, and its bytes. */
export interface PodFile {
  path: string;
  data: Buffer;
}

/** Files Pods wrote, read by the platform itself (the tuning workload's File and TensorFlowEvent
 *  metrics collectors): only the substrate knows where a Pod's volumes live. */
export interface PodFileSource {
  /**
   * The file at `path` as `container` sees it, or every file under it when it is a directory; []
   * when nothing is there. Readable after the container ended, for paths on a volume (an emptyDir
   * lasts as long as its Pod).
   */
  readPodFiles(pod: StoredObject, container: string, path: string, signal?: AbortSignal): Promise<PodFile[]>;
}

/** Where running containers are attached to: the substrate that runs them. */
export interface PodAttachSource {
  attach(pod: StoredObject, opts: PodAttachOptions, signal: AbortSignal): Promise<PodAttachSession>;
}

/** Where commands run in Pods: the substrate that runs them. */
export interface PodExecSource {
  exec(pod: StoredObject, opts: PodExecOptions): Promise<PodExecSession>;
}

/** Reaches a port of a Pod, as the kubelet's port-forward does from inside the Pod's network. */
export interface PodPortForwarder {
  /** a connection to the port, open; rejects with an Error saying why nothing answered */
  connect(pod: StoredObject, port: number): Promise<Duplex>;
}

/** A container's resource use as the node last measured it (what a kubelet's summary API reports). */
export interface ContainerUsage {
  name: string;
  /** when this container run started (RFC3339): a restart begins a new, separate count */
  startedAt: string;
  /** ms since the epoch of the latest sample */
  timestamp: number;
  /** CPU time the run has used since it started, in seconds (a counter) */
  cpuSeconds: number;
  /** the CPU rate between the previous sample and this one, in cores; absent after a single sample */
  cpuCores?: number;
  /** the span of that rate, in ms */
  windowMs?: number;
  /** memory the container's processes hold and the kernel cannot simply drop, in bytes */
  memoryWorkingSetBytes: number;
  /** the real GPU cards its processes use, one entry per card, when the node samples them */
  gpus?: ContainerGpuUsage[];
}

/** A container's use of one real GPU card: its processes' together, as nvidia-smi last reported them. */
export interface ContainerGpuUsage {
  /** the card's index on the node (nvidia-smi's) */
  index: number;
  uuid: string;
  /** the card's product name, e.g. "NVIDIA H100 80GB HBM3" */
  modelName: string;
  /** framebuffer memory its processes hold on the card, in MiB; absent where the driver does not say */
  memoryUsedMiB?: number;
  /** percent of the card's time its kernels ran; absent where neither source had a figure */
  gpuPercent?: number;
  /**
   * where gpuPercent comes from: `process`, its processes' own SM utilisation (nvidia-smi pmon);
   * `cardShare`, the card's utilisation split among the containers on it by their shares' compute
   * (equally where a share has no compute limit), when per-process figures cannot be had
   */
  gpuPercentSource?: 'process' | 'cardShare';
}

export interface PodUsage {
  uid: string;
  namespace: string;
  name: string;
  containers: ContainerUsage[];
}

/** One real GPU card's use, as nvidia-smi last reported it. */
export interface GpuCardSample {
  index: number;
  /** percent of the time a kernel ran over nvidia-smi's sample period */
  gpuPercent: number;
  memoryUsedMiB: number;
}

/** The whole machine's use, as a Node's. */
export interface NodeUsage {
  name: string;
  timestamp: number;
  cpuSeconds: number;
  cpuCores?: number;
  windowMs?: number;
  memoryWorkingSetBytes: number;
  /** the real GPU cards, when the node has any and samples them */
  gpus?: GpuCardSample[];
}

/** Where the metrics API and Prometheus read resource use: the substrate that runs the Pods. */
export interface PodMetricsSource {
  /** the latest sample of every Pod with a running container; none once its containers have ended */
  podUsage(): PodUsage[];
  /** the node's latest sample (taken now when the last one is stale) */
  nodeUsage(): NodeUsage | undefined;
}

export interface Substrate extends PodLogSource, PodExecSource, PodAttachSource, PodPortForwarder, PodFileSource {
  /** the Node this substrate runs Pods for */
  readonly nodeName: string;
  /** finds the node's capacity, registers its Node and starts running the Pods bound to it (adopting those already running) */
  start(): Promise<void>;
  /** stops watching; running containers keep running so a restarted server can adopt them */
  stop(): Promise<void>;
  /** stops watching and terminates every container (a clean shutdown of the whole platform) */
  shutdown(): Promise<void>;
}
