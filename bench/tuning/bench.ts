// bench/tuning: Skiff's search algorithms against Optuna's samplers, in the same run, on the same
// objectives (problems.ts, svm.ts), under the same ask/tell protocol (runner.ts), scored by
// normalised regret and Borda count (score.ts). bench/tuning.ts is the command; bench/run.ts runs it
// as its section 10.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { Contender } from './contenders.js';
import { ALL_CONTENDERS, OPTUNA_SAMPLERS, OptunaWorker, SKIFF_ALGORITHMS, skiffContender } from './contenders.js';
import type { Problem, Suite, SyntheticProblem } from './problems.js';
import { bbob, branin, hartmann6, typicalValue } from './problems.js';
import type { Mode, RunRecord } from './runner.js';
import { PARALLEL, prefixRun, runStudy } from './runner.js';
import { seedOf } from './rng.js';
import { bestSoFarArea, bordaPoints, median, normalisedRegret, pickAlpha, smallestP } from './score.js';
import { SvmTask } from './svm.js';

export interface TuningOptions {
  seeds: number;
  budgets: number[];
  suites: Suite[];
  modes: Mode[];
  contenders: string[];
  /** which BBOB functions (1..24) the bbob suite runs */
  bbobFunctions: number[];
  /** write every run and the summary here as JSON */
  report?: string;
}

export const ALL_SUITES: Suite[] = ['branin', 'hartmann', 'bbob', 'svm'];
const ALL_BBOB = Array.from({ length: 24 }, (_, i) => i + 1);

/** the issue's matrix: 10 seeds, 50 and 200 trials, sequential and 4 in parallel, every suite */
export const FULL: TuningOptions = { seeds: 10, budgets: [50, 200], suites: ALL_SUITES, modes: ['seq', 'par4'], contenders: ALL_CONTENDERS, bbobFunctions: ALL_BBOB };

/**
 * A few minutes on a 2-core machine, nearly all of it Optuna's GP: 3 seeds, 30 trials, sequential,
 * Branin, Hartmann-6 and six BBOB functions of different kinds (separable, ill-conditioned,
 * multimodal with and without structure); no SVM, whose cross-validations would take longer than
 * the rest together. Too few seeds for any Borda win to be significant: it checks that everything
 * runs and gives a first look.
 */
export const QUICK: TuningOptions = { seeds: 3, budgets: [30], suites: ['branin', 'hartmann', 'bbob'], modes: ['seq'], contenders: ALL_CONTENDERS, bbobFunctions: [1, 8, 10, 15, 21, 23] };

type Row = (label: string, value: string, note?: string) => void;

export interface TuningContext {
  /** run.ts's row printer: the headline results also go through it (with the load average) */
  row?: Row;
  /** the trial overhead measured by trialOverheadBench, when it ran, for the aims */
  overheadMs?: number;
  /** where progress goes (stderr by default) */
  progress?: (line: string) => void;
}

/** a run with its score: normalised regret (synthetic problems) or the best error itself (the SVM) */
interface Scored extends RunRecord {
  score: number;
  /** the best-so-far area of the score per trial: Borda's tie-breaker */
  scoreArea: number;
}

export interface AimResult {
  aim: string;
  met: boolean | undefined;
  detail: string;
}

export interface TuningSummary {
  runs: Scored[];
  aims: AimResult[];
}

function problemsFor(suite: Suite, seed: number, opts: TuningOptions, svm: SvmTask | undefined): Problem[] {
  switch (suite) {
    case 'branin':
      return [branin()];
    case 'hartmann':
      return [hartmann6()];
    case 'bbob':
      // the seed's index is the instance: each seed meets a different rotation and optimum
      return opts.bbobFunctions.map((fn) => bbob(fn, seed));
    case 'svm':
      return svm ? [svm.problem()] : [];
  }
}

const fmtScore = (v: number): string => (!Number.isFinite(v) ? '—' : v === 0 ? '0' : v < 1e-3 || v >= 1e4 ? v.toExponential(2) : v.toPrecision(3));
const fmtMs = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '—' : v < 10 ? v.toFixed(2) : v.toFixed(1));
const pad = (s: string, n: number): string => s.padStart(n);

