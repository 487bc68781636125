// Shares of GPU cards: which cards of a node a Pod's containers get, packing HAMi's shares (memory in
// MiB, compute in percent, a number of slots per card) the way HAMi's scheduler does, so a Pod written
// for a cluster with HAMi lands the same way here. A card's use is what the Pods already on it were
// given; a whole-GPU Pod (a plain nvidia.com/gpu) asks for all of a card's memory and compute and so
// takes a card no one else holds.
import type { Pod } from '../api/core-types.js';
import type { DeviceShare, GpuCard, GpuRequest, PodDevices } from '../api/gpu-sharing.js';
import { GpuResource, HamiAnnotation, NvidiaDevice, collapsedShares, memoryOn, podContainers, podDevices, podGpuRequests } from '../api/gpu-sharing.js';

/** What is taken of one card. */
export interface CardUse {
  card: GpuCard;
  /** shares (slots) taken */
  used: number;
  usedMemoryMiB: number;
  usedCores: number;
}

/** HAMi's names for why a card was passed over (pkg/device/common) */
export const CardReason = {
  typeMismatch: 'CardTypeMismatch',
  uuidMismatch: 'CardUuidMismatch',
  slotsExhausted: 'CardTimeSlicingExhausted',
  computeExhausted: 'CardComputeUnitsExhausted',
  insufficientMemory: 'CardInsufficientMemory',
  insufficientCore: 'CardInsufficientCore',
  notHealthy: 'CardNotHealth',
  exclusiveConflict: 'ExclusiveDeviceAllocateConflict',
  nodeInsufficientDevice: 'NodeInsufficientDevice',
  allocatedInsufficient: 'AllocatedCardsInsufficientRequest',
  quotaNotFit: 'ResourceQuotaNotFit',
} as const;

/** a namespace's limits on HAMi's quota names and what its placed Pods use of them */
export interface GpuQuota {
  memory?: { limit: number; used: number };
  cores?: { limit: number; used: number };
}

export type DeviceFit =
  | { fits: true; devices: PodDevices }
  | { fits: false; reasons: Record<string, number>; cards: number; request: GpuRequest };

/** a Pod that is not running any more holds nothing */
const done = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/**
 * What each card carries from the Pods placed on the node: their recorded shares, or, for a Pod
 * placed with whole-GPU indices only, its cards whole.
 */
export function cardUse(cards: GpuCard[], placed: Pod[], legacyIndices: (p: Pod) => number[] = () => []): CardUse[] {
  const byUuid = new Map(cards.map((c) => [c.uuid, { card: c, used: 0, usedMemoryMiB: 0, usedCores: 0 } as CardUse]));
  const byIndex = new Map(cards.map((c) => [c.index, byUuid.get(c.uuid) as CardUse]));
  for (const p of placed) {
    if (done(p)) continue;
    const pd = podDevices(p);
    if (pd) {
      for (const [uuid, s] of collapsedShares(p, pd)) {
        const u = byUuid.get(uuid);
        if (!u) continue;
        u.used += s.slots;
        u.usedMemoryMiB += s.memoryMiB;
        u.usedCores += s.cores;
      }
      continue;
    }
    for (const i of legacyIndices(p)) {
      const u = byIndex.get(i);
      if (!u) continue;
      u.used += 1;
      u.usedMemoryMiB += u.card.memoryMiB;
      u.usedCores += u.card.cores;
    }
  }
  return [...byUuid.values()];
}

function listMatches(list: string | undefined, test: (item: string) => boolean): boolean | undefined {
  if (list === undefined || list.trim() === '') return undefined;
  return list.split(',').map((s) => s.trim()).filter(Boolean).some(test);
}

/** nvidia.com/use-gputype and nouse-gputype: each entry a case-insensitive substring of the card's type */
export function typeAllowed(annotations: Record<string, string>, type: string): boolean {
  const t = type.toUpperCase();
  const hit = (entry: string): boolean => t.includes(entry.toUpperCase());
  if (listMatches(annotations[HamiAnnotation.useType], hit) === false) return false;
  return listMatches(annotations[HamiAnnotation.noUseType], hit) !== true;
}

/** nvidia.com/use-gpuuuid and nouse-gpuuuid: exact UUIDs */
export function uuidAllowed(annotations: Record<string, string>, uuid: string): boolean {
  if (listMatches(annotations[HamiAnnotation.useUuid], (u) => u === uuid) === false) return false;
  return listMatches(annotations[HamiAnnotation.noUseUuid], (u) => u === uuid) !== true;
}

