// The Gaussian process behind `bayesianoptimization`: a Matérn-5/2 kernel with one length scale per
// dimension (ARD), a signal variance and a noise variance, over points of the unit cube, with
// standardised outputs. Categorical dimensions hold a category index and enter the distance as a
// mismatch (0 when equal, 1 otherwise) divided by their own length scale, so the order of a list's
// values means nothing to the model while a categorical that does not matter can still be learnt
// away (a long length scale). Hyperparameters are the maximum a posteriori of the log marginal
// likelihood under weak priors, found by L-BFGS on their logarithms.
import { cholesky, choleskyAppend, choleskyInverse, solveLower, solveUpperT } from './linalg.js';

const SQRT5 = Math.sqrt(5);
const LOG_2PI = Math.log(2 * Math.PI);

/** Logarithms of the kernel's hyperparameters. */
export interface KernelParams {
  logLength: number[];
  logSignal: number;
  logNoise: number;
}

// Bounds on the log-parameters. Inputs live in [0,1] and outputs are standardised, so length scales
// between 0.01 and 100 cover everything from very wiggly to irrelevant, and the noise floor keeps
// the factorisation stable on noise-free objectives.
const LOG_LEN_MIN = Math.log(1e-2);
const LOG_LEN_MAX = Math.log(1e2);
const LOG_SIG_MIN = Math.log(1e-2);
const LOG_SIG_MAX = Math.log(1e2);
const LOG_NOISE_MIN = Math.log(1e-6);
const LOG_NOISE_MAX = Math.log(1);

// Weak priors: length scales log-normal around 0.5 (half the cube) so that a handful of points does
// not drive them to a bound; signal variance log-normal around 1 (standardised outputs); noise
// pulled towards small values because most objectives are deterministic or nearly so.
const LEN_PRIOR_MU = Math.log(0.5);
const LEN_PRIOR_SD = 1.5;
const SIG_PRIOR_SD = 1.5;
const NOISE_PRIOR_RATE = 30;

export function defaultKernelParams(dims: number): KernelParams {
  return { logLength: new Array<number>(dims).fill(Math.log(0.5)), logSignal: 0, logNoise: Math.log(1e-3) };
}

function paramsToVector(p: KernelParams): number[] {
  return [...p.logLength, p.logSignal, p.logNoise];
}

function vectorToParams(v: ArrayLike<number>, dims: number): KernelParams {
  const logLength: number[] = [];
  for (let k = 0; k < dims; k++) logLength.push(v[k]!);
  return { logLength, logSignal: v[dims]!, logNoise: v[dims + 1]! };
}

function bounds(dims: number): { lo: number[]; hi: number[] } {
  const lo = [...new Array<number>(dims).fill(LOG_LEN_MIN), LOG_SIG_MIN, LOG_NOISE_MIN];
  const hi = [...new Array<number>(dims).fill(LOG_LEN_MAX), LOG_SIG_MAX, LOG_NOISE_MAX];
  return { lo, hi };
}

/** Per-dimension squared difference: squared distance for numbers, mismatch for categoricals. */
function diff2(a: ArrayLike<number>, b: ArrayLike<number>, k: number, categorical: readonly boolean[]): number {
  if (categorical[k]) return a[k] === b[k] ? 0 : 1;
  const d = a[k]! - b[k]!;
  return d * d;
}

function kernelValue(a: ArrayLike<number>, b: ArrayLike<number>, invL2: Float64Array, signal: number, categorical: readonly boolean[]): number {
  let r2 = 0;
  for (let k = 0; k < invL2.length; k++) r2 += diff2(a, b, k, categorical) * invL2[k]!;
  const r = Math.sqrt(r2);
  return signal * (1 + SQRT5 * r + (5 / 3) * r2) * Math.exp(-SQRT5 * r);
}

/**
 * The negative log posterior of the hyperparameters (negative log marginal likelihood minus the log
 * priors) and its gradient, at log-parameters `v`. `d2` holds the per-dimension squared differences
 * of every pair i<j, precomputed once per fit because every evaluation needs them.
 */
