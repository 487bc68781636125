// Runs side by side, as tables built from the runs alone: parameters (differences marked), every
// scalar metric of every system.Metrics artifact (no cap on how many), and the rich artifacts
// (confusion matrices, ROC curves, HTML, Markdown) lined up by task and output.
import type { Run, RunArtifact } from '../../api/types';
import { scalars } from '../../artifacts/model';

export interface Row {
  key: string;
  values: (string | number | undefined)[];
  /** the runs do not all agree */
  differs: boolean;
  /** the index of the largest numeric value, where values differ */
  best?: number;
}

export interface Panel {
  key: string;
  task: string;
  output: string;
  schema: string;
  /** per run: the artifact and its index, or nothing */
  cells: ({ artifact: RunArtifact; index: number } | undefined)[];
}

export interface Comparison {
  parameters: Row[];
  metrics: Row[];
  panels: Panel[];
}

const show = (v: unknown): string | number | undefined => (v === undefined ? undefined : typeof v === 'number' || typeof v === 'string' ? v : JSON.stringify(v));

function row(key: string, values: (string | number | undefined)[], numericBest: boolean): Row {
  const distinct = new Set(values.map((v) => JSON.stringify(v ?? null)));
  const r: Row = { key, values, differs: distinct.size > 1 };
  if (numericBest && r.differs) {
    let best: number | undefined;
    values.forEach((v, i) => {
      if (typeof v === 'number' && (best === undefined || v > (values[best] as number))) best = i;
    });
    if (best !== undefined) r.best = best;
  }
  return r;
}

const RICH = new Set(['system.ClassificationMetrics', 'system.HTML', 'system.Markdown', 'system.SlicedClassificationMetrics']);

export function compareRuns(runs: Run[]): Comparison {
  const paramNames = [...new Set(runs.flatMap((r) => Object.keys(r.spec.parameters ?? {})))].sort();
  const parameters = paramNames.map((n) => row(n, runs.map((r) => show(r.spec.parameters?.[n])), false));

  const metricValues = new Map<string, (string | number | undefined)[]>();
  const panels = new Map<string, Panel>();
  runs.forEach((r, ri) => {
    for (const [task, t] of Object.entries(r.status?.tasks ?? {})) {
      for (const [output, list] of Object.entries(t.outputs?.artifacts ?? {})) {
        list.forEach((a, index) => {
          const schema = String(a.type?.schemaTitle ?? '');
          const where = list.length > 1 ? `${task}/${output}[${index}]` : `${task}/${output}`;
          if (schema === 'system.Metrics') {
            const s = scalars(a.metadata);
            if (!s.ok) return;
            for (const m of s.value) {
              const k = `${where}/${m.name}`;
              const vals = metricValues.get(k) ?? runs.map(() => undefined);
              vals[ri] = m.value;
              metricValues.set(k, vals);
            }
          } else if (RICH.has(schema)) {
            const p = panels.get(where) ?? { key: where, task, output, schema, cells: runs.map(() => undefined) };
            p.cells[ri] = { artifact: a, index };
            panels.set(where, p);
          }
        });
      }
    }
  });
  const metrics = [...metricValues.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => row(k, v, true));
  return { parameters, metrics, panels: [...panels.values()].sort((a, b) => a.key.localeCompare(b.key)) };
}
