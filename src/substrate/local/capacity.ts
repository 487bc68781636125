// What this machine offers, found when the local substrate registers its Node (as a kubelet does):
// CPUs and memory from the OS, NVIDIA GPUs from nvidia-smi.
import { execFile } from 'node:child_process';
import os from 'node:os';
import type { GpuInfo, NodeCapacity } from '../../scheduler/node.js';

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

/** Overrides from the config (`node:` in skiff's config), for tests and for machines that share. */
export interface CapacityOverrides {
  cpu?: number;
  memoryBytes?: number;
  /** a GPU count: the found GPUs first, then made-up ones */
  gpus?: number;
}

export async function discoverCapacity(overrides: CapacityOverrides = {}): Promise<NodeCapacity> {
  const found = await discoverGpus();
  const gpus = overrides.gpus !== undefined
    ? Array.from({ length: overrides.gpus }, (_, i) => found[i] ?? { index: i, uuid: `GPU-fake-${i}`, name: 'configured', memoryMiB: 0 })
    : found;
  return { cpu: overrides.cpu ?? os.availableParallelism(), memoryBytes: overrides.memoryBytes ?? os.totalmem(), gpus };
}
