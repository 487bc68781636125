// GPU sharing in HAMi's vocabulary: the resource names a container asks with, the annotations that pin
// or avoid cards and choose a policy, and the annotations that record the cards a Pod was given and the
// cards a node has. Pods written for a cluster running HAMi run here unchanged, and a Pod placed here
// carries its assignment in the same format HAMi's device plugin reads.
import type { Container, Pod } from './core-types.js';
import { parseQuantity } from './quantity.js';

/** what a container states in its limits (or requests) */
export const GpuResource = {
  /** cards, each share on a different card; on a node: cards x deviceSplitCount */
  count: 'nvidia.com/gpu',
  /** MiB of each card's memory */
  memory: 'nvidia.com/gpumem',
  /** percent of each card's memory, instead of gpumem */
  memoryPercentage: 'nvidia.com/gpumem-percentage',
  /** percent of each card's compute (SMs); 100 is the card alone */
  cores: 'nvidia.com/gpucores',
  /** 0 high, 1 low (HAMi-core's CUDA_TASK_PRIORITY) */
  priority: 'nvidia.com/priority',
} as const;

/** HAMi's quota names: a namespace's memory and compute summed over every card its Pods were given */
export const GpuQuotaName = { memory: `limits.${GpuResource.memory}`, cores: `limits.${GpuResource.cores}` } as const;

/** the share names placement and quota read, which no node advertises as a countable resource */
export const shareResources: readonly string[] = [GpuResource.memory, GpuResource.memoryPercentage, GpuResource.cores, GpuResource.priority];

export const HamiAnnotation = {
  /** card types to use / avoid: comma-separated, each a case-insensitive substring of the card's type */
  useType: 'nvidia.com/use-gputype',
  noUseType: 'nvidia.com/nouse-gputype',
  /** card UUIDs to use / avoid, comma-separated */
  useUuid: 'nvidia.com/use-gpuuuid',
  noUseUuid: 'nvidia.com/nouse-gpuuuid',
  /** how cards are chosen on a node: spread (default) or binpack; mutex takes only idle cards */
  gpuPolicy: 'hami.io/gpu-scheduler-policy',
  /** how nodes are chosen: binpack (default) or spread */
  nodePolicy: 'hami.io/node-scheduler-policy',
  /** the assignment, as the scheduler writes it and the device plugin reads it */
  toAllocate: 'hami.io/vgpu-devices-to-allocate',
  allocated: 'hami.io/vgpu-devices-allocated',
  node: 'hami.io/vgpu-node',
  time: 'hami.io/vgpu-time',
  /** on a Node: its cards */
  register: 'hami.io/node-nvidia-register',
} as const;

/** the device kind HAMi records in an assignment (its request type, not the card's model) */
export const NvidiaDevice = 'NVIDIA';

/** HAMi's default number of shares a card is split into */
export const defaultDeviceSplitCount = 10;

/** A card of a node, as placement sees it. */
export interface GpuCard {
  index: number;
  uuid: string;
  /** the model, e.g. "NVIDIA A100-SXM4-80GB" */
  type: string;
  memoryMiB: number;
  /** compute in percent: 100 */
  cores: number;
  /** how many shares it may be split into */
  split: number;
  health: boolean;
}

/** One container's ask, with HAMi's defaults applied. */
export interface GpuRequest {
  /** cards, each on a different one */
  nums: number;
  /** MiB on each card; 0 when the memory is a percentage */
  memoryMiB: number;
  /** percent of each card's memory, when memoryMiB is 0 */
  memoryPercent?: number;
  /** percent of each card's compute; 0 leaves compute unlimited */
  cores: number;
  priority?: number;
  /** whether the container named gpumem (or its percentage) and gpucores itself: a shortage of a
   *  defaulted one is a shortage of whole cards */
  stated: { memory: boolean; cores: boolean };
}

/** One share of a card given to a container. */
export interface DeviceShare {
  uuid: string;
  type: string;
  memoryMiB: number;
  cores: number;
}

/** A Pod's shares, one list per container: init containers first, then containers (HAMi's order). */
export type PodDevices = DeviceShare[][];

type Limits = Record<string, string | number> | undefined;

function stated(c: Container, name: string, limitsOnly = false): number | undefined {
  const read = (l: Limits): number | undefined => (l && l[name] !== undefined ? parseQuantity(l[name]) ?? NaN : undefined);
  const v = read(c.resources?.limits);
  return v !== undefined || limitsOnly ? v : read(c.resources?.requests);
}

const whole = (v: number | undefined): number | undefined => (v === undefined || Number.isNaN(v) ? v : Math.trunc(v));

/**
 * The container's ask, or undefined when it asks for no card. As HAMi's admission and its scheduler
 * read a container: a card is implied when only memory or cores are given; memory left out (or 0) is
 * the whole card; a whole card's memory with no cores stated takes its compute too (cores 100), so a
 * plain `nvidia.com/gpu: 1` has its card to itself.
 */
