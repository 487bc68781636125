// The DAG's tasks as an indented list, for a version's page: what it runs, nested DAGs under their
// task, before any run exists to draw a graph of.
import type { PipelineSpec, PipelineTaskSpec } from '../../api/types';

export interface TaskLine {
  /** `outer.inner` for a task inside a sub-DAG */
  path: string;
  name: string;
  depth: number;
  /** the component it runs */
  component: string;
  /** a sub-DAG (condition, loop, nested pipeline) */
  dag: boolean;
  loop: boolean;
  after: string[];
}

/**
 * The DAG's tasks as an indented list in dependency order (a task after those it depends on), sub-DAGs
 * nested under their task. A cycle (refused by the server) cannot hang it: what is left is appended.
 */
export function taskLines(spec: PipelineSpec | undefined, limit = 500): { lines: TaskLine[]; truncated: number } {
  const lines: TaskLine[] = [];
  let total = 0;
  const walk = (tasks: Record<string, PipelineTaskSpec> | undefined, depth: number, prefix: string, seen: Set<string>): void => {
    if (!tasks) return;
    const order: string[] = [];
    const done = new Set<string>();
    const names = Object.keys(tasks).sort();
    let progress = true;
    while (order.length < names.length && progress) {
      progress = false;
      for (const n of names) {
        if (done.has(n)) continue;
        if ((tasks[n]?.dependentTasks ?? []).every((d) => done.has(d) || !(d in tasks))) {
          order.push(n);
          done.add(n);
          progress = true;
        }
      }
    }
    for (const n of names) if (!done.has(n)) order.push(n);
    for (const n of order) {
      const t: PipelineTaskSpec | undefined = tasks[n];
      const comp = t?.componentRef?.name ?? '';
      const sub = spec?.components?.[comp]?.dag?.tasks;
      total++;
      const path = prefix ? `${prefix}.${n}` : n;
      if (lines.length < limit) {
        lines.push({ path, name: t?.taskInfo?.name ?? n, depth, component: comp, dag: sub !== undefined, loop: t?.parameterIterator !== undefined || t?.artifactIterator !== undefined, after: t?.dependentTasks ?? [] });
      }
      if (sub && !seen.has(comp)) walk(sub, depth + 1, path, new Set([...seen, comp]));
    }
  };
  walk(spec?.root?.dag?.tasks, 0, '', new Set());
  return { lines, truncated: total - lines.length };
}
