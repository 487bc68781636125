// The contract between the Suggestion controller and the search algorithms. An algorithm is a pure
// function of what it is shown: the search space, its settings, every trial so far with its result,
// the state it kept last time and a seed. The controller persists what it returns (the assignments
// in Suggestion.status.suggestions, the state in status.algorithmSettings) before any Trial is made,
// so a crash between two calls never loses or repeats an assignment: the next call sees the same
// history and the assignments already handed out among the trials (as `pending`).
import type { ParameterSpec } from '../../../api/tuning-types.js';

/** A trial as the algorithm sees it. */
export interface TrialRecord {
  /** the Trial's name (Hyperband and PBT name their own trials) */
  name: string;
  /** parameter name → value, as strings, exactly as assigned */
  assignments: Record<string, string>;
  /**
   * pending: assigned, not finished (running, or not yet created): constant liar and duplicate
   * avoidance count these. succeeded / early-stopped: `value` is set. failed: the trial's payload
   * failed or its metric never appeared (metrics-unavailable); the search still learns from it.
   */
  state: 'pending' | 'succeeded' | 'early-stopped' | 'failed';
  /**
   * the objective, always to be MINIMISED (the controller negates a maximised objective), chosen by
   * its metric strategy; undefined when there is none
   */
  value?: number;
  /** multi-objective experiments: every objective, each to be minimised, the first being `value` */
  values?: number[];
  /** intermediate objective values in report order (minimise sense), for Hyperband, ASHA, PBT */
  intermediate?: number[];
  /** labels the algorithm set on this trial's assignment (Hyperband's bracket, PBT's generation) */
  labels?: Record<string, string>;
}

export interface SuggestRequest {
  parameters: ParameterSpec[];
  /** Katib's algorithmSettings as name → value (strings, as in the spec); validated before */
  settings: Record<string, string>;
  /** every trial so far, oldest first, including assigned ones that have not finished */
  trials: TrialRecord[];
  /** how many new assignments to return */
  count: number;
  /** what this algorithm returned as `state` last time (empty at first) */
  state: Record<string, string>;
  /** deterministic per call: random_state when set, else derived from the experiment and the call number */
  seed: number;
  /** maxTrialCount, when the experiment has one (grid and Hyperband plan with it) */
  maxTrialCount?: number;
  /** parallelTrialCount */
  parallelTrialCount: number;
}

export interface Assignment {
  /** parameter name → value as a string (ints without a decimal point; categorical values verbatim) */
  assignments: Record<string, string>;
  /** a name for the trial, when the algorithm names trials (Hyperband, PBT); else the controller names it */
  name?: string;
  labels?: Record<string, string>;
}

export interface SuggestResult {
  /** at most `count`; fewer when the algorithm has nothing more to offer now */
  assignments: Assignment[];
  /** kept and handed back next call */
  state?: Record<string, string>;
  /** true when the search is exhausted (a grid fully walked, Hyperband's last bracket done) */
  done?: boolean;
}

/** A problem with the experiment as this algorithm sees it, naming the field (`spec.algorithm.algorithmSettings[2].value`). */
export interface SettingError {
  field: string;
  message: string;
}

export interface Algorithm {
  /** Katib's algorithmName */
  name: string;
  /**
   * Checks the settings and the space at creation: unknown setting names, values out of range, a
   * parameter type the algorithm cannot search, a grid that maxTrialCount cannot fill. Field paths
   * start at `spec.` (settings: `spec.algorithm.algorithmSettings[i]`).
   */
  validate(input: { parameters: ParameterSpec[]; settings: { name: string; value: string }[]; maxTrialCount?: number; parallelTrialCount: number }): SettingError[];
  suggest(req: SuggestRequest): SuggestResult;
}
