// Katib's `bayesianoptimization` (skopt's Optimizer in Katib) as a Gaussian process written for
// Skiff: see gp-model.ts for the model. How it differs from Katib's skopt service, and why:
// - Doubles keep their own distribution: logUniform is searched on a log scale, uniform and normal on
//   a linear one (skopt forces every double to log-uniform, which needs min > 0 and skews the search).
// - Categoricals are one dimension each holding the category; the kernel compares them by mismatch.
// - Failed trials are shown to the model with the worst value seen so the search leaves that region
//   (Katib hides them, and skopt may propose the same point again).
// - Parallel asks never repeat: each new point joins the model as a pending one with its predicted
//   mean as its value (kriging believer), which collapses the uncertainty there, and the incumbent
//   includes these beliefs, so a batch spreads out; assignments already handed out (pending trials)
//   join the same way. An assignment equal to a pending or finished one is never returned.
// - `acq_optimizer`: every value is accepted; the acquisition is always maximised by a thousand
//   random points plus points near the best trials, then a local search from the most promising,
//   on the discrete grid where parameters have one (lbfgs cannot see integer or categorical steps).
// - `gp_hedge` keeps skopt's meaning: each call proposes one point per acquisition (EI, LCB, PI) and
//   picks one with probability softmax(gains); every call first lowers each gain by the model's
//   predicted (standardised) value at that acquisition's previous proposal. Gains and proposals live
//   in the Suggestion's state.
// - EIps and PIps need each trial's running time, which the algorithm is not given: refused.
import type { ParameterSpec } from '../../../api/tuning-types.js';
import type { KernelParams, AcquisitionName } from './gp-model.js';
import { acquisitionScore, defaultKernelParams, fitKernel, GpPosterior } from './gp-model.js';
import { Rng } from './rng.js';
import type { Space } from './space.js';
import { assignmentKey, checkParameters, decode, decodeParam, encodeParam, parseSpace, sample, tryEncode } from './space.js';
import type { Algorithm, Assignment, SettingError, SuggestRequest, SuggestResult } from './types.js';

export type AcqFuncSetting = 'gp_hedge' | AcquisitionName;

export interface BayesOptSettings {
  nInitialPoints: number;
  acqFunc: AcqFuncSetting;
  randomState?: number;
}

const HEDGE_ORDER: AcquisitionName[] = ['EI', 'LCB', 'PI'];

/** Checks Katib's bayesianoptimization settings; errors name `spec.algorithm.algorithmSettings[i]`. */
export function checkBayesOptSettings(settings: { name: string; value: string }[]): SettingError[] {
  const errors: SettingError[] = [];
  settings.forEach((s, i) => {
    const field = `spec.algorithm.algorithmSettings[${i}]`;
    const v = String(s.value ?? '').trim();
    switch (s.name) {
      case 'base_estimator':
        if (v === 'GP') break;
        if (v === 'RF' || v === 'ET' || v === 'GBRT') {
          errors.push({ field: `${field}.value`, message: `base_estimator ${v} is not available in Skiff: only "GP" (a Gaussian process) is built; remove the setting or set it to "GP"` });
        } else {
          errors.push({ field: `${field}.value`, message: `base_estimator must be "GP", got ${JSON.stringify(s.value)}` });
        }
        break;
      case 'n_initial_points':
        if (!/^\+?\d+$/.test(v)) errors.push({ field: `${field}.value`, message: `n_initial_points must be an integer ≥ 0, got ${JSON.stringify(s.value)}` });
        break;
      case 'acq_func':
        if (v === 'EIps' || v === 'PIps') {
          errors.push({ field: `${field}.value`, message: `acq_func ${v} weighs improvement by each trial's running time, which Skiff does not give the algorithm; use EI, PI, LCB or gp_hedge` });
        } else if (!['gp_hedge', 'EI', 'PI', 'LCB'].includes(v)) {
          errors.push({ field: `${field}.value`, message: `acq_func must be one of gp_hedge, EI, PI, LCB, got ${JSON.stringify(s.value)}` });
        }
        break;
      case 'acq_optimizer':
        if (!['auto', 'sampling', 'lbfgs'].includes(v)) {
          errors.push({ field: `${field}.value`, message: `acq_optimizer must be one of auto, sampling, lbfgs, got ${JSON.stringify(s.value)}` });
        }
        break;
      case 'random_state':
        if (!/^[+-]?\d+$/.test(v)) errors.push({ field: `${field}.value`, message: `random_state must be an integer, got ${JSON.stringify(s.value)}` });
        break;
      default:
        errors.push({ field: `${field}.name`, message: `unknown setting ${JSON.stringify(s.name)} for bayesianoptimization (known: base_estimator, n_initial_points, acq_func, acq_optimizer, random_state)` });
    }
  });
  return errors;
}

