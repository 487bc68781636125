// Katib's `cmaes` (goptuna's CMA sampler in Katib) written for Skiff, after Hansen's "The CMA
// Evolution Strategy: A Tutorial" (2016): weighted recombination of the best half, cumulative
// step-size adaptation, rank-one and active rank-μ covariance updates (the worse half pushes the
// covariance away, which learns ill-conditioned landscapes faster), on the unit cube of the int and
// double parameters. Categorical and discrete parameters are drawn at random for each member.
//
// The whole strategy lives in the Suggestion's state (`cmaes`: JSON with the generation, mean,
// step size, covariance, evolution paths, restart bookkeeping and the current generation's members),
// which the controller persists together with the assignments it hands out; a crash between two
// calls therefore resumes the same generation. A generation is sampled all at once; each call hands
// out the members not yet given to a trial, and once every member has a result the distribution
// is updated and the next generation sampled. So a batch of parallel asks is members of one
// generation, never the same assignment twice.
//
// Choices, and why:
// - A member whose assignment equals an earlier trial's (ints and steps collapse nearby points) is
//   resampled a few times, and otherwise takes that trial's result instead of running it again.
// - A failed trial counts as the worst value of its generation, so the generation still completes
//   and the search moves away from where trials crash.
// - `sigma` is the initial step size as a fraction of each parameter's range (the search runs on
//   the unit cube), default 1/6 as Optuna; goptuna reads it in the parameters' own units, which
//   means nothing when ranges differ by orders of magnitude.
// - The first population is at least parallelTrialCount, so every parallel slot has a member to run.
// - Restarts (`ipop`, `bipop`) begin from a uniformly random mean when a run stagnates (flat
//   function values, a collapsed or exploding step size, an ill-conditioned covariance, or a whole
//   generation that produced no new assignment). With `none` only the last one restarts the run,
//   with the same population, since otherwise the search would hand out nothing ever again.
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { symmetricEigen } from './linalg.js';
import { Rng } from './rng.js';
import type { Space } from './space.js';
import { assignmentKey, checkParameters, decodeParam, parseSpace } from './space.js';
import type { Algorithm, Assignment, SettingError, SuggestRequest, SuggestResult, TrialRecord } from './types.js';

export type RestartStrategy = 'none' | 'ipop' | 'bipop';

export interface CmaesSettings {
  sigma: number;
  restartStrategy: RestartStrategy;
}

/** One member of the current generation: its point on the unit cube of the numeric parameters. */
export interface CmaMember {
  x: number[];
  /** the assignment handed out (categoricals drawn at random), and its key for finding its trial */
  assignments: Record<string, string>;
  key: string;
}

export interface CmaState {
  version: 1;
  dim: number;
  /** generations completed in this run */
  generation: number;
  /** generations completed over all runs */
  totalGenerations: number;
  mean: number[];
  sigma: number;
  sigma0: number;
  cov: number[];
  pSigma: number[];
  pC: number[];
  lambda: number;
  /** the population of the first run (the default, or parallelTrialCount when larger) */
  lambda0: number;
  /** best value of each generation of this run, for the flat-fitness test */
  bestHistory: number[];
  restarts: number;
  /** BIPOP: large-population restarts so far, and evaluations spent in each regime */
  largeRestarts: number;
  regime: 'large' | 'small';
  evalsLarge: number;
  evalsSmall: number;
  members: CmaMember[];
}

const INC_POPSIZE = 2;

export function defaultPopulation(dim: number): number {
  return 4 + Math.floor(3 * Math.log(dim));
}

/** Checks Katib's cmaes settings; errors name `spec.algorithm.algorithmSettings[i]`. */
export function checkCmaesSettings(settings: { name: string; value: string }[]): SettingError[] {
  const errors: SettingError[] = [];
  settings.forEach((s, i) => {
    const field = `spec.algorithm.algorithmSettings[${i}]`;
    const v = String(s.value ?? '').trim();
    switch (s.name) {
      case 'random_state':
        if (!/^[+-]?\d+$/.test(v)) errors.push({ field: `${field}.value`, message: `random_state must be an integer, got ${JSON.stringify(s.value)}` });
        break;
      case 'sigma': {
        const n = Number(v);
        if (v === '' || !Number.isFinite(n) || n <= 0) errors.push({ field: `${field}.value`, message: `sigma must be a number > 0 (the initial step size as a fraction of each parameter's range), got ${JSON.stringify(s.value)}` });
        break;
      }
      case 'restart_strategy':
        if (!['ipop', 'bipop', 'none', ''].includes(v)) errors.push({ field: `${field}.value`, message: `restart_strategy must be one of ipop, bipop, none, got ${JSON.stringify(s.value)}` });
        break;
      default:
        errors.push({ field: `${field}.name`, message: `unknown setting ${JSON.stringify(s.name)} for cmaes (known: random_state, sigma, restart_strategy)` });
    }
  });
  return errors;
}