/** nvidia.com/vgpu-mode: the cards here are shared by HAMi-core; a Pod asking for MIG finds none */
function modeAllowed(annotations: Record<string, string>): boolean {
  const mode = annotations['nvidia.com/vgpu-mode'];
  return mode === undefined || mode.includes('hami-core');
}

export type GpuPolicy = 'spread' | 'binpack' | 'mutex';

/** the Pod's card policy: its hami.io/gpu-scheduler-policy, else the node's default; the first
 *  known word of a comma list wins */
export function gpuPolicyOf(pod: Pod, fallback: GpuPolicy = 'spread'): GpuPolicy {
  const v = pod.metadata.annotations?.[HamiAnnotation.gpuPolicy];
  if (!v) return fallback;
  const words = v.split(',').map((w) => w.trim());
  if (words.includes('mutex')) return 'mutex';
  return (words.find((w) => w === 'binpack' || w === 'spread') as GpuPolicy | undefined) ?? fallback;
}

/**
 * How full a card would be with this request on it, HAMi's device score: shares, compute and memory
 * each as a fraction of the card, summed and weighted by 10. Spread takes the emptiest card first,
 * binpack the fullest that still fits.
 */
export function cardScore(u: CardUse, req: GpuRequest): number {
  const { card } = u;
  if (card.split === 0 || card.cores === 0 || card.memoryMiB === 0) return 0;
  return 10 * ((1 + u.used) / card.split + (req.cores + u.usedCores) / card.cores + (memoryOn(req, card) + u.usedMemoryMiB) / card.memoryMiB);
}

function ordered(use: CardUse[], req: GpuRequest, policy: GpuPolicy): CardUse[] {
  const scored = use.map((u) => ({ u, score: cardScore(u, req) }));
  scored.sort((a, b) => {
    if (policy === 'mutex' && a.u.used !== b.u.used) return a.u.used - b.u.used;
    if (a.score !== b.score) return policy === 'binpack' ? b.score - a.score : a.score - b.score;
    return a.u.card.index - b.u.card.index;
  });
  return scored.map((s) => s.u);
}

interface QuotaState {
  quota: GpuQuota;
  /** memory and cores this Pod takes so far */
  memoryMiB: number;
  cores: number;
}

const quotaFits = (q: QuotaState, memoryMiB: number, cores: number): boolean =>
  !(q.quota.memory && q.quota.memory.used + q.memoryMiB + memoryMiB > q.quota.memory.limit)
  && !(q.quota.cores && q.quota.cores.used + q.cores + cores > q.quota.cores.limit);

/** one container's cards, walking them in the policy's order as HAMi's Fit does; reasons count cards */
function fitContainer(req: GpuRequest, use: CardUse[], annotations: Record<string, string>, policy: GpuPolicy, quota: QuotaState): { shares: DeviceShare[] } | { reasons: Record<string, number> } {
  const reasons: Record<string, number> = {};
  const why = (r: string): void => {
    reasons[r] = (reasons[r] ?? 0) + 1;
  };
  if (req.nums > use.length) return { reasons: { [CardReason.nodeInsufficientDevice]: use.length || 1 } };
  const shares: DeviceShare[] = [];
  let wanted = req.nums;
  for (const u of ordered(use, req, policy)) {
    const { card } = u;
    if (!card.health) { why(CardReason.notHealthy); continue; }
    if (!typeAllowed(annotations, card.type) || !modeAllowed(annotations)) { why(CardReason.typeMismatch); continue; }
    if (!uuidAllowed(annotations, card.uuid)) { why(CardReason.uuidMismatch); continue; }
    if (card.split <= u.used) { why(CardReason.slotsExhausted); continue; }
    if (policy === 'mutex' && u.used > 0) { why(CardReason.exclusiveConflict); continue; }
    const memory = memoryOn(req, card);
    const cores = Math.min(req.cores, 100);
    if (!quotaFits(quota, memory, cores)) { why(CardReason.quotaNotFit); continue; }
    if (card.memoryMiB - u.usedMemoryMiB < memory) { why(CardReason.insufficientMemory); continue; }
    if (card.cores - u.usedCores < cores) { why(CardReason.insufficientCore); continue; }
    // 100 cores asks for the card alone
    if (card.cores === 100 && cores === 100 && u.used > 0) { why(CardReason.exclusiveConflict); continue; }
    // a share with no compute of its own cannot go where the compute is all taken
    if (card.cores !== 0 && u.usedCores >= card.cores && cores === 0) { why(CardReason.computeExhausted); continue; }
    shares.push({ uuid: card.uuid, type: NvidiaDevice, memoryMiB: memory, cores });
    quota.memoryMiB += memory;
    quota.cores += cores;
    if (--wanted === 0) return { shares };
  }
  if (shares.length) reasons[CardReason.allocatedInsufficient] = shares.length;
  for (const s of shares) {
    quota.memoryMiB -= s.memoryMiB;
    quota.cores -= s.cores;
  }
  return { reasons };
}

