// medianstop: the rule new trials get once enough trials have finished. Katib's service averages
// each finished trial's first `start_step` values and takes the mean of those averages, then
// compares a running trial's best-so-far at its start_step-th report against it (research B.5).
// Skiff compares like with like and takes a real median: the rule's value is the median, over the
// finished trials, of each one's best-so-far at its start_step-th report — the same statistic the
// running trial is judged by. The rule is still evaluated once, at start_step, as Katib's is (the
// Trial controller applies it: metrics.ts `earlyStopped`).
import type { EarlyStoppingRule, ObjectiveType, Setting } from '../../api/tuning.js';

export const MedianStopDefaults = { min_trials_required: 3, start_step: 4 } as const;

export function medianStopSettings(settings: Setting[] | undefined): { minTrials: number; startStep: number } {
  const get = (name: keyof typeof MedianStopDefaults) => {
    const v = settings?.find((s) => s.name === name)?.value;
    return v === undefined || v === '' ? MedianStopDefaults[name] : Number(v);
  };
  return { minTrials: get('min_trials_required'), startStep: get('start_step') };
}

/** the best value among the first `step` reports (undefined when fewer were reported) */
export function bestAtStep(values: number[], step: number, type: ObjectiveType): number | undefined {
  if (values.length < step) return undefined;
  const head = values.slice(0, step);
  return type === 'maximize' ? Math.max(...head) : Math.min(...head);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * The medianstop rule for new trials, or none yet. `finished`: each succeeded trial's objective
 * values in report order.
 */
export function medianStopRules(objective: { name: string; type: ObjectiveType }, settings: Setting[] | undefined, finished: number[][]): EarlyStoppingRule[] {
  const { minTrials, startStep } = medianStopSettings(settings);
  const bests = finished.map((v) => bestAtStep(v, startStep, objective.type)).filter((v): v is number => v !== undefined);
  if (bests.length < minTrials) return [];
  return [{ name: objective.name, value: String(median(bests)), comparison: objective.type === 'maximize' ? 'less' : 'greater', startStep }];
}