function negLogPosterior(
  v: ArrayLike<number>, n: number, dims: number, d2: Float64Array, y: Float64Array,
): { f: number; g: Float64Array } | undefined {
  const invL2 = new Float64Array(dims);
  for (let k = 0; k < dims; k++) invL2[k] = Math.exp(-2 * v[k]!);
  const signal = Math.exp(v[dims]!);
  const noise = Math.exp(v[dims + 1]!);
  const kmat = new Float64Array(n * n);
  // dK/dlog l_k = signal·5/3·(1+√5r)·e^{-√5r}·Δ²_k/l_k²: keep the common factor per pair.
  const common = new Float64Array((n * (n - 1)) / 2);
  let p = 0;
  for (let i = 0; i < n; i++) {
    kmat[i * n + i] = signal + noise;
    for (let j = i + 1; j < n; j++, p++) {
      let r2 = 0;
      const base = p * dims;
      for (let k = 0; k < dims; k++) r2 += d2[base + k]! * invL2[k]!;
      const r = Math.sqrt(r2);
      const e = Math.exp(-SQRT5 * r);
      const kv = signal * (1 + SQRT5 * r + (5 / 3) * r2) * e;
      kmat[i * n + j] = kv;
      kmat[j * n + i] = kv;
      common[p] = signal * (5 / 3) * (1 + SQRT5 * r) * e;
    }
  }
  const l = cholesky(kmat, n);
  if (!l) return undefined;
  const alpha = solveUpperT(l, n, solveLower(l, n, y));
  let logDet = 0;
  let fit = 0;
  for (let i = 0; i < n; i++) {
    logDet += Math.log(l[i * n + i]!);
    fit += y[i]! * alpha[i]!;
  }
  const lml = -0.5 * fit - logDet - 0.5 * n * LOG_2PI;
  const inv = choleskyInverse(l, n);
  // W = ααᵀ − K⁻¹; ∂LML/∂θ = ½ tr(W ∂K/∂θ).
  const g = new Float64Array(dims + 2);
  let traceSignal = 0;
  let traceNoise = 0;
  p = 0;
  for (let i = 0; i < n; i++) {
    const wii = alpha[i]! * alpha[i]! - inv[i * n + i]!;
    traceSignal += 0.5 * wii * signal;
    traceNoise += 0.5 * wii * noise;
    for (let j = i + 1; j < n; j++, p++) {
      const wij = alpha[i]! * alpha[j]! - inv[i * n + j]!;
      // both (i,j) and (j,i): the ½ cancels
      traceSignal += wij * kmat[i * n + j]!;
      const c = wij * common[p]!;
      const base = p * dims;
      for (let k = 0; k < dims; k++) g[k] = g[k]! + c * d2[base + k]! * invL2[k]!;
    }
  }
  g[dims] = traceSignal;
  g[dims + 1] = traceNoise;
  // Log priors, on the log-parameters.
  let prior = 0;
  for (let k = 0; k < dims; k++) {
    const z = (v[k]! - LEN_PRIOR_MU) / LEN_PRIOR_SD;
    prior += -0.5 * z * z;
    g[k] = g[k]! - z / LEN_PRIOR_SD;
  }
  const zs = v[dims]! / SIG_PRIOR_SD;
  prior += -0.5 * zs * zs;
  g[dims] = g[dims]! - zs / SIG_PRIOR_SD;
  prior += 0.1 * v[dims + 1]! - NOISE_PRIOR_RATE * noise;
  g[dims + 1] = g[dims + 1]! + (0.1 - NOISE_PRIOR_RATE * noise);
  for (let k = 0; k < g.length; k++) g[k] = -g[k]!;
  return { f: -(lml + prior), g };
}

/**
 * Minimises f by L-BFGS with a backtracking (Armijo) line search. Bounds are handled by the caller
 * through a smooth change of variables, so this sees an unconstrained problem.
 */
