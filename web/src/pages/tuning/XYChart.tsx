// A uPlot chart drawn from props only: point series (a trial's value, one colour per state), and
// line series (the best so far, a metric's curve). Colours are the theme's CSS variables, redrawn when
// the theme changes; the width follows its box.
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { fmt } from './view';

export interface XYSeries {
  label: string;
  /** a CSS variable (`--ok`) or a colour */
  color: string;
  values: (number | null)[];
  /** points only, no line */
  points?: boolean;
  /** a step line that holds each value until the next (the best so far) */
  stepped?: boolean;
}

export function cssColor(v: string): string {
  if (!v.startsWith('--')) return v;
  return getComputedStyle(document.documentElement).getPropertyValue(v).trim() || '#888';
}

export function useTheme(): string | undefined {
  const [theme, setTheme] = useState(() => document.documentElement.dataset.theme);
  useEffect(() => {
    const o = new MutationObserver(() => setTheme(document.documentElement.dataset.theme));
    o.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => o.disconnect();
  }, []);
  return theme;
}

export function XYChart({ x, series, time, xLabel, yLabel, label, height = 320, count }: { x: number[]; series: XYSeries[]; time: boolean; xLabel: string; yLabel: string; label: string; height?: number; count?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useTheme();
  const shape = series.map((s) => `${s.label}|${s.color}|${s.points ? 1 : 0}|${s.stepped ? 1 : 0}`).join(',');
  const aligned = [x, ...series.map((s) => s.values)] as uPlot.AlignedData;
  const latest = useRef(aligned);
  latest.current = aligned;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const muted = cssColor('--muted');
    const grid = cssColor('--border');
    const axis: uPlot.Axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const stepped = uPlot.paths.stepped?.({ align: 1 });
    const opts: uPlot.Options = {
      width: Math.max(240, el.clientWidth),
      height,
      legend: { show: true },
      cursor: { drag: { x: true, y: false } },
      // half a trial of room either side, so the first and last points are not on the frame
      scales: { x: time ? { time } : { time, range: (_u, min, max) => [min - 0.5, max + 0.5] } },
      axes: [
        // trial numbers are whole: ticks only on them
        { ...axis, label: xLabel, ...(time ? {} : { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000], values: (_u, vals) => vals.map((v) => String(v)) }) },
        { ...axis, label: yLabel, size: 70, values: (_u, vals) => vals.map((v) => (v == null ? '' : fmt(v))) },
      ],
      series: [
        { label: xLabel, value: (_u, v) => (v == null ? '—' : time ? new Date(v * 1000).toLocaleTimeString() : `#${v}`) },
        ...series.map((s): uPlot.Series => {
          const c = cssColor(s.color);
          return {
            label: s.label,
            stroke: c,
            width: s.points ? 1 : 2,
            spanGaps: !s.points,
            // a point series draws no path; its fill is its legend marker
            ...(s.points ? { fill: c, paths: () => null, points: { show: true, size: 11, fill: c, stroke: cssColor('--panel'), width: 1.5 } } : { points: { show: false } }),
            ...(s.stepped && stepped ? { paths: stepped } : {}),
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : fmt(v)),
          };
        }),
      ],
    };
    const u = new uPlot(opts, latest.current, el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(240, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape, theme, height, time, xLabel, yLabel]);

  useEffect(() => {
    plot.current?.setData(aligned);
  });

  return <div className="tuning-chart" ref={box} role="img" aria-label={label} data-points={count} />;
}
