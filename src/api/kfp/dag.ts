// Pure graph helpers over one DAG of the PipelineSpec IR. Task names (the keys of `dag.tasks`) are
// what `dependentTasks`/`producerTask` reference; edges never cross DAG levels.
import type { DagSpec, PipelineTaskSpec } from './ir.js';

/** Tasks this task must wait for: `dependentTasks` ∪ producers of its inputs (sorted, unique). */
export function upstreamOf(task: PipelineTaskSpec): string[] {
  const up = new Set<string>();
  for (const d of task.dependentTasks ?? []) up.add(d);
  for (const p of Object.values(task.inputs?.parameters ?? {})) {
    if (p.taskOutputParameter?.producerTask) up.add(p.taskOutputParameter.producerTask);
    if (p.taskFinalStatus?.producerTask) up.add(p.taskFinalStatus.producerTask);
  }
  for (const a of Object.values(task.inputs?.artifacts ?? {})) {
    if (a.taskOutputArtifact?.producerTask) up.add(a.taskOutputArtifact.producerTask);
  }
  return [...up].sort();
}

/** name → upstream names that exist in this DAG (references to missing tasks are validation's business). */
export function upstreamMap(dag: DagSpec): Map<string, string[]> {
  const tasks = dag.tasks ?? {};
  const m = new Map<string, string[]>();
  for (const [name, t] of Object.entries(tasks)) m.set(name, upstreamOf(t).filter((u) => u in tasks));
  return m;
}

/**
 * Kahn's algorithm; ties broken by task name so the order is deterministic.
 * Throws if the DAG has a cycle (use `cycles` first to report it).
 */
export function topologicalOrder(dag: DagSpec): string[] {
  const up = upstreamMap(dag);
  const indeg = new Map<string, number>();
  const down = new Map<string, string[]>();
  for (const [name, ups] of up) {
    indeg.set(name, ups.length);
    for (const u of ups) {
      const l = down.get(u) ?? [];
      l.push(name);
      down.set(u, l);
    }
  }
  const ready = [...indeg].filter(([, d]) => d === 0).map(([n]) => n).sort();
  const out: string[] = [];
  while (ready.length > 0) {
    const n = ready.shift() as string;
    out.push(n);
    let added = false;
    for (const d of down.get(n) ?? []) {
      const left = (indeg.get(d) ?? 0) - 1;
      indeg.set(d, left);
      if (left === 0) {
        ready.push(d);
        added = true;
      }
    }
    if (added) ready.sort();
  }
  if (out.length !== up.size) {
    const stuck = [...up.keys()].filter((n) => !out.includes(n));
    throw new Error(`dag has a cycle among tasks: ${stuck.join(', ')}`);
  }
  return out;
}

/**
 * The cycles of a DAG: each non-trivial strongly connected component (or self-loop) as its sorted
 * task names; the list is sorted by first name. Empty when the graph is acyclic.
 */
export function cycles(dag: DagSpec): string[][] {
  const up = upstreamMap(dag);
  const names = [...up.keys()].sort();
  // Tarjan's SCC over edges task → upstream
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const sccs: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of up.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      const selfLoop = scc.length === 1 && (up.get(v) ?? []).includes(v);
      if (scc.length > 1 || selfLoop) sccs.push(scc.sort());
    }
  };
  for (const n of names) if (!idx.has(n)) visit(n);
  return sccs.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}