/** median ms per suggestion over the suggestions numbered (k-9)..k (1-based), pooled over runs */
function latencyAt(runs: readonly RunRecord[], k: number): number | undefined {
  const xs: number[] = [];
  for (const r of runs) if (r.latencyMs.length >= k) xs.push(...r.latencyMs.slice(k - 10, k));
  return xs.length ? median(xs) : undefined;
}

function fmtDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export async function tuningBench(opts: TuningOptions, ctx: TuningContext = {}): Promise<TuningSummary> {
  const progress = ctx.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const load0 = loadavg();
  const started = performance.now();
  const maxBudget = Math.max(...opts.budgets);
  const wantOptuna = opts.contenders.filter((c) => c in OPTUNA_SAMPLERS);
  for (const c of opts.contenders) if (!(c in SKIFF_ALGORITHMS) && !(c in OPTUNA_SAMPLERS)) throw new Error(`unknown contender ${c} (known: ${ALL_CONTENDERS.join(', ')})`);

  const optuna = wantOptuna.length ? new OptunaWorker() : undefined;
  const svm = opts.suites.includes('svm') ? new SvmTask() : undefined;
  const runs: Scored[] = [];
  try {
    if (optuna) await optuna.start(wantOptuna.map((c) => OPTUNA_SAMPLERS[c] as string));
    const contenders: Contender[] = opts.contenders.map((c) => (c in SKIFF_ALGORITHMS ? skiffContender(c) : (optuna as OptunaWorker).contender(c)));
    // Skiff's algorithms warm up too (V8 compiles the hot paths on first use), on a problem not measured
    for (const c of contenders.filter((k) => k.library === 'skiff')) await runStudy(c, bbob(1, 0, 2), { seed: 0, studySeed: 0, budget: 14, mode: 'seq' });

    console.log(`\nbench/tuning: ${opts.contenders.join(' ')}`);
    console.log(`  ${opts.seeds} seeds, budgets ${opts.budgets.join(', ')}, modes ${opts.modes.join(', ')}, suites ${opts.suites.join(', ')}${opts.suites.includes('bbob') ? ` (BBOB f${opts.bbobFunctions.join(', f')} at 5-D)` : ''}`);
    console.log(`  node ${process.version}, ${cpus().length} cores${optuna?.versions ? `; optuna ${optuna.versions.optuna}, torch ${optuna.versions.torch} on ${optuna.versions.threads} thread(s)` : ''}`);
    console.log(`  load average at start: ${load0.map((v) => v.toFixed(2)).join(' ')}`);

    const typical = new Map<string, number>();
    const problemCount = opts.suites.reduce((n, s) => n + (s === 'bbob' ? opts.bbobFunctions.length : s === 'svm' && !svm ? 0 : 1), 0);
    const studiesPerCell = contenders.reduce((n, c) => n + (c.seesBudget ? opts.budgets.length : 1), 0);
    const total = opts.modes.length * problemCount * opts.seeds * studiesPerCell;
    let done = 0;
    for (const mode of opts.modes) {
      for (const suite of opts.suites) {
        for (let seed = 1; seed <= opts.seeds; seed++) {
          for (const problem of problemsFor(suite, seed, opts, svm)) {
            const key = `${problem.id}#${seed}`;
            if (problem.fOpt !== undefined && !typical.has(key)) typical.set(key, typicalValue(problem as SyntheticProblem));
            const score = (values: readonly number[]): number[] => {
              const t = typical.get(key);
              let best = Infinity;
              return values.map((v) => {
                best = Math.min(best, v);
                return problem.fOpt !== undefined && t !== undefined ? normalisedRegret(best, problem.fOpt, t) : best;
              });
            };
            for (const c of contenders) {
              const budgets = c.seesBudget ? opts.budgets : [maxBudget];
              for (const budget of budgets) {
                const r = await runStudy(c, problem, { seed, studySeed: seedOf(problem.id, seed), budget, mode });
                done++;
                const derived = c.seesBudget ? [r] : opts.budgets.map((b) => (b === maxBudget ? r : prefixRun(r, b)));
                for (const d of derived) {
                  const curve = score(d.values);
                  runs.push({ ...d, score: curve[curve.length - 1] as number, scoreArea: bestSoFarArea(curve) });
                }
                const elapsed = performance.now() - started;
                const final = score(r.values).pop() as number;
                progress(`[tuning ${done}/${total} ${fmtDuration(elapsed)}, ~${fmtDuration((elapsed / done) * (total - done))} left] ${mode} ${problem.id} seed ${seed} ${c.name} ${budget} trials: ${problem.fOpt !== undefined ? 'regret' : 'error'} ${fmtScore(final)} in ${fmtDuration(r.wallMs)}`);
              }
            }
          }
        }
      }
    }
  } finally {
    await optuna?.close();
    await svm?.close();
  }

  const aims = report(runs, opts, ctx);
  const load1 = loadavg();
  console.log(`\n  load average at end: ${load1.map((v) => v.toFixed(2)).join(' ')}; ${fmtDuration(performance.now() - started)} in all${svm ? `; ${svm.evaluations} SVM cross-validations took ${fmtDuration(svm.evaluationMs)}` : ''}`);
  if (opts.report) {
    writeFileSync(opts.report, JSON.stringify({ options: opts, loadavg: { start: load0, end: load1 }, node: process.version, cpus: cpus().length, aims, runs }));
    console.log(`  every run written to ${opts.report}`);
  }
  return { runs, aims };
}