export function containerGpuRequest(c: Container): GpuRequest | undefined {
  let nums = whole(stated(c, GpuResource.count));
  const mem = whole(stated(c, GpuResource.memory));
  const pct = whole(stated(c, GpuResource.memoryPercentage));
  const cores = whole(stated(c, GpuResource.cores));
  if (nums === undefined) {
    // HAMi's webhook adds the count only from limits
    const named = [GpuResource.memory, GpuResource.memoryPercentage, GpuResource.cores].some((n) => stated(c, n, true) !== undefined);
    if (!named) return undefined;
    nums = 1;
  }
  if (Number.isNaN(nums) || nums <= 0) return undefined;
  const memoryMiB = mem !== undefined && !Number.isNaN(mem) && mem > 0 ? mem : 0;
  let memoryPercent = pct !== undefined && !Number.isNaN(pct) && pct > 0 ? Math.min(pct, 100) : undefined;
  if (memoryPercent === undefined && memoryMiB === 0) memoryPercent = 100;
  if (memoryMiB > 0) memoryPercent = undefined;
  const exclusive = pct !== undefined ? pct === 100 : mem === undefined;
  const coreValue = cores !== undefined && !Number.isNaN(cores) ? Math.max(0, Math.min(cores, 100)) : exclusive ? 100 : 0;
  const prio = whole(stated(c, GpuResource.priority));
  return {
    nums, memoryMiB, ...(memoryPercent !== undefined ? { memoryPercent } : {}), cores: coreValue,
    ...(prio !== undefined && !Number.isNaN(prio) ? { priority: prio } : {}),
    stated: { memory: mem !== undefined || pct !== undefined, cores: cores !== undefined },
  };
}

/** every container of the Pod, init containers first (the order of an assignment) */
export function podContainers(pod: Pod): { container: Container; init: boolean }[] {
  return [...(pod.spec.initContainers ?? []).map((c) => ({ container: c, init: true })), ...(pod.spec.containers ?? []).map((c) => ({ container: c, init: false }))];
}

/** each container's ask, aligned with podContainers; undefined for one that asks for no card */
export function podGpuRequests(pod: Pod): (GpuRequest | undefined)[] {
  return podContainers(pod).map(({ container }) => containerGpuRequest(container));
}

/** the memory a request takes on a card */
export function memoryOn(req: Pick<GpuRequest, 'memoryMiB' | 'memoryPercent'>, card: Pick<GpuCard, 'memoryMiB'>): number {
  if (req.memoryMiB > 0) return req.memoryMiB;
  return Math.floor((card.memoryMiB * (req.memoryPercent ?? 100)) / 100);
}

/** `UUID,NVIDIA,MiB,cores:` per share, each container's list closed by `;` (HAMi's EncodePodSingleDevice) */
export function encodePodDevices(pd: PodDevices): string {
  return pd.map((ctr) => ctr.map((d) => `${d.uuid},${d.type},${d.memoryMiB},${d.cores}:`).join('') + ';').join('');
}

/** the assignment read back; one list per container (trailing empty ones beyond `containers` dropped) */
export function decodePodDevices(s: string, containers?: number): PodDevices {
  const parts = s.split(';');
  // the closing `;` of the last container leaves an empty part
  if (parts.length && parts[parts.length - 1] === '') parts.pop();
  const out = parts.map((part) => part.split(':').filter((x) => x.includes(',')).map((entry) => {
    const [uuid = '', type = '', mem = '0', cores = '0'] = entry.split(',');
    return { uuid, type, memoryMiB: Number(mem) || 0, cores: Number(cores) || 0 };
  }));
  if (containers !== undefined) {
    while (out.length < containers) out.push([]);
    out.length = containers;
  }
  return out;
}

/** the Pod's shares, when it has been given some */
export function podDevices(pod: Pod): PodDevices | undefined {
  const v = pod.metadata.annotations?.[HamiAnnotation.allocated];
  if (v === undefined) return undefined;
  return decodePodDevices(v, podContainers(pod).length);
}

/**
 * What the Pod holds on each card while it runs: init containers run one at a time and the
 * containers together, so a card carries the larger of the biggest init container's share and the
 * containers' sum (HAMi's CollapseInitContainerUsage). `slots` is how many shares of the card it takes.
 */
