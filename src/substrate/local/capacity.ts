// What this machine offers, found when the local substrate registers its Node (as a kubelet does):
// CPUs and memory from the OS, NVIDIA GPUs from nvidia-smi.
import { execFile } from 'node:child_process';
import os from 'node:os';
import type { GpuInfo, NodeCapacity } from '../../scheduler/node.js';
import type { GpuCardSample } from '../substrate.js';

/** GPUs from `nvidia-smi`; none when it is missing or fails. */
export function discoverGpus(timeoutMs = 5000): Promise<GpuInfo[]> {
  return new Promise((resolve) => {
    execFile('nvidia-smi', ['--query-gpu=index,uuid,name,memory.total', '--format=csv,noheader,nounits'], { timeout: timeoutMs }, (err, stdout) => {
      if (err) return resolve([]);
      const gpus = stdout.trim().split('\n').filter(Boolean).map((line) => {
        const [index, uuid, name, mem] = line.split(',').map((s) => s.trim());
        return { index: Number(index), uuid: uuid ?? '', name: name ?? '', memoryMiB: Number(mem) };
      });
      resolve(gpus.filter((g) => Number.isInteger(g.index)));
    });
  });
}

/** nvidia-smi's `index, utilization.gpu, memory.used` lines; a card it cannot read ([N/A]) is left out */
export function parseGpuSamples(out: string): GpuCardSample[] {
  return out.trim().split('\n').filter(Boolean).flatMap((line) => {
    const [index, util, mem] = line.split(',').map((s) => Number(s.trim()));
    return Number.isInteger(index) && Number.isFinite(util) && Number.isFinite(mem) ? [{ index: index as number, gpuPercent: util as number, memoryUsedMiB: mem as number }] : [];
  });
}

/** a card declared in the config (`node.gpuCards`) */
export interface DeclaredCard {
  type?: string;
  memoryMiB?: number;
  uuid?: string;
}

/** Overrides from the config (`node:` in skiff's config), for tests and for machines that share. */
export interface CapacityOverrides {
  cpu?: number;
  memoryBytes?: number;
  /** a GPU count: the found GPUs first, then made-up ones */
  gpus?: number;
  /** the made-up cards' memory (default 80Gi) and type (default "NVIDIA GPU") */
  gpuMemoryMiB?: number;
  gpuType?: string;
  /** the cards one by one instead of a count: found GPUs are replaced in order */
  gpuCards?: DeclaredCard[];
  /** shares each card may be split into (HAMi's deviceSplitCount, default 10) */
  deviceSplitCount?: number;
}

export const defaultGpuMemoryMiB = 80 * 1024;
export const defaultGpuType = 'NVIDIA GPU';

/**
 * The node's capacity: the config's numbers where it gives them, else the machine's. Declared GPUs
 * stand in for the real ones (a machine without a GPU can run placement and accounting as if it had
 * them); a count keeps the real cards first and makes up the rest.
 */
export function capacityFrom(found: GpuInfo[], overrides: CapacityOverrides = {}): NodeCapacity {
  const made = (i: number, d: DeclaredCard = {}): GpuInfo => ({
    index: i, uuid: d.uuid ?? `GPU-fake-${i}`, name: d.type ?? overrides.gpuType ?? defaultGpuType, memoryMiB: d.memoryMiB ?? overrides.gpuMemoryMiB ?? defaultGpuMemoryMiB,
  });
  const gpus = overrides.gpuCards
    ? overrides.gpuCards.map((d, i) => made(i, d))
    : overrides.gpus !== undefined
      ? Array.from({ length: overrides.gpus }, (_, i) => found[i] ?? made(i))
      : found;
  return {
    cpu: overrides.cpu ?? os.availableParallelism(), memoryBytes: overrides.memoryBytes ?? os.totalmem(), gpus,
    ...(overrides.deviceSplitCount !== undefined ? { deviceSplitCount: overrides.deviceSplitCount } : {}),
  };
}

/** the capacity, and the real cards found (whose use can be sampled) */
export async function discoverCapacity(overrides: CapacityOverrides = {}): Promise<NodeCapacity & { found: GpuInfo[] }> {
  const found = await discoverGpus();
  return { ...capacityFrom(found, overrides), found };
}
