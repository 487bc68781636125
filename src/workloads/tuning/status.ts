// An Experiment's status from its Trials, as Katib's status_util.go computes it, with Skiff's
// corrections where Katib's own rules contradict each other (research E.19, E.20):
// - a trial whose metrics never appeared counts as finished everywhere (Katib leaves it out of the
//   count that sizes the next batch, so it can make more than maxTrialCount trials);
// - the best trial is the best *numeric* objective (Katib lets a non-numeric value win).
import type { Condition } from '../../api/conditions.js';
import type { ExperimentSpec, ExperimentStatus, Metric, ObjectiveType, OptimalTrial, Trial } from '../../api/tuning.js';

export type TrialBucket = 'pending' | 'running' | 'succeeded' | 'failed' | 'killed' | 'earlyStopped' | 'metricsUnavailable';

const isTrue = (conds: Condition[] | undefined, type: string) => conds?.some((c) => c.type === type && c.status === 'True') ?? false;

/** where a trial stands, by its conditions (a finished state wins over Running) */
export function bucketOf(t: Trial): TrialBucket {
  const c = t.status?.conditions;
  if (isTrue(c, 'Killed')) return 'killed';
  if (isTrue(c, 'Failed')) return 'failed';
  if (isTrue(c, 'MetricsUnavailable')) return 'metricsUnavailable';
  if (isTrue(c, 'EarlyStopped')) return 'earlyStopped';
  if (isTrue(c, 'Succeeded')) return 'succeeded';
  if (isTrue(c, 'Running')) return 'running';
  return 'pending';
}

export const finishedBuckets: readonly TrialBucket[] = ['succeeded', 'failed', 'killed', 'earlyStopped', 'metricsUnavailable'];
export const isFinishedTrial = (t: Trial): boolean => finishedBuckets.includes(bucketOf(t));

/** The metric's value by its strategy (min / max / latest), as a number; undefined when absent or not a number. */
export function metricValue(spec: ExperimentSpec, metrics: Metric[] | undefined, name: string): number | undefined {
  const m = metrics?.find((x) => x.name === name);
  if (!m) return undefined;
  const strategy = spec.objective?.metricStrategies?.find((s) => s.name === name)?.value ?? 'latest';
  const num = (v: string | undefined) => (v === undefined || v.trim() === '' || !Number.isFinite(Number(v)) ? undefined : Number(v));
  return num(strategy === 'min' ? m.min : strategy === 'max' ? m.max : m.latest) ?? num(m.latest);
}

/** The objectives, the first being spec.objective: each metric with its direction. */
export function objectivesOf(spec: ExperimentSpec): { name: string; type: ObjectiveType }[] {
  const o = spec.objective;
  if (!o?.objectiveMetricName) return [];
  return [{ name: o.objectiveMetricName, type: o.type ?? 'minimize' }, ...(o.additionalObjectives ?? [])];
}

/** each objective to be minimised (maximised ones negated); undefined when one is missing */
export function lossesOf(spec: ExperimentSpec, t: Trial): number[] | undefined {
  const out: number[] = [];
  for (const o of objectivesOf(spec)) {
    const v = metricValue(spec, t.status?.observation?.metrics, o.name);
    if (v === undefined) return undefined;
    out.push(o.type === 'maximize' ? -v : v);
  }
  return out.length ? out : undefined;
}

const optimal = (t: Trial): OptimalTrial => ({
  bestTrialName: t.metadata.name,
  parameterAssignments: t.spec.parameterAssignments ?? [],
  observation: t.status?.observation ?? { metrics: [] },
});

/** a dominates b: no worse on every loss, better on one */
const dominates = (a: number[], b: number[]) => a.every((x, i) => x <= (b[i] as number)) && a.some((x, i) => x < (b[i] as number));

/** The trials no other trial beats on every objective, best first by the first objective. */
export function paretoFront(spec: ExperimentSpec, trials: Trial[]): Trial[] {
  const scored = trials.map((t) => ({ t, l: lossesOf(spec, t) })).filter((x): x is { t: Trial; l: number[] } => x.l !== undefined);
  const front = scored.filter((a) => !scored.some((b) => b !== a && dominates(b.l, a.l)));
  return front.sort((a, b) => (a.l[0] as number) - (b.l[0] as number)).map((x) => x.t);
}

export interface Summary {
  status: Pick<ExperimentStatus, 'currentOptimalTrial' | 'paretoFront' | 'runningTrialList' | 'pendingTrialList' | 'failedTrialList' | 'succeededTrialList' | 'killedTrialList' | 'earlyStoppedTrialList' | 'metricsUnavailableTrialList' | 'trials' | 'trialsSucceeded' | 'trialsFailed' | 'trialsKilled' | 'trialsPending' | 'trialsRunning' | 'trialsEarlyStopped' | 'trialMetricsUnavailable'>;
  /** the best trial's objective (as reported, not negated) */
  best?: number;
  buckets: Map<string, TrialBucket>;
}