export function parseCmaesSettings(settings: Record<string, string>): CmaesSettings {
  const errors = checkCmaesSettings(Object.entries(settings).map(([name, value]) => ({ name, value })));
  if (errors.length > 0) throw new Error(`cmaes: ${errors.map((e) => e.message).join('; ')}`);
  const rs = (settings['restart_strategy'] ?? '').trim();
  return {
    sigma: settings['sigma'] !== undefined ? Number(settings['sigma']) : 1 / 6,
    restartStrategy: rs === 'ipop' || rs === 'bipop' ? rs : 'none',
  };
}

function validate(input: { parameters: ParameterSpec[]; settings: { name: string; value: string }[] }): SettingError[] {
  const errors = [...checkParameters(input.parameters), ...checkCmaesSettings(input.settings ?? [])];
  if (Array.isArray(input.parameters)) {
    const numeric = input.parameters.filter((p) => p && (p.parameterType === 'int' || p.parameterType === 'double')).length;
    if (numeric < 2) {
      errors.push({ field: 'spec.parameters', message: `cmaes needs at least two int or double parameters, found ${numeric}; use bayesianoptimization or tpe for fewer` });
    }
  }
  return errors;
}

// ---- the strategy's constants (Hansen's tutorial, 2016 edition: active CMA, negative weights) ----

interface Constants {
  mu: number;
  /** all λ weights: the first μ positive (summing to 1) for the mean, the rest negative for the covariance */
  weights: number[];
  muEff: number;
  cSigma: number;
  dSigma: number;
  cC: number;
  c1: number;
  cMu: number;
  chiN: number;
}

export function strategyConstants(dim: number, lambda: number): Constants {
  const mu = Math.floor(lambda / 2);
  const raw = Array.from({ length: lambda }, (_, i) => Math.log((lambda + 1) / 2) - Math.log(i + 1));
  const pos = raw.slice(0, mu);
  const neg = raw.slice(mu);
  const sumPos = pos.reduce((a, b) => a + b, 0);
  const muEff = sumPos ** 2 / pos.reduce((a, w) => a + w * w, 0);
  const sumNeg = neg.reduce((a, b) => a + b, 0);
  const muEffNeg = neg.length > 0 && sumNeg !== 0 ? sumNeg ** 2 / neg.reduce((a, w) => a + w * w, 0) : 0;
  const cSigma = (muEff + 2) / (dim + muEff + 5);
  const dSigma = 1 + 2 * Math.max(0, Math.sqrt((muEff - 1) / (dim + 1)) - 1) + cSigma;
  const cC = (4 + muEff / dim) / (dim + 4 + (2 * muEff) / dim);
  const c1 = 2 / ((dim + 1.3) ** 2 + muEff);
  const cMu = Math.min(1 - c1, (2 * (muEff - 2 + 1 / muEff)) / ((dim + 2) ** 2 + muEff));
  // the negative weights' total: the smallest of three bounds that keep C positive definite
  const alphaMu = 1 + c1 / cMu;
  const alphaMuEff = 1 + (2 * muEffNeg) / (muEff + 2);
  const alphaPosDef = (1 - c1 - cMu) / (dim * cMu);
  const negScale = Math.min(alphaMu, alphaMuEff, alphaPosDef) / Math.abs(sumNeg || 1);
  const weights = raw.map((w) => (w >= 0 ? w / sumPos : w * negScale));
  const chiN = Math.sqrt(dim) * (1 - 1 / (4 * dim) + 1 / (21 * dim * dim));
  return { mu, weights, muEff, cSigma, dSigma, cC, c1, cMu, chiN };
}

function identity(n: number): number[] {
  const m = new Array<number>(n * n).fill(0);
  for (let i = 0; i < n; i++) m[i * n + i] = 1;
  return m;
}

