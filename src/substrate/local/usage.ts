// The node's resource monitor (what cAdvisor is to a kubelet): every few seconds, while any container
// runs, it measures each container's CPU time and working set from /proc and keeps the latest two
// samples in memory, so the metrics API can answer a rate over the window between them as
// metrics-server does. The machine's own use is sampled with them, and on demand when stale.
import type { ContainerUsage, GpuCardSample, NodeUsage, PodMetricsSource, PodUsage } from '../substrate.js';
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
}

export interface UsageMonitorOptions {
  nodeName: string;
  /** how often containers are sampled while any runs */
  intervalMs: number;
  /** the containers running now */
  containers: () => LiveContainer[];
  /** where /proc is (tests give a made-up one) */
  procRoot?: string;
  /** the real GPU cards' use (nvidia-smi), when the node has any: asked at each sample, the answer
   *  kept for the next read */
  gpus?: () => Promise<GpuCardSample[]>;
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
  private gpuLast?: GpuCardSample[];
  private gpuAsking = false;

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
    for (const c of live) {
      const k = key(c);
      const pids = members.get(k) ?? [];
      if (!pids.length) continue;
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
    for (const s of this.series.values()) {
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
    const u: NodeUsage = { name: this.opts.nodeName, timestamp: last.t, cpuSeconds: last.cpuSeconds, memoryWorkingSetBytes: last.memory, ...(this.gpuLast ? { gpus: this.gpuLast } : {}) };
    const prev = this.nodePrev;
    if (prev && last.t > prev.t) {
      u.windowMs = last.t - prev.t;
      u.cpuCores = Math.max(0, last.cpuSeconds - prev.cpuSeconds) / (u.windowMs / 1000);
    }
    return u;
  }
}