export function summarise(spec: ExperimentSpec, trials: Trial[]): Summary {
  const lists: Record<TrialBucket, string[]> = { pending: [], running: [], succeeded: [], failed: [], killed: [], earlyStopped: [], metricsUnavailable: [] };
  const buckets = new Map<string, TrialBucket>();
  const sorted = [...trials].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  let bestTrial: Trial | undefined;
  let best: number | undefined;
  const name = spec.objective?.objectiveMetricName ?? '';
  const maximize = spec.objective?.type === 'maximize';
  for (const t of sorted) {
    const b = bucketOf(t);
    buckets.set(t.metadata.name ?? '', b);
    lists[b].push(t.metadata.name ?? '');
    const v = metricValue(spec, t.status?.observation?.metrics, name);
    if (v !== undefined && (best === undefined || (maximize ? v > best : v < best))) {
      best = v;
      bestTrial = t;
    }
  }
  const multi = objectivesOf(spec).length > 1;
  const status: Summary['status'] = {
    ...(bestTrial ? { currentOptimalTrial: optimal(bestTrial) } : {}),
    ...(multi ? { paretoFront: paretoFront(spec, sorted).map(optimal) } : {}),
    runningTrialList: lists.running, pendingTrialList: lists.pending, failedTrialList: lists.failed,
    succeededTrialList: lists.succeeded, killedTrialList: lists.killed, earlyStoppedTrialList: lists.earlyStopped,
    metricsUnavailableTrialList: lists.metricsUnavailable,
    trials: trials.length,
    trialsSucceeded: lists.succeeded.length, trialsFailed: lists.failed.length, trialsKilled: lists.killed.length,
    trialsPending: lists.pending.length, trialsRunning: lists.running.length, trialsEarlyStopped: lists.earlyStopped.length,
    trialMetricsUnavailable: lists.metricsUnavailable.length,
  };
  // Katib's status omits empty lists and zero counts
  for (const [k, v] of Object.entries(status)) if ((Array.isArray(v) && v.length === 0) || v === 0) delete (status as Record<string, unknown>)[k];
  return { status, best, buckets };
}

export type Verdict =
  | { done: false }
  | { done: true; type: 'Succeeded' | 'Failed'; reason: string; message: string };

/** Katib's decision order: goal, then failures, then the trial budget. */
export function verdict(spec: ExperimentSpec, s: Summary): Verdict {
  const goal = spec.objective?.goal;
  if (goal !== undefined && s.best !== undefined && (spec.objective?.type === 'maximize' ? s.best >= goal : s.best <= goal)) {
    return { done: true, type: 'Succeeded', reason: 'ExperimentGoalReached', message: `Experiment has succeeded because Objective goal has reached` };
  }
  const st = s.status;
  const failed = (st.trialsFailed ?? 0) + (st.trialMetricsUnavailable ?? 0);
  if (spec.maxFailedTrialCount !== undefined && failed > 0 && failed >= spec.maxFailedTrialCount) {
    return { done: true, type: 'Failed', reason: 'ExperimentMaxFailedTrialsReached', message: `Experiment has failed because max failed count has reached` };
  }
  if (spec.maxTrialCount !== undefined && finishedCount(s) >= spec.maxTrialCount) {
    return { done: true, type: 'Succeeded', reason: 'ExperimentMaxTrialsReached', message: `Experiment has succeeded because max trial count has reached` };
  }
  return { done: false };
}

export function finishedCount(s: Summary): number {
  const st = s.status;
  return (st.trialsSucceeded ?? 0) + (st.trialsFailed ?? 0) + (st.trialsKilled ?? 0) + (st.trialsEarlyStopped ?? 0) + (st.trialMetricsUnavailable ?? 0);
}

export function activeCount(s: Summary): number {
  return (s.status.trialsPending ?? 0) + (s.status.trialsRunning ?? 0);
}

/**
 * Sets a condition as Katib does: the condition moves to the end of the list when it changes (the
 * Type/Status columns show the last one), keeping its transition time when only reason or message changed.
 */
export function setKatibCondition(status: { conditions?: Condition[] }, cond: Omit<Condition, 'lastTransitionTime' | 'lastUpdateTime'>, at: string): boolean {
  const list = status.conditions ?? [];
  const cur = list.find((c) => c.type === cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason && cur.message === cond.message) return false;
  const next: Condition = { ...cond, lastUpdateTime: at, lastTransitionTime: cur && cur.status === cond.status ? cur.lastTransitionTime ?? at : at };
  status.conditions = [...list.filter((c) => c.type !== cond.type), next];
  return true;
}
