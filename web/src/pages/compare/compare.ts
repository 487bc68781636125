// The compare page's tables as plain data: run facts, parameters (rows = names, columns = runs),
// scalar metrics from every system.Metrics artifact (rows = task/output/metric) and the artifacts to
// show side by side, grouped by what they are.
import type { Run, TaskStatus } from '../../api/types';
import type { ArtifactRef } from '../../artifacts/model';
import { runArtifacts, scalarMetrics, schemaOf } from '../../artifacts/model';

export interface RunColumn {
  name: string;
  /** not (yet) in the namespace */
  missing: boolean;
  state?: string;
  pipeline?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface ParamRow {
  name: string;
  /** one per run, as text; undefined where a run has no such parameter */
  values: (string | undefined)[];
  differs: boolean;
}

export interface MetricRow {
  /** task/output/metric, or task/output[i]/metric for the later artifacts of a list */
  key: string;
  values: (number | undefined)[];
  /** the runs holding the best value (several on a tie); empty when fewer than two runs have one */
  best: number[];
  /** lower is better for this metric (loss, error, …) */
  lowerIsBetter: boolean;
  differs: boolean;
}

export interface PanelRow {
  /** task/output or task/output[i] */
  key: string;
  type: string;
  refs: (ArtifactRef | undefined)[];
}

export interface Comparison {
  runs: RunColumn[];
  params: ParamRow[];
  metrics: MetricRow[];
  /** malformed metrics, by run and artifact, to say so rather than drop them silently */
  metricErrors: string[];
  panels: PanelRow[];
}

/** the artifact types compared as panels side by side */
export const PANEL_TYPES = ['system.ClassificationMetrics', 'system.HTML', 'system.Markdown'];

const LOWER_IS_BETTER = /loss|err|mse|mae|rmse|perplexity|latency|time|duration|cost/i;

export function lowerIsBetter(metric: string): boolean {
  return LOWER_IS_BETTER.test(metric);
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function refKey(r: ArtifactRef): string {
  return r.index === 0 ? `${r.task}/${r.output}` : `${r.task}/${r.output}[${r.index}]`;
}

/** `names` in the order asked; `runs` the objects found; `tasks` RunTask records of running runs, by run then path */
export function buildComparison(names: string[], runs: Run[], tasks: Record<string, Record<string, TaskStatus>> = {}): Comparison {
  const byName = new Map(runs.map((r) => [r.metadata.name, r]));
  const cols = names.map((n) => byName.get(n));
  const columns: RunColumn[] = names.map((name, i) => {
    const r = cols[i];
    if (!r) return { name, missing: true };
    const info = r.spec?.pipelineSpec?.pipelineInfo as { name?: string; displayName?: string } | undefined;
    return { name, missing: false, state: r.status?.state, pipeline: info?.displayName ?? info?.name, startedAt: r.status?.startedAt, finishedAt: r.status?.finishedAt };
  });

  const paramNames = [...new Set(cols.flatMap((r) => Object.keys(r?.spec?.parameters ?? {})))].sort();
  const params = paramNames.map((name) => {
    const values = cols.map((r) => {
      const ps = r?.spec?.parameters ?? {};
      return Object.hasOwn(ps, name) ? text(ps[name]) : undefined;
    });
    return { name, values, differs: new Set(values).size > 1 };
  });

  const arts = cols.map((r) => (r ? runArtifacts(r, tasks[r.metadata.name ?? '']) : []));
  const metricValues = new Map<string, (number | undefined)[]>();
  const metricErrors: string[] = [];
  arts.forEach((list, col) => {
    for (const ref of list) {
      if (schemaOf(ref.artifact) !== 'system.Metrics') continue;
      const { metrics, errors } = scalarMetrics(ref.artifact.metadata);
      for (const e of errors) metricErrors.push(`${names[col]}: ${refKey(ref)}: ${e}`);
      for (const m of metrics) {
        const key = `${refKey(ref)}/${m.name}`;
        let row = metricValues.get(key);
        if (!row) metricValues.set(key, (row = names.map(() => undefined)));
        row[col] = m.value;
      }
    }
  });
  const metrics = [...metricValues.keys()].sort().map((key) => {
    const values = metricValues.get(key) as (number | undefined)[];
    const lower = lowerIsBetter(key.slice(key.lastIndexOf('/') + 1));
    const present = values.filter((v): v is number => v !== undefined);
    let best: number[] = [];
    if (present.length >= 2 && new Set(present).size > 1) {
      const target = lower ? Math.min(...present) : Math.max(...present);
      best = values.flatMap((v, i) => (v === target ? [i] : []));
    }
    return { key, values, best, lowerIsBetter: lower, differs: new Set(values).size > 1 };
  });

  const panelMap = new Map<string, PanelRow>();
  arts.forEach((list, col) => {
    for (const ref of list) {
      const type = schemaOf(ref.artifact);
      if (!PANEL_TYPES.includes(type)) continue;
      const key = refKey(ref);
      let row = panelMap.get(`${type} ${key}`);
      if (!row) panelMap.set(`${type} ${key}`, (row = { key, type, refs: names.map(() => undefined) }));
      row.refs[col] = ref;
    }
  });
  const panels = [...panelMap.values()].sort((a, b) => PANEL_TYPES.indexOf(a.type) - PANEL_TYPES.indexOf(b.type) || a.key.localeCompare(b.key));
  return { runs: columns, params, metrics, metricErrors, panels };
}

/** the `runs=` query as a list: trimmed, no empties, no repeats, in order */
export function parseRunList(q: string | undefined): string[] {
  return [...new Set((q ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
}
