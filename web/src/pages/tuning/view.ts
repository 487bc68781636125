// Katib's Experiments and Trials as the tuning pages show them: states from the conditions, each
// metric's value by its strategy, trials best-first by the objective's direction, the objective over
// trials with its best-so-far line, the parameters as parallel-coordinate axes, and the two first
// objectives of a multi-objective experiment with its Pareto front. Pure: objects in, data out.
import type { Condition } from '../../api/types';
import type { Metric, MetricStrategyType, ObjectiveType, TuningExperiment as Experiment, TuningParameterSpec as ParameterSpec, Trial } from '../../api/types';

/** the condition Katib added last: its printer columns show this one's type and status */
export function lastCondition(o: { status?: { conditions?: Condition[] } }): Condition | undefined {
  const c = o.status?.conditions ?? [];
  return c[c.length - 1];
}

const on = (conds: Condition[] | undefined, t: string): boolean => (conds ?? []).some((c) => c.type === t && c.status === 'True');

/** Failed, Succeeded, Restarting, Running or Created: the strongest true condition */
export function experimentState(e: Experiment): string {
  for (const t of ['Failed', 'Succeeded', 'Restarting', 'Running', 'Created']) if (on(e.status?.conditions, t)) return t;
  return 'Pending';
}

/** why the experiment is where it is: the reason and message of the condition behind its state */
export function experimentReason(e: Experiment): Condition | undefined {
  const s = experimentState(e);
  return (e.status?.conditions ?? []).find((c) => c.type === s && c.status === 'True');
}

/** a trial's end states outrank Running, and EarlyStopped outranks the Succeeded it may carry with it (the controller's order) */
const TRIAL_ORDER = ['Killed', 'Failed', 'MetricsUnavailable', 'EarlyStopped', 'Succeeded', 'Running', 'Created'];

export function trialState(t: Trial): string {
  for (const s of TRIAL_ORDER) if (on(t.status?.conditions, s)) return s;
  return 'Pending';
}

export function trialDone(state: string): boolean {
  return ['EarlyStopped', 'MetricsUnavailable', 'Killed', 'Failed', 'Succeeded'].includes(state);
}

export interface Objective {
  name: string;
  type: ObjectiveType;
}

/** the objective, then Skiff's additional objectives (multi-objective experiments) */
export function objectivesOf(e: Experiment): Objective[] {
  const o = e.spec.objective ?? {};
  const first: Objective[] = o.objectiveMetricName ? [{ name: o.objectiveMetricName, type: o.type ?? 'minimize' }] : [];
  return [...first, ...(o.additionalObjectives ?? []).map((a) => ({ name: a.name, type: a.type }))];
}

/** every metric the experiment collects: the objective's first, then the additional ones */
export function metricNames(e: Experiment): string[] {
  const o = e.spec.objective ?? {};
  return [...new Set([...(o.objectiveMetricName ? [o.objectiveMetricName] : []), ...(o.additionalMetricNames ?? [])])];
}

/** a metric's strategy as the spec sets it, else Katib's default: min when minimizing, max when maximizing */
export function strategyOf(e: Experiment, metric: string): MetricStrategyType {
  const o = e.spec.objective ?? {};
  const set = o.metricStrategies?.find((s) => s.name === metric)?.value;
  if (set) return set;
  const own = o.additionalObjectives?.find((a) => a.name === metric)?.type;
  const type = own ?? o.type;
  return type === 'maximize' ? 'max' : type === 'minimize' ? 'min' : 'latest';
}

/** Katib's numbers are strings; "unavailable" (or anything else not a number) is no value */
export function num(s: string | number | undefined): number | undefined {
  if (s === undefined || s === '' || s === null) return undefined;
  const n = typeof s === 'number' ? s : Number(s);
  return Number.isFinite(n) ? n : undefined;
}

/** a metric's value by its strategy, falling back to latest as Katib does when that one is unavailable */
export function metricValue(m: Metric | undefined, strategy: MetricStrategyType): number | undefined {
  if (!m) return undefined;
  return num(m[strategy]) ?? num(m.latest);
}

export function trialMetric(t: Trial, e: Experiment, name: string): number | undefined {
  return metricValue(
    t.status?.observation?.metrics?.find((m) => m.name === name),
    strategyOf(e, name),
  );
}

export function better(type: ObjectiveType, a: number, b: number): boolean {
  return type === 'maximize' ? a > b : a < b;
}

