// Scoring bench/tuning's results.
//
// Normalised regret. A run's regret is best_found - f_opt. Raw regrets are not comparable across
// problems (f12's values reach 1e9, Branin's 300), so each is divided by the regret of a TYPICAL
// RANDOM POINT of the same problem instance: the median value of 1001 points drawn uniformly from
// its box (problems.ts `typicalValue`). So 1 means "no better than one random guess", 0 means the
// optimum was found, and 0.01 means the search closed 99 % of the gap a random guess leaves. The
// reference depends on the problem alone, not on which contenders ran, on the budget or on the
// seeds, so numbers from different runs and budgets are comparable (unlike min-max scaling over the
// contenders of one run, or dividing by random search's best, which is itself noisy and is near 0
// on easy problems). Per suite, a contender's figure is the median over problems of its median over
// seeds (each problem weighs the same). The SVM has no known optimum: its figure is the median best
// error (1 - accuracy) itself.
//
// Borda count, as Optuna's benchmark reports compute it (optuna#2964, after Dewancker et al. 2016,
// "A Strategy for Ranking Optimizers using Multiple Criteria"): on each problem, for every ordered
// pair (a, b) of contenders, a one-sided Mann-Whitney U test over the seeds asks whether a's best
// values are smaller than b's; a win counts when p < alpha, alpha chosen so that the chance of any
// false win among all pairs stays under 5 %. Ties in wins are broken by a second metric (the area
// under the best-so-far curve, i.e. how early good values came). A contender's points on the problem
// are the number of contenders with fewer wins; a suite's points are the sum over its problems.

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** (best - f_opt) / (typical - f_opt), never below 0 (a rounded f_opt may sit a hair above the true minimum) */
export function normalisedRegret(best: number, fOpt: number, typical: number): number {
  const gap = typical - fOpt;
  if (!(gap > 0)) throw new Error(`normalisedRegret: the typical value ${typical} is not above the optimum ${fOpt}`);
  return Math.max(0, best - fOpt) / gap;
}

/** the area under the best-so-far curve, per trial: lower means good values came early */
export function bestSoFarArea(values: readonly number[]): number {
  let best = Infinity;
  let sum = 0;
  for (const v of values) {
    best = Math.min(best, v);
    sum += best;
  }
  return values.length ? sum / values.length : NaN;
}

/** the complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7) */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? r : 2 - r;
}

/** P(Z > z) for a standard normal Z */
function normalSf(z: number): number {
  if (z === Infinity) return 0;
  if (z === -Infinity) return 1;
  return 0.5 * erfc(z / Math.SQRT2);
}

/** ranks 1..n with ties given their average rank; also the sizes of the tie groups */
function averageRanks(xs: readonly number[]): { ranks: number[]; ties: number[] } {
  const order = xs.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(xs.length);
  const ties: number[] = [];
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && (order[j + 1] as readonly [number, number])[0] === (order[i] as readonly [number, number])[0]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[(order[k] as readonly [number, number])[1]] = r;
    ties.push(j - i + 1);
    i = j + 1;
  }
  return { ranks, ties };
}

/** how many of the C(n1+n2, n1) orderings give each U = 0..n1·n2 (no ties) */
function exactUCounts(n1: number, n2: number): number[] {
  // c[i][j][u]: orderings of i values of the first sample and j of the second with statistic u;
  // the largest value belongs to one sample or the other: with the first it beats all j others
  let prev: number[][] = Array.from({ length: n2 + 1 }, () => [1]); // i = 0: U = 0 only
  for (let i = 1; i <= n1; i++) {
    const cur: number[][] = [];
    for (let j = 0; j <= n2; j++) {
      const out = new Array<number>(i * j + 1).fill(0);
      const a = prev[j] as number[];
      a.forEach((c, u) => (out[u + j] = (out[u + j] as number) + c));
      if (j > 0) (cur[j - 1] as number[]).forEach((c, u) => (out[u] = (out[u] as number) + c));
      cur.push(out);
    }
    prev = cur;
  }
  return prev[n2] as number[];
}

/**
 * The one-sided Mann-Whitney U test that `a` tends to be smaller than `b`: its p-value, as
 * scipy.stats.mannwhitneyu(a, b, alternative='less') gives it (exact distribution when there are
 * no ties and a sample has at most 8 values, else the normal approximation with tie and continuity
 * corrections).
 */
export function mannWhitneyLess(a: readonly number[], b: readonly number[]): number {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) throw new Error('mannWhitneyLess: empty sample');
  const { ranks, ties } = averageRanks([...a, ...b]);
  let r1 = 0;
  for (let i = 0; i < n1; i++) r1 += ranks[i] as number;
  const u1 = r1 - (n1 * (n1 + 1)) / 2;
  // a small U1 (a's values below b's) is a large U2: p = P(U ≥ U2)
  const u2 = n1 * n2 - u1;
  const tied = ties.some((t) => t > 1);
  if ((n1 <= 8 || n2 <= 8) && !tied) {
    const counts = exactUCounts(n1, n2);
    const total = counts.reduce((s, c) => s + c, 0);
    let tail = 0;
    for (let u = Math.round(u2); u < counts.length; u++) tail += counts[u] as number;
    return Math.min(1, tail / total);
  }
  const n = n1 + n2;
  const tieTerm = ties.reduce((s, t) => s + t * t * t - t, 0);
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  if (sd === 0) return 1;
  return Math.min(1, Math.max(0, normalSf((u2 - (n1 * n2) / 2 - 0.5) / sd)));
}

/** the per-pair significance level for k contenders: the largest candidate keeping P(any false win) < 5 % */
export function pickAlpha(k: number): number {
  const pairs = (k * (k - 1)) / 2;
  const candidates: number[] = [];
  for (const scale of [1, 10, 100, 1000]) for (const c of [0.075, 0.05, 0.025, 0.01]) candidates.push(c / scale);
  for (const c of candidates) if (1 - Math.pow(1 - c, pairs) < 0.05) return c;
  return candidates[candidates.length - 1] as number;
}

/** one contender's results on one problem, a value per seed for each metric, lower better */
export interface ProblemSamples {
  contender: string;
  /** in precedence order: the first decides, later ones break ties in wins */
  metrics: number[][];
}

/**
 * Borda points on one problem: wins from pairwise one-sided Mann-Whitney tests, metric by metric
 * until no two contenders have the same number of wins; each contender scores the number of
 * contenders with fewer wins.
 */
export function bordaPoints(samples: readonly ProblemSamples[]): Map<string, number> {
  const alpha = pickAlpha(samples.length);
  const wins = new Map<string, number>(samples.map((s) => [s.contender, 0]));
  const metricCount = Math.max(0, ...samples.map((s) => s.metrics.length));
  for (let m = 0; m < metricCount; m++) {
    for (const a of samples) {
      for (const b of samples) {
        if (a === b) continue;
        const xa = a.metrics[m];
        const xb = b.metrics[m];
        if (!xa || !xb || xa.length === 0 || xb.length === 0) continue;
        if (mannWhitneyLess(xa, xb) < alpha) wins.set(a.contender, (wins.get(a.contender) as number) + 1);
      }
    }
    if (new Set(wins.values()).size === wins.size) break;
  }
  const all = [...wins.values()];
  return new Map([...wins].map(([c, w]) => [c, all.filter((x) => x < w).length]));
}

/** the smallest p-value `n` seeds per side can reach, to say when no win can be significant */
export function smallestP(n: number): number {
  return mannWhitneyLess(Array.from({ length: n }, (_, i) => i), Array.from({ length: n }, (_, i) => n + i));
}
