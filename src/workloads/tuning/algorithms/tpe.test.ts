import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { randomAlgorithm } from './random.js';
import { defaultStartup, multivariateTpeAlgorithm, nonDominatedFronts, splitObservations, tpeAlgorithm, tpeOptions } from './tpe.js';
import { addPending, median, minimise, request } from './testing.js';
import type { TrialRecord } from './types.js';
import { defaultWeights } from './parzen.js';

const square: ParameterSpec[] = [
  { name: 'x', parameterType: 'double', feasibleSpace: { min: '-5', max: '5' } },
  { name: 'y', parameterType: 'double', feasibleSpace: { min: '-5', max: '5' } },
];
const quadratic = (a: Record<string, string>) => (Number(a.x) - 1.5) ** 2 + (Number(a.y) + 2) ** 2;

function finished(n: number, seed: number): TrialRecord[] {
  const r = randomAlgorithm.suggest(request(square, { count: n, seed }));
  return r.assignments.map((a, i) => ({ name: `t${i}`, assignments: a.assignments, state: 'succeeded', value: quadratic(a.assignments) }));
}

for (const algo of [tpeAlgorithm, multivariateTpeAlgorithm]) {
  describe(algo.name, () => {
    it('is deterministic for a seed', () => {
      const trials = finished(15, 3);
      const a = algo.suggest(request(square, { trials, count: 3, seed: 8 }));
      const b = algo.suggest(request(square, { trials, count: 3, seed: 8 }));
      const c = algo.suggest(request(square, { trials, count: 3, seed: 9 }));
      assert.deepEqual(a, b);
      assert.notDeepEqual(a, c);
    });

    it('spreads parallel asks: 8 asks with 4 pending repeat nothing', () => {
      const grid: ParameterSpec[] = [
        { name: 'k', parameterType: 'int', feasibleSpace: { min: '1', max: '4' } },
        { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['a', 'b', 'c'] } },
      ];
      const trials: TrialRecord[] = [];
      const f = (a: Record<string, string>) => Math.abs(Number(a.k) - 2) + (a.opt === 'b' ? 0 : 1);
      for (let call = 0; call < 6; call++) {
        // finish all but the newest 4, then ask for 2 more (8 asks in flight over the last calls)
        trials.slice(0, Math.max(0, trials.length - 4)).forEach((t) => {
          if (t.state === 'pending') Object.assign(t, { state: 'succeeded', value: f(t.assignments) });
        });
        addPending(trials, algo.suggest(request(grid, { trials, count: 2, seed: call, maxTrialCount: 12, parallelTrialCount: 4 })));
      }
      assert.equal(trials.length, 12);
      assert.equal(new Set(trials.map((t) => `${t.assignments.k}/${t.assignments.opt}`)).size, 12);
      // the 12-point space is now used up
      const r = algo.suggest(request(grid, { trials, count: 2, seed: 99 }));
      assert.deepEqual(r.assignments, []);
      assert.equal(r.done, true);
    });

    it('does not pile parallel asks onto one point (constant liar)', () => {
      const trials = finished(20, 4);
      const r = algo.suggest(request(square, { trials, count: 4, seed: 5, parallelTrialCount: 4 }));
      assert.equal(r.assignments.length, 4);
      const xs = r.assignments.map((a) => `${a.assignments.x},${a.assignments.y}`);
      assert.equal(new Set(xs).size, 4);
    });

    it('beats random search on a 2-D quadratic (60 trials, median over 10 seeds)', () => {
      const tpe: number[] = [];
      const rnd: number[] = [];
      for (let seed = 1; seed <= 10; seed++) {
        tpe.push(minimise(algo, square, quadratic, 60, seed).best);
        rnd.push(minimise(randomAlgorithm, square, quadratic, 60, seed).best);
      }
      const mt = median(tpe);
      const mr = median(rnd);
      assert.ok(mt < mr / 2, `${algo.name} median best ${mt}, random ${mr}`);
      // and wins on most seeds, not by one lucky run
      assert.ok(tpe.filter((v, i) => v < (rnd[i] as number)).length >= 7, `${tpe} vs ${rnd}`);
    });

    it('searches categorical and log-scaled int parameters', () => {
      const mixed: ParameterSpec[] = [
        { name: 'units', parameterType: 'int', feasibleSpace: { min: '1', max: '1024', distribution: 'logUniform' } },
        { name: 'act', parameterType: 'categorical', feasibleSpace: { list: ['relu', 'tanh', 'sigmoid', 'gelu'] } },
      ];
      const f = (a: Record<string, string>) => Math.abs(Math.log2(Number(a.units)) - 6) + (a.act === 'gelu' ? 0 : 2);
      const { trials } = minimise(algo, mixed, f, 40, 3);
      const late = trials.slice(25);
      assert.ok(late.filter((t) => t.assignments.act === 'gelu').length >= 8, late.map((t) => t.assignments.act).join(','));
      assert.ok(trials.every((t) => /^\d+$/.test(t.assignments.units!) && Number(t.assignments.units) >= 1 && Number(t.assignments.units) <= 1024));
    });

    it('learns from failed trials: a region where trials fail is avoided', () => {
      const trials: TrialRecord[] = [];
      const line: ParameterSpec[] = [{ name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } }];
      for (let i = 0; i < 40; i++) {
        for (const t of addPending(trials, algo.suggest(request(line, { trials, count: 1, seed: i, maxTrialCount: 40 })))) {
          const x = Number(t.assignments.x);
          // fails above 0.5; below it, a flat objective: only failures carry a signal
          if (x > 0.5) t.state = 'failed';
          else Object.assign(t, { state: 'succeeded', value: 1 });
        }
      }
      const late = trials.slice(20).filter((t) => t.state === 'failed').length;
      assert.ok(late <= 6, `${late} of the last 20 trials failed`);
    });
  });
}

