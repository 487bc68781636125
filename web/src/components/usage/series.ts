// From a Pod's usage samples to the two charts' series: CPU in cores and memory in MiB, one line per
// container plus, for Pods with several containers, the Pod's total. Pure, so the tests read the numbers.
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
