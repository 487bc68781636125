// A time-series chart (uPlot) drawn from props only: the x axis in seconds, one line per series,
// colours from the theme's CSS variables (redrawn when the theme changes), width from its box.
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartData } from './series';

function cssColor(v: string): string {
  if (!v.startsWith('--')) return v;
  return getComputedStyle(document.documentElement).getPropertyValue(v).trim() || '#888';
}

function useTheme(): string | undefined {
  const [theme, setTheme] = useState(() => document.documentElement.dataset.theme);
  useEffect(() => {
    const o = new MutationObserver(() => setTheme(document.documentElement.dataset.theme));
    o.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => o.disconnect();
  }, []);
  return theme;
}

/** `points`: mark each value (for series with gaps, where a lone value would draw no line) */
export function TimeChart({ data, height = 180, label, unit, points = false }: { data: ChartData; height?: number; label: string; unit?: string; points?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useTheme();
  const labels = data.series.map((s) => `${s.label}|${s.color}|${s.dash ? 1 : 0}`).join(',');
  const aligned = [data.x, ...data.series.map((s) => s.values)] as uPlot.AlignedData;
  const latest = useRef(aligned);
  latest.current = aligned;

  // (re)built when the series or the theme change; data alone goes through setData below
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const axisColor = cssColor('--muted');
    const grid = cssColor('--border');
    const axis: uPlot.Axis = { stroke: axisColor, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [axis, { ...axis, size: 68, values: (_u, vals) => vals.map((v) => (v == null ? '' : `${+v.toPrecision(3)}${unit ?? ''}`)) }],
      series: [
        {},
        ...data.series.map((s) => ({
          label: s.label,
          stroke: cssColor(s.color),
          width: s.dash ? 1.25 : 1.75,
          ...(s.dash ? { dash: [5, 4] } : {}),
          spanGaps: false,
          points: points ? { show: true, size: 5, fill: cssColor(s.color) } : { show: false },
          value: (_u: uPlot, v: number | null) => (v == null ? '—' : `${+v.toPrecision(3)}${unit ?? ''}`),
        })),
      ],
    };
    const u = new uPlot(opts, latest.current, el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [labels, theme, height, unit, points]);

  useEffect(() => {
    plot.current?.setData(aligned);
  });

  return <div className="isvc-chart" ref={box} role="img" aria-label={label} />;
}