export function lbfgsMinimise(
  fg: (x: Float64Array) => { f: number; g: Float64Array } | undefined, x0: Float64Array, maxIter: number, tolerance = 1e-9, memory = 8,
): { x: Float64Array; f: number; evaluations: number } {
  let x = Float64Array.from(x0);
  let cur = fg(x);
  let evaluations = 1;
  if (!cur) return { x, f: Infinity, evaluations };
  const sList: Float64Array[] = [];
  const yList: Float64Array[] = [];
  const m = x.length;
  for (let it = 0; it < maxIter; it++) {
    // two-loop recursion: d = −H g
    const q = Float64Array.from(cur.g);
    const alphas: number[] = [];
    for (let i = sList.length - 1; i >= 0; i--) {
      const rho = 1 / dot(yList[i]!, sList[i]!);
      const a = rho * dot(sList[i]!, q);
      alphas[i] = a;
      for (let k = 0; k < m; k++) q[k] = q[k]! - a * yList[i]![k]!;
    }
    if (sList.length > 0) {
      const last = sList.length - 1;
      const gamma = dot(sList[last]!, yList[last]!) / dot(yList[last]!, yList[last]!);
      for (let k = 0; k < m; k++) q[k] = q[k]! * gamma;
    } else {
      const gn = Math.sqrt(dot(cur.g, cur.g));
      if (gn > 0) for (let k = 0; k < m; k++) q[k] = q[k]! / Math.max(1, gn);
    }
    for (let i = 0; i < sList.length; i++) {
      const rho = 1 / dot(yList[i]!, sList[i]!);
      const b = rho * dot(yList[i]!, q);
      for (let k = 0; k < m; k++) q[k] = q[k]! + sList[i]![k]! * (alphas[i]! - b);
    }
    const d = q.map((v) => -v);
    let slope = dot(d, cur.g);
    if (!(slope < 0)) {
      sList.length = 0;
      yList.length = 0;
      for (let k = 0; k < m; k++) d[k] = -cur.g[k]!;
      slope = dot(d, cur.g);
      if (!(slope < 0)) break;
    }
    let step = 1;
    let next: { f: number; g: Float64Array } | undefined;
    let xn = x;
    for (let tries = 0; tries < 30; tries++) {
      xn = x.map((v, k) => v + step * d[k]!);
      next = fg(xn);
      evaluations++;
      if (next && Number.isFinite(next.f) && next.f <= cur.f + 1e-4 * step * slope) break;
      next = undefined;
      step *= 0.5;
    }
    if (!next) break;
    const s = xn.map((v, k) => v - x[k]!);
    const yv = next.g.map((v, k) => v - cur!.g[k]!);
    if (dot(s, yv) > 1e-12) {
      sList.push(s);
      yList.push(yv);
      if (sList.length > memory) {
        sList.shift();
        yList.shift();
      }
    }
    const improvement = cur.f - next.f;
    x = xn;
    cur = next;
    if (improvement < tolerance * (1 + Math.abs(cur.f))) break;
  }
  return { x, f: cur.f, evaluations };
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/**
 * Fits the kernel's hyperparameters to (x, y) — y already standardised — by maximising the log
 * posterior from each start (the previous fit first, when there is one) and keeping the best.
 */
export function fitKernel(
  x: readonly ArrayLike<number>[], y: ArrayLike<number>, categorical: readonly boolean[],
  opts: { starts?: KernelParams[]; maxIter?: number } = {},
): KernelParams {
  const n = x.length;
  const dims = categorical.length;
  const d2 = new Float64Array(((n * (n - 1)) / 2) * dims);
  let p = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++, p++) {
      for (let k = 0; k < dims; k++) d2[p * dims + k] = diff2(x[i]!, x[j]!, k, categorical);
    }
  }
  const yv = Float64Array.from(y);
  const { lo, hi } = bounds(dims);
  // θ = lo + (hi−lo)·sigmoid(z): the optimiser works on an unbounded z.
  const toTheta = (z: ArrayLike<number>): Float64Array => {
    const t = new Float64Array(z.length);
    for (let k = 0; k < z.length; k++) t[k] = lo[k]! + (hi[k]! - lo[k]!) / (1 + Math.exp(-z[k]!));
    return t;
  };
  const toZ = (theta: ArrayLike<number>): Float64Array => {
    const z = new Float64Array(theta.length);
    for (let k = 0; k < theta.length; k++) {
      const u = Math.min(1 - 1e-6, Math.max(1e-6, (theta[k]! - lo[k]!) / (hi[k]! - lo[k]!)));
      z[k] = Math.log(u / (1 - u));
    }
    return z;
  };
  const fg = (z: Float64Array): { f: number; g: Float64Array } | undefined => {
    const theta = toTheta(z);
    const r = negLogPosterior(theta, n, dims, d2, yv);
    if (!r) return undefined;
    for (let k = 0; k < z.length; k++) {
      const s = 1 / (1 + Math.exp(-z[k]!));
      r.g[k] = r.g[k]! * (hi[k]! - lo[k]!) * s * (1 - s);
    }
    return r;
  };
  const starts = opts.starts && opts.starts.length > 0 ? opts.starts : [defaultKernelParams(dims)];
  let best: { x: Float64Array; f: number } | undefined;
  for (const start of starts) {
    // the posterior is flat near its optimum: a relative gain below 1e-6 changes no suggestion
    const r = lbfgsMinimise(fg, toZ(paramsToVector(start)), opts.maxIter ?? 100, 1e-6);
    if (!best || r.f < best.f) best = r;
  }
  return vectorToParams(toTheta(best!.x), dims);
}

/**
 * A GP conditioned on data, for prediction. Points may be appended (constant-liar / kriging-believer
 * values for pending trials) at O(n²) each by extending the Cholesky factor.
 */
export class GpPosterior {
  readonly params: KernelParams;
  private readonly categorical: readonly boolean[];
  private readonly invL2: Float64Array;
  private readonly signal: number;
  private readonly noise: number;
  private x: ArrayLike<number>[];
  private y: number[];
  private l: Float64Array;
  private alpha: Float64Array;

