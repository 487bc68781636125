// The in-container side of GPU sharing: what a container with a share of a card finds in its
// environment, as HAMi's device plugin hands it over. CUDA_VISIBLE_DEVICES names its cards; a share
// smaller than the whole card adds HAMi-core's variables (a memory limit per device, the compute
// limit, the shared-region file every process of the container uses, the task priority), and MPS's
// where an MPS control daemon runs. The limits hold only where HAMi-core's libvgpu.so is loaded into
// the container's processes: HAMi mounts /etc/ld.so.preload naming it; under bubblewrap a generated
// ld.so.preload is bound there the same way.
import { existsSync, readFileSync } from 'node:fs';
import type { DeviceShare, GpuCard } from '../../api/gpu-sharing.js';

/** where the library is seen inside a sandbox (HAMi's own path) */
export const vgpuLibTarget = '/usr/local/vgpu/libvgpu.so';
/** the lock directory HAMi-core's processes share across containers */
export const vgpuLockDir = '/tmp/vgpulock';
/** where MPS clients find the control daemon unless CUDA_MPS_PIPE_DIRECTORY says otherwise */
export const defaultMpsPipeDir = '/tmp/nvidia-mps';

/** A container's cards, in the order CUDA numbers them inside it. */
export interface ContainerGpus {
  /** the cards' indices on the node */
  indices: number[];
  /** the share of each card, when the assignment recorded one */
  shares: DeviceShare[];
  cards: GpuCard[];
  /** nvidia.com/priority, when the container states it */
  priority?: number;
}

/** a share is smaller than its card in memory or compute: HAMi-core has something to limit */
export function isShared(g: ContainerGpus): boolean {
  return g.shares.some((s, i) => {
    const card = g.cards[i];
    return !card || s.memoryMiB < card.memoryMiB || s.cores < 100;
  });
}

/** the MPS pipe directory a running control daemon listens in, if one does */
export function mpsPipeDir(env: NodeJS.ProcessEnv = process.env, exists: (p: string) => boolean = existsSync): string | undefined {
  const dir = env.CUDA_MPS_PIPE_DIRECTORY || defaultMpsPipeDir;
  return exists(dir) ? dir : undefined;
}

/**
 * The variables a container's cards give it. `cacheFile` is HAMi-core's shared region for the
 * container; `mps` is the daemon's pipe directory when one runs.
 */
export function gpuEnv(g: ContainerGpus, opts: { cacheFile: string; mps?: string }): Record<string, string> {
  const env: Record<string, string> = {};
  if (g.indices.length) {
    env.CUDA_VISIBLE_DEVICES = g.indices.join(',');
    // CUDA numbers devices fastest first unless told otherwise; the indices are nvidia-smi's (bus order)
    env.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
  }
  if (g.priority !== undefined) env.CUDA_TASK_PRIORITY = String(g.priority);
  if (!g.shares.length || !isShared(g)) return env;
  g.shares.forEach((s, i) => {
    env[`CUDA_DEVICE_MEMORY_LIMIT_${i}`] = `${s.memoryMiB}m`;
  });
  env.CUDA_DEVICE_SM_LIMIT = String(g.shares[0]?.cores ?? 0);
  env.CUDA_DEVICE_MEMORY_SHARED_CACHE = opts.cacheFile;
  if (opts.mps) {
    env.CUDA_MPS_PIPE_DIRECTORY = opts.mps;
    const cores = g.shares[0]?.cores ?? 0;
    // MPS's percentage caps the threads a client may use; 0 or 100 is no cap
    if (cores > 0 && cores < 100) env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = String(cores);
    env.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT = g.shares.map((s, i) => `${i}=${s.memoryMiB}M`).join(',');
  }
  return env;
}

/** the contents of a container's /etc/ld.so.preload: the library first, then what the host preloads */
export function preloadList(lib: string, hostPreload = '/etc/ld.so.preload'): string {
  let host: string[] = [];
  try {
    // ld.so's format: names separated by spaces, colons or lines; `#` starts a comment
    host = readFileSync(hostPreload, 'utf8').split('\n').flatMap((line) => (line.split('#')[0] ?? '').split(/[\s:]+/)).filter((l) => l && l !== lib);
  } catch {
    // no preload list on the host
  }
  return [lib, ...host].join('\n') + '\n';
}

/** a share in words, for events: `card 0: 3000 MiB, 30% compute` */
export function describeShares(g: ContainerGpus): string {
  return g.shares.map((s, i) => `card ${g.indices[i] ?? '?'}: ${s.memoryMiB} MiB, ${s.cores ? `${s.cores}%` : 'unlimited'} compute`).join('; ');
}
