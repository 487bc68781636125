// The tuning charts echarts draws: parallel coordinates of the parameters against the objective, and
// the Pareto scatter of a multi-objective experiment. Only the parts used are registered, and this
// module is loaded when the Charts tab opens, so the rest of the dashboard does not carry echarts.
import { useEffect, useRef } from 'react';
import * as echarts from 'echarts/core';
import { LineChart, ParallelChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, ParallelComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import type { ParallelLine, ParamAxis, ParetoData } from './view';
import { fmt, stateColor } from './view';
import { cssColor, useTheme } from './XYChart';

echarts.use([ParallelChart, ScatterChart, LineChart, ParallelComponent, GridComponent, TooltipComponent, LegendComponent, CanvasRenderer]);

function useEChart(option: () => echarts.EChartsCoreOption, deps: unknown[], height: number) {
  const box = useRef<HTMLDivElement>(null);
  const theme = useTheme();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const chart = echarts.init(el, undefined, { height });
    chart.setOption(option());
    const ro = new ResizeObserver(() => chart.resize());
    ro.observe(el);
    return () => {
      ro.disconnect();
      chart.dispose();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, theme, height]);
  return box;
}

const text = (): { color: string; fontSize: number } => ({ color: cssColor('--muted'), fontSize: 12 });

export function ParallelCoordinates({ axes, lines, label }: { axes: ParamAxis[]; lines: ParallelLine[]; label: string }) {
  const key = JSON.stringify([axes, lines]);
  const box = useEChart(
    () => ({
      animation: false,
      tooltip: { trigger: 'item', formatter: (p: { name?: string; value?: unknown[] }) => `${p.name}<br/>${axes.map((a, i) => `${a.name}: ${typeof p.value?.[i] === 'number' ? fmt(p.value[i] as number) : String(p.value?.[i] ?? '—')}`).join('<br/>')}` },
      parallel: { left: 60, right: 90, top: 40, bottom: 30, parallelAxisDefault: { nameTextStyle: { ...text(), color: cssColor('--text'), fontWeight: 600 }, axisLabel: text(), axisLine: { lineStyle: { color: cssColor('--border') } }, axisTick: { lineStyle: { color: cssColor('--border') } } } },
      parallelAxis: axes.map((a, i) => ({
        dim: i,
        name: a.objective ? `${a.name} (objective)` : a.name,
        type: a.kind,
        ...(a.kind === 'category' ? { data: a.categories } : { ...(a.min !== undefined ? { min: a.min } : {}), ...(a.max !== undefined ? { max: a.max } : {}), scale: true }),
        ...(a.objective ? { nameTextStyle: { color: cssColor('--accent'), fontWeight: 700 } } : {}),
      })),
      series: [
        {
          type: 'parallel',
          smooth: false,
          lineStyle: { width: 1.5, opacity: 0.55 },
          emphasis: { lineStyle: { width: 3, opacity: 1 } },
          data: lines.map((l) => ({ name: l.name, value: l.values, lineStyle: { color: cssColor(l.best ? '--text' : stateColor(l.state)), width: l.best ? 3.5 : 1.5, opacity: l.best ? 1 : 0.55 } })),
        },
      ],
    }),
    [key],
    360,
  );
  return <div ref={box} className="tuning-echart" role="img" aria-label={label} data-lines={lines.length} />;
}

export function ParetoScatter({ data, label }: { data: ParetoData; label: string }) {
  const key = JSON.stringify(data);
  const box = useEChart(
    () => {
      const others = data.points.filter((p) => !p.front);
      const axis = (name: string) => ({ type: 'value', name, nameLocation: 'middle', nameGap: 32, nameTextStyle: text(), axisLabel: text(), scale: true, splitLine: { lineStyle: { color: cssColor('--border') } }, axisLine: { lineStyle: { color: cssColor('--border') } } });
      return {
        animation: false,
        legend: { textStyle: { color: cssColor('--text') }, top: 0 },
        tooltip: { trigger: 'item', formatter: (p: { data?: { name?: string; value?: number[] } }) => `${p.data?.name}<br/>${data.x.name}: ${fmt(p.data?.value?.[0])}<br/>${data.y.name}: ${fmt(p.data?.value?.[1])}` },
        grid: { left: 70, right: 30, top: 40, bottom: 50 },
        xAxis: axis(`${data.x.name} (${data.x.type})`),
        yAxis: axis(`${data.y.name} (${data.y.type})`),
        series: [
          { name: 'trials', type: 'scatter', symbolSize: 10, itemStyle: { color: cssColor('--muted'), opacity: 0.7 }, data: others.map((p) => ({ name: p.name, value: [p.x, p.y] })) },
          { name: 'Pareto front', type: 'line', step: false, symbol: 'circle', symbolSize: 11, lineStyle: { color: cssColor('--accent'), width: 2 }, itemStyle: { color: cssColor('--accent') }, data: data.front.map((p) => ({ name: p.name, value: [p.x, p.y] })) },
        ],
      };
    },
    [key],
    360,
  );
  return <div ref={box} className="tuning-echart" role="img" aria-label={label} data-points={data.points.length} data-front={data.front.length} />;
}
