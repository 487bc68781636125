// The problems of bench/tuning, all evaluated here in TypeScript so that Skiff's algorithms and
// Optuna's (which asks and tells over a pipe) are scored by the very same function:
// - Branin (2-D) and Hartmann-6, the classic Bayesian-optimisation test functions;
// - the 24 noiseless BBOB functions of COCO (Hansen et al., "Real-Parameter Black-Box Optimization
//   Benchmarking 2009: Noiseless Functions Definitions"), at 5-D on [-5, 5]^5. Each (function,
//   instance) draws its x_opt, f_opt, rotations and function-specific constants from BenchRng, so an
//   instance is the same in every run and for every contender; COCO's own instance generator is not
//   reproduced (the numbers differ from COCO's instance k, the landscapes are the same family).
//   Where the 2009 text and COCO's reference code differ (Büche-Rastrigin's x_opt having positive odd
//   coordinates, Gallagher's condition numbers 1000^(j/(n-2))) the code is followed.
// The SVM task lives in svm.ts: its objective runs in Python.
import type { ParameterSpec } from '../../src/api/tuning-types.js';
import { BenchRng, seedOf } from './rng.js';

export type Suite = 'branin' | 'hartmann' | 'bbob' | 'svm';

export interface Bound {
  name: string;
  low: number;
  high: number;
  /** searched on a log scale (Katib's logUniform, Optuna's log=True) */
  log?: boolean;
}

export interface Problem {
  /** unique within a run: branin, hartmann6, bbob-f07, svm-digits */
  id: string;
  suite: Suite;
  title: string;
  bounds: Bound[];
  /** the global minimum; undefined where it is not known (the SVM) */
  fOpt?: number;
  /** a minimiser, where known */
  xOpt?: number[];
  evaluate(x: readonly number[]): number | Promise<number>;
}

/** A problem computed in process, synchronously. */
export interface SyntheticProblem extends Problem {
  fOpt: number;
  xOpt: number[];
  evaluate(x: readonly number[]): number;
}

/** The problem's space as Katib parameters, doubles named after the bounds. */
export function parametersOf(p: Problem): ParameterSpec[] {
  return p.bounds.map((b) => ({
    name: b.name,
    parameterType: 'double',
    feasibleSpace: { min: String(b.low), max: String(b.high), ...(b.log ? { distribution: 'logUniform' as const } : {}) },
  }));
}

// ---------------------------------------------------------------------------------------------
// Branin and Hartmann-6

export const BRANIN_OPT = 5 / (4 * Math.PI); // 0.397887…

export function branin(): SyntheticProblem {
  const b = 5.1 / (4 * Math.PI * Math.PI);
  const c = 5 / Math.PI;
  const t = 1 / (8 * Math.PI);
  return {
    id: 'branin',
    suite: 'branin',
    title: 'Branin (2-D)',
    bounds: [{ name: 'x1', low: -5, high: 10 }, { name: 'x2', low: 0, high: 15 }],
    fOpt: BRANIN_OPT,
    xOpt: [Math.PI, 2.275],
    evaluate(x) {
      const [x1, x2] = x as [number, number];
      const u = x2 - b * x1 * x1 + c * x1 - 6;
      return u * u + 10 * (1 - t) * Math.cos(x1) + 10;
    },
  };
}

const H_ALPHA = [1.0, 1.2, 3.0, 3.2];
const H_A = [
  [10, 3, 17, 3.5, 1.7, 8],
  [0.05, 10, 17, 0.1, 8, 14],
  [3, 3.5, 1.7, 10, 17, 8],
  [17, 8, 0.05, 10, 0.1, 14],
];
const H_P = [
  [1312, 1696, 5569, 124, 8283, 5886],
  [2329, 4135, 8307, 3736, 1004, 9991],
  [2348, 1451, 3522, 2883, 3047, 6650],
  [4047, 8828, 8732, 5743, 1091, 381],
].map((row) => row.map((v) => v * 1e-4));

/** Hartmann-6's minimum, to more digits than the usual -3.32237 */
export const HARTMANN6_OPT = -3.322368011415515;

