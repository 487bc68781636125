// A Pod's CPU and memory over time, as Skiff serves it at /skiff/v1/namespaces/<ns>/pods/<pod>/usage
// (src/server/usage-history.ts): not a Kubernetes kind, Skiff's own read for its dashboard.

export interface ContainerSample {
  name: string;
  /** cores used over the window before this sample; absent for a container's first sample */
  cpuCores?: number;
  memoryBytes: number;
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
