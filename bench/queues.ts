// The queue engine's benchmark on its own (bench/queues/engine.ts says what it measures), then the
// real controllers on a SQLite store (bench/queues/controllers.ts):
//   node dist/bench/queues.js [--workloads 15000] [--freed-samples 50] [--no-baseline] [--json FILE]
//                             [--jobs 15000] [--wave 1000] [--no-controllers]
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { queuesControllersBench } from './queues/controllers.js';
import { queuesEngineBench } from './queues/engine.js';

const args = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const known = new Set(['workloads', 'freed-samples', 'no-baseline', 'json', 'jobs', 'wave', 'no-controllers']);
for (const a of args) if (a.startsWith('--') && !known.has(a.slice(2))) throw new Error(`unknown flag ${a}`);

function row(label: string, v: string, note = ''): void {
  console.log(`  ${label.padEnd(44)} ${v.padStart(14)}  ${note}${note ? '; ' : ''}load ${loadavg()[0]?.toFixed(2)}`);
}

const result = await queuesEngineBench(row, {
  workloads: Number(value('workloads') ?? 15_000),
  freedSamples: Number(value('freed-samples') ?? 50),
  baseline: !args.includes('--no-baseline'),
});
const controllers = args.includes('--no-controllers') ? undefined : await queuesControllersBench(row, {
  jobs: Number(value('jobs') ?? 15_000),
  wave: Number(value('wave') ?? 1000),
  freedSamples: Number(value('freed-samples') ?? 50),
});
const json = value('json');
if (json) writeFileSync(json, JSON.stringify({ engine: result, controllers }, null, 2));
