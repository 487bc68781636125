// A time-series chart drawn by uPlot from props only: the series come from a pure function
// (series.ts), the colours from the theme's CSS variables, so both themes read well.
import { useEffect, useRef, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './usage.css';
import type { ChartData } from './series';

const PALETTE = ['--accent', '--ok', '--info', '--wait', '--bad', '--run'];

function cssVar(el: Element, name: string, fallback: string): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

// the theme toggle sets <html data-theme>: the chart redraws with the new colours
function subscribeTheme(fn: () => void): () => void {
  const o = new MutationObserver(fn);
  o.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return () => o.disconnect();
}
const themeName = (): string => document.documentElement.dataset.theme ?? '';

/** `xRange` (seconds): the same time axis for several charts, so a job's replicas line up */
export function UsageChart({ title, data, format, height = 160, xRange }: { title: string; data: ChartData; format: (v: number | undefined) => string; height?: number; xRange?: [number, number] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = `${data.series.map((s) => s.label).join('\n')}|${xRange?.join('-') ?? ''}`;
  // a new plot when the lines change (a container appears) or the theme does; new points only update it
  const theme = useSyncExternalStore(subscribeTheme, themeName);
  // the plot is built from the latest props, but only a change of shape, theme or height rebuilds it
  const latest = useRef({ data, format, xRange });
  useEffect(() => {
    latest.current = { data, format, xRange };
  });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const { data, xRange } = latest.current;
    const format = (v: number | undefined): string => latest.current.format(v);
    const text = cssVar(el, '--muted', '#666');
    const grid = cssVar(el, '--border', '#ddd');
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      // one line needs no legend; several (a Pod's containers and their total) do
      legend: { show: data.series.length > 1 },
      cursor: { drag: { x: false, y: false } },
      scales: { x: xRange ? { time: true, range: () => xRange } : { time: true }, y: { range: (_u, min, max) => [0, Math.max(max ?? 0, min ?? 0) * 1.15 || 0.01] } },
      axes: [
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 76, values: (_u, vals) => vals.map((v) => format(v)) },
      ],
      series: [
        {},
        ...data.series.map((s, i) => ({
          label: s.label,
          stroke: cssVar(el, PALETTE[i % PALETTE.length] ?? '--accent', '#2f6fde'),
          width: i === 0 && data.series.length > 1 ? 2 : 1.5,
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : format(v)),
        })),
      ],
    };
    const p = new uPlot(opts, [data.x, ...data.series.map((s) => s.values)] as uPlot.AlignedData, el);
    plot.current = p;
    const resize = new ResizeObserver(() => p.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      p.destroy();
      plot.current = null;
    };
    // new data is applied by the effect below
  }, [shape, theme, height]);
  useEffect(() => {
    plot.current?.setData([data.x, ...data.series.map((s) => s.values)] as uPlot.AlignedData);
  }, [data]);
  return (
    <figure className="usagechart" aria-label={title} data-points={data.x.length}>
      <figcaption>{title}</figcaption>
      <div ref={box} className="usageplot" />
    </figure>
  );
}
