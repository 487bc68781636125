// The node's resource monitor (what cAdvisor is to a kubelet): every few seconds, while any container
// runs, it measures each container's CPU time and working set from /proc and keeps the latest two
// samples in memory, so the metrics API can answer a rate over the window between them as
// metrics-server does. The machine's own use is sampled with them, and on demand when stale.
// On a node with real GPU cards each sample also asks nvidia-smi for the cards' use and for the
// processes on them (gpu-processes.ts); the pids are mapped to containers with the same process
// trees as CPU and memory, when the answer is read.
import type { ContainerGpuUsage, ContainerUsage, NodeUsage, PodMetricsSource, PodUsage } from '../substrate.js';
import type { GpuSample } from './gpu-processes.js';
import { every, type Timer } from '../../util/timers.js';
import { CLOCK_TICKS, ProcFs, containerProcesses } from './procfs.js';

/** A container the node runs now, by its main process. */
export interface LiveContainer {
  uid: string;
  namespace: string;
  pod: string;
  container: string;
  /** the container's main process (the shim's child) */
  pid: number;
  startedAt: string;
  /** the GPU cards it was given, with each share's compute (percent of the card; 0 is unlimited) */
  gpuShares?: { uuid: string; cores: number }[];
}

export interface UsageMonitorOptions {
  nodeName: string;
  /** how often containers are sampled while any runs */
  intervalMs: number;
  /** the containers running now */
  containers: () => LiveContainer[];
  /** where /proc is (tests give a made-up one) */
  procRoot?: string;
  /** the real GPU cards' use and the processes on them (nvidia-smi), when the node has any: asked at
   *  each sample, never twice at once, the answer kept for the next read */
  gpus?: () => Promise<GpuSample>;
  now?: () => number;
}

interface Point {
  t: number;
  cpuSeconds: number;
  memory: number;
}

interface Series {
  c: LiveContainer;
  last: Point;
  prev?: Point;
}

export class UsageMonitor implements PodMetricsSource {
  private readonly fs: ProcFs;
  private readonly now: () => number;
  private timer?: Timer;
  private series = new Map<string, Series>();
  private nodeLast?: Point;
  private nodePrev?: Point;
  private gpuLast?: GpuSample;
  private gpuAsking = false;
  /** which container (its series' key) each process belonged to at the last sample */
  private pidOwner = new Map<number, string>();

  constructor(private readonly opts: UsageMonitorOptions) {
    this.fs = new ProcFs(opts.procRoot);
    this.now = opts.now ?? Date.now;
    // a first point, so the node has a rate from its first request on
    this.sampleNode();
  }

  /** starts sampling (a container started); it stops by itself once none runs */
  wake(): void {
    if (this.timer) return;
    this.sample();
    this.timer = every(this.opts.intervalMs, () => this.tick()).unref();
  }

  stop(): void {
    this.timer?.clear();
    this.timer = undefined;
  }

  private tick(): void {
    if (this.opts.containers().length === 0) {
      this.stop();
      this.series.clear();
      return;
    }
    this.sample();
  }

  /** one sample of every running container and of the node */
  sample(): void {
    const live = this.opts.containers();
    const t = this.now();
    const procs = this.fs.processes();
    const key = (c: LiveContainer): string => `${c.uid}/${c.container}/${c.startedAt}`;
    const roots = new Map(live.map((c) => [key(c), c.pid]));
    const members = containerProcesses(this.fs, procs, roots);
    const next = new Map<string, Series>();
    const owner = new Map<number, string>();
    for (const c of live) {
      const k = key(c);
      const pids = members.get(k) ?? [];
      if (!pids.length) continue;
      for (const pid of pids) owner.set(pid, k);
      let ticks = 0;
      let memory = 0;
      for (const pid of pids) {
        ticks += procs.get(pid)?.cpuTicks ?? 0;
        memory += this.fs.memoryBytes(pid);
      }
      const old = this.series.get(k);
      // a process that leaves the tree before its parent reaps it takes its CPU time along: the
      // count holds its highest value rather than go back, as a counter must not
      const cpuSeconds = Math.max(ticks / CLOCK_TICKS, old?.last.cpuSeconds ?? 0);
      next.set(k, { c, last: { t, cpuSeconds, memory }, ...(old ? { prev: old.last } : {}) });
    }
    this.series = next;
    this.pidOwner = owner;
    this.sampleNode(t);
  }

  /** asks for the cards' use without waiting: the answer is there for the next read */
  private sampleGpus(): void {
    const ask = this.opts.gpus;
    if (!ask || this.gpuAsking) return;
    this.gpuAsking = true;
    ask().then((g) => {
      this.gpuLast = g;
    }, () => {
      this.gpuLast = undefined;
    }).finally(() => {
      this.gpuAsking = false;
    });
  }

  private sampleNode(t = this.now()): void {
    this.sampleGpus();
    const ticks = this.fs.nodeCpuTicks();
    const memory = this.fs.nodeMemoryBytes();
    if (ticks === undefined || memory === undefined) return;
    if (this.nodeLast && t <= this.nodeLast.t) return;
    this.nodePrev = this.nodeLast;
    this.nodeLast = { t, cpuSeconds: ticks / CLOCK_TICKS, memory };
  }