/** Settings as the controller hands them over (name → value, validated before). */
export function parseBayesOptSettings(settings: Record<string, string>): BayesOptSettings {
  const list = Object.entries(settings).map(([name, value]) => ({ name, value }));
  const errors = checkBayesOptSettings(list);
  if (errors.length > 0) throw new Error(`bayesianoptimization: ${errors.map((e) => e.message).join('; ')}`);
  const out: BayesOptSettings = { nInitialPoints: 10, acqFunc: 'gp_hedge' };
  if (settings['n_initial_points'] !== undefined) out.nInitialPoints = Number(settings['n_initial_points']);
  if (settings['acq_func'] !== undefined) out.acqFunc = settings['acq_func'].trim() as AcqFuncSetting;
  if (settings['random_state'] !== undefined) out.randomState = Number(settings['random_state']);
  return out;
}

function validate(input: { parameters: ParameterSpec[]; settings: { name: string; value: string }[] }): SettingError[] {
  return [...checkParameters(input.parameters), ...checkBayesOptSettings(input.settings ?? [])];
}

/** How many L-BFGS iterations the hyperparameter fit may take: each costs O(n³), so fewer as n grows. */
export function fitIterations(n: number, warm: boolean): number {
  if (n <= 100) return warm ? 50 : 100;
  // keep n³·iterations roughly at 150³·50 past 150 points; a warm start needs only a few steps
  const budget = Math.floor(50 * Math.pow(150 / n, 3));
  return Math.max(warm ? 5 : 15, Math.min(warm ? 30 : 60, budget));
}

/**
 * Past 100 observations one more point barely moves the hyperparameters, and each fit costs O(n³)
 * per step: the last fit is kept until the history has grown by a tenth since.
 */
export function shouldReuseFit(n: number, fittedAt: number): boolean {
  return n > 100 && fittedAt > 0 && n < fittedAt * 1.1;
}

/** The hyperparameters are fitted on at most this many observations (the model then uses all of them). */
export const FIT_MAX_POINTS = 250;

/**
 * Which observations the hyperparameter fit sees: all of them up to FIT_MAX_POINTS, else an even
 * stride through the history (early broad exploration and late refinement alike), always with the
 * newest point. Length scales and noise estimated from 250 points are as good as from 500 at an
 * eighth of the cost.
 */
export function fitSubset(n: number): number[] {
  if (n <= FIT_MAX_POINTS) return Array.from({ length: n }, (_, i) => i);
  const out: number[] = [];
  for (let k = 0; k < FIT_MAX_POINTS; k++) out.push(Math.round((k * (n - 1)) / (FIT_MAX_POINTS - 1)));
  return out;
}

/** Random candidates per acquisition search: each prediction costs O(n²), so fewer past 200 points. */
export function randomCandidates(n: number): number {
  return Math.max(250, Math.min(1000, Math.round(1000 * (200 / Math.max(n, 1)) ** 2)));
}

interface Observed {
  point: number[];
  value: number;
}

/** The model's inputs from the trial history: finished points with values, failed ones at the worst value. */
function observations(space: Space, req: SuggestRequest): { observed: Observed[]; pending: number[][] } {
  const withValue: Observed[] = [];
  const failed: number[][] = [];
  const pending: number[][] = [];
  for (const t of req.trials) {
    const point = tryEncode(space, t.assignments);
    if (!point) continue;
    if (t.state === 'pending') pending.push(point);
    else if (t.state === 'failed') failed.push(point);
    else if (typeof t.value === 'number' && Number.isFinite(t.value)) withValue.push({ point, value: t.value });
    else failed.push(point);
  }
  if (withValue.length === 0) return { observed: [], pending };
  const worst = Math.max(...withValue.map((o) => o.value));
  return { observed: [...withValue, ...failed.map((point) => ({ point, value: worst }))], pending };
}