export function collapsedShares(pod: Pod, pd: PodDevices): Map<string, { memoryMiB: number; cores: number; slots: number }> {
  const nInit = pod.spec.initContainers?.length ?? 0;
  const init = new Map<string, { memoryMiB: number; cores: number; slots: number }>();
  const app = new Map<string, { memoryMiB: number; cores: number; slots: number }>();
  pd.forEach((ctr, i) => {
    for (const d of ctr) {
      if (i < nInit) {
        const cur = init.get(d.uuid) ?? { memoryMiB: 0, cores: 0, slots: 1 };
        init.set(d.uuid, { memoryMiB: Math.max(cur.memoryMiB, d.memoryMiB), cores: Math.max(cur.cores, d.cores), slots: 1 });
      } else {
        const cur = app.get(d.uuid) ?? { memoryMiB: 0, cores: 0, slots: 0 };
        app.set(d.uuid, { memoryMiB: cur.memoryMiB + d.memoryMiB, cores: cur.cores + d.cores, slots: cur.slots + 1 });
      }
    }
  });
  const out = new Map<string, { memoryMiB: number; cores: number; slots: number }>();
  for (const uuid of new Set([...init.keys(), ...app.keys()])) {
    const a = init.get(uuid) ?? { memoryMiB: 0, cores: 0, slots: 0 };
    const b = app.get(uuid) ?? { memoryMiB: 0, cores: 0, slots: 0 };
    out.set(uuid, { memoryMiB: Math.max(a.memoryMiB, b.memoryMiB), cores: Math.max(a.cores, b.cores), slots: Math.max(1, a.slots, b.slots) });
  }
  return out;
}

/**
 * What the Pod counts against HAMi's quota names (`limits.nvidia.com/gpumem`, `limits.nvidia.com/gpucores`):
 * memory and cores summed over the shares it was given, or, before it has any, over the shares it
 * asks for (a percentage of memory counted on a card of `cardMemoryMiB`). Undefined for a Pod that
 * asks for no card.
 */
export function gpuQuotaUsage(pod: Pod, cardMemoryMiB = 0): { memoryMiB: number; cores: number } | undefined {
  const given = podDevices(pod);
  if (given && given.some((c) => c.length)) {
    let memoryMiB = 0;
    let cores = 0;
    for (const s of collapsedShares(pod, given).values()) {
      memoryMiB += s.memoryMiB;
      cores += s.cores;
    }
    return { memoryMiB, cores };
  }
  const reqs = podGpuRequests(pod);
  if (!reqs.some(Boolean)) return undefined;
  const nInit = pod.spec.initContainers?.length ?? 0;
  const sum = { memoryMiB: 0, cores: 0 };
  const peak = { memoryMiB: 0, cores: 0 };
  reqs.forEach((r, i) => {
    if (!r) return;
    const m = r.nums * memoryOn(r, { memoryMiB: cardMemoryMiB });
    const c = r.nums * r.cores;
    if (i < nInit) {
      peak.memoryMiB = Math.max(peak.memoryMiB, m);
      peak.cores = Math.max(peak.cores, c);
    } else {
      sum.memoryMiB += m;
      sum.cores += c;
    }
  });
  return { memoryMiB: Math.max(sum.memoryMiB, peak.memoryMiB), cores: Math.max(sum.cores, peak.cores) };
}

/** A card as HAMi's device plugin registers it on its Node (the JSON of `hami.io/node-nvidia-register`). */
export interface HamiDeviceInfo {
  id: string;
  index: number;
  count: number;
  devmem: number;
  devcore: number;
  type: string;
  numa: number;
  mode: string;
  health: boolean;
}

export function encodeNodeDevices(cards: GpuCard[]): string {
  const infos: HamiDeviceInfo[] = cards.map((c) => ({ id: c.uuid, index: c.index, count: c.split, devmem: c.memoryMiB, devcore: c.cores, type: c.type, numa: 0, mode: 'hami-core', health: c.health }));
  return JSON.stringify(infos);
}

/** the cards of a `hami.io/node-nvidia-register` value; HAMi leaves zero fields out */
export function decodeNodeDevices(s: string): GpuCard[] {
  const parsed = JSON.parse(s) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`${HamiAnnotation.register} is not a list of devices`);
  return parsed.map((d: Partial<HamiDeviceInfo>) => ({
    index: typeof d.index === 'number' ? d.index : 0,
    uuid: String(d.id ?? ''),
    type: String(d.type ?? ''),
    memoryMiB: Number(d.devmem ?? 0),
    cores: Number(d.devcore ?? 0),
    split: Number(d.count ?? 0),
    health: d.health === true,
  }));
}

/** The smallest card any of these nodes registers (MiB), 0 when none does: how quota counts a share
 *  asked as a percentage before it has a card. A register annotation that does not parse offers none. */
export function smallestCardMiB(nodes: Iterable<{ metadata: { annotations?: Record<string, string> } }>): number {
  let least = Infinity;
  for (const n of nodes) {
    const reg = n.metadata.annotations?.[HamiAnnotation.register];
    if (!reg) continue;
    try {
      for (const c of decodeNodeDevices(reg)) if (c.memoryMiB > 0) least = Math.min(least, c.memoryMiB);
    } catch {
      // offers no card
    }
  }
  return Number.isFinite(least) ? least : 0;
}
