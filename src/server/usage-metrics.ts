// The substrate's CPU and memory samples on `GET /metrics`, under the names the kubelet's resource
// metrics endpoint and cAdvisor give them, so dashboards and recording rules written for a cluster
// (`rate(container_cpu_usage_seconds_total[5m])`) work against Skiff unchanged: per container, per Pod
// and for the node.
//
// Which Kueue queue a Pod runs under is its label `kueue.x-k8s.io/queue-name`, which a cluster
// exports through kube-state-metrics' kube_pod_labels (with `--metric-labels-allowlist=pods=[...]`):
// Skiff serves that series too, so use by queue is the usual join,
// `pod_cpu_usage_seconds_total * on (namespace, pod) group_left (label_kueue_x_k8s_io_queue_name) kube_pod_labels`.
//
// On real GPU cards each container's use of each card is served under dcgm-exporter's names and
// labels (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED with gpu, UUID, modelName, Hostname, container,
// namespace, pod), what GPU dashboards for Kubernetes read. dcgm-exporter labels a card's series with
// the one Pod holding it; under GPU sharing several containers hold one card, so here there is one
// series per card and container, each with that container's own part.
import type { StoredObject } from '../api/meta.js';
import type { ContainerGpuUsage, PodMetricsSource } from '../substrate/substrate.js';
import type { MetricsRegistry } from './metrics.js';

const containerLabels = ['container', 'namespace', 'pod'] as const;
const podLabels = ['namespace', 'pod'] as const;

/** Pod labels exported on kube_pod_labels, each as kube-state-metrics names it (`label_` and the key made a Prometheus name) */
export const exportedPodLabels = ['kueue.x-k8s.io/queue-name'];

export const promLabelName = (key: string): string => `label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;

const gpuLabels = ['gpu', 'UUID', 'modelName', 'Hostname', 'container', 'namespace', 'pod'] as const;

/** `pods`: every Pod, for kube_pod_labels (none without it); `hostname`: the node, for the GPU series' Hostname */
export function registerUsageMetrics(metrics: MetricsRegistry, usage: PodMetricsSource, pods?: () => StoredObject[], hostname = ''): void {
  type Use = { cpuSeconds: number; memoryWorkingSetBytes: number };
  const containers = (value: (c: Use) => number): { labels: string[]; value: number }[] =>
    usage.podUsage().flatMap((p) => p.containers.map((c) => ({ labels: [c.name, p.namespace, p.name], value: value(c) })));
  metrics.collected('container_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the container in core-seconds', containerLabels, 'counter', () => containers((c) => c.cpuSeconds));
  metrics.collected('container_memory_working_set_bytes', 'Current working set of the container in bytes', containerLabels, 'gauge', () => containers((c) => c.memoryWorkingSetBytes));
  // a Pod's use is its containers' together
  const perPod = (value: (c: Use) => number): { labels: string[]; value: number }[] =>
    usage.podUsage().map((p) => ({ labels: [p.namespace, p.name], value: p.containers.reduce((sum, c) => sum + value(c), 0) }));
  metrics.collected('pod_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the pod in core-seconds', podLabels, 'counter', () => perPod((c) => c.cpuSeconds));
  metrics.collected('pod_memory_working_set_bytes', 'Current working set of the pod in bytes', podLabels, 'gauge', () => perPod((c) => c.memoryWorkingSetBytes));
  const node = (value: (n: Use) => number): { labels: string[]; value: number }[] => {
    const n = usage.nodeUsage();
    return n ? [{ labels: [], value: value(n) }] : [];
  };
  metrics.collected('node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds', [], 'counter', () => node((n) => n.cpuSeconds));
  metrics.collected('node_memory_working_set_bytes', 'Current working set of the node in bytes', [], 'gauge', () => node((n) => n.memoryWorkingSetBytes));
  const gpus = (value: (g: ContainerGpuUsage) => number | undefined): { labels: string[]; value: number }[] =>
    usage.podUsage().flatMap((p) => p.containers.flatMap((c) => (c.gpus ?? []).flatMap((g) => {
      const v = value(g);
      return v === undefined ? [] : [{ labels: [String(g.index), g.uuid, g.modelName, hostname, c.name, p.namespace, p.name], value: v }];
    })));
  metrics.collected('DCGM_FI_DEV_GPU_UTIL', 'GPU utilization (in %).', gpuLabels, 'gauge', () => gpus((g) => g.gpuPercent));
  metrics.collected('DCGM_FI_DEV_FB_USED', 'Framebuffer memory used (in MiB).', gpuLabels, 'gauge', () => gpus((g) => g.memoryUsedMiB));
  if (!pods) return;
  // a label the Pod lacks is empty, which Prometheus reads as absent
  metrics.collected('kube_pod_labels', 'Kubernetes labels converted to Prometheus labels.', ['namespace', 'pod', 'uid', ...exportedPodLabels.map(promLabelName)], 'gauge',
    () => pods().map((p) => ({ labels: [p.metadata.namespace ?? '', p.metadata.name, p.metadata.uid, ...exportedPodLabels.map((k) => p.metadata.labels?.[k] ?? '')], value: 1 })));
}