function parseKernelState(raw: string | undefined, dims: number): KernelParams | undefined {
  if (!raw) return undefined;
  try {
    const p = JSON.parse(raw) as KernelParams;
    if (Array.isArray(p.logLength) && p.logLength.length === dims && p.logLength.every(Number.isFinite) &&
      Number.isFinite(p.logSignal) && Number.isFinite(p.logNoise)) return p;
  } catch {
    // a state from another version of the space: start afresh
  }
  return undefined;
}

/**
 * Maps a point of the cube onto the nearest one the space can take (through its assignment), so
 * the acquisition is scored where a trial would really run. A double without step takes any value,
 * so its coordinate is kept as is, which spares formatting thousands of candidates.
 */
export function snapper(space: Space): (point: number[]) => number[] {
  return (point) => space.params.map((p, k) => {
    const u = Math.min(1, Math.max(0, point[k]!));
    if (p.kind === 'numeric' && p.type === 'double' && p.step === undefined) return u;
    return encodeParam(p, decodeParam(p, u));
  });
}

/**
 * Maximises acquisitions over the space: random points of the cube and points near the best
 * observations, each snapped onto the space (ints, steps, categories) and predicted once for all
 * the acquisitions, then for each acquisition a (1+1) local search from its five best. Returns, per
 * acquisition, the best point whose assignment `allowed` accepts.
 */
export function maximiseAcquisition(
  space: Space, predict: (point: number[]) => { mean: number; variance: number },
  scorers: ((mean: number, variance: number) => number)[], rng: Rng, allowed: (point: number[]) => boolean,
  anchors: number[][], opts: { random?: number; local?: number; steps?: number } = {},
): (number[] | undefined)[] {
  const snap = snapper(space);
  const perturb = (p: number[], sd: number): number[] => space.params.map((param, k) => {
    if (param.kind === 'categorical') return rng.uniform() < 0.2 ? rng.uniform() : p[k]!;
    return Math.min(1, Math.max(0, p[k]! + rng.normal(0, sd)));
  });
  const shared: { point: number[]; mean: number; variance: number }[] = [];
  const addShared = (p: number[]): void => {
    shared.push({ point: p, ...predict(p) });
  };
  for (let i = 0; i < (opts.random ?? 1000); i++) addShared(snap(space.params.map(() => rng.uniform())));
  for (const a of anchors) for (let i = 0; i < 20; i++) addShared(snap(perturb(a, 0.1)));
  return scorers.map((scoreOf) => {
    const score = (mean: number, variance: number): number => {
      const s = scoreOf(mean, variance);
      return Number.isNaN(s) ? -Infinity : s;
    };
    const scored = shared.map((c) => ({ point: c.point, score: score(c.mean, c.variance) }));
    const starts = [...scored].sort((a, b) => b.score - a.score).slice(0, opts.local ?? 5);
    for (const start of starts) {
      let cur = start;
      let sd = 0.05;
      for (let step = 0; step < (opts.steps ?? 25) && sd > 1e-4; step++) {
        const p = snap(perturb(cur.point, sd));
        const pr = predict(p);
        const s = score(pr.mean, pr.variance);
        scored.push({ point: p, score: s });
        if (s > cur.score) {
          cur = { point: p, score: s };
          sd *= 1.5;
        } else {
          sd *= 0.7;
        }
      }
    }
    scored.sort((a, b) => b.score - a.score);
    for (const c of scored) if (allowed(c.point)) return c.point;
    return undefined;
  });
}

function randomAssignment(space: Space, rng: Rng, used: Set<string>): Record<string, string> | undefined {
  for (let attempt = 0; attempt < 200; attempt++) {
    const a = sample(space, rng);
    if (!used.has(assignmentKey(space, a))) return a;
  }
  return undefined;
}

