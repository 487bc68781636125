// Katib's `tpe` and `multivariate-tpe`: the Tree-structured Parzen Estimator. The trials so far are
// split into a good group (the best γ(n)) and the rest; a Parzen estimator is fitted to each; the
// next assignment is the candidate drawn from the good model with the largest ratio of good to bad
// density (expected improvement). Modelled on Optuna's TPESampler (weights ramp, prior kernel, magic
// clip, bandwidths), with these choices:
// - Startup: random draws until `n_startup_trials` trials have finished (as in Optuna: pending ones
//   do not count, so 4 parallel workers start modelling from 10 results, not from 6 and 4 liars).
//   `tpe` has no such setting in Katib, where hyperopt starts modelling after only
//   parallelTrialCount random trials, too few to model anything; Skiff uses Optuna's 10, lowered to
//   maxTrialCount/5 (at least 3) for small budgets so that most of a short search is still guided.
// - γ(n) = min(ceil(0.1·n), 25) (Optuna's default), n counting finished trials only. `tpe`'s `gamma`
//   setting keeps hyperopt's meaning when given: n_below = ceil(gamma·√n).
// - Constant liar: a pending trial counts as the worst value, so parallel asks spread out instead of
//   piling onto one optimum; a failed trial counts as worst too, so the search learns to avoid where
//   trials fail (Katib never shows failed trials to its algorithms).
// - No repeats: a candidate whose assignment was already handed out is passed over for the next-best;
//   when every candidate is taken, a random unused assignment is drawn instead.
// - Several objectives (TrialRecord.values): the good group is filled front by front in
//   non-domination order (as Optuna's MOTPE), the last front cut by crowding distance.
import type { Algorithm, SuggestRequest, SuggestResult, TrialRecord } from './types.js';
import { Rng } from './rng.js';
import type { Space, SpaceParam } from './space.js';
import { assignmentKey, checkParameters, decode, parseSpace, tryEncode } from './space.js';
import type { SettingRule } from './settings.js';
import { numberSetting, takenKeys, validateSettings } from './settings.js';
import { ParzenEstimator, defaultWeights } from './parzen.js';
import { RANDOM_STATE_RULE, drawUnique } from './random.js';

const TPE_RULES: readonly SettingRule[] = [
  { name: 'gamma', type: 'float', min: 0, minExclusive: true, max: 1, maxExclusive: true },
  { name: 'prior_weight', type: 'float', min: 0, minExclusive: true },
  { name: 'n_EI_candidates', type: 'int', min: 1 },
  RANDOM_STATE_RULE,
];

const MTPE_RULES: readonly SettingRule[] = [
  { name: 'n_startup_trials', type: 'int', min: 0 },
  { name: 'n_ei_candidates', type: 'int', min: 1 },
  RANDOM_STATE_RULE,
];

export interface TpeOptions {
  multivariate: boolean;
  nStartup: number;
  nCandidates: number;
  priorWeight: number;
  /** n observations → size of the good group */
  gamma: (n: number) => number;
}

interface Observation {
  /** position among the trials: older trials weigh less once there are more than 25 */
  order: number;
  point: number[];
  /** objectives to minimise; Infinity for pending and failed trials */
  values: number[];
  /** not finished: the constant liar's stand-in, not a result */
  pending: boolean;
}

export function optunaGamma(n: number): number {
  return Math.min(Math.ceil(0.1 * n), 25);
}

/** The trials as observations in the cube; trials that do not fit the space are left out. */
function observe(space: Space, trials: readonly TrialRecord[], nObjectives: number): Observation[] {
  const out: Observation[] = [];
  trials.forEach((t, order) => {
    const point = tryEncode(space, t.assignments);
    if (!point) return;
    let values: number[];
    const finished = (t.state === 'succeeded' || t.state === 'early-stopped') && t.value !== undefined && Number.isFinite(t.value);
    if (finished && nObjectives > 1 && t.values && t.values.length === nObjectives && t.values.every(Number.isFinite)) values = [...t.values];
    else if (finished && nObjectives === 1) values = [t.value as number];
    else values = new Array(nObjectives).fill(Infinity) as number[];
    out.push({ order, point, values, pending: t.state === 'pending' });
  });
  return out;
}

function dominates(a: readonly number[], b: readonly number[]): boolean {
  let better = false;
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as number) > (b[i] as number)) return false;
    if ((a[i] as number) < (b[i] as number)) better = true;
  }
  return better;
}

