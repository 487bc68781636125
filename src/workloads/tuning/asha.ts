// ASHA-style successive halving as an early-stopping algorithm (Skiff's `earlyStopping.algorithmName:
// asha`; Katib has medianstop only). Rungs sit at min_resource · reduction_factor^k reports of the
// objective. A running trial is judged at the highest rung it has reached, against every trial of its
// experiment that reached that rung (running or finished): unless its best value so far is among the
// top 1/reduction_factor of them, it stops. Until min_trials_required trials reached a rung, nobody is
// stopped there. Unlike medianstop's fixed rule, the bar moves as trials report, so it is decided
// while the trial runs, from the experiment's ObservationLogs.
import type { MetricLog, ObjectiveType, ObservationLog, Setting, Trial } from '../../api/tuning.js';
import { TuningLabels } from '../../api/tuning.js';
import { bestAtStep } from './early-stopping.js';

export const AshaDefaults = { min_resource: 1, reduction_factor: 3, min_trials_required: 3 } as const;

export function ashaSettings(settings: Setting[] | undefined): { minResource: number; eta: number; minTrials: number } {
  const get = (name: keyof typeof AshaDefaults) => {
    const v = settings?.find((s) => s.name === name)?.value;
    return v === undefined || v === '' ? AshaDefaults[name] : Number(v);
  };
  return { minResource: get('min_resource'), eta: get('reduction_factor'), minTrials: get('min_trials_required') };
}

/** the objective's values in report order */
export function objectiveValues(logs: MetricLog[], name: string): number[] {
  return logs.filter((l) => l.name === name).map((l) => Number(l.value)).filter(Number.isFinite);
}

/**
 * Why this trial stops now, or undefined. `mine`: its objective values so far; `others`: every other
 * trial's of the experiment.
 */
export function ashaVerdict(mine: number[], others: number[][], type: ObjectiveType, settings: Setting[] | undefined): string | undefined {
  const { minResource, eta, minTrials } = ashaSettings(settings);
  let rung = -1;
  while (minResource * eta ** (rung + 1) <= mine.length) rung++;
  if (rung < 0) return undefined;
  const step = minResource * eta ** rung;
  const own = bestAtStep(mine, step, type) as number;
  const field = [own, ...others.map((v) => bestAtStep(v, step, type)).filter((v): v is number => v !== undefined)];
  if (field.length < minTrials) return undefined;
  const keep = Math.max(1, Math.floor(field.length / eta));
  const sorted = [...field].sort((a, b) => (type === 'maximize' ? b - a : a - b));
  const bar = sorted[keep - 1] as number;
  const inside = type === 'maximize' ? own >= bar : own <= bar;
  if (inside) return undefined;
  return `its best ${own} by report ${step} is not among the top ${keep} of the ${field.length} trials that reached that rung (the bar is ${bar})`;
}

/** The stopper the Trial controller consults: ASHA for trials whose experiment asks for it. */
export interface Stopper {
  /** the objective metric to follow when the trial is judged while it runs, or undefined */
  follows(trial: Trial): string | undefined;
  /** why the trial stops now, given what it reported so far; undefined to go on */
  decide(trial: Trial, logs: MetricLog[]): string | undefined;
}

export interface AshaSources {
  /** the trial's experiment's early stopping and objective */
  experimentOf(trial: Trial): { earlyStopping?: { algorithmName?: string; algorithmSettings?: Setting[] }; objective?: { objectiveMetricName?: string; type?: ObjectiveType } } | undefined;
  /** the ObservationLogs of the experiment's trials */
  logsOf(namespace: string, experiment: string): ObservationLog[];
}

export function ashaStopper(src: AshaSources): Stopper {
  const spec = (t: Trial) => {
    const e = src.experimentOf(t);
    return e?.earlyStopping?.algorithmName === 'asha' && e.objective?.objectiveMetricName ? e : undefined;
  };
  return {
    follows: (t) => spec(t)?.objective?.objectiveMetricName,
    decide: (t, logs) => {
      const e = spec(t);
      if (!e) return undefined;
      const name = e.objective?.objectiveMetricName as string;
      const exp = t.metadata.labels?.[TuningLabels.experiment] ?? '';
      const others = src.logsOf(t.metadata.namespace ?? '', exp).filter((l) => l.metadata.name !== t.metadata.name).map((l) => objectiveValues(l.spec.metricLogs, name));
      return ashaVerdict(objectiveValues(logs, name), others, e.objective?.type ?? 'minimize', e.earlyStopping?.algorithmSettings);
    },
  };
}