/** A fresh run: mean, step size and population given, covariance the identity, paths zero. */
function startRun(prev: CmaState | undefined, dim: number, mean: number[], sigma: number, lambda: number, lambda0: number): CmaState {
  return {
    version: 1, dim, generation: 0, totalGenerations: prev?.totalGenerations ?? 0, mean, sigma, sigma0: prev?.sigma0 ?? sigma,
    cov: identity(dim), pSigma: new Array<number>(dim).fill(0), pC: new Array<number>(dim).fill(0), lambda, lambda0,
    bestHistory: [], restarts: prev?.restarts ?? 0, largeRestarts: prev?.largeRestarts ?? 0, regime: prev?.regime ?? 'large',
    evalsLarge: prev?.evalsLarge ?? 0, evalsSmall: prev?.evalsSmall ?? 0, members: [],
  };
}

/** B·diag(√eigenvalues) for sampling, and C^{-1/2} for the step-size path. */
function decompose(cov: number[], dim: number): { bd: Float64Array; invSqrt: Float64Array; eig: Float64Array } {
  const { values, vectors } = symmetricEigen(cov, dim);
  const eig = values.map((v) => Math.max(v, 1e-20));
  const bd = new Float64Array(dim * dim);
  const invSqrt = new Float64Array(dim * dim);
  for (let i = 0; i < dim; i++) {
    for (let j = 0; j < dim; j++) {
      bd[i * dim + j] = vectors[i * dim + j]! * Math.sqrt(eig[j]!);
      let s = 0;
      for (let k = 0; k < dim; k++) s += (vectors[i * dim + k]! * vectors[j * dim + k]!) / Math.sqrt(eig[k]!);
      invSqrt[i * dim + j] = s;
    }
  }
  return { bd, invSqrt, eig };
}

/** One point N(m, σ²C) inside the cube: resampled up to 100 times, then clipped (as Optuna's cmaes). */
function samplePoint(st: CmaState, bd: Float64Array, rng: Rng): number[] {
  const d = st.dim;
  let x: number[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const z = Array.from({ length: d }, () => rng.normal());
    x = st.mean.map((m, i) => {
      let y = 0;
      for (let k = 0; k < d; k++) y += bd[i * d + k]! * z[k]!;
      return m + st.sigma * y;
    });
    if (x.every((v) => v >= 0 && v <= 1)) return x;
  }
  return x.map((v) => Math.min(1, Math.max(0, v)));
}

/** The numeric parameters' indices in the space (CMA-ES's dimensions), in order. */
function numericIndices(space: Space): number[] {
  const out: number[] = [];
  space.params.forEach((p, i) => {
    if (p.kind === 'numeric') out.push(i);
  });
  return out;
}

function memberAssignment(space: Space, numeric: number[], x: number[], rng: Rng): Record<string, string> {
  const out: Record<string, string> = {};
  let j = 0;
  space.params.forEach((p, i) => {
    if (numeric[j] === i) out[p.name] = decodeParam(p, x[j++]!);
    else out[p.name] = decodeParam(p, rng.uniform());
  });
  return out;
}

/** Samples a whole generation; members avoid known assignments for a few tries. Returns how many are new. */
function sampleGeneration(st: CmaState, space: Space, rng: Rng, known: Set<string>): number {
  const { bd } = decompose(st.cov, st.dim);
  const numeric = numericIndices(space);
  const taken = new Set(known);
  st.members = [];
  let fresh = 0;
  for (let k = 0; k < st.lambda; k++) {
    let member: CmaMember | undefined;
    for (let attempt = 0; attempt < 10; attempt++) {
      const x = samplePoint(st, bd, rng);
      const assignments = memberAssignment(space, numeric, x, rng);
      member = { x, assignments, key: assignmentKey(space, assignments) };
      if (!taken.has(member.key)) break;
    }
    if (!taken.has(member!.key)) fresh++;
    taken.add(member!.key);
    st.members.push(member!);
  }
  return fresh;
}

