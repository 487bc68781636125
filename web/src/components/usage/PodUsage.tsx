// A Pod's CPU and memory over the last half hour, appended live while it runs, and its GPU memory and
// utilisation when its containers use real cards: the charts take the samples as props; PodUsage and
// PodsUsage below fetch them with one stream per page.
import { useMemo } from 'react';
import type { UsageSample } from '../../api/workload-types';
import { UsageChart } from './UsageChart';
import { cpuSeries, formatCores, formatMiB, formatPercent, gpuMemorySeries, gpuUtilIsCardShare, gpuUtilSeries, hasGpuSamples, latest, memorySeries } from './series';
import { useUsage } from './useUsage';

export function UsageCharts({ samples, phase, height, error, xRange }: { samples: UsageSample[]; phase: string | undefined; height?: number; error?: string; xRange?: [number, number] }) {
  const cpu = useMemo(() => cpuSeries(samples), [samples]);
  const mem = useMemo(() => memorySeries(samples), [samples]);
  const gpu = useMemo(() => (hasGpuSamples(samples) ? { mem: gpuMemorySeries(samples), util: gpuUtilSeries(samples), split: gpuUtilIsCardShare(samples) } : undefined), [samples]);
  if (error && !samples.length) return <div className="notice bad">CPU and memory: {error}</div>;
  if (!samples.length) {
    return (
      <p className="muted usagenote">
        {phase === 'Running'
          ? 'No CPU or memory sample yet: the node samples running containers every few seconds.'
          : phase === 'Pending' || phase === undefined
            ? 'Not started yet: CPU and memory appear once its containers run.'
            : 'No CPU or memory samples: Skiff keeps them for the last 30 minutes of a Pod that ran.'}
      </p>
    );
  }
  return (
    <div className="usagecharts">
      <UsageChart title={`CPU (cores) · now ${formatCores(latest(cpu))}`} data={cpu} format={formatCores} height={height} xRange={xRange} />
      <UsageChart title={`Memory (working set) · now ${formatMiB(latest(mem))}`} data={mem} format={formatMiB} height={height} xRange={xRange} />
      {gpu && <UsageChart title={`GPU memory · now ${formatMiB(latest(gpu.mem))}`} data={gpu.mem} format={formatMiB} height={height} xRange={xRange} />}
      {gpu && (
        <UsageChart
          // without per-process figures the card's utilisation is shared out among the containers on it
          title={`GPU utilisation${gpu.split ? " (the card's, split by share)" : ''} · now ${formatPercent(latest(gpu.util))}`}
          data={gpu.util}
          format={formatPercent}
          height={height}
          xRange={xRange}
        />
      )}
    </div>
  );
}

export function PodUsage({ namespace, pod, phase, height }: { namespace: string; pod: string; phase: string | undefined; height?: number }) {
  const usage = useUsage(namespace, [pod]);
  return <UsageCharts samples={usage.samples[pod] ?? []} phase={phase} height={height} error={usage.error} />;
}