function suggest(req: SuggestRequest): SuggestResult {
  const space = parseSpace(req.parameters);
  const settings = parseBayesOptSettings(req.settings);
  const rng = new Rng(req.seed);
  const used = new Set(req.trials.map((t) => assignmentKey(space, t.assignments)));
  const out: Assignment[] = [];
  const state: Record<string, string> = { ...req.state };
  const take = (a: Record<string, string>): void => {
    used.add(assignmentKey(space, a));
    out.push({ assignments: a });
  };
  const { observed, pending } = observations(space, req);
  let handedOut = req.trials.length;
  // The initial design: random points until n_initial_points trials exist, and while fewer than two
  // values are known (a GP on one point says nothing about where to go).
  while (out.length < req.count && (handedOut < settings.nInitialPoints || observed.length < 2)) {
    const a = randomAssignment(space, rng, used);
    if (!a) return { assignments: out, state };
    take(a);
    handedOut++;
  }
  if (out.length >= req.count) return { assignments: out, state };

  const ys = observed.map((o) => o.value);
  const mean = ys.reduce((s, v) => s + v, 0) / ys.length;
  const sd = Math.sqrt(ys.reduce((s, v) => s + (v - mean) * (v - mean), 0) / ys.length) || 1;
  const ystd = ys.map((v) => (v - mean) / sd);
  const xs = observed.map((o) => o.point);
  const categorical = space.params.map((p) => p.kind === 'categorical');
  const previous = parseKernelState(req.state['kernel'], space.dim);
  const fittedAt = Number(req.state['kernelN'] ?? '0');
  let params: KernelParams;
  if (previous && shouldReuseFit(xs.length, fittedAt)) {
    params = previous;
  } else {
    const starts = previous ? (xs.length > 100 ? [previous] : [previous, defaultKernelParams(space.dim)]) : [defaultKernelParams(space.dim)];
    const sub = fitSubset(xs.length);
    params = fitKernel(sub.map((i) => xs[i]!), sub.map((i) => ystd[i]!), categorical, { starts, maxIter: fitIterations(sub.length, previous !== undefined) });
    state['kernel'] = JSON.stringify(params);
    state['kernelN'] = String(xs.length);
  }
  const gp = new GpPosterior(xs, ystd, params, categorical);

  // gp_hedge bookkeeping, against the model that now knows last call's outcomes
  let gains = [0, 0, 0];
  if (settings.acqFunc === 'gp_hedge') {
    try {
      const g = JSON.parse(req.state['hedgeGains'] ?? '[0,0,0]') as number[];
      if (Array.isArray(g) && g.length === 3 && g.every(Number.isFinite)) gains = g;
      const last = JSON.parse(req.state['hedgeProposals'] ?? '[]') as number[][];
      if (Array.isArray(last) && last.length === 3) {
        last.forEach((p, i) => {
          if (Array.isArray(p) && p.length === space.dim) gains[i] = gains[i]! - gp.predict(p).mean;
        });
      }
    } catch {
      gains = [0, 0, 0];
    }
  }

  let best = Math.min(...ystd);
  for (const p of pending) {
    const m = gp.predict(p).mean;
    gp.append(p, m);
    best = Math.min(best, m);
  }
  const anchors = observed.map((o, i) => ({ p: o.point, y: ystd[i]! })).sort((a, b) => a.y - b.y).slice(0, 5).map((a) => a.p);
  const allowed = (p: number[]): boolean => !used.has(assignmentKey(space, decode(space, p)));
  let hedgeProposals: number[][] | undefined;
  const predict = (p: number[]): { mean: number; variance: number } => gp.predict(p);
  while (out.length < req.count) {
    let chosen: number[] | undefined;
    const incumbent = best;
    if (settings.acqFunc === 'gp_hedge') {
      const proposals = maximiseAcquisition(space, predict, HEDGE_ORDER.map((name) => (m: number, v: number) => acquisitionScore(name, m, v, incumbent)), rng, allowed, anchors, { random: randomCandidates(gp.size) });
      const maxGain = Math.max(...gains);
      const pick = rng.weighted(gains.map((g) => Math.exp(g - maxGain)));
      chosen = proposals[pick] ?? proposals.find((p) => p !== undefined);
      if (!hedgeProposals && proposals.every((p) => p !== undefined)) hedgeProposals = proposals as number[][];
    } else {
      const name = settings.acqFunc;
      chosen = maximiseAcquisition(space, predict, [(m: number, v: number) => acquisitionScore(name, m, v, incumbent)], rng, allowed, anchors, { random: randomCandidates(gp.size) })[0];
    }
    if (!chosen) {
      const a = randomAssignment(space, rng, used);
      if (!a) break;
      take(a);
      continue;
    }
    const a = decode(space, chosen);
    take(a);
    const m = gp.predict(chosen).mean;
    gp.append(chosen, m);
    best = Math.min(best, m);
  }
  if (settings.acqFunc === 'gp_hedge') {
    state['hedgeGains'] = JSON.stringify(gains);
    // consumed above: proposals are counted once, against the next model
    state['hedgeProposals'] = JSON.stringify(hedgeProposals ?? []);
  }
  return { assignments: out, state };
}

export const bayesianOptimizationAlgorithm: Algorithm = {
  name: 'bayesianoptimization',
  validate,
  suggest,
};