/** The CMA update from a completed generation, values to be minimised. */
export function updateDistribution(st: CmaState, values: number[]): void {
  const d = st.dim;
  const c = strategyConstants(d, st.lambda);
  const order = values.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v || a.i - b.i);
  const oldMean = st.mean;
  const ys = order.map(({ i }) => st.members[i]!.x.map((xv, k) => (xv - oldMean[k]!) / st.sigma));
  const yw = new Array<number>(d).fill(0);
  for (let r = 0; r < c.mu; r++) ys[r]!.forEach((v, k) => (yw[k] = yw[k]! + c.weights[r]! * v));
  st.mean = oldMean.map((m, k) => m + st.sigma * yw[k]!);
  const { invSqrt } = decompose(st.cov, d);
  const whiten = (y: number[]): number[] => {
    const out = new Array<number>(d).fill(0);
    for (let i = 0; i < d; i++) for (let k = 0; k < d; k++) out[i] = out[i]! + invSqrt[i * d + k]! * y[k]!;
    return out;
  };
  const cy = whiten(yw);
  const ps = Math.sqrt(c.cSigma * (2 - c.cSigma) * c.muEff);
  st.pSigma = st.pSigma.map((p, k) => (1 - c.cSigma) * p + ps * cy[k]!);
  const psNorm = Math.sqrt(st.pSigma.reduce((a, v) => a + v * v, 0));
  const g = st.generation + 1;
  const hSigma = psNorm / Math.sqrt(1 - (1 - c.cSigma) ** (2 * g)) < (1.4 + 2 / (d + 1)) * c.chiN ? 1 : 0;
  const pcf = Math.sqrt(c.cC * (2 - c.cC) * c.muEff);
  st.pC = st.pC.map((p, k) => (1 - c.cC) * p + hSigma * pcf * yw[k]!);
  const deltaH = (1 - hSigma) * c.cC * (2 - c.cC);
  const sumW = c.weights.reduce((a, b) => a + b, 0);
  const decay = 1 + c.c1 * deltaH - c.c1 - c.cMu * sumW;
  // negative weights act on the whitened length: w°ᵢ = wᵢ·n/‖C^{-1/2}yᵢ‖² (tutorial eq. 46)
  const wCirc = c.weights.map((w, r) => {
    if (w >= 0) return w;
    const z = whiten(ys[r]!);
    const n2 = z.reduce((a, v) => a + v * v, 0);
    return n2 > 0 ? (w * d) / n2 : 0;
  });
  const cov = st.cov.slice();
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let rankMu = 0;
      for (let r = 0; r < ys.length; r++) rankMu += wCirc[r]! * ys[r]![i]! * ys[r]![j]!;
      const v = decay * cov[i * d + j]! + c.c1 * st.pC[i]! * st.pC[j]! + c.cMu * rankMu;
      cov[i * d + j] = v;
      cov[j * d + i] = v;
    }
  }
  st.cov = cov;
  st.sigma = st.sigma * Math.exp((c.cSigma / c.dSigma) * (psNorm / c.chiN - 1));
  st.generation = g;
  st.totalGenerations++;
  st.bestHistory.push(order[0]!.v);
}

/** Hansen's (and Optuna's cmaes) stopping tests for one run, on the generation just completed. */
export function stagnated(st: CmaState, values: number[]): boolean {
  const d = st.dim;
  const histLen = 10 + Math.ceil((30 * d) / st.lambda);
  if (st.bestHistory.length >= histLen) {
    const recent = st.bestHistory.slice(-histLen);
    const all = [...recent, ...values];
    if (Math.max(...all) - Math.min(...all) < 1e-12) return true;
  }
  const { eig } = decompose(st.cov, d);
  const maxEig = Math.max(...eig);
  const minEig = Math.min(...eig);
  const maxStd = st.sigma * Math.sqrt(Math.max(...st.cov.filter((_, k) => k % (d + 1) === 0)));
  if (maxStd < 1e-11 && st.pC.every((p) => st.sigma * Math.abs(p) < 1e-11)) return true;
  if (st.sigma * Math.sqrt(maxEig) > 1e4) return true;
  if (maxEig / minEig > 1e14) return true;
  for (let k = 0; k < d; k++) {
    if (st.mean[k] === st.mean[k]! + 0.2 * st.sigma * Math.sqrt(st.cov[k * d + k]!)) return true;
  }
  return false;
}

/** A new run after stagnation: IPOP doubles the population; BIPOP alternates large and small runs. */
function restart(st: CmaState, strategy: RestartStrategy, rng: Rng): CmaState {
  const mean = Array.from({ length: st.dim }, () => rng.uniform());
  if (strategy === 'none') return startRun(st, st.dim, mean, st.sigma0, st.lambda, st.lambda0);
  const next = startRun(st, st.dim, mean, st.sigma0, st.lambda, st.lambda0);
  next.restarts = st.restarts + 1;
  if (strategy === 'ipop') {
    next.lambda = st.lambda0 * INC_POPSIZE ** next.restarts;
    return next;
  }
  if (st.evalsSmall < st.evalsLarge && st.largeRestarts > 0) {
    // small regime: a population between the default and half the last large one, a smaller step
    const largeLambda = st.lambda0 * INC_POPSIZE ** st.largeRestarts;
    const u = rng.uniform();
    next.regime = 'small';
    next.lambda = Math.max(st.lambda0, Math.floor(st.lambda0 * (0.5 * largeLambda / st.lambda0) ** (u * u)));
    next.sigma = st.sigma0 * 10 ** (-2 * rng.uniform());
  } else {
    next.regime = 'large';
    next.largeRestarts = st.largeRestarts + 1;
    next.lambda = st.lambda0 * INC_POPSIZE ** next.largeRestarts;
  }
  return next;
}