  podUsage(): PodUsage[] {
    const pods = new Map<string, PodUsage>();
    const gpus = this.gpuLast?.processes.length
      ? attributeGpus(this.gpuLast, this.pidOwner, new Map([...this.series].map(([k, s]) => [k, s.c.gpuShares ?? []])))
      : undefined;
    for (const [k, s] of this.series) {
      const { c, last, prev } = s;
      let pod = pods.get(c.uid);
      if (!pod) {
        pod = { uid: c.uid, namespace: c.namespace, name: c.pod, containers: [] };
        pods.set(c.uid, pod);
      }
      const u: ContainerUsage = { name: c.container, startedAt: c.startedAt, timestamp: last.t, cpuSeconds: last.cpuSeconds, memoryWorkingSetBytes: last.memory };
      if (prev && last.t > prev.t) {
        u.windowMs = last.t - prev.t;
        u.cpuCores = (last.cpuSeconds - prev.cpuSeconds) / (u.windowMs / 1000);
      }
      const g = gpus?.get(k);
      if (g?.length) u.gpus = g;
      pod.containers.push(u);
    }
    return [...pods.values()];
  }

  nodeUsage(): NodeUsage | undefined {
    // with no container running nothing samples the node: a request does, when the last sample is
    // a second old (a shorter window would be mostly the 10 ms grain of /proc's CPU times)
    if (!this.nodeLast || this.now() - this.nodeLast.t >= Math.min(this.opts.intervalMs, 1000)) this.sampleNode();
    const last = this.nodeLast;
    if (!last) return undefined;
    const u: NodeUsage = { name: this.opts.nodeName, timestamp: last.t, cpuSeconds: last.cpuSeconds, memoryWorkingSetBytes: last.memory, ...(this.gpuLast ? { gpus: this.gpuLast.cards } : {}) };
    const prev = this.nodePrev;
    if (prev && last.t > prev.t) {
      u.windowMs = last.t - prev.t;
      u.cpuCores = Math.max(0, last.cpuSeconds - prev.cpuSeconds) / (u.windowMs / 1000);
    }
    return u;
  }
}

/**
 * Each container's use of each card from one GPU sample: its processes' memory summed per card, and
 * their SM utilisation summed (at most 100) where pmon measured it. Without pmon, a card's utilisation
 * is split among the containers with processes on it, by their shares' compute where every one of
 * them has a limit, else equally. `owner` maps pids to containers' keys; `shares` gives each
 * container's cards and compute.
 */
export function attributeGpus(sample: GpuSample, owner: Map<number, string>, shares: Map<string, { uuid: string; cores: number }[]>): Map<string, ContainerGpuUsage[]> {
  type Acc = { index: number; uuid: string; modelName: string; memory?: number; sm?: number };
  const per = new Map<string, Map<string, Acc>>();
  for (const p of sample.processes) {
    const k = owner.get(p.pid);
    if (k === undefined) continue;
    let cards = per.get(k);
    if (!cards) per.set(k, (cards = new Map()));
    let a = cards.get(p.uuid);
    if (!a) cards.set(p.uuid, (a = { index: p.index, uuid: p.uuid, modelName: p.modelName }));
    if (p.memoryUsedMiB !== undefined) a.memory = (a.memory ?? 0) + p.memoryUsedMiB;
    if (p.smPercent !== undefined) a.sm = (a.sm ?? 0) + p.smPercent;
  }
  // the containers on each card, for the split
  const onCard = new Map<string, string[]>();
  for (const [k, cards] of per) for (const uuid of cards.keys()) onCard.set(uuid, [...(onCard.get(uuid) ?? []), k]);
  const coresOf = (k: string, uuid: string): number => shares.get(k)?.find((s) => s.uuid === uuid)?.cores ?? 0;
  const out = new Map<string, ContainerGpuUsage[]>();
  for (const [k, cards] of per) {
    const list: ContainerGpuUsage[] = [];
    for (const a of [...cards.values()].sort((x, y) => x.index - y.index)) {
      const u: ContainerGpuUsage = { index: a.index, uuid: a.uuid, modelName: a.modelName, ...(a.memory !== undefined ? { memoryUsedMiB: a.memory } : {}) };
      if (sample.perProcess) {
        // pmon leaves out, or prints `-` for, a process none of whose kernels ran in its sample
        u.gpuPercent = Math.min(100, a.sm ?? 0);
        u.gpuPercentSource = 'process';
      } else {
        const card = sample.cards.find((c) => c.index === a.index);
        if (card) {
          const peers = onCard.get(a.uuid) ?? [k];
          const cores = peers.map((p) => coresOf(p, a.uuid));
          const weighted = cores.every((c) => c > 0);
          const total = weighted ? cores.reduce((x, y) => x + y, 0) : peers.length;
          u.gpuPercent = (card.gpuPercent * (weighted ? coresOf(k, a.uuid) : 1)) / total;
          u.gpuPercentSource = 'cardShare';
        }
      }
      list.push(u);
    }
    out.set(k, list);
  }
  return out;
}
