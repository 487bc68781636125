// From a Pod's usage samples to the charts' series: CPU in cores and memory in MiB, one line per
// container plus, for Pods with several containers, the Pod's total; on real GPU cards, GPU memory and
// utilisation per container and card. Pure, so the tests read the numbers.
import type { UsageSample } from '../../api/workload-types';

export interface Series {
  label: string;
  values: (number | null)[];
}

export interface ChartData {
  /** seconds since the epoch, as uPlot reads time */
  x: number[];
  series: Series[];
}

const MiB = 1024 * 1024;

/** merges new samples into a sorted, de-duplicated list kept to the newest `max` */
export function mergeSamples(current: UsageSample[], incoming: UsageSample[], max = 2000): UsageSample[] {
  if (!incoming.length) return current;
  const byT = new Map(current.map((s) => [s.t, s]));
  for (const s of incoming) byT.set(s.t, s);
  const all = [...byT.values()].sort((a, b) => a.t - b.t);
  return all.length > max ? all.slice(all.length - max) : all;
}

function build(samples: UsageSample[], pick: (c: UsageSample['containers'][number]) => number | undefined): ChartData {
  const names: string[] = [];
  for (const s of samples) for (const c of s.containers) if (!names.includes(c.name)) names.push(c.name);
  const series: Series[] = names.map((name) => ({
    label: name,
    values: samples.map((s) => {
      const c = s.containers.find((x) => x.name === name);
      const v = c ? pick(c) : undefined;
      return v === undefined ? null : v;
    }),
  }));
  if (names.length > 1) {
    series.unshift({
      label: 'Pod total',
      values: samples.map((s) => {
        const vs = s.containers.map(pick).filter((v): v is number => v !== undefined);
        return vs.length ? vs.reduce((a, b) => a + b, 0) : null;
      }),
    });
  }
  return { x: samples.map((s) => s.t / 1000), series };
}

export function cpuSeries(samples: UsageSample[]): ChartData {
  return build(samples, (c) => c.cpuCores);
}

export function memorySeries(samples: UsageSample[]): ChartData {
  return build(samples, (c) => c.memoryBytes / MiB);
}

type GpuPick = (g: NonNullable<UsageSample['containers'][number]['gpus']>[number]) => number | undefined;

/** one line per container and card it uses; a Pod total when `total` and there are several lines */
function buildGpu(samples: UsageSample[], pick: GpuPick, total: boolean): ChartData {
  const keys: { name: string; index: number }[] = [];
  for (const s of samples) {
    for (const c of s.containers) {
      for (const g of c.gpus ?? []) if (!keys.some((k) => k.name === c.name && k.index === g.index)) keys.push({ name: c.name, index: g.index });
    }
  }
  const valueAt = (s: UsageSample, name: string, index: number): number | undefined => {
    const g = s.containers.find((c) => c.name === name)?.gpus?.find((x) => x.index === index);
    return g ? pick(g) : undefined;
  };
  const series: Series[] = keys.map(({ name, index }) => ({ label: `${name} · GPU ${index}`, values: samples.map((s) => valueAt(s, name, index) ?? null) }));
  if (total && keys.length > 1) {
    series.unshift({
      label: 'Pod total',
      values: samples.map((s) => {
        const vs = keys.map((k) => valueAt(s, k.name, k.index)).filter((v): v is number => v !== undefined);
        return vs.length ? vs.reduce((a, b) => a + b, 0) : null;
      }),
    });
  }
  return { x: samples.map((s) => s.t / 1000), series };
}

/** whether any sample has a container on a real GPU card: then the Pod has GPU charts */
export function hasGpuSamples(samples: UsageSample[]): boolean {
  return samples.some((s) => s.containers.some((c) => c.gpus?.length));
}

/** framebuffer memory in MiB, per container and card, with the Pod's total */
export function gpuMemorySeries(samples: UsageSample[]): ChartData {
  return buildGpu(samples, (g) => g.memoryMiB, true);
}

/** utilisation in percent of each card, per container and card (percents of different cards are not summed) */
export function gpuUtilSeries(samples: UsageSample[]): ChartData {
  return buildGpu(samples, (g) => g.gpuPercent, false);
}

/** whether the newest utilisation figure is the card's split among its containers rather than measured per process */
export function gpuUtilIsCardShare(samples: UsageSample[]): boolean {
  for (let i = samples.length - 1; i >= 0; i--) {
    const srcs = (samples[i]?.containers ?? []).flatMap((c) => (c.gpus ?? []).map((g) => g.gpuPercentSource)).filter(Boolean);
    if (srcs.length) return srcs.includes('cardShare');
  }
  return false;
}

export function formatPercent(v: number | undefined): string {
  if (v === undefined) return '—';
  return v >= 10 ? `${Math.round(v)}%` : `${v.toFixed(1)}%`;
}

/** the newest value of the first series with one: what the chart's title shows */
export function latest(data: ChartData): number | undefined {
  const s = data.series[0];
  if (!s) return undefined;
  for (let i = s.values.length - 1; i >= 0; i--) {
    const v = s.values[i];
    if (v !== null && v !== undefined) return v;
  }
  return undefined;
}

export function formatCores(v: number | undefined): string {
  if (v === undefined) return '—';
  return v < 1 ? `${Math.round(v * 1000)}m` : v.toFixed(2);
}

export function formatMiB(v: number | undefined): string {
  if (v === undefined) return '—';
  if (v >= 1024) return `${(v / 1024).toFixed(2)} GiB`;
  return v >= 10 ? `${Math.round(v)} MiB` : `${v.toFixed(1)} MiB`;
}

/** the time span (seconds) covering every Pod's samples, so charts side by side share one axis; undefined with fewer than two distinct times */
export function sharedRange(byPod: Record<string, UsageSample[]>): [number, number] | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const list of Object.values(byPod)) {
    const first = list[0];
    const last = list[list.length - 1];
    if (first) lo = Math.min(lo, first.t);
    if (last) hi = Math.max(hi, last.t);
  }
  return hi > lo ? [lo / 1000, hi / 1000] : undefined;
}