export function parseCmaState(raw: string | undefined, dim: number): CmaState | undefined {
  if (!raw) return undefined;
  try {
    const st = JSON.parse(raw) as CmaState;
    if (st.version === 1 && st.dim === dim && Array.isArray(st.members) && st.cov.length === dim * dim) return st;
  } catch {
    // unreadable: start afresh
  }
  return undefined;
}

function trialResult(t: TrialRecord): { done: boolean; value?: number } {
  if (t.state === 'pending') return { done: false };
  if ((t.state === 'succeeded' || t.state === 'early-stopped') && typeof t.value === 'number' && Number.isFinite(t.value)) return { done: true, value: t.value };
  return { done: true };
}

function suggest(req: SuggestRequest): SuggestResult {
  const space = parseSpace(req.parameters);
  const settings = parseCmaesSettings(req.settings);
  const numeric = numericIndices(space);
  const dim = numeric.length;
  if (dim < 2) throw new Error('cmaes needs at least two int or double parameters');
  const rng = new Rng(req.seed);
  const byKey = new Map<string, TrialRecord>();
  for (const t of req.trials) {
    const key = assignmentKey(space, t.assignments);
    // the finished one wins when an assignment appears twice (a trial made by hand)
    const prev = byKey.get(key);
    if (!prev || prev.state === 'pending') byKey.set(key, t);
  }
  const known = new Set(byKey.keys());
  let st = parseCmaState(req.state['cmaes'], dim);
  if (!st) {
    const lambda0 = Math.max(defaultPopulation(dim), req.parallelTrialCount || 0);
    st = startRun(undefined, dim, new Array<number>(dim).fill(0.5), settings.sigma, lambda0, lambda0);
    if (sampleGeneration(st, space, rng, known) === 0) st = restart(st, 'none', rng);
  }
  const out: Assignment[] = [];
  // Completing a generation may happen more than once per call (members that all reuse old results).
  for (let round = 0; round < 50 && out.length < req.count; round++) {
    const results = st.members.map((m) => byKey.get(m.key));
    const unhanded = st.members.filter((m, i) => results[i] === undefined && !out.some((o) => assignmentKey(space, o.assignments) === m.key));
    for (const m of unhanded) {
      if (out.length >= req.count) break;
      if (out.some((o) => assignmentKey(space, o.assignments) === m.key)) continue;
      out.push({ assignments: m.assignments });
    }
    if (results.some((r) => r === undefined || !trialResult(r).done)) break;
    // every member has a result: update, check for stagnation, sample the next generation
    const vals = results.map((r) => trialResult(r!).value);
    const ok = vals.filter((v): v is number => v !== undefined);
    let worst = ok.length > 0 ? Math.max(...ok) : undefined;
    if (worst === undefined) {
      const ever = req.trials.map(trialResult).filter((r) => r.value !== undefined).map((r) => r.value!);
      worst = ever.length > 0 ? Math.max(...ever) : undefined;
    }
    if (st.regime === 'small') st.evalsSmall += st.lambda;
    else st.evalsLarge += st.lambda;
    let stop = false;
    if (worst !== undefined) {
      const filled = vals.map((v) => v ?? worst!);
      updateDistribution(st, filled);
      stop = settings.restartStrategy !== 'none' && stagnated(st, filled);
    }
    if (stop) st = restart(st, settings.restartStrategy, rng);
    if (sampleGeneration(st, space, rng, known) === 0) {
      // nothing new to try from here: the run is stuck on assignments already tried
      st = restart(st, settings.restartStrategy, rng);
      sampleGeneration(st, space, rng, known);
    }
  }
  return { assignments: out, state: { cmaes: JSON.stringify(st) } };
}

export const cmaesAlgorithm: Algorithm = {
  name: 'cmaes',
  validate,
  suggest,
};