function take(use: CardUse[], shares: DeviceShare[]): void {
  for (const s of shares) {
    const u = use.find((x) => x.card.uuid === s.uuid);
    if (!u) continue;
    u.used += 1;
    u.usedMemoryMiB += s.memoryMiB;
    u.usedCores += s.cores;
  }
}

const copyUse = (use: CardUse[]): CardUse[] => use.map((u) => ({ ...u }));

/**
 * The shares for every container of the Pod that asks for cards, or why they cannot be had. Init
 * containers run one at a time, each against the node as it is; the containers run together, each
 * against what the ones before it took.
 */
export function fitDevices(pod: Pod, use: CardUse[], opts: { policy?: GpuPolicy; quota?: GpuQuota } = {}): DeviceFit | undefined {
  const reqs = podGpuRequests(pod);
  if (!reqs.some(Boolean)) return undefined;
  const policy = gpuPolicyOf(pod, opts.policy);
  const annotations = pod.metadata.annotations ?? {};
  const nInit = pod.spec.initContainers?.length ?? 0;
  const quota: QuotaState = { quota: opts.quota ?? {}, memoryMiB: 0, cores: 0 };
  const devices: PodDevices = reqs.map(() => []);
  const running = copyUse(use);
  for (let i = 0; i < reqs.length; i++) {
    const req = reqs[i];
    if (!req) continue;
    // an init container's share is gone when it ends: it counts against the pod's quota only as its peak
    const q = i < nInit ? { ...quota, memoryMiB: 0, cores: 0 } : quota;
    const r = fitContainer(req, i < nInit ? copyUse(use) : running, annotations, policy, q);
    if ('reasons' in r) return { fits: false, reasons: r.reasons, cards: use.length, request: req };
    devices[i] = r.shares;
    if (i >= nInit) take(running, r.shares);
  }
  return { fits: true, devices };
}

/** HAMi's summary of why cards were passed over: `1/2 CardInsufficientMemory, 1/2 ...`, sorted */
export function cardReasons(reasons: Record<string, number>, cards: number): string {
  return Object.entries(reasons).map(([r, n]) => `${n}/${cards} ${r}`).sort().join(', ');
}

/**
 * The resource a failed fit is short of, in kube-scheduler's words (`Insufficient nvidia.com/gpumem`),
 * or another predicate's message for cards filtered out by the Pod's own choices. Memory or compute
 * the container did not state itself was the whole card's, so that shortage is of whole cards.
 */
export function shortage(fit: Extract<DeviceFit, { fits: false }>): string {
  const r = fit.reasons;
  const has = (k: string): boolean => (r[k] ?? 0) > 0;
  const names: string[] = [];
  const add = (n: string): void => {
    if (!names.includes(n)) names.push(n);
  };
  if (has(CardReason.insufficientMemory)) add(fit.request.stated.memory ? `Insufficient ${GpuResource.memory}` : `Insufficient ${GpuResource.count}`);
  if (has(CardReason.insufficientCore) || has(CardReason.computeExhausted)) add(fit.request.stated.cores ? `Insufficient ${GpuResource.cores}` : `Insufficient ${GpuResource.count}`);
  if (has(CardReason.slotsExhausted) || has(CardReason.exclusiveConflict) || has(CardReason.nodeInsufficientDevice) || has(CardReason.allocatedInsufficient) || has(CardReason.notHealthy)) add(`Insufficient ${GpuResource.count}`);
  if (has(CardReason.typeMismatch) || has(CardReason.uuidMismatch)) add("node(s) had no GPU matching the Pod's card type or UUID annotations");
  if (has(CardReason.quotaNotFit)) add("node(s) exceeded the namespace's GPU quota (limits.nvidia.com/gpumem, limits.nvidia.com/gpucores)");
  return names.sort().map((n) => `1 ${n}`).join(', ');
}

/** the cards each container was given, by index, in assignment order (the order of CUDA devices) */
export function containerCardIndices(pod: Pod, cards: GpuCard[]): number[][] {
  const pd = podDevices(pod);
  const index = new Map(cards.map((c) => [c.uuid, c.index]));
  return podContainers(pod).map((_, i) => (pd?.[i] ?? []).flatMap((d) => index.get(d.uuid) ?? []));
}
