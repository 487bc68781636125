// Helpers for the algorithms' tests: a request with defaults, and a loop that asks an algorithm
// for trials and reports an objective back, as the Suggestion controller would.
import type { ParameterSpec } from '../../../api/tuning-types.js';
import type { Algorithm, SuggestRequest, SuggestResult, TrialRecord } from './types.js';

export function request(parameters: ParameterSpec[], over: Partial<SuggestRequest> = {}): SuggestRequest {
  return { parameters, settings: {}, trials: [], count: 1, state: {}, seed: 1, parallelTrialCount: 1, ...over };
}

/** Appends the result's assignments to `trials` as pending trials, named t<i> unless the algorithm names them. */
export function addPending(trials: TrialRecord[], result: SuggestResult): TrialRecord[] {
  const added: TrialRecord[] = [];
  for (const a of result.assignments) {
    const t: TrialRecord = { name: a.name ?? `t${trials.length}`, assignments: a.assignments, state: 'pending' };
    if (a.labels) t.labels = a.labels;
    trials.push(t);
    added.push(t);
  }
  return added;
}

/**
 * Runs a sequential search of `budget` trials (one at a time, each finished before the next ask)
 * and returns the best objective seen.
 */
export function minimise(algorithm: Algorithm, parameters: ParameterSpec[], objective: (a: Record<string, string>) => number, budget: number, seed: number, settings: Record<string, string> = {}): { best: number; trials: TrialRecord[] } {
  const trials: TrialRecord[] = [];
  let state: Record<string, string> = {};
  let best = Infinity;
  for (let i = 0; i < budget; i++) {
    const r = algorithm.suggest({ parameters, settings, trials, count: 1, state, seed: seed * 1000 + i, parallelTrialCount: 1, maxTrialCount: budget });
    if (r.state) state = r.state;
    if (r.assignments.length === 0) break;
    for (const t of addPending(trials, r)) {
      const v = objective(t.assignments);
      t.state = 'succeeded';
      t.value = v;
      best = Math.min(best, v);
    }
  }
  return { best, trials };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}
