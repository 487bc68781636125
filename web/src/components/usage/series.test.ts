import { describe, expect, it } from 'vitest';
import type { UsageSample } from '../../api/workload-types';
import { cpuSeries, formatCores, formatMiB, formatPercent, gpuMemorySeries, gpuUtilIsCardShare, gpuUtilSeries, hasGpuSamples, latest, memorySeries, mergeSamples, sharedRange } from './series';

const MiB = 1024 * 1024;
// as /skiff/v1/.../usage answers for a Pod with a trainer and a sidecar: the first sample has no CPU rate yet
const samples: UsageSample[] = [
  { t: 1_000_000, containers: [{ name: 'trainer', memoryBytes: 10 * MiB }, { name: 'sidecar', memoryBytes: 2 * MiB }] },
  { t: 1_005_000, containers: [{ name: 'trainer', cpuCores: 0.75, memoryBytes: 30 * MiB }, { name: 'sidecar', cpuCores: 0.01, memoryBytes: 2 * MiB }] },
  { t: 1_010_000, containers: [{ name: 'trainer', cpuCores: 1.5, memoryBytes: 50 * MiB }] },
];

describe('usage series', () => {
  it('one line per container and a Pod total, x in seconds, gaps as null', () => {
    const cpu = cpuSeries(samples);
    expect(cpu.x).toEqual([1000, 1005, 1010]);
    expect(cpu.series.map((s) => s.label)).toEqual(['Pod total', 'trainer', 'sidecar']);
    expect(cpu.series[0]?.values).toEqual([null, 0.76, 1.5]);
    expect(cpu.series[1]?.values).toEqual([null, 0.75, 1.5]);
    expect(cpu.series[2]?.values).toEqual([null, 0.01, null]);
    const mem = memorySeries(samples);
    expect(mem.series[0]?.values).toEqual([12, 32, 50]);
    expect(latest(mem)).toBe(50);
    expect(latest(cpu)).toBe(1.5);
  });

  it('a single container has no total line', () => {
    const one = samples.map((s) => ({ ...s, containers: s.containers.filter((c) => c.name === 'trainer') }));
    expect(cpuSeries(one).series.map((s) => s.label)).toEqual(['trainer']);
    expect(latest(cpuSeries([]))).toBeUndefined();
  });

  it('merging keeps time order, replaces a repeated sample and keeps the newest max', () => {
    const merged = mergeSamples([samples[2]!, samples[0]!], [samples[1]!, samples[2]!]);
    expect(merged.map((s) => s.t)).toEqual([1_000_000, 1_005_000, 1_010_000]);
    expect(mergeSamples(merged, [], 2)).toBe(merged);
    expect(mergeSamples(merged, [{ t: 1_015_000, containers: [] }], 2).map((s) => s.t)).toEqual([1_010_000, 1_015_000]);
  });

  it('formats cores as millicores below one and MiB/GiB', () => {
    expect(formatCores(0.25)).toBe('250m');
    expect(formatCores(2)).toBe('2.00');
    expect(formatMiB(512)).toBe('512 MiB');
    expect(formatMiB(7.25)).toBe('7.3 MiB');
    expect(formatMiB(2048)).toBe('2.00 GiB');
    expect(formatCores(undefined)).toBe('—');
  });
});

describe('usage stream lines', () => {
  it('groups the samples of a chunk by Pod, skipping blank lines', async () => {
    const { parseUsageLines } = await import('./useUsage');
    const lines = [JSON.stringify({ pod: 'a', sample: samples[0] }), '', JSON.stringify({ pod: 'b', sample: samples[1] }), JSON.stringify({ pod: 'a', sample: samples[2] })];
    const out = parseUsageLines(lines);
    expect(Object.keys(out)).toEqual(['a', 'b']);
    expect(out.a?.map((s) => s.t)).toEqual([1_000_000, 1_010_000]);
  });
});

describe('a shared time axis', () => {
  it('spans the earliest to the latest sample of every Pod', () => {
    expect(sharedRange({ a: [samples[1]!, samples[2]!], b: [samples[0]!], c: [] })).toEqual([1000, 1010]);
    expect(sharedRange({ a: [samples[0]!] })).toBeUndefined();
  });
});

describe('GPU series', () => {
  const gpuSamples: UsageSample[] = [
    { t: 1_000_000, containers: [{ name: 'trainer', memoryBytes: MiB }] },
    { t: 1_005_000, containers: [{ name: 'trainer', memoryBytes: MiB, gpus: [{ index: 0, memoryMiB: 1000, gpuPercent: 40, gpuPercentSource: 'process' }, { index: 1, memoryMiB: 500, gpuPercent: 10, gpuPercentSource: 'process' }] }] },
    { t: 1_010_000, containers: [{ name: 'trainer', memoryBytes: MiB, gpus: [{ index: 0, memoryMiB: 1200, gpuPercent: 60, gpuPercentSource: 'cardShare' }] }, { name: 'sidecar', memoryBytes: MiB }] },
  ];

  it('a line per container and card, memory with the Pod total, utilisation without', () => {
    expect(hasGpuSamples(gpuSamples)).toBe(true);
    expect(hasGpuSamples(samples)).toBe(false);
    const mem = gpuMemorySeries(gpuSamples);
    expect(mem.series.map((s) => s.label)).toEqual(['Pod total', 'trainer · GPU 0', 'trainer · GPU 1']);
    expect(mem.series[0]?.values).toEqual([null, 1500, 1200]);
    expect(mem.series[2]?.values).toEqual([null, 500, null]);
    const util = gpuUtilSeries(gpuSamples);
    expect(util.series.map((s) => s.label)).toEqual(['trainer · GPU 0', 'trainer · GPU 1']);
    expect(latest(util)).toBe(60);
    expect(gpuUtilIsCardShare(gpuSamples)).toBe(true);
    expect(gpuUtilIsCardShare(gpuSamples.slice(0, 2))).toBe(false);
    expect(formatPercent(7.25)).toBe('7.3%');
    expect(formatPercent(42.4)).toBe('42%');
  });
});