/** Non-dominated fronts, best first. */
export function nonDominatedFronts(points: readonly (readonly number[])[]): number[][] {
  const n = points.length;
  const dominatedBy = new Array(n).fill(0) as number[];
  const dominatesList: number[][] = points.map(() => []);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (dominates(points[i] as number[], points[j] as number[])) {
        (dominatesList[i] as number[]).push(j);
        dominatedBy[j]! += 1;
      } else if (dominates(points[j] as number[], points[i] as number[])) {
        (dominatesList[j] as number[]).push(i);
        dominatedBy[i]! += 1;
      }
    }
  }
  const fronts: number[][] = [];
  let current = dominatedBy.map((c, i) => (c === 0 ? i : -1)).filter((i) => i >= 0);
  while (current.length > 0) {
    fronts.push(current);
    const next: number[] = [];
    for (const i of current) {
      for (const j of dominatesList[i] as number[]) {
        dominatedBy[j]! -= 1;
        if (dominatedBy[j] === 0) next.push(j);
      }
    }
    current = next;
  }
  return fronts;
}

function crowding(points: readonly (readonly number[])[], members: readonly number[]): Map<number, number> {
  const dist = new Map<number, number>(members.map((i) => [i, 0]));
  const m = (points[members[0] as number] as number[]).length;
  for (let k = 0; k < m; k++) {
    const sorted = [...members].sort((a, b) => (points[a] as number[])[k]! - (points[b] as number[])[k]!);
    const lo = (points[sorted[0] as number] as number[])[k] as number;
    const hi = (points[sorted[sorted.length - 1] as number] as number[])[k] as number;
    dist.set(sorted[0] as number, Infinity);
    dist.set(sorted[sorted.length - 1] as number, Infinity);
    if (!(hi > lo)) continue;
    for (let i = 1; i < sorted.length - 1; i++) {
      const prev = (points[sorted[i - 1] as number] as number[])[k] as number;
      const next = (points[sorted[i + 1] as number] as number[])[k] as number;
      dist.set(sorted[i] as number, (dist.get(sorted[i] as number) as number) + (next - prev) / (hi - lo));
    }
  }
  return dist;
}

/** Splits observations into the best nBelow (finite values only) and the rest. */
export function splitObservations<T extends { values: number[]; order: number }>(obs: readonly T[], nBelow: number): { below: T[]; above: T[] } {
  const finite = obs.filter((o) => o.values.every(Number.isFinite));
  const k = Math.max(0, Math.min(nBelow, finite.length));
  let chosen: Set<T>;
  if ((obs[0]?.values.length ?? 1) <= 1) {
    const sorted = [...finite].sort((a, b) => (a.values[0] as number) - (b.values[0] as number) || a.order - b.order);
    chosen = new Set(sorted.slice(0, k));
  } else {
    chosen = new Set();
    const fronts = nonDominatedFronts(finite.map((o) => o.values));
    for (const front of fronts) {
      if (chosen.size >= k) break;
      if (chosen.size + front.length <= k) {
        for (const i of front) chosen.add(finite[i] as T);
        continue;
      }
      const dist = crowding(finite.map((o) => o.values), front);
      const byCrowd = [...front].sort((a, b) => (dist.get(b) as number) - (dist.get(a) as number) || (finite[a] as T).order - (finite[b] as T).order);
      for (const i of byCrowd.slice(0, k - chosen.size)) chosen.add(finite[i] as T);
    }
  }
  const byAge = (a: T, b: T) => a.order - b.order;
  return { below: obs.filter((o) => chosen.has(o)).sort(byAge), above: obs.filter((o) => !chosen.has(o)).sort(byAge) };
}

function fit(params: readonly SpaceParam[], group: readonly Observation[], dims: readonly number[], opts: TpeOptions): ParzenEstimator {
  return new ParzenEstimator(
    params,
    group.map((o) => dims.map((d) => o.point[d] as number)),
    defaultWeights(group.length),
    { priorWeight: opts.priorWeight },
  );
}

