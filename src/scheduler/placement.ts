// Placement: does a pod fit on a node beside the pods already there, and which GPUs does it get.
// Queues, quotas and gangs (admission) sit in front of this and come separately.
import type { Pod } from '../api/core-types.js';
import type { GpuCard, PodDevices } from '../api/gpu-sharing.js';
import { HamiAnnotation, decodeNodeDevices, defaultDeviceSplitCount, encodePodDevices, podGpuRequests, shareResources } from '../api/gpu-sharing.js';
import { parseQuantity } from '../api/quantity.js';
import type { GpuInfo } from './node.js';
import type { GpuPolicy, GpuQuota } from './gpu-share.js';
import { cardReasons, cardUse, fitDevices, shortage } from './gpu-share.js';
import type { ResourceList } from './resources.js';
import { GPU, add, podRequests } from './resources.js';

export interface NodeView {
  name: string;
  labels: Record<string, string>;
  allocatable: ResourceList;
  /** GPU indices present on the node */
  gpus: number[];
  /** the node's cards, with their memory and how many shares each may be split into */
  cards?: GpuCard[];
}

export type PlacementResult =
  | { fits: true; gpus: number[]; devices?: PodDevices }
  | { fits: false; reason: string };

/** what placement needs to know beyond the node and its Pods */
export interface PlacementContext {
  /** the Pod's namespace's limits on HAMi's quota names, and what its placed Pods use of them */
  gpuQuota?: GpuQuota;
}

export interface Placement {
  place(pod: Pod, node: NodeView, placed: Pod[], ctx?: PlacementContext): PlacementResult;
}

export const gpuAnnotation = 'skiff.dev/gpus';

export function nodeView(node: { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; status?: any }): NodeView {
  const allocatable: ResourceList = {};
  for (const [k, v] of Object.entries((node.status?.allocatable ?? {}) as Record<string, string>)) allocatable[k] = parseQuantity(v) ?? 0;
  let found: GpuInfo[] = [];
  try {
    found = JSON.parse(node.metadata.annotations?.[gpuAnnotation] ?? '[]') as GpuInfo[];
  } catch {
    found = [];
  }
  let gpus = found.map((g) => g.index);
  if (gpus.length === 0 && allocatable[GPU]) gpus = Array.from({ length: allocatable[GPU] }, (_, i) => i);
  let cards: GpuCard[] | undefined;
  const registered = node.metadata.annotations?.[HamiAnnotation.register];
  if (registered) {
    try {
      cards = decodeNodeDevices(registered);
    } catch {
      cards = undefined;
    }
  }
  cards ??= found.map((g) => ({ index: g.index, uuid: g.uuid, type: g.name, memoryMiB: g.memoryMiB, cores: 100, split: 1, health: true }));
  if (cards.length) gpus = cards.map((c) => c.index);
  return { name: node.metadata.name, labels: node.metadata.labels ?? {}, allocatable, gpus, ...(cards.length ? { cards } : {}) };
}

export function assignedGpus(pod: Pod): number[] {
  const v = pod.metadata.annotations?.[gpuAnnotation];
  return v ? v.split(',').filter(Boolean).map(Number) : [];
}

/** a node's cards; one without a card list (a node given as numbers) has whole cards by index */
function cardsOf(node: NodeView): GpuCard[] {
  return node.cards ?? node.gpus.map((index) => ({ index, uuid: `GPU-${index}`, type: 'NVIDIA', memoryMiB: 0, cores: 100, split: defaultDeviceSplitCount, health: true }));
}

/**
 * The annotations that record a placement on the Pod: Skiff's GPU indices, which the node agent and
 * earlier code read, and HAMi's assignment, which HAMi's device plugin and tools read.
 */
export function assignmentAnnotations(result: Extract<PlacementResult, { fits: true }>, nodeName: string, now = Date.now()): Record<string, string> {
  const out: Record<string, string> = {};
  if (result.gpus.length) out[gpuAnnotation] = result.gpus.join(',');
  if (result.devices) {
    const enc = encodePodDevices(result.devices);
    out[HamiAnnotation.toAllocate] = enc;
    out[HamiAnnotation.allocated] = enc;
    out[HamiAnnotation.node] = nodeName;
    out[HamiAnnotation.time] = String(Math.floor(now / 1000));
  }
  return out;
}

/** the Pod as it will be once placed: with its assignment recorded */
export function withAssignment(pod: Pod, result: Extract<PlacementResult, { fits: true }>, nodeName: string): Pod {
  const extra = assignmentAnnotations(result, nodeName);
  if (Object.keys(extra).length === 0) return pod;
  return { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, ...extra } } };
}

/**
 * Fits requests against allocatable, then the Pod's GPU asks against the node's cards: whole cards,
 * or HAMi's shares of memory and compute packed by the Pod's card policy (spread unless it says
 * binpack). `defaultPolicy` is the node's card policy.
 */
export class ResourceFit implements Placement {
  constructor(private readonly defaultPolicy: GpuPolicy = 'spread') {}

  place(pod: Pod, node: NodeView, placed: Pod[], ctx: PlacementContext = {}): PlacementResult {
    for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) {
      if (node.labels[k] !== v) return { fits: false, reason: `0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector (${k}=${v}).` };
    }
    const want = podRequests(pod);
    let used: ResourceList = {};
    for (const p of placed) used = add(used, podRequests(p));
    const short: string[] = [];
    for (const [res, amount] of Object.entries(want)) {
      // a share's memory and compute are counted per card below, not against the node's allocatable
      if (amount <= 0 || shareResources.includes(res)) continue;
      const free = (node.allocatable[res] ?? 0) - (used[res] ?? 0);
      if (amount > free + 1e-9) short.push(`Insufficient ${res} (requested ${fmt(res, amount)}, free ${fmt(res, Math.max(0, free))} of ${fmt(res, node.allocatable[res] ?? 0)})`);
    }
    if (short.length) return { fits: false, reason: `0/1 nodes are available: ${short.join(', ')}.` };
    // what the cards hold is worked out only for a Pod that asks for one
    if (!podGpuRequests(pod).some(Boolean)) return { fits: true, gpus: [] };
    const cards = cardsOf(node);
    const fit = fitDevices(pod, cardUse(cards, placed, assignedGpus), { policy: this.defaultPolicy, ...(ctx.gpuQuota ? { quota: ctx.gpuQuota } : {}) });
    if (!fit) return { fits: true, gpus: [] };
    if (!fit.fits) return { fits: false, reason: `0/1 nodes are available: ${shortage(fit)} (${cardReasons(fit.reasons, fit.cards)}).` };
    const index = new Map(cards.map((c) => [c.uuid, c.index]));
    const gpus = [...new Set(fit.devices.flat().map((d) => index.get(d.uuid) ?? -1))].filter((i) => i >= 0).sort((a, b) => a - b);
    return { fits: true, gpus, devices: fit.devices };
  }
}

function fmt(res: string, v: number): string {
  if (res === 'memory') return `${Math.round(v / 2 ** 20)}Mi`;
  if (res === 'cpu') return Number.isInteger(v) ? String(v) : `${Math.round(v * 1000)}m`;
  return String(Math.round(v * 1000) / 1000);
}
