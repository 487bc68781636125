// A Pod's CPU and memory over time, as Skiff serves it at /skiff/v1/namespaces/<ns>/pods/<pod>/usage
// (src/server/usage-history.ts), and a node's GPU cards with their shares at /skiff/v1/nodes/<node>/gpus
// (src/server/gpu-usage.ts): not Kubernetes kinds, Skiff's own reads for its dashboard.

export interface ContainerSample {
  name: string;
  /** cores used over the window before this sample; absent for a container's first sample */
  cpuCores?: number;
  memoryBytes: number;
  /** the real GPU cards its processes use, when the node samples them (nvidia-smi), one per card */
  gpus?: ContainerGpuSample[];
}

/** A container's use of one real GPU card in a sample. */
export interface ContainerGpuSample {
  /** the card's index on the node */
  index: number;
  /** framebuffer memory its processes hold, in MiB */
  memoryMiB?: number;
  /** percent of the card's time its kernels ran */
  gpuPercent?: number;
  /** `process`: measured for its processes (nvidia-smi pmon); `cardShare`: the card's utilisation split among the containers on it */
  gpuPercentSource?: 'process' | 'cardShare';
}

export interface UsageSample {
  /** ms since the epoch */
  t: number;
  containers: ContainerSample[];
}

/** the plain GET's answer for one Pod; `?watch=true` streams `{ "pod": name, "sample": UsageSample }` lines instead */
export interface PodUsageHistory {
  kind: 'PodUsageHistory';
  namespace: string;
  name: string;
  intervalSeconds: number;
  samples: UsageSample[];
}

/** the plain GET's answer for several Pods (`/skiff/v1/namespaces/<ns>/usage?pod=a&pod=b`) */
export interface PodUsageHistoryList {
  kind: 'PodUsageHistoryList';
  namespace: string;
  intervalSeconds: number;
  pods: Record<string, UsageSample[]>;
}

/** one line of a `?watch=true` stream */
export interface UsageWatchLine {
  pod: string;
  sample: UsageSample;
}

/** One container's share of a card. */
export interface GpuShareAllocation {
  namespace: string;
  pod: string;
  container: string;
  memoryMiB: number;
  /** percent of the card's compute; 0 is unlimited */
  cores: number;
  /** the card is the container's alone (all its memory and compute) */
  exclusive: boolean;
}

/** One card of a node: what it has, what its shares hold, and who holds them. */
export interface GpuCardUsage {
  index: number;
  uuid: string;
  type: string;
  memoryMiB: number;
  cores: number;
  /** how many shares it may be split into */
  shares: number;
  used: { shares: number; memoryMiB: number; cores: number };
  allocations: GpuShareAllocation[];
  /** measured on a real card, when the node samples it (nvidia-smi) */
  utilization?: { gpuPercent: number; memoryUsedMiB: number };
}

/** the answer of `GET /skiff/v1/nodes/<node>/gpus`: a node's cards and their shares */
export interface NodeGpuUsage {
  kind: 'NodeGpuUsage';
  node: string;
  cards: GpuCardUsage[];
}
