// HAMi's quota on shares, as its scheduler checks it card by card: a namespace's ResourceQuota with
// `limits.nvidia.com/gpumem` (MiB) or `limits.nvidia.com/gpucores` (percent) caps what its placed
// Pods hold summed over every card they were given. Admission refuses a Pod that would already be
// over (src/store/admission.ts); this catches what admission could only estimate (a percentage of a
// card's memory before the card is known), and leaves such a Pod Pending instead.
import type { Pod } from '../api/core-types.js';
import { GpuQuotaName, gpuQuotaUsage, podDevices, podGpuRequests } from '../api/gpu-sharing.js';
import type { KObject } from '../api/meta.js';
import { hardOf } from '../api/resourcequota.js';
import type { ResourceQuotaObject } from '../api/resourcequota.js';
import type { GpuQuota } from './gpu-share.js';

const done = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' || Boolean(p.metadata.deletionTimestamp);

/** the quota the Pod's shares must fit in, or undefined when none of its namespace's quotas names HAMi's */
export function gpuQuotaOf(pod: Pod, quotas: KObject[], pods: Pod[]): GpuQuota | undefined {
  if (quotas.length === 0 || !podGpuRequests(pod).some(Boolean)) return undefined;
  let memory: number | undefined;
  let cores: number | undefined;
  for (const q of quotas) {
    const hard = hardOf(q as ResourceQuotaObject);
    const m = hard.get(GpuQuotaName.memory);
    const c = hard.get(GpuQuotaName.cores);
    // thousandths, as quota arithmetic keeps them; the tightest quota wins
    if (m !== undefined) memory = Math.min(memory ?? Infinity, m / 1000);
    if (c !== undefined) cores = Math.min(cores ?? Infinity, c / 1000);
  }
  if (memory === undefined && cores === undefined) return undefined;
  const used = { memoryMiB: 0, cores: 0 };
  for (const p of pods) {
    if (p.metadata.namespace !== pod.metadata.namespace || p.metadata.uid === pod.metadata.uid || done(p) || !podDevices(p)) continue;
    const u = gpuQuotaUsage(p);
    if (!u) continue;
    used.memoryMiB += u.memoryMiB;
    used.cores += u.cores;
  }
  return {
    ...(memory !== undefined ? { memory: { limit: memory, used: used.memoryMiB } } : {}),
    ...(cores !== undefined ? { cores: { limit: cores, used: used.cores } } : {}),
  };
}