describe('tpe internals', () => {
  it('weights: flat for 25, ramp before', () => {
    assert.deepEqual(defaultWeights(3), [1, 1, 1]);
    const w = defaultWeights(30);
    assert.equal(w.length, 30);
    assert.ok(Math.abs(w[0]! - 1 / 30) < 1e-12);
    assert.equal(w[4], 1);
    assert.ok(w[1]! > w[0]! && w[2]! > w[1]!);
  });

  it('startup count: 10, fewer for small budgets', () => {
    assert.equal(defaultStartup(undefined), 10);
    assert.equal(defaultStartup(100), 10);
    assert.equal(defaultStartup(20), 4);
    assert.equal(defaultStartup(6), 3);
  });

  it('startup counts finished trials, not pending ones', () => {
    // the same trials with their values reversed: only a model can tell the two apart
    const ask = (nFinished: number, reversed: boolean) => {
      const trials = finished(12, 6);
      const values = trials.map((t) => t.value as number);
      if (reversed) values.reverse();
      trials.forEach((t, i) => {
        if (i < nFinished) t.value = values[i];
        else Object.assign(t, { state: 'pending', value: undefined });
      });
      return multivariateTpeAlgorithm.suggest(request(square, { trials, count: 1, seed: 3, parallelTrialCount: 4 })).assignments;
    };
    // 9 results and 3 pending: still random, whatever the values
    assert.deepEqual(ask(9, false), ask(9, true));
    // 10 results: the model decides
    assert.notDeepEqual(ask(10, false), ask(10, true));
  });

  it('tpe settings: hyperopt gamma when given, else Optuna gamma', () => {
    const dflt = tpeOptions({}, 100);
    assert.deepEqual([dflt.gamma(9), dflt.gamma(100), dflt.gamma(1000)], [1, 10, 25]);
    assert.equal(dflt.nCandidates, 24);
    assert.equal(dflt.priorWeight, 1);
    const hyp = tpeOptions({ gamma: '0.25', n_EI_candidates: '50', prior_weight: '2' }, 100);
    assert.deepEqual([hyp.gamma(16), hyp.gamma(100)], [1, 3]);
    assert.equal(hyp.nCandidates, 50);
    assert.equal(hyp.priorWeight, 2);
    // and the search still works under it
    const bests = [1, 2, 3, 4, 5].map((seed) => minimise(tpeAlgorithm, square, quadratic, 60, seed, { gamma: '0.25' }).best);
    const rnd = [1, 2, 3, 4, 5].map((seed) => minimise(randomAlgorithm, square, quadratic, 60, seed).best);
    assert.ok(median(bests) < median(rnd), `${bests} vs ${rnd}`);
  });

  it('splits by value, pending and failed never good', () => {
    const obs = [
      { order: 0, values: [3] }, { order: 1, values: [Infinity] }, { order: 2, values: [1] }, { order: 3, values: [2] },
    ];
    const { below, above } = splitObservations(obs, 2);
    assert.deepEqual(below.map((o) => o.order), [2, 3]);
    assert.deepEqual(above.map((o) => o.order), [0, 1]);
    assert.deepEqual(splitObservations(obs, 10).above.map((o) => o.order), [1]);
  });

  it('splits several objectives by non-domination rank', () => {
    const pts = [[1, 5], [2, 2], [5, 1], [3, 3], [4, 4], [6, 6]];
    assert.deepEqual(nonDominatedFronts(pts), [[0, 1, 2], [3], [4], [5]]);
    const obs = pts.map((values, order) => ({ order, values }));
    assert.deepEqual(splitObservations(obs, 4).below.map((o) => o.order), [0, 1, 2, 3]);
    // the first front cut to 2 keeps its extremes (crowding distance)
    assert.deepEqual(splitObservations(obs, 2).below.map((o) => o.order), [0, 2]);
  });

  it('multi-objective search favours the Pareto-good region', () => {
    const line: ParameterSpec[] = [{ name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '10' } }];
    // five searches, so that one unlucky run neither passes nor fails it alone
    let inside = 0;
    for (let run = 0; run < 5; run++) {
      const trials: TrialRecord[] = [];
      for (let i = 0; i < 40; i++) {
        for (const t of addPending(trials, multivariateTpeAlgorithm.suggest(request(line, { trials, count: 1, seed: i + 1000 * run })))) {
          const x = Number(t.assignments.x);
          // the Pareto set is x in [1, 2]; outside both objectives get worse
          const v = [Math.max(0, x - 1) + Math.max(0, 1 - x) * 3, Math.max(0, 2 - x) + Math.max(0, x - 2) * 3];
          Object.assign(t, { state: 'succeeded', value: v[0], values: v });
        }
      }
      inside += trials.slice(20).filter((t) => Number(t.assignments.x) >= 0.5 && Number(t.assignments.x) <= 2.5).length;
    }
    // random search would put a fifth (20 of 100) there
    assert.ok(inside >= 50, `${inside} of the last 5×20 near the Pareto set`);
  });

  it('validates settings by field', () => {
    assert.equal(tpeAlgorithm.validate({ parameters: square, settings: [{ name: 'gamma', value: '1' }], parallelTrialCount: 1 })[0]?.field, 'spec.algorithm.algorithmSettings[0].value');
    const errs = tpeAlgorithm.validate({ parameters: square, settings: [{ name: 'gamma', value: '1.5' }, { name: 'n_EI_candidates', value: '0' }, { name: 'n_startup_trials', value: '3' }, { name: 'random_state', value: '-1' }], parallelTrialCount: 1 });
    assert.deepEqual(errs.map((e) => e.field), [
      'spec.algorithm.algorithmSettings[0].value',
      'spec.algorithm.algorithmSettings[1].value',
      'spec.algorithm.algorithmSettings[2].name',
      'spec.algorithm.algorithmSettings[3].value',
    ]);
    const m = multivariateTpeAlgorithm.validate({ parameters: square, settings: [{ name: 'n_startup_trials', value: '5' }, { name: 'gamma', value: '0.2' }], parallelTrialCount: 1 });
    assert.deepEqual(m.map((e) => e.field), ['spec.algorithm.algorithmSettings[1].name']);
  });
});
