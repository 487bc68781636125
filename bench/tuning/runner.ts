// One study of one contender on one problem, under the protocol both libraries get:
// - seq: ask one, evaluate it, tell it, ask the next;
// - par4: four trials in flight. Ask four; then, over and over, the OLDEST trial in flight finishes
//   (is evaluated and told) and one new trial is asked to refill its slot, until the budget is
//   spent. Finishing the oldest first is a deterministic stand-in for trials of equal length started
//   one after another; each library sees the others in flight as running (Optuna's RUNNING trials,
//   Skiff's 'pending'), which is what constant liar and kriging believer work with.
import type { Contender } from './contenders.js';
import type { Asked } from './contenders.js';
import type { Problem, Suite } from './problems.js';

export type Mode = 'seq' | 'par4';

export const PARALLEL: Record<Mode, number> = { seq: 1, par4: 4 };

export interface RunRecord {
  contender: string;
  library: 'skiff' | 'optuna';
  problem: string;
  suite: Suite;
  /** the seed's index, 1..N: the BBOB instance and (hashed with the problem) both libraries' seed */
  seed: number;
  budget: number;
  mode: Mode;
  /** the objective of each finished trial, in the order the results were told */
  values: number[];
  /** wall milliseconds per suggestion, in the order they were handed out */
  latencyMs: number[];
  best: number;
  /** set when this run is the first `budget` trials of a longer one (Optuna never sees the budget) */
  prefixOf?: number;
  /** wall time of the whole study, evaluations included */
  wallMs: number;
}

export async function runStudy(contender: Contender, problem: Problem, opts: { seed: number; studySeed: number; budget: number; mode: Mode }): Promise<RunRecord> {
  const parallel = PARALLEL[opts.mode];
  const t0 = performance.now();
  const study = await contender.open(problem, { seed: opts.studySeed, budget: opts.budget, parallel });
  const inFlight: Asked[] = [];
  const values: number[] = [];
  const latencyMs: number[] = [];
  let asked = 0;
  const refill = async (): Promise<void> => {
    const want = Math.min(parallel - inFlight.length, opts.budget - asked);
    if (want <= 0) return;
    for (const a of await study.ask(want)) {
      inFlight.push(a);
      latencyMs.push(a.ms);
      asked++;
    }
  };
  try {
    await refill();
    // an algorithm that hands out nothing with nothing in flight has nothing more to offer
    while (inFlight.length > 0) {
      const t = inFlight.shift() as Asked;
      const v = await problem.evaluate(t.x);
      if (!Number.isFinite(v)) throw new Error(`${problem.id} gave ${v} at ${t.x.join(', ')}`);
      await study.tell(t.id, v);
      values.push(v);
      await refill();
    }
  } finally {
    await study.close();
  }
  return {
    contender: contender.name, library: contender.library, problem: problem.id, suite: problem.suite,
    seed: opts.seed, budget: opts.budget, mode: opts.mode, values, latencyMs,
    best: Math.min(...values), wallMs: performance.now() - t0,
  };
}

/** the first `budget` trials of a longer run, as a run of that budget */
export function prefixRun(r: RunRecord, budget: number): RunRecord {
  const values = r.values.slice(0, budget);
  return { ...r, budget, values, latencyMs: r.latencyMs.slice(0, budget), best: Math.min(...values), prefixOf: r.budget, wallMs: (r.wallMs * values.length) / Math.max(1, r.values.length) };
}
