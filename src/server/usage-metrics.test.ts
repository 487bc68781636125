// The substrate's samples under the kubelet's resource-metric names, per container, per Pod and for the
// node, and kube-state-metrics' kube_pod_labels carrying each Pod's Kueue queue for joins.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { StoredObject } from '../api/meta.js';
import type { PodMetricsSource } from '../substrate/substrate.js';
import { MetricsRegistry } from './metrics.js';
import { promLabelName, registerUsageMetrics } from './usage-metrics.js';

const container = (name: string, cpuSeconds: number, memoryWorkingSetBytes: number) => ({ name, startedAt: '2024-01-01T00:00:00Z', timestamp: 1, cpuSeconds, memoryWorkingSetBytes });

const usage: PodMetricsSource = {
  podUsage: () => [{ uid: 'u1', namespace: 'team-a', name: 'train-0', containers: [container('main', 2.5, 1000), container('sidecar', 0.5, 24)] }],
  nodeUsage: () => ({ name: 'node', timestamp: 1, cpuSeconds: 100, memoryWorkingSetBytes: 5000 }),
};

const pod = (name: string, uid: string, labels?: Record<string, string>): StoredObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team-a', uid, resourceVersion: '1', ...(labels ? { labels } : {}) } }) as StoredObject;

it('reports containers, Pods and the node under the kubelet\'s names, and Pods\' queues on kube_pod_labels', async () => {
  const m = new MetricsRegistry({ processMetrics: false });
  registerUsageMetrics(m, usage, () => [pod('train-0', 'u1', { 'kueue.x-k8s.io/queue-name': 'team-a-queue', app: 'x' }), pod('other', 'u2')]);
  const text = await m.render();
  for (const line of [
    '# TYPE container_cpu_usage_seconds_total counter',
    'container_cpu_usage_seconds_total{container="main",namespace="team-a",pod="train-0"} 2.5',
    'container_memory_working_set_bytes{container="sidecar",namespace="team-a",pod="train-0"} 24',
    '# TYPE pod_cpu_usage_seconds_total counter',
    'pod_cpu_usage_seconds_total{namespace="team-a",pod="train-0"} 3',
    '# TYPE pod_memory_working_set_bytes gauge',
    'pod_memory_working_set_bytes{namespace="team-a",pod="train-0"} 1024',
    'node_cpu_usage_seconds_total 100',
    '# HELP kube_pod_labels Kubernetes labels converted to Prometheus labels.',
    '# TYPE kube_pod_labels gauge',
    'kube_pod_labels{namespace="team-a",pod="train-0",uid="u1",label_kueue_x_k8s_io_queue_name="team-a-queue"} 1',
    'kube_pod_labels{namespace="team-a",pod="other",uid="u2",label_kueue_x_k8s_io_queue_name=""} 1',
  ]) assert.ok(text.split('\n').includes(line), `${line}\n${text}`);
  assert.doesNotMatch(text, /label_app/, 'only the labels kube-state-metrics would be allowed to export');
  assert.equal(promLabelName('app.kubernetes.io/name'), 'label_app_kubernetes_io_name');
});

it("serves each container's use of each real card under dcgm-exporter's names and labels, one series per card and container", async () => {
  const gpu = (index: number, memoryUsedMiB: number | undefined, gpuPercent: number | undefined) =>
    ({ index, uuid: `GPU-${index}`, modelName: 'NVIDIA H100 80GB HBM3', ...(memoryUsedMiB !== undefined ? { memoryUsedMiB } : {}), ...(gpuPercent !== undefined ? { gpuPercent, gpuPercentSource: 'process' as const } : {}) });
  const shared: PodMetricsSource = {
    podUsage: () => [
      { uid: 'u1', namespace: 'team-a', name: 'train-0', containers: [{ ...container('main', 1, 1), gpus: [gpu(0, 1500, 55), gpu(1, 10, undefined)] }, container('sidecar', 0, 1)] },
      { uid: 'u2', namespace: 'team-b', name: 'infer', containers: [{ ...container('main', 1, 1), gpus: [gpu(0, 700, 5)] }] },
    ],
    nodeUsage: () => undefined,
  };
  const m = new MetricsRegistry({ processMetrics: false });
  registerUsageMetrics(m, shared, undefined, 'gpu-node');
  const text = await m.render();
  const labels = (i: number, c: string, ns: string, pod: string): string => `gpu="${i}",UUID="GPU-${i}",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node",container="${c}",namespace="${ns}",pod="${pod}"`;
  for (const line of [
    '# TYPE DCGM_FI_DEV_GPU_UTIL gauge',
    `DCGM_FI_DEV_GPU_UTIL{${labels(0, 'main', 'team-a', 'train-0')}} 55`,
    `DCGM_FI_DEV_GPU_UTIL{${labels(0, 'main', 'team-b', 'infer')}} 5`,
    '# TYPE DCGM_FI_DEV_FB_USED gauge',
    `DCGM_FI_DEV_FB_USED{${labels(0, 'main', 'team-a', 'train-0')}} 1500`,
    `DCGM_FI_DEV_FB_USED{${labels(1, 'main', 'team-a', 'train-0')}} 10`,
    `DCGM_FI_DEV_FB_USED{${labels(0, 'main', 'team-b', 'infer')}} 700`,
  ]) assert.ok(text.split('\n').includes(line), `${line}\n${text}`);
  assert.doesNotMatch(text, /DCGM_FI_DEV_GPU_UTIL\{gpu="1"/, 'no utilisation figure, no series');
  assert.doesNotMatch(text, /^DCGM_FI_DEV_\w+\{[^}]*container="sidecar"/m, "a container without a card has no GPU series");
});
