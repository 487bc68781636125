// The substrate's CPU and memory samples on `GET /metrics`, under the names the kubelet's resource
// metrics endpoint and cAdvisor give them, so dashboards and recording rules written for a cluster
// (`rate(container_cpu_usage_seconds_total[5m])`) work against Skiff unchanged.
import type { PodMetricsSource } from '../substrate/substrate.js';
import type { MetricsRegistry } from './metrics.js';

const containerLabels = ['container', 'namespace', 'pod'] as const;

export function registerUsageMetrics(metrics: MetricsRegistry, usage: PodMetricsSource): void {
  const containers = (value: (c: { cpuSeconds: number; memoryWorkingSetBytes: number }) => number): { labels: string[]; value: number }[] =>
    usage.podUsage().flatMap((p) => p.containers.map((c) => ({ labels: [c.name, p.namespace, p.name], value: value(c) })));
  metrics.collected('container_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the container in core-seconds', containerLabels, 'counter', () => containers((c) => c.cpuSeconds));
  metrics.collected('container_memory_working_set_bytes', 'Current working set of the container in bytes', containerLabels, 'gauge', () => containers((c) => c.memoryWorkingSetBytes));
  const node = (value: (n: { cpuSeconds: number; memoryWorkingSetBytes: number }) => number): { labels: string[]; value: number }[] => {
    const n = usage.nodeUsage();
    return n ? [{ labels: [], value: value(n) }] : [];
  };
  metrics.collected('node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds', [], 'counter', () => node((n) => n.cpuSeconds));
  metrics.collected('node_memory_working_set_bytes', 'Current working set of the node in bytes', [], 'gauge', () => node((n) => n.memoryWorkingSetBytes));
}