/** the tables, and whether each aim is met */
function report(runs: readonly Scored[], opts: TuningOptions, ctx: TuningContext): AimResult[] {
  const aims: AimResult[] = [];
  const contenders = opts.contenders;
  const nameWidth = Math.max(9, ...contenders.map((c) => c.length));
  const alpha = pickAlpha(contenders.length);
  for (const mode of opts.modes) {
    for (const budget of opts.budgets) {
      const cell = runs.filter((r) => r.mode === mode && r.budget === budget);
      if (cell.length === 0) continue;
      console.log(`\n── ${budget} trials, ${mode === 'seq' ? 'sequential' : `${PARALLEL[mode]} in parallel (the oldest finishes first)`} ──`);
      for (const suite of opts.suites) {
        const suiteRuns = cell.filter((r) => r.suite === suite);
        if (suiteRuns.length === 0) continue;
        const problems = [...new Set(suiteRuns.map((r) => r.problem))];
        const byContender = new Map<string, Scored[]>(contenders.map((c) => [c, suiteRuns.filter((r) => r.contender === c)]));
        // the suite's figure: the median over problems of each problem's median over seeds
        const figure = new Map<string, number>();
        for (const [c, rs] of byContender) figure.set(c, median(problems.map((p) => median(rs.filter((r) => r.problem === p).map((r) => r.score)))));
        const borda = new Map<string, number>(contenders.map((c) => [c, 0]));
        const firsts = new Map<string, number>(contenders.map((c) => [c, 0]));
        for (const p of problems) {
          const points = bordaPoints(contenders.map((c) => {
            const rs = (byContender.get(c) as Scored[]).filter((r) => r.problem === p);
            return { contender: c, metrics: [rs.map((r) => r.score), rs.map((r) => r.scoreArea)] };
          }));
          const top = Math.max(...points.values());
          for (const [c, v] of points) {
            borda.set(c, (borda.get(c) as number) + v);
            if (v === top && top > 0) firsts.set(c, (firsts.get(c) as number) + 1);
          }
        }
        const what = suite === 'svm' ? 'best error' : 'norm. regret';
        const seeds = Math.min(...problems.map((p) => suiteRuns.filter((r) => r.problem === p && r.contender === contenders[0]).length));
        console.log(`\n  ${suite}: ${problems.length} problem(s) × ${seeds} seed(s); ${what}: median over problems of the median over seeds${suite === 'svm' ? '' : ' (0 = optimum, 1 = a typical random point)'}`);
        console.log(`  ${'contender'.padEnd(nameWidth)} ${pad(what, 12)} ${pad('Borda', 6)} ${pad('firsts', 6)} ${pad('ms/suggest @50', 14)} ${pad('@200', 8)} ${pad(`@${budget}`, 8)}`);
        for (const c of contenders) {
          const rs = byContender.get(c) as Scored[];
          console.log(`  ${c.padEnd(nameWidth)} ${pad(fmtScore(figure.get(c) as number), 12)} ${pad(String(borda.get(c)), 6)} ${pad(String(firsts.get(c)), 6)} ${pad(fmtMs(latencyAt(rs, 50)), 14)} ${pad(fmtMs(latencyAt(rs, 200)), 8)} ${pad(fmtMs(latencyAt(rs, budget)), 8)}`);
        }
        const ratios: string[] = [];
        for (const [s, o] of [['S:tpe', 'O:tpe'], ['S:mv-tpe', 'O:tpe'], ['S:gp', 'O:gp'], ['S:cmaes', 'O:cmaes'], ['S:random', 'O:random']] as const) {
          if (!figure.has(s) || !figure.has(o)) continue;
          const fs = figure.get(s) as number;
          const fo = figure.get(o) as number;
          ratios.push(`${s}/${o} ${fo === 0 ? (fs === 0 ? '1 (both 0)' : '∞') : (fs / fo).toFixed(2)}`);
          if (s !== 'S:cmaes' && s !== 'S:random') {
            aims.push({ aim: `${s} at or below ${o}'s median ${suite === 'svm' ? 'error' : 'regret'}: ${suite}, ${budget} trials, ${mode}`, met: fs <= fo, detail: `${fmtScore(fs)} vs ${fmtScore(fo)}` });
          }
        }
        if (ratios.length) console.log(`  ratios: ${ratios.join(', ')}`);
        if (seeds > 0 && smallestP(seeds) >= alpha) console.log(`  (with ${seeds} seeds no Mann-Whitney p-value can fall below alpha ${alpha}: Borda points need more seeds)`);
      }
    }
  }

  // latency over every problem of the largest budget, by mode, at ~50 and ~200 trials and at its end
  const maxBudget = Math.max(...opts.budgets);
  const marks = [...new Set([50, 200, maxBudget])].filter((k) => k <= maxBudget && k >= 10).sort((a, b) => a - b);
  console.log(`\n── suggestion latency: median ms per suggestion over the 10 suggestions up to ${marks.map((k) => `#${k}`).join(', ')}, every problem (${maxBudget}-trial runs) ──`);
  console.log(`  ${'contender'.padEnd(nameWidth)} ${opts.modes.flatMap((m) => marks.map((k) => pad(`${m} @${k}`, 11))).join(' ')}`);
  const longest = (c: string, m: Mode): Scored[] => runs.filter((r) => r.contender === c && r.mode === m && r.budget === maxBudget);
  for (const c of contenders) {
    console.log(`  ${c.padEnd(nameWidth)} ${opts.modes.flatMap((m) => marks.map((k) => pad(fmtMs(latencyAt(longest(c, m), k)), 11))).join(' ')}`);
  }
  // judged where Optuna's GP has been modelling for a while (its first 10 trials are random)
  for (const m of opts.modes) {
    for (const k of marks.filter((x) => x >= 30)) {
      const s = latencyAt(longest('S:gp', m), k);
      const o = latencyAt(longest('O:gp', m), k);
      if (s === undefined || o === undefined) continue;
      aims.push({ aim: `S:gp suggests faster than O:gp at ~${k} trials (${m})`, met: s < o, detail: `${fmtMs(s)} ms vs ${fmtMs(o)} ms` });
    }
  }
  aims.push(ctx.overheadMs !== undefined
    ? { aim: 'trial start overhead under 100 ms beyond the payload', met: ctx.overheadMs < 100, detail: `${ctx.overheadMs.toFixed(1)} ms` }
    : { aim: 'trial start overhead under 100 ms beyond the payload', met: undefined, detail: 'not measured here: bench/run.ts --only 10, or --overhead' });

  console.log('\n── aims ──');
  for (const a of aims) console.log(`  ${a.met === undefined ? '  -  ' : a.met ? ' met ' : ' MISS'}  ${a.aim}: ${a.detail}`);
  if (ctx.row) {
    const met = aims.filter((a) => a.met === true).length;
    const judged = aims.filter((a) => a.met !== undefined).length;
    ctx.row('tuning aims met', `${met}/${judged}`, met === judged ? 'all' : 'the misses are listed above');
  }
  return aims;
}