  constructor(x: readonly ArrayLike<number>[], y: ArrayLike<number>, params: KernelParams, categorical: readonly boolean[]) {
    this.params = params;
    this.categorical = categorical;
    this.invL2 = Float64Array.from(params.logLength, (v) => Math.exp(-2 * v));
    this.signal = Math.exp(params.logSignal);
    this.noise = Math.exp(params.logNoise);
    this.x = [...x];
    this.y = Array.from(y);
    const n = x.length;
    let jitter = 0;
    for (let attempt = 0; ; attempt++) {
      const kmat = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        kmat[i * n + i] = this.signal + this.noise + jitter;
        for (let j = i + 1; j < n; j++) {
          const kv = kernelValue(x[i]!, x[j]!, this.invL2, this.signal, categorical);
          kmat[i * n + j] = kv;
          kmat[j * n + i] = kv;
        }
      }
      const l = cholesky(kmat, n);
      if (l) {
        this.l = l;
        break;
      }
      if (attempt > 8) throw new Error('the Gaussian process covariance is not positive definite');
      jitter = jitter === 0 ? 1e-8 * this.signal : jitter * 10;
    }
    this.alpha = solveUpperT(this.l, n, solveLower(this.l, n, this.y));
  }

  get size(): number {
    return this.x.length;
  }

  /** Adds one observation (a lie for a pending point) without refactoring. */
  append(point: ArrayLike<number>, value: number): void {
    const n = this.x.length;
    const col = new Float64Array(n);
    for (let i = 0; i < n; i++) col[i] = kernelValue(this.x[i]!, point, this.invL2, this.signal, this.categorical);
    const l = choleskyAppend(this.l, n, col, this.signal + this.noise) ?? choleskyAppend(this.l, n, col, this.signal + this.noise + 1e-6 * this.signal);
    if (!l) return; // numerically the same as a point already there: it adds nothing
    this.l = l;
    this.x.push(point);
    this.y.push(value);
    this.alpha = solveUpperT(l, n + 1, solveLower(l, n + 1, this.y));
  }

  /** Posterior mean and variance of the latent function at `point`. */
  predict(point: ArrayLike<number>): { mean: number; variance: number } {
    const n = this.x.length;
    const ks = new Float64Array(n);
    let mean = 0;
    for (let i = 0; i < n; i++) {
      const kv = kernelValue(this.x[i]!, point, this.invL2, this.signal, this.categorical);
      ks[i] = kv;
      mean += kv * this.alpha[i]!;
    }
    const v = solveLower(this.l, n, ks);
    let variance = this.signal;
    for (let i = 0; i < n; i++) variance -= v[i]! * v[i]!;
    return { mean, variance: Math.max(variance, 1e-12 * this.signal) };
  }
}

// ---- acquisition functions (minimisation; larger score is better) ----

const INV_SQRT2 = 1 / Math.SQRT2;
const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/** Complementary error function (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? r : 2 - r;
}

export function normCdf(z: number): number {
  return 0.5 * erfc(-z * INV_SQRT2);
}

export function logNormPdf(z: number): number {
  return -0.5 * z * z - LOG_SQRT_2PI;
}

/** log(zΦ(z) + φ(z)), stable far into the left tail where expected improvement underflows. */
export function logH(z: number): number {
  if (z > -6) {
    const h = z * normCdf(z) + Math.exp(logNormPdf(z));
    if (h > 0) return Math.log(h);
  }
  // Asymptotic series: h(z) ≈ φ(z)/z²·(1 − 3/z² + 15/z⁴) for z → −∞.
  const z2 = z * z;
  return logNormPdf(z) - Math.log(z2) + Math.log1p(-3 / z2 + 15 / (z2 * z2));
}

/** log Φ(z), stable in the left tail. */
export function logNormCdf(z: number): number {
  if (z > -6) return Math.log(normCdf(z));
  const z2 = z * z;
  return logNormPdf(z) - Math.log(-z) + Math.log1p(-1 / z2 + 3 / (z2 * z2));
}

export type AcquisitionName = 'EI' | 'PI' | 'LCB';

/**
 * Margins: skopt's ξ = 0.01 for PI and κ = 1.96 for LCB, on standardised outputs. EI takes no margin
 * (as Optuna's log EI): on standardised outputs a fixed ξ is a share of the values' spread, which
 * keeps EI from refining the best region once the spread is wide (Branin's regret after 40 trials
 * is a hundred times lower without it).
 */
export const ACQ_XI_EI = 0;
export const ACQ_XI = 0.01;
export const ACQ_KAPPA = 1.96;

/** The acquisition's score at a predicted (mean, variance), against the incumbent `best`. Larger is better. */
export function acquisitionScore(name: AcquisitionName, mean: number, variance: number, best: number): number {
  const sd = Math.sqrt(variance);
  switch (name) {
    case 'EI':
      return Math.log(sd) + logH((best - ACQ_XI_EI - mean) / sd);
    case 'PI':
      return logNormCdf((best - ACQ_XI - mean) / sd);
    case 'LCB':
      return -(mean - ACQ_KAPPA * sd);
  }
}
