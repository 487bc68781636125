// The contenders of bench/tuning: Skiff's search algorithms, called in process exactly as the
// Suggestion controller calls them, and Optuna's samplers in one long-lived Python process
// (optuna_worker.py). Both sit behind the same ask/tell interface, so the runner drives them with
// one protocol and the objective is computed once, here.
import type { Algorithm, TrialRecord } from '../../src/workloads/tuning/algorithms/types.js';
import { algorithmByName } from '../../src/workloads/tuning/algorithms/index.js';
import type { Problem } from './problems.js';
import { parametersOf } from './problems.js';
import { JsonLinesWorker } from './worker.js';

/** one suggestion handed out */
export interface Asked {
  id: number;
  x: number[];
  /** wall milliseconds spent suggesting it */
  ms: number;
}

export interface Study {
  /** up to n new suggestions; fewer (even none) when the algorithm waits for results */
  ask(n: number): Promise<Asked[]>;
  tell(id: number, value: number): Promise<void>;
  close(): Promise<void>;
}

export interface StudyOptions {
  seed: number;
  budget: number;
  /** trials in flight at once: 1 (sequential) or 4 */
  parallel: number;
}

export interface Contender {
  /** S:tpe, O:gp, … */
  name: string;
  library: 'skiff' | 'optuna';
  /**
   * Whether the contender is told the budget. Skiff's algorithms read maxTrialCount (TPE's start-up
   * shrinks for small budgets); Optuna's samplers never see it, so the first n trials of one run of
   * the largest budget are exactly a run of budget n, and the runner runs Optuna once per seed.
   */
  seesBudget: boolean;
  open(problem: Problem, opts: StudyOptions): Promise<Study>;
}

/** the Katib algorithm behind each Skiff contender */
export const SKIFF_ALGORITHMS: Record<string, string> = {
  'S:random': 'random',
  'S:tpe': 'tpe',
  'S:mv-tpe': 'multivariate-tpe',
  'S:gp': 'bayesianoptimization',
  'S:cmaes': 'cmaes',
};

/** the sampler behind each Optuna contender (optuna_worker.py's make_sampler) */
export const OPTUNA_SAMPLERS: Record<string, string> = {
  'O:random': 'random',
  'O:tpe': 'tpe',
  'O:gp': 'gp',
  'O:cmaes': 'cmaes',
};

export const ALL_CONTENDERS = [...Object.keys(SKIFF_ALGORITHMS), ...Object.keys(OPTUNA_SAMPLERS)];

class SkiffStudy implements Study {
  private readonly trials: TrialRecord[] = [];
  private state: Record<string, string> = {};
  /** time spent by calls that returned nothing, charged to the next suggestion */
  private carryMs = 0;

  constructor(private readonly algorithm: Algorithm, private readonly problem: Problem, private readonly opts: StudyOptions) {}

  async ask(n: number): Promise<Asked[]> {
    const parameters = parametersOf(this.problem);
    // the seed as the Suggestion controller derives it: a base for the experiment, stepped per assignment
    const seed = (this.opts.seed + this.trials.length * 0x9e3779b1) >>> 0;
    const t0 = performance.now();
    const r = this.algorithm.suggest({
      parameters, settings: {}, trials: this.trials, count: n, state: this.state, seed,
      parallelTrialCount: this.opts.parallel, maxTrialCount: this.opts.budget,
    });
    const ms = performance.now() - t0 + this.carryMs;
    if (r.state) this.state = r.state;
    const got = r.assignments.slice(0, n);
    if (got.length === 0) {
      this.carryMs = ms;
      return [];
    }
    this.carryMs = 0;
    return got.map((a) => {
      const id = this.trials.length;
      // pending until told: constant liar, kriging believer and CMA-ES's generation bookkeeping see it
      this.trials.push({ name: `t${id}`, assignments: a.assignments, state: 'pending' });
      return { id, x: this.problem.bounds.map((b) => Number(a.assignments[b.name])), ms: ms / got.length };
    });
  }

  async tell(id: number, value: number): Promise<void> {
    const t = this.trials[id];
    if (!t || t.state !== 'pending') throw new Error(`trial ${id} is not pending`);
    t.state = 'succeeded';
    t.value = value;
  }

  async close(): Promise<void> {
    // nothing held
  }
}

export function skiffContender(name: string): Contender {
  const katib = SKIFF_ALGORITHMS[name];
  const algorithm = katib ? algorithmByName(katib) : undefined;
  if (!algorithm) throw new Error(`no Skiff contender ${name}`);
  return {
    name,
    library: 'skiff',
    seesBudget: true,
    open: async (problem, opts) => new SkiffStudy(algorithm, problem, opts),
  };
}

interface OptunaTrial {
  number: number;
  x: number[];
  ms: number;
}

/** The Optuna process; one serves every Optuna study of a run. */
export class OptunaWorker {
  private readonly worker = new JsonLinesWorker('optuna_worker.py');
  private studies = 0;
  versions: { optuna: string; torch: string; threads: number } | undefined;

  /** checks the process answers and runs a short warm-up study for each sampler named */
  async start(warm: string[]): Promise<void> {
    this.versions = await this.worker.request({ op: 'hello', warm });
  }

  contender(name: string): Contender {
    const sampler = OPTUNA_SAMPLERS[name];
    if (!sampler) throw new Error(`no Optuna contender ${name}`);
    return {
      name,
      library: 'optuna',
      seesBudget: false,
      open: async (problem, opts) => {
        const id = `s${++this.studies}`;
        const space = problem.bounds.map((b) => ({ name: b.name, low: b.low, high: b.high, log: b.log ?? false }));
        await this.worker.request({ op: 'open', id, sampler, seed: opts.seed, space });
        const w = this.worker;
        return {
          async ask(n: number): Promise<Asked[]> {
            const r = await w.request<{ trials: OptunaTrial[] }>({ op: 'ask', id, n });
            return r.trials.map((t) => ({ id: t.number, x: t.x, ms: t.ms }));
          },
          async tell(number: number, value: number): Promise<void> {
            await w.request({ op: 'tell', id, number, value });
          },
          async close(): Promise<void> {
            await w.request({ op: 'close', id });
          },
        };
      },
    };
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