export function hartmann6(): SyntheticProblem {
  return {
    id: 'hartmann6',
    suite: 'hartmann',
    title: 'Hartmann-6',
    bounds: Array.from({ length: 6 }, (_, i) => ({ name: `x${i + 1}`, low: 0, high: 1 })),
    fOpt: HARTMANN6_OPT,
    xOpt: [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573],
    evaluate(x) {
      let f = 0;
      for (let i = 0; i < 4; i++) {
        let s = 0;
        for (let j = 0; j < 6; j++) {
          const d = (x[j] as number) - ((H_P[i] as number[])[j] as number);
          s += ((H_A[i] as number[])[j] as number) * d * d;
        }
        f -= (H_ALPHA[i] as number) * Math.exp(-s);
      }
      return f;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// BBOB: the transformations of the 2009 definitions

type Vec = number[];
type Mat = number[][];

/** an orthogonal matrix: Gram-Schmidt on a matrix of normal deviates */
function rotation(rng: BenchRng, d: number): Mat {
  const m: Mat = Array.from({ length: d }, () => Array.from({ length: d }, () => rng.normal()));
  for (let i = 0; i < d; i++) {
    const row = m[i] as Vec;
    for (let j = 0; j < i; j++) {
      const prev = m[j] as Vec;
      let dot = 0;
      for (let k = 0; k < d; k++) dot += (row[k] as number) * (prev[k] as number);
      for (let k = 0; k < d; k++) row[k] = (row[k] as number) - dot * (prev[k] as number);
    }
    let norm = 0;
    for (let k = 0; k < d; k++) norm += (row[k] as number) ** 2;
    norm = Math.sqrt(norm);
    for (let k = 0; k < d; k++) row[k] = (row[k] as number) / norm;
  }
  return m;
}

function mul(m: Mat, x: readonly number[]): Vec {
  return m.map((row) => row.reduce((s, v, j) => s + v * (x[j] as number), 0));
}

function transpose(m: Mat): Mat {
  return (m[0] as Vec).map((_, j) => m.map((row) => row[j] as number));
}

function sub(x: readonly number[], y: readonly number[]): Vec {
  return x.map((v, i) => v - (y[i] as number));
}

/** Λ^α's diagonal: α^(i / (2(D-1))) */
function lambda(alpha: number, d: number): Vec {
  return Array.from({ length: d }, (_, i) => Math.pow(alpha, (0.5 * i) / (d - 1)));
}

function scale(diag: readonly number[], x: readonly number[]): Vec {
  return x.map((v, i) => v * (diag[i] as number));
}

/** T_osz, the oscillation that breaks symmetry and regularity, elementwise */
function tosz1(x: number): number {
  if (x === 0) return 0;
  const h = Math.log(Math.abs(x));
  const [c1, c2] = x > 0 ? [10, 7.9] : [5.5, 3.1];
  return Math.sign(x) * Math.exp(h + 0.049 * (Math.sin(c1 * h) + Math.sin(c2 * h)));
}

function tosz(x: readonly number[]): Vec {
  return x.map(tosz1);
}

/** T_asy^β: positive coordinates raised to 1 + β (i/(D-1)) √x_i */
function tasy(x: readonly number[], beta: number): Vec {
  const d = x.length;
  return x.map((v, i) => (v > 0 ? Math.pow(v, 1 + ((beta * i) / (d - 1)) * Math.sqrt(v)) : v));
}

/** the boundary penalty Σ max(0, |x_i| - 5)² (zero inside the box searched here) */
function fpen(x: readonly number[]): number {
  let s = 0;
  for (const v of x) {
    const e = Math.abs(v) - 5;
    if (e > 0) s += e * e;
  }
  return s;
}

function sumSq(x: readonly number[]): number {
  let s = 0;
  for (const v of x) s += v * v;
  return s;
}

function rastrigin(z: readonly number[]): number {
  let c = 0;
  for (const v of z) c += Math.cos(2 * Math.PI * v);
  return 10 * (z.length - c) + sumSq(z);
}

function rosenbrock(z: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < z.length - 1; i++) {
    const a = z[i] as number;
    const b = z[i + 1] as number;
    s += 100 * (a * a - b) ** 2 + (a - 1) ** 2;
  }
  return s;
}

function schaffer(z: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < z.length - 1; i++) {
    const t = (z[i] as number) ** 2 + (z[i + 1] as number) ** 2;
    s += Math.pow(t, 0.25) * (1 + Math.sin(50 * Math.pow(t, 0.1)) ** 2);
  }
  return (s / (z.length - 1)) ** 2;
}

/** round half up, as COCO's step ellipsoid and Katsuura round */
const round = (x: number): number => Math.floor(x + 0.5);

export const BBOB_NAMES = [
  'sphere', 'ellipsoidal', 'Rastrigin', 'Büche-Rastrigin', 'linear slope', 'attractive sector',
  'step ellipsoidal', 'Rosenbrock', 'rotated Rosenbrock', 'ellipsoidal rotated', 'discus',
  'bent cigar', 'sharp ridge', 'different powers', 'Rastrigin rotated', 'Weierstrass',
  'Schaffers F7', 'Schaffers F7 ill-conditioned', 'Griewank-Rosenbrock', 'Schwefel',
  'Gallagher 101 peaks', 'Gallagher 21 peaks', 'Katsuura', 'Lunacek bi-Rastrigin',
] as const;

/**
 * BBOB function `fn` (1..24), instance `instance`, in `d` dimensions on [-5, 5]^d: evaluate(x)
 * equals fOpt at xOpt (f20 up to 1e-9: its x_opt is the rounded Schwefel optimum).
 */
export function bbob(fn: number, instance: number, d = 5): SyntheticProblem {
  if (!Number.isInteger(fn) || fn < 1 || fn > 24) throw new Error(`bbob: no function f${fn}`);
  if (d < 2) throw new Error('bbob: at least 2 dimensions');
  const rng = new BenchRng(seedOf('bbob', fn, instance, d));
  // f_opt as COCO draws it: a rounded ratio of two normals, clipped to ±1000
  const fOpt = Math.min(1000, Math.max(-1000, Math.round((100 * 100 * rng.normal()) / rng.normal()) / 100));
  let xOpt: Vec = Array.from({ length: d }, () => {
    const v = (8 * Math.floor(1e4 * rng.uniform())) / 1e4 - 4;
    return v === 0 ? -1e-5 : v;
  });
  const R = rotation(rng, d);
  const Q = rotation(rng, d);
  const e = (i: number): number => i / (d - 1);
  const L10 = lambda(10, d);
  const L100 = lambda(100, d);
  let f: (x: readonly number[]) => number;

  switch (fn) {
    case 1:
      f = (x) => sumSq(sub(x, xOpt));
      break;
    case 2:
      f = (x) => tosz(sub(x, xOpt)).reduce((s, z, i) => s + Math.pow(1e6, e(i)) * z * z, 0);
      break;
    case 3:
      f = (x) => rastrigin(scale(L10, tasy(tosz(sub(x, xOpt)), 0.2)));
      break;
    case 4:
      xOpt = xOpt.map((v, i) => (i % 2 === 0 ? Math.abs(v) : v));
      f = (x) => {
        const z = tosz(sub(x, xOpt)).map((t, i) => t * Math.pow(10, 0.5 * e(i)) * (t > 0 && i % 2 === 0 ? 10 : 1));
        return rastrigin(z) + 100 * fpen(x);
      };
      break;
    case 5: {
      xOpt = xOpt.map((v) => (v < 0 ? -5 : 5));
      const s = xOpt.map((v, i) => Math.sign(v) * Math.pow(10, e(i)));
      f = (x) => x.reduce((acc, xi, i) => {
        const z = (xOpt[i] as number) * xi < 25 ? xi : (xOpt[i] as number);
        return acc + 5 * Math.abs(s[i] as number) - (s[i] as number) * z;
      }, 0);
      break;
    }
    case 6:
      f = (x) => {
        const z = mul(Q, scale(L10, mul(R, sub(x, xOpt))));
        const v = z.reduce((acc, zi, i) => acc + (zi * (xOpt[i] as number) > 0 ? 100 * zi : zi) ** 2, 0);
        return Math.pow(tosz1(v), 0.9);
      };
      break;
    case 7:
      f = (x) => {
        const zh = scale(L10, mul(R, sub(x, xOpt)));
        const zt = zh.map((v) => (Math.abs(v) > 0.5 ? round(v) : round(10 * v) / 10));
        const z = mul(Q, zt);
        const s = z.reduce((acc, zi, i) => acc + Math.pow(100, e(i)) * zi * zi, 0);
        return 0.1 * Math.max(Math.abs(zh[0] as number) / 1e4, s) + fpen(x);
      };
      break;
    case 8: {
      xOpt = xOpt.map((v) => 0.75 * v);
      const c = Math.max(1, Math.sqrt(d) / 8);
      f = (x) => rosenbrock(sub(x, xOpt).map((v) => c * v + 1));
      break;
    }
    case 9:
    case 19: {
      const c = Math.max(1, Math.sqrt(d) / 8);
      // z = c·R·x + 1/2 reaches z = 1 at x = Rᵀ(1/(2c))
      xOpt = mul(transpose(R), Array.from({ length: d }, () => 0.5 / c));
      const zOf = (x: readonly number[]): Vec => mul(R, x).map((v) => c * v + 0.5);
      if (fn === 9) {
        f = (x) => rosenbrock(zOf(x));
      } else {
        f = (x) => {
          const z = zOf(x);
          let acc = 0;
          for (let i = 0; i < d - 1; i++) {
            const a = z[i] as number;
            const s = 100 * (a * a - (z[i + 1] as number)) ** 2 + (a - 1) ** 2;
            acc += s / 4000 - Math.cos(s);
          }
          return (10 * acc) / (d - 1) + 10;
        };
      }
      break;
    }
    case 10:
      f = (x) => tosz(mul(R, sub(x, xOpt))).reduce((s, z, i) => s + Math.pow(1e6, e(i)) * z * z, 0);
      break;
    case 11:
      f = (x) => {
        const z = tosz(mul(R, sub(x, xOpt)));
        return 1e6 * (z[0] as number) ** 2 + sumSq(z.slice(1));
      };
      break;
    case 12:
      f = (x) => {
        const z = mul(R, tasy(mul(R, sub(x, xOpt)), 0.5));
        return (z[0] as number) ** 2 + 1e6 * sumSq(z.slice(1));
      };
      break;
    case 13:
      f = (x) => {
        const z = mul(Q, scale(L10, mul(R, sub(x, xOpt))));
        return (z[0] as number) ** 2 + 100 * Math.sqrt(sumSq(z.slice(1)));
      };
      break;
    case 14:
      f = (x) => Math.sqrt(mul(R, sub(x, xOpt)).reduce((s, z, i) => s + Math.pow(Math.abs(z), 2 + 4 * e(i)), 0));
      break;
    case 15:
      f = (x) => rastrigin(mul(R, scale(L10, mul(Q, tasy(tosz(mul(R, sub(x, xOpt))), 0.2)))));
      break;
    case 16: {
      const a = Array.from({ length: 12 }, (_, k) => Math.pow(0.5, k));
      const b = Array.from({ length: 12 }, (_, k) => Math.pow(3, k));
      const f0 = a.reduce((s, ak, k) => s + ak * Math.cos(Math.PI * (b[k] as number)), 0);
      const L = lambda(0.01, d);
      f = (x) => {
        const z = mul(R, scale(L, mul(Q, tosz(mul(R, sub(x, xOpt))))));
        let s = 0;
        for (const zi of z) for (let k = 0; k < 12; k++) s += (a[k] as number) * Math.cos(2 * Math.PI * (b[k] as number) * (zi + 0.5));
        return 10 * (s / d - f0) ** 3 + (10 / d) * fpen(x);
      };
      break;
    }
    case 17:
    case 18: {
      const L = fn === 17 ? L10 : lambda(1000, d);
      f = (x) => schaffer(scale(L, mul(Q, tasy(mul(R, sub(x, xOpt)), 0.5)))) + 10 * fpen(x);
      break;
    }
    case 20: {
      const signs = Array.from({ length: d }, () => rng.sign());
      xOpt = signs.map((s) => (s * 4.2096874633) / 2);
      const twoAbs = xOpt.map((v) => 2 * Math.abs(v));
      f = (x) => {
        const xh = x.map((v, i) => 2 * (signs[i] as number) * v);
        const zh = xh.map((v, i) => (i === 0 ? v : v + 0.25 * ((xh[i - 1] as number) - (twoAbs[i - 1] as number))));
        const z = scale(L10, sub(zh, twoAbs)).map((v, i) => 100 * (v + (twoAbs[i] as number)));
        const s = z.reduce((acc, zi) => acc + zi * Math.sin(Math.sqrt(Math.abs(zi))), 0);
        return -s / (100 * d) + 4.189828872724339 + 100 * fpen(z.map((v) => v / 100));
      };
      break;
    }
    case 21:
    case 22: {
      const peaks = fn === 21 ? 101 : 21;
      const spread = fn === 21 ? 5 : 4.9;
      const y: Vec[] = Array.from({ length: peaks }, (_, i) => Array.from({ length: d }, () => (i === 0 ? 0.8 : 1) * rng.range(-spread, spread)));
      const w = Array.from({ length: peaks }, (_, i) => (i === 0 ? 10 : 1.1 + (8 * (i - 1)) / (peaks - 2)));
      const order = rng.permutation(peaks - 1);
      const alpha = Array.from({ length: peaks }, (_, i) => (i === 0 ? (peaks === 101 ? Math.sqrt(1000) : 1000) : Math.pow(1000, (order[i - 1] as number) / (peaks - 2))));
      // each peak's diagonal C_i = Λ^α_i / α_i^(1/4), its exponents in a random order
      const C: Vec[] = alpha.map((al) => rng.permutation(d).map((j) => Math.pow(al, j / (d - 1) - 0.5)));
      const ry = y.map((yi) => mul(R, yi));
      xOpt = y[0] as Vec;
      f = (x) => {
        const rx = mul(R, x);
        let best = 0;
        for (let i = 0; i < peaks; i++) {
          const yi = ry[i] as Vec;
          const ci = C[i] as Vec;
          let q = 0;
          for (let j = 0; j < d; j++) q += (ci[j] as number) * ((rx[j] as number) - (yi[j] as number)) ** 2;
          best = Math.max(best, (w[i] as number) * Math.exp((-0.5 / d) * q));
        }
        return tosz1(10 - best) ** 2 + fpen(x);
      };
      break;
    }
    case 23:
      f = (x) => {
        const z = mul(Q, scale(L100, mul(R, sub(x, xOpt))));
        let prod = 1;
        z.forEach((zi, i) => {
          let s = 0;
          for (let j = 1; j <= 32; j++) {
            const p = Math.pow(2, j);
            s += Math.abs(p * zi - round(p * zi)) / p;
          }
          prod *= Math.pow(1 + (i + 1) * s, 10 / Math.pow(d, 1.2));
        });
        return (10 / (d * d)) * (prod - 1) + fpen(x);
      };
      break;
    case 24: {
      const mu0 = 2.5;
      const s = 1 - 1 / (2 * Math.sqrt(d + 20) - 8.2);
      const mu1 = -Math.sqrt((mu0 * mu0 - 1) / s);
      const signs = Array.from({ length: d }, () => rng.sign());
      xOpt = signs.map((sg) => (sg * mu0) / 2);
      f = (x) => {
        const xh = x.map((v, i) => 2 * (signs[i] as number) * v);
        const z = mul(Q, scale(L100, mul(R, xh.map((v) => v - mu0))));
        let c = 0;
        for (const zi of z) c += Math.cos(2 * Math.PI * zi);
        const a = xh.reduce((acc, v) => acc + (v - mu0) ** 2, 0);
        const b = d + s * xh.reduce((acc, v) => acc + (v - mu1) ** 2, 0);
        return Math.min(a, b) + 10 * (d - c) + 1e4 * fpen(x);
      };
      break;
    }
    default:
      throw new Error(`bbob: no function f${fn}`);
  }
  const raw = f;
  const id = `bbob-f${String(fn).padStart(2, '0')}`;
  return {
    id,
    suite: 'bbob',
    title: `f${fn} ${BBOB_NAMES[fn - 1]}`,
    bounds: Array.from({ length: d }, (_, i) => ({ name: `x${i}`, low: -5, high: 5 })),
    fOpt,
    xOpt,
    evaluate: (x) => raw(x) + fOpt,
  };
}

/**
 * The median value of `n` points drawn uniformly from the problem's box (log-uniformly on log
 * bounds), seeded by the problem: what a search that learns nothing typically gets with one trial.
 * score.ts normalises regret by it.
 */
export function typicalValue(p: SyntheticProblem, n = 1001): number {
  const rng = new BenchRng(seedOf('typical', p.id, p.fOpt));
  const vs: number[] = [];
  for (let k = 0; k < n; k++) {
    const x = p.bounds.map((b) => (b.log ? Math.exp(rng.range(Math.log(b.low), Math.log(b.high))) : rng.range(b.low, b.high)));
    vs.push(p.evaluate(x));
  }
  vs.sort((a, b) => a - b);
  return vs[Math.floor(n / 2)] as number;
}
