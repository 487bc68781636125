// bench/tuning: Skiff's search algorithms against Optuna's, in the same run (bench/tuning/README.md).
// Usage: node dist/bench/tuning.js [--quick] [--seeds N] [--budgets 50,200] [--suites branin,hartmann,bbob,svm]
//        [--modes seq,par4] [--contenders S:tpe,O:tpe,...] [--bbob 1,8,15] [--report FILE.json] [--overhead]
// No flags: the full matrix (10 seeds, 50 and 200 trials, sequential and 4 in parallel, every
// suite; many hours on 2 cores). --quick: a few minutes. Flags given with --quick override its choices.
// --overhead also measures a Katib trial's cost beyond its payload (bench/tuning-overhead.ts).
import type { Suite } from './tuning/problems.js';
import type { Mode } from './tuning/runner.js';
import type { TuningOptions } from './tuning/bench.js';
import { ALL_SUITES, FULL, QUICK, tuningBench } from './tuning/bench.js';

const args = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
  return v;
};
const list = (name: string): string[] | undefined => value(name)?.split(',').map((s) => s.trim()).filter(Boolean);
const numbers = (name: string): number[] | undefined => list(name)?.map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: ${s} is not a positive integer`);
  return n;
});

const known = new Set(['quick', 'overhead', 'seeds', 'budgets', 'suites', 'modes', 'contenders', 'bbob', 'report']);
for (const a of args) if (a.startsWith('--') && !known.has(a.slice(2))) throw new Error(`unknown flag ${a}`);

const base = args.includes('--quick') ? QUICK : FULL;
const suites = list('suites');
for (const s of suites ?? []) if (!ALL_SUITES.includes(s as Suite)) throw new Error(`--suites: no suite ${s} (known: ${ALL_SUITES.join(', ')})`);
const modes = list('modes');
for (const m of modes ?? []) if (m !== 'seq' && m !== 'par4') throw new Error(`--modes: no mode ${m} (seq, par4)`);
const bbobFunctions = numbers('bbob');
for (const f of bbobFunctions ?? []) if (f > 24) throw new Error(`--bbob: f${f} does not exist (1..24)`);
const opts: TuningOptions = {
  seeds: numbers('seeds')?.[0] ?? base.seeds,
  budgets: numbers('budgets') ?? base.budgets,
  suites: (suites as Suite[] | undefined) ?? base.suites,
  modes: (modes as Mode[] | undefined) ?? base.modes,
  contenders: list('contenders') ?? base.contenders,
  bbobFunctions: bbobFunctions ?? base.bbobFunctions,
  ...(value('report') ? { report: value('report') as string } : {}),
};

let overheadMs: number | undefined;
if (args.includes('--overhead')) {
  const { trialOverheadBench } = await import('./tuning-overhead.js');
  console.log(`Katib trial overhead (bench/tuning-overhead.ts)`);
  overheadMs = await trialOverheadBench((label, v, note = '') => console.log(`  ${label.padEnd(44)} ${v.padStart(14)}  ${note}`), 10);
}
await tuningBench(opts, overheadMs !== undefined ? { overheadMs } : {});
