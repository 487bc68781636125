import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { existsSync } from 'node:fs';
import type { Asked, Contender, Study } from './contenders.js';
import { OptunaWorker, skiffContender } from './contenders.js';
import { bbob, branin } from './problems.js';
import { prefixRun, runStudy } from './runner.js';
import { venvPython } from './worker.js';

/** a contender that hands out points in order and records what it is asked and told */
function recording(log: string[], holdBack = false): Contender {
  return {
    name: 'T:rec',
    library: 'optuna',
    seesBudget: false,
    open: async (): Promise<Study> => {
      let next = 0;
      let told = 0;
      return {
        async ask(n: number): Promise<Asked[]> {
          // like CMA-ES waiting for its generation: nothing past the first 5 until they are all told
          const room = holdBack && next >= 5 && told < 5 ? 0 : n;
          log.push(`ask ${n}→${room}`);
          return Array.from({ length: room }, () => ({ id: next, x: [next++, 0], ms: 1 }));
        },
        async tell(id: number): Promise<void> {
          told++;
          log.push(`tell ${id}`);
        },
        async close(): Promise<void> {
          log.push('close');
        },
      };
    },
  };
}

describe('the runner', () => {
  it('seq asks one, tells it, asks the next', async () => {
    const log: string[] = [];
    const r = await runStudy(recording(log), branin(), { seed: 1, studySeed: 1, budget: 3, mode: 'seq' });
    assert.deepEqual(log, ['ask 1→1', 'tell 0', 'ask 1→1', 'tell 1', 'ask 1→1', 'tell 2', 'close']);
    assert.equal(r.values.length, 3);
    assert.equal(r.best, Math.min(...r.values));
  });

  it('par4 keeps four in flight, finishes the oldest first and refills one at a time', async () => {
    const log: string[] = [];
    await runStudy(recording(log), branin(), { seed: 1, studySeed: 1, budget: 6, mode: 'par4' });
    assert.deepEqual(log, ['ask 4→4', 'tell 0', 'ask 1→1', 'tell 1', 'ask 1→1', 'tell 2', 'tell 3', 'tell 4', 'tell 5', 'close']);
  });

  it('lets trials finish when the algorithm hands out fewer than asked', async () => {
    const log: string[] = [];
    const r = await runStudy(recording(log, true), branin(), { seed: 1, studySeed: 1, budget: 8, mode: 'par4' });
    assert.equal(r.values.length, 8);
    assert.ok(log.includes('ask 1→0'));
  });

  it('a prefix of a longer run is a run of the smaller budget', async () => {
    const long = await runStudy(recording([]), branin(), { seed: 1, studySeed: 1, budget: 10, mode: 'par4' });
    const short = await runStudy(recording([]), branin(), { seed: 1, studySeed: 1, budget: 6, mode: 'par4' });
    const p = prefixRun(long, 6);
    assert.deepEqual(p.values, short.values);
    assert.equal(p.best, short.best);
    assert.equal(p.prefixOf, 10);
  });

  it("drives Skiff's algorithms with pending trials in parallel, reproducibly", async () => {
    for (const name of ['S:random', 'S:tpe', 'S:mv-tpe', 'S:gp', 'S:cmaes']) {
      const problem = bbob(1, 1);
      const a = await runStudy(skiffContender(name), problem, { seed: 1, studySeed: 42, budget: 16, mode: 'par4' });
      const b = await runStudy(skiffContender(name), problem, { seed: 1, studySeed: 42, budget: 16, mode: 'par4' });
      assert.equal(a.values.length, 16, name);
      assert.equal(a.latencyMs.length, 16, name);
      assert.deepEqual(a.values, b.values, `${name} is reproducible from its seed`);
      assert.equal(new Set(a.values).size, 16, `${name} never repeats a point`);
    }
  });

  it("drives Optuna's samplers through the worker under the same protocol", { skip: existsSync(venvPython) ? false : 'no .venv (npm run setup)' }, async () => {
    const w = new OptunaWorker();
    try {
      await w.start([]);
      assert.match(w.versions?.optuna ?? '', /^\d+\.\d+/);
      for (const name of ['O:random', 'O:tpe', 'O:cmaes']) {
        const r = await runStudy(w.contender(name), branin(), { seed: 1, studySeed: 7, budget: 14, mode: 'par4' });
        assert.equal(r.values.length, 14, name);
        assert.ok(r.latencyMs.every((ms) => ms >= 0 && ms < 10_000), name);
        const again = await runStudy(w.contender(name), branin(), { seed: 1, studySeed: 7, budget: 14, mode: 'par4' });
        assert.deepEqual(again.values, r.values, `${name} is reproducible from its seed`);
      }
    } finally {
      await w.close();
    }
  });
});