export interface TrialRow {
  trial: Trial;
  name: string;
  state: string;
  /** 1-based, in creation order */
  index: number;
  /** the objective by its strategy; undefined when not (yet) reported */
  value?: number;
  /** every metric by its strategy */
  metrics: Record<string, number | undefined>;
  /** the assignments as the trial got them (strings, as Katib writes them) */
  params: Record<string, string>;
  /** ms from start to completion (or to `now` while it runs) */
  durationMs?: number;
  /** seconds since the epoch of when its value became final (completion, else its last reconcile) */
  doneAt?: number;
  best: boolean;
}

const created = (t: Trial): number => Date.parse(t.metadata?.creationTimestamp ?? '') || 0;

/** trials in the order they were made: creation time, then name (Katib's names carry no order) */
export function byCreation(trials: Trial[]): Trial[] {
  return [...trials].sort((a, b) => created(a) - created(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

/**
 * The experiment's trials best-first: those with an objective value by the objective's direction,
 * then the rest in creation order. The best is the experiment's currentOptimalTrial when it names one
 * of these trials, else the first.
 */
export function rankTrials(e: Experiment, trials: Trial[], now = Date.now()): TrialRow[] {
  const type = objectivesOf(e)[0]?.type ?? 'minimize';
  const obj = e.spec.objective?.objectiveMetricName;
  const metrics = metricNames(e);
  const rows = byCreation(trials).map((t, i): TrialRow => {
    const start = Date.parse(t.status?.startTime ?? '');
    const end = Date.parse(t.status?.completionTime ?? '');
    const state = trialState(t);
    const doneRaw = Date.parse(t.status?.completionTime ?? t.status?.lastReconcileTime ?? '');
    const value = obj ? trialMetric(t, e, obj) : undefined;
    return {
      trial: t,
      name: t.metadata?.name ?? '',
      state,
      index: i + 1,
      ...(value !== undefined ? { value } : {}),
      metrics: Object.fromEntries(metrics.map((m) => [m, trialMetric(t, e, m)])),
      params: Object.fromEntries((t.spec.parameterAssignments ?? []).map((a) => [a.name, a.value])),
      ...(Number.isFinite(start) ? { durationMs: Math.max(0, (Number.isFinite(end) ? end : trialDone(state) ? start : now) - start) } : {}),
      ...(Number.isFinite(doneRaw) ? { doneAt: doneRaw / 1000 } : {}),
      best: false,
    };
  });
  const valued = rows.filter((r) => r.value !== undefined).sort((a, b) => (better(type, a.value!, b.value!) ? -1 : better(type, b.value!, a.value!) ? 1 : a.index - b.index));
  const rest = rows.filter((r) => r.value === undefined);
  const ranked = [...valued, ...rest];
  const named = e.status?.currentOptimalTrial?.bestTrialName;
  const best = ranked.find((r) => r.name === named) ?? valued[0];
  if (best) {
    best.best = true;
    // the optimal trial leads even when a later value ties it
    ranked.splice(ranked.indexOf(best), 1);
    ranked.unshift(best);
  }
  return ranked;
}

/** the running best of a sequence of values (undefined where nothing is known yet) */
export function bestSoFar(values: (number | undefined)[], type: ObjectiveType): (number | undefined)[] {
  let best: number | undefined;
  return values.map((v) => {
    if (v !== undefined && (best === undefined || better(type, v, best))) best = v;
    return best;
  });
}

/** the tone a trial state draws in: a CSS variable of the theme */
export function stateColor(state: string): string {
  switch (state) {
    case 'Succeeded':
      return '--ok';
    case 'Failed':
    case 'MetricsUnavailable':
      return '--bad';
    case 'EarlyStopped':
      return '--wait';
    case 'Running':
      return '--run';
    default:
      return '--muted';
  }
}

export interface ObjectiveChart {
  /** trial index or completion time (s), ascending */
  x: number[];
  /** one series of points per trial state present, null where another state's trial sits */
  groups: { state: string; color: string; values: (number | null)[] }[];
  bestLine: (number | null)[];
  /** the trials drawn, one point each */
  points: number;
}

/**
 * The objective over trials: a point per trial with a value, coloured by its state, and the best so far.
 * `by: 'index'` puts trial 1, 2, … on x; `'time'` when each trial's value became final.
 */
export function objectiveChart(rows: TrialRow[], type: ObjectiveType, by: 'index' | 'time'): ObjectiveChart {
  const pts = rows
    .filter((r) => r.value !== undefined && (by === 'index' || r.doneAt !== undefined))
    .map((r) => ({ x: by === 'index' ? r.index : r.doneAt!, y: r.value!, state: r.state, index: r.index }))
    .sort((a, b) => a.x - b.x || a.index - b.index);
  const states = [...new Set(pts.map((p) => p.state))].sort((a, b) => TRIAL_ORDER.indexOf(b) - TRIAL_ORDER.indexOf(a));
  const best = bestSoFar(pts.map((p) => p.y), type);
  return {
    x: pts.map((p) => p.x),
    groups: states.map((s) => ({ state: s, color: stateColor(s), values: pts.map((p) => (p.state === s ? p.y : null)) })),
    bestLine: best.map((b) => b ?? null),
    points: pts.length,
  };
}

export interface ParamAxis {
  name: string;
  kind: 'value' | 'log' | 'category';
  min?: number;
  max?: number;
  /** a categorical or discrete parameter's values, in the spec's order (discrete: numerically) */
  categories?: string[];
  /** the objective's axis, last */
  objective?: boolean;
}

const LOG: ReadonlySet<string> = new Set(['logUniform', 'logNormal']);

/** an axis per parameter as its feasible space has it, then the objective's */
export function parameterAxes(e: Experiment, rows: TrialRow[] = []): ParamAxis[] {
  const axes = (e.spec.parameters ?? []).map((p: ParameterSpec): ParamAxis => {
    const fs = p.feasibleSpace ?? {};
    if (p.parameterType === 'categorical' || p.parameterType === 'discrete') {
      const list = [...(fs.list ?? [])];
      if (p.parameterType === 'discrete' && list.every((v) => num(v) !== undefined)) list.sort((a, b) => Number(a) - Number(b));
      return { name: p.name, kind: 'category', categories: list };
    }
    const min = num(fs.min);
    const max = num(fs.max);
    // a log axis needs positive bounds; a space that crosses zero is drawn linear
    const log = LOG.has(fs.distribution ?? '') && (min === undefined || min > 0);
    return { name: p.name, kind: log ? 'log' : 'value', ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
  });
  const obj = e.spec.objective?.objectiveMetricName;
  if (obj) {
    const vals = rows.map((r) => r.value).filter((v): v is number => v !== undefined);
    axes.push({ name: obj, kind: 'value', objective: true, ...(vals.length ? { min: Math.min(...vals), max: Math.max(...vals) } : {}) });
  }
  return axes;
}

export interface ParallelLine {
  name: string;
  state: string;
  best: boolean;
  /** one value per axis: a number, a category's name, or null where the trial has none */
  values: (number | string | null)[];
}

/** one line per trial that has an assignment, across the axes of `parameterAxes` */
export function parallelLines(axes: ParamAxis[], rows: TrialRow[]): ParallelLine[] {
  return rows
    .filter((r) => Object.keys(r.params).length > 0)
    .map((r) => ({
      name: r.name,
      state: r.state,
      best: r.best,
      values: axes.map((a) => {
        if (a.objective) return r.value ?? null;
        const v = r.params[a.name];
        if (v === undefined) return null;
        return a.kind === 'category' ? v : num(v) ?? null;
      }),
    }));
}

export interface ParetoPoint {
  name: string;
  x: number;
  y: number;
  state: string;
  front: boolean;
}

export interface ParetoData {
  x: Objective;
  y: Objective;
  points: ParetoPoint[];
  /** the front's points in x order, for its line */
  front: ParetoPoint[];
}

/** the two first objectives of a multi-objective experiment against each other, status.paretoFront marked */
export function paretoData(e: Experiment, rows: TrialRow[]): ParetoData | undefined {
  const [ox, oy] = objectivesOf(e);
  if (!ox || !oy) return undefined;
  const onFront = new Set((e.status?.paretoFront ?? []).map((p) => p.bestTrialName).filter(Boolean));
  const points = rows.flatMap((r): ParetoPoint[] => {
    const x = r.metrics[ox.name] ?? trialMetric(r.trial, e, ox.name);
    const y = r.metrics[oy.name] ?? trialMetric(r.trial, e, oy.name);
    return x === undefined || y === undefined ? [] : [{ name: r.name, x, y, state: r.state, front: onFront.has(r.name) }];
  });
  const front = points.filter((p) => p.front).sort((a, b) => a.x - b.x || a.y - b.y);
  return { x: ox, y: oy, points, front };
}

/** "lr = 0.01 · optimizer = adam" */
export function assignmentsText(a: { name: string; value: string }[] | undefined): string {
  return (a ?? []).map((p) => `${p.name} = ${p.value}`).join(' · ');
}

/** a parameter's feasible space in words: "double in [0.01, 0.05], log-uniform", "one of sgd, adam" */
export function spaceText(p: ParameterSpec): string {
  const fs = p.feasibleSpace ?? {};
  if (fs.list?.length) return `${p.parameterType}, one of ${fs.list.join(', ')}`;
  const dist = fs.distribution && fs.distribution !== 'uniform' ? `, ${fs.distribution}` : '';
  return `${p.parameterType} in [${fs.min ?? '?'}, ${fs.max ?? '?'}]${fs.step ? ` step ${fs.step}` : ''}${dist}`;
}

/** the numbers that say how far along the experiment is, Katib's counts */
export function trialCounts(e: Experiment): { running: number; succeeded: number; failed: number; earlyStopped: number; pending: number; killed: number; total: number } {
  const s = e.status ?? {};
  return {
    running: s.trialsRunning ?? 0,
    succeeded: s.trialsSucceeded ?? 0,
    failed: (s.trialsFailed ?? 0) + (s.trialMetricsUnavailable ?? 0),
    earlyStopped: s.trialsEarlyStopped ?? 0,
    pending: s.trialsPending ?? 0,
    killed: s.trialsKilled ?? 0,
    total: s.trials ?? 0,
  };
}

/** the objective value of the experiment's currentOptimalTrial, by its strategy */
export function bestValue(e: Experiment): number | undefined {
  const name = e.spec.objective?.objectiveMetricName;
  if (!name) return undefined;
  return metricValue(
    e.status?.currentOptimalTrial?.observation?.metrics?.find((m) => m.name === name),
    strategyOf(e, name),
  );
}

/** a number as the tables show it: up to 6 significant digits, no exponent noise for ordinary sizes */
export function fmt(v: number | undefined): string {
  if (v === undefined) return '—';
  if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-4)) return v.toExponential(3);
  return String(+v.toPrecision(6));
}

/** a trial's objective by its own spec (a Trial carries a copy of its Experiment's objective) */
export function trialObjective(t: Trial): { name?: string; value?: number } {
  const name = t.spec.objective?.objectiveMetricName;
  if (!name) return {};
  const v = trialMetric(t, { spec: { objective: t.spec.objective } } as Experiment, name);
  return { name, ...(v !== undefined ? { value: v } : {}) };
}

/** labels that tie a Pod to the job its trial ran: batch Jobs', the training operators', Katib's own */
const JOB_LABELS = ['batch.kubernetes.io/job-name', 'job-name', 'training.kubeflow.org/job-name', 'katib.kubeflow.org/trial'];

/**
 * The Pods of a trial's job, primary first (those matching spec.primaryPodLabels), then by name. The
 * job is named as the trial.
 */
export function trialPods<P extends { metadata?: { name?: string; labels?: Record<string, string> } }>(t: Trial, pods: P[]): P[] {
  const name = t.metadata?.name;
  const primary = t.spec.primaryPodLabels ?? {};
  const isPrimary = (p: P): boolean => Object.entries(primary).every(([k, v]) => p.metadata?.labels?.[k] === v);
  return pods
    .filter((p) => JOB_LABELS.some((l) => p.metadata?.labels?.[l] === name))
    .sort((a, b) => Number(isPrimary(b)) - Number(isPrimary(a)) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

export interface Curves {
  /**
   * `time`: x is seconds since the epoch; `step`: x is the n-th value of each metric, used when a
   * metric's values share timestamps (a log read at once carries one second for many lines)
   */
  by: 'time' | 'step';
  /** ascending */
  x: number[];
  series: { name: string; values: (number | null)[] }[];
  /** reported values that were numbers */
  points: number;
}

/** an ObservationLog's values per metric, over time or by step; "unavailable" and other non-numbers left out */
export function metricCurves(logs: { timeStamp: string; name: string; value: string }[], order: string[] = []): Curves {
  const pts = logs
    .map((l, i) => ({ t: Date.parse(l.timeStamp) / 1000, name: l.name, v: num(l.value), i }))
    .filter((p): p is { t: number; name: string; v: number; i: number } => Number.isFinite(p.t) && p.v !== undefined)
    .sort((a, b) => a.t - b.t || a.i - b.i);
  const names = [...new Set([...order.filter((n) => pts.some((p) => p.name === n)), ...pts.map((p) => p.name)])];
  const per = names.map((n) => pts.filter((p) => p.name === n));
  const crowded = per.some((ps) => ps.some((p, k) => k > 0 && p.t === ps[k - 1]!.t));
  if (crowded) {
    const steps = Math.max(0, ...per.map((ps) => ps.length));
    return {
      by: 'step',
      x: Array.from({ length: steps }, (_, k) => k + 1),
      series: names.map((n, j) => ({ name: n, values: Array.from({ length: steps }, (_, k) => per[j]![k]?.v ?? null) })),
      points: pts.length,
    };
  }
  return {
    by: 'time',
    x: pts.map((p) => p.t),
    series: names.map((n) => ({ name: n, values: pts.map((p) => (p.name === n ? p.v : null)) })),
    points: pts.length,
  };
}