/** The best untaken candidate by expected improvement, or undefined when every candidate is taken. */
function propose(space: Space, obs: readonly Observation[], opts: TpeOptions, rng: Rng, taken: ReadonlySet<string>): Record<string, string> | undefined {
  // γ counts finished trials only (as Optuna): the liars must not enlarge the good group
  const nBelow = Math.max(1, opts.gamma(obs.filter((o) => !o.pending).length));
  const { below, above } = splitObservations(obs, nBelow);
  if (below.length === 0) return undefined;
  if (opts.multivariate) {
    const all = space.params.map((_, i) => i);
    const l = fit(space.params, below, all, opts);
    const g = fit(space.params, above, all, opts);
    const cands = l.sample(rng, opts.nCandidates).map((pt) => ({ pt, score: l.logPdf(pt) - g.logPdf(pt) }));
    cands.sort((a, b) => b.score - a.score);
    for (const c of cands) {
      const a = decode(space, c.pt);
      if (!taken.has(assignmentKey(space, a))) return a;
    }
    return undefined;
  }
  // univariate: each parameter chosen on its own from its own pair of estimators
  const ranked: number[][] = space.params.map((p, d) => {
    const l = fit([p], below, [d], opts);
    const g = fit([p], above, [d], opts);
    const cands = l.sample(rng, opts.nCandidates).map((pt) => ({ x: pt[0] as number, score: l.logPdf(pt) - g.logPdf(pt) }));
    cands.sort((a, b) => b.score - a.score);
    return cands.map((c) => c.x);
  });
  const best = ranked.map((r) => r[0] as number);
  let a = decode(space, best);
  if (!taken.has(assignmentKey(space, a))) return a;
  // the best combination was taken: walk down one parameter at a time, then random mixes of the top few
  for (let d = 0; d < space.dim; d++) {
    for (const x of (ranked[d] as number[]).slice(1)) {
      const pt = [...best];
      pt[d] = x;
      a = decode(space, pt);
      if (!taken.has(assignmentKey(space, a))) return a;
    }
  }
  for (let tries = 0; tries < 32; tries++) {
    const pt = ranked.map((r) => r[rng.int(0, Math.min(r.length, 4) - 1)] as number);
    a = decode(space, pt);
    if (!taken.has(assignmentKey(space, a))) return a;
  }
  return undefined;
}

/** The TPE search shared by both algorithms. */
export function tpeSuggest(req: SuggestRequest, opts: TpeOptions): SuggestResult {
  const space = parseSpace(req.parameters);
  const rng = new Rng(req.seed);
  const taken = takenKeys(space, req.trials);
  const nObjectives = Math.max(1, ...req.trials.map((t) => (t.values && t.values.length > 1 && (t.state === 'succeeded' || t.state === 'early-stopped') ? t.values.length : 1)));
  const obs = observe(space, req.trials, nObjectives);
  const out: Record<string, string>[] = [];
  let exhausted = false;
  const finished = req.trials.filter((t) => t.state !== 'pending').length;
  while (out.length < req.count && !exhausted) {
    const anyFinite = obs.some((o) => o.values.every(Number.isFinite));
    let a: Record<string, string> | undefined;
    if (finished >= opts.nStartup && anyFinite) a = propose(space, obs, opts, rng, taken);
    if (!a) {
      const r = drawUnique(space, rng, taken, 1);
      exhausted = r.exhausted && r.assignments.length === 0;
      a = r.assignments[0];
      if (!a) break;
    } else {
      taken.add(assignmentKey(space, a));
    }
    out.push(a);
    // the constant liar: this assignment is pending, so it counts as the worst until it reports
    obs.push({ order: req.trials.length + out.length - 1, point: tryEncode(space, a) as number[], values: new Array(nObjectives).fill(Infinity) as number[], pending: true });
  }
  const result: SuggestResult = { assignments: out.map((x) => ({ assignments: x })) };
  if (out.length < req.count && exhausted) result.done = true;
  return result;
}

/** Optuna's 10 startup trials, fewer for a small budget (maxTrialCount/5, at least 3). */
export function defaultStartup(maxTrialCount: number | undefined): number {
  if (maxTrialCount === undefined || !(maxTrialCount > 0)) return 10;
  return Math.min(10, Math.max(3, Math.ceil(maxTrialCount / 5)));
}

export const tpeAlgorithm: Algorithm = {
  name: 'tpe',
  validate({ parameters, settings }) {
    return [...validateSettings(settings, TPE_RULES, 'tpe'), ...checkParameters(parameters)];
  },
  suggest(req) {
    return tpeSuggest(req, tpeOptions(req.settings, req.maxTrialCount));
  },
};

/** `tpe`'s settings as options: hyperopt's names and meanings, Optuna's model. */
export function tpeOptions(settings: Record<string, string>, maxTrialCount: number | undefined): TpeOptions {
  const g = numberSetting(settings, 'gamma', 0);
  return {
    multivariate: false,
    nStartup: defaultStartup(maxTrialCount),
    nCandidates: numberSetting(settings, 'n_EI_candidates', 24),
    priorWeight: numberSetting(settings, 'prior_weight', 1),
    gamma: g > 0 ? (n) => Math.ceil(g * Math.sqrt(n)) : optunaGamma,
  };
}

export const multivariateTpeAlgorithm: Algorithm = {
  name: 'multivariate-tpe',
  validate({ parameters, settings }) {
    return [...validateSettings(settings, MTPE_RULES, 'multivariate-tpe'), ...checkParameters(parameters)];
  },
  suggest(req) {
    return tpeSuggest(req, {
      multivariate: true,
      nStartup: numberSetting(req.settings, 'n_startup_trials', 10),
      nCandidates: numberSetting(req.settings, 'n_ei_candidates', 24),
      priorWeight: 1,
      gamma: optunaGamma,
    });
  },
};
