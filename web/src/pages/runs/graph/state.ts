// Runtime state over the static graph: a pure function of the run's task records (run.status.tasks
// once it ends, its RunTask objects while it runs). A loop node sums up its iterations.
import type { Run, RunState, TaskStatus } from '../../../api/types';
import type { GraphNode, Level } from './static';

export type Shown = RunState | 'CACHED' | 'NOT_STARTED';

export interface NodeState {
  state: Shown;
  status?: TaskStatus;
  /**
   * loops: their iterations' states, counted. `total` is the number of items when it is known (a
   * literal list, or the list the loop's record resolved), so iterations not started yet are counted
   * too; `started` is how many have a record.
   */
  iterations?: { total: number; started: number; counts: Partial<Record<Shown, number>> };
  /** sub-DAGs and conditions: the tasks inside that ran or run a Pod (or an importer), at any depth, counted by state */
  inside?: Partial<Record<Shown, number>>;
}

/** every task record of the run by path, the live RunTasks over the final status */
export function taskRecords(run: Run | undefined, runTasks: { spec?: unknown; status?: unknown }[]): Record<string, TaskStatus> {
  const out: Record<string, TaskStatus> = { ...(run?.status?.tasks ?? {}) };
  for (const rt of runTasks) {
    const path = (rt.spec as { path?: string } | undefined)?.path;
    if (path && rt.status) out[path] = rt.status as TaskStatus;
  }
  return out;
}

export function shownState(t: TaskStatus | undefined): Shown {
  if (!t) return 'NOT_STARTED';
  if (t.cachedFrom && t.state === 'SUCCEEDED') return 'CACHED';
  return t.state;
}

/** the iterations of the loop at `path`: `path.0`, `path.1`, … in index order */
export function iterationsOf(tasks: Record<string, TaskStatus>, path: string): { index: number; path: string; status: TaskStatus }[] {
  const out: { index: number; path: string; status: TaskStatus }[] = [];
  const prefix = `${path}.`;
  for (const [p, status] of Object.entries(tasks)) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    if (/^\d+$/.test(rest)) out.push({ index: Number(rest), path: p, status });
  }
  return out.sort((a, b) => a.index - b.index);
}

/**
 * The loop's iterations for its list, `total` rows long: those not started yet (no record) included,
 * so a loop's list says how far it has come.
 */
export function iterationRows(tasks: Record<string, TaskStatus>, path: string, total: number): { index: number; path: string; status?: TaskStatus }[] {
  const rows: { index: number; path: string; status?: TaskStatus }[] = [];
  for (const it of iterationsOf(tasks, path)) rows[it.index] = it;
  const n = Math.max(total, rows.length);
  for (let i = 0; i < n; i++) rows[i] ??= { index: i, path: `${path}.${i}` };
  return rows;
}

export function nodeStates(level: Level, tasks: Record<string, TaskStatus>): Map<string, NodeState> {
  const out = new Map<string, NodeState>();
  for (const n of level.nodes) out.set(n.id, nodeState(n, tasks));
  return out;
}

export function nodeState(n: GraphNode, tasks: Record<string, TaskStatus>): NodeState {
  const status = tasks[n.id];
  const s: NodeState = { state: shownState(status), ...(status ? { status } : {}) };
  if (n.kind === 'dag' || n.kind === 'condition') {
    const prefix = `${n.id}.`;
    const inside: Partial<Record<Shown, number>> = {};
    for (const [p, t] of Object.entries(tasks)) {
      if (!p.startsWith(prefix) || !(t.podName || t.kind || t.cachedFrom)) continue;
      const st = shownState(t);
      inside[st] = (inside[st] ?? 0) + 1;
    }
    if (Object.keys(inside).length) s.inside = inside;
  }
  if (n.kind === 'loop') {
    const its = iterationsOf(tasks, n.id);
    const counts: Partial<Record<Shown, number>> = {};
    for (const it of its) {
      const st = shownState(it.status);
      counts[st] = (counts[st] ?? 0) + 1;
    }
    const items = loopItemCount(n, status);
    const total = Math.max(items ?? 0, its.length);
    if (total > its.length) counts.NOT_STARTED = (counts.NOT_STARTED ?? 0) + total - its.length;
    s.iterations = { total, started: its.length, counts };
  }
  return s;
}

/**
 * How many items a loop iterates over, when that is known before every iteration has started: its
 * literal list, or the list its record resolved (a loop over an upstream task's output).
 */
export function loopItemCount(n: GraphNode, status: TaskStatus | undefined): number | undefined {
  const src = n.iterator?.items;
  if (src === undefined) return undefined;
  if (n.iterator?.literal) {
    try {
      const v: unknown = JSON.parse(src);
      return Array.isArray(v) ? v.length : undefined;
    } catch {
      return undefined; // a malformed literal fails the run, which says why; the graph only counts
    }
  }
  const v = status?.inputs?.parameters[src];
  if (Array.isArray(v)) return v.length;
  const a = status?.inputs?.artifacts[src];
  return Array.isArray(a) ? a.length : undefined;
}

const ORDER: Shown[] = ['RUNNING', 'PENDING', 'SUCCEEDED', 'CACHED', 'FAILED', 'SKIPPED', 'CANCELING', 'CANCELED', 'NOT_STARTED'];

/** "812 succeeded · 150 running · 38 pending" */
export function countsText(counts: Partial<Record<Shown, number>>): string {
  return ORDER.filter((k) => counts[k]).map((k) => `${counts[k]} ${label(k)}`).join(' · ');
}

export function label(s: Shown): string {
  return s === 'NOT_STARTED' ? 'not started' : s.toLowerCase();
}

export interface Bar {
  path: string;
  start: number;
  end: number;
  state: Shown;
  running: boolean;
}

/** the timeline: one bar per task that ran (containers and importers), by start time */
export function timelineBars(tasks: Record<string, TaskStatus>, now: number): { bars: Bar[]; t0: number; t1: number } {
  const bars: Bar[] = [];
  for (const [path, t] of Object.entries(tasks)) {
    if (!t.startedAt || (!t.podName && !t.kind && !t.cachedFrom)) continue;
    const start = Date.parse(t.startedAt);
    const running = !t.finishedAt;
    const end = t.finishedAt ? Date.parse(t.finishedAt) : now;
    if (Number.isNaN(start) || Number.isNaN(end)) continue;
    bars.push({ path, start, end: Math.max(start, end), state: shownState(t), running });
  }
  bars.sort((a, b) => a.start - b.start || a.path.localeCompare(b.path));
  const t0 = bars.length ? Math.min(...bars.map((b) => b.start)) : now;
  const t1 = bars.length ? Math.max(...bars.map((b) => b.end)) : now;
  return { bars, t0, t1: Math.max(t1, t0 + 1) };
}

/** the timeline's tick marks: a round step (1s, 2s, 5s, 10s, … 1d) giving at most `want` intervals across `span` ms */
export function timeTicks(span: number, want = 5): number[] {
  const steps = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];
  const step = steps.find((x) => span / x <= want) ?? Math.ceil(span / want / 86_400_000) * 86_400_000;
  const out: number[] = [];
  for (let t = 0; t <= span; t += step) out.push(t);
  return out;
}
