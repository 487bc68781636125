// Placement: does a pod fit on a node beside the pods already there, and which GPUs does it get.
// Queues, quotas and gangs (admission) sit in front of this and come separately.
import type { Pod } from '../api/core-types.js';
import { parseQuantity } from '../api/quantity.js';
import type { ResourceList } from './resources.js';
import { GPU, add, podRequests } from './resources.js';

export interface NodeView {
  name: string;
  labels: Record<string, string>;
  allocatable: ResourceList;
  /** GPU indices present on the node */
  gpus: number[];
}

export type PlacementResult = { fits: true; gpus: number[] } | { fits: false; reason: string };

export interface Placement {
  place(pod: Pod, node: NodeView, placed: Pod[]): PlacementResult;
}

export const gpuAnnotation = 'skiff.dev/gpus';

export function nodeView(node: { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; status?: any }): NodeView {
  const allocatable: ResourceList = {};
  for (const [k, v] of Object.entries((node.status?.allocatable ?? {}) as Record<string, string>)) allocatable[k] = parseQuantity(v) ?? 0;
  let gpus: number[] = [];
  try {
    gpus = (JSON.parse(node.metadata.annotations?.[gpuAnnotation] ?? '[]') as { index: number }[]).map((g) => g.index);
  } catch {
    gpus = [];
  }
  if (gpus.length === 0 && allocatable[GPU]) gpus = Array.from({ length: allocatable[GPU] }, (_, i) => i);
  return { name: node.metadata.name, labels: node.metadata.labels ?? {}, allocatable, gpus };
}

export function assignedGpus(pod: Pod): number[] {
  const v = pod.metadata.annotations?.[gpuAnnotation];
  return v ? v.split(',').filter(Boolean).map(Number) : [];
}

/** Fits requests against allocatable; whole GPUs are handed out by index. */
export class ResourceFit implements Placement {
  place(pod: Pod, node: NodeView, placed: Pod[]): PlacementResult {
    for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) {
      if (node.labels[k] !== v) return { fits: false, reason: `0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector (${k}=${v}).` };
    }
    const want = podRequests(pod);
    let used: ResourceList = {};
    for (const p of placed) used = add(used, podRequests(p));
    const short: string[] = [];
    for (const [res, amount] of Object.entries(want)) {
      if (amount <= 0) continue;
      const free = (node.allocatable[res] ?? 0) - (used[res] ?? 0);
      if (amount > free + 1e-9) short.push(`Insufficient ${res} (requested ${fmt(res, amount)}, free ${fmt(res, Math.max(0, free))} of ${fmt(res, node.allocatable[res] ?? 0)})`);
    }
    if (short.length) return { fits: false, reason: `0/1 nodes are available: ${short.join(', ')}.` };
    const n = Math.ceil(want[GPU] ?? 0);
    if (n === 0) return { fits: true, gpus: [] };
    const taken = new Set(placed.flatMap(assignedGpus));
    const free = node.gpus.filter((g) => !taken.has(g));
    if (free.length < n) return { fits: false, reason: `0/1 nodes are available: Insufficient ${GPU} (requested ${n}, free ${free.length}).` };
    return { fits: true, gpus: free.slice(0, n) };
  }
}

function fmt(res: string, v: number): string {
  if (res === 'memory') return `${Math.round(v / 2 ** 20)}Mi`;
  if (res === 'cpu') return Number.isInteger(v) ? String(v) : `${Math.round(v * 1000)}m`;
  return String(Math.round(v * 1000) / 1000);
}
