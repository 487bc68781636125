import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { gridAlgorithm } from './grid.js';
import { addPending, request } from './testing.js';
import type { TrialRecord } from './types.js';

const params: ParameterSpec[] = [
  { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.03', step: '0.01' } },
  { name: 'layers', parameterType: 'int', feasibleSpace: { min: '1', max: '5', step: '2' } },
  { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['sgd', 'adam'] } },
];

describe('grid', () => {
  it('walks every point once, across calls with pending trials, then is done', () => {
    const trials: TrialRecord[] = [];
    let state: Record<string, string> = {};
    let done = false;
    let calls = 0;
    while (!done && calls < 20) {
      const r = gridAlgorithm.suggest(request(params, { trials, count: 4, state, seed: 100 + calls }));
      state = r.state ?? state;
      addPending(trials, r);
      done = r.done === true;
      calls++;
    }
    assert.equal(trials.length, 18);
    const keys = trials.map((t) => JSON.stringify(t.assignments));
    assert.equal(new Set(keys).size, 18);
    const lrs = new Set(trials.map((t) => t.assignments.lr));
    const layers = new Set(trials.map((t) => t.assignments.layers));
    assert.deepEqual([...lrs].sort(), ['0.01', '0.02', '0.03']);
    assert.deepEqual([...layers].sort(), ['1', '3', '5']);
    assert.equal(done, true);
    assert.equal(calls, 5);
    const after = gridAlgorithm.suggest(request(params, { trials, count: 2, state, seed: 7 }));
    assert.deepEqual(after.assignments, []);
    assert.equal(after.done, true);
  });

  it('is deterministic for a seed and seed-dependent', () => {
    const a = gridAlgorithm.suggest(request(params, { count: 6, seed: 1 }));
    const b = gridAlgorithm.suggest(request(params, { count: 6, seed: 1 }));
    const c = gridAlgorithm.suggest(request(params, { count: 6, seed: 2 }));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a.assignments, c.assignments);
  });

  it('refuses a double without step and a maxTrialCount larger than the grid', () => {
    const errs = gridAlgorithm.validate({
      parameters: [...params, { name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } }],
      settings: [],
      maxTrialCount: 5,
      parallelTrialCount: 1,
    });
    assert.deepEqual(errs.map((e) => e.field), ['spec.parameters[3].feasibleSpace.step']);
    const big = gridAlgorithm.validate({ parameters: params, settings: [{ name: 'random_state', value: '3' }], maxTrialCount: 19, parallelTrialCount: 1 });
    assert.deepEqual(big.map((e) => e.field), ['spec.maxTrialCount']);
    assert.match(big[0]!.message, /18 points/);
    assert.deepEqual(gridAlgorithm.validate({ parameters: params, settings: [], maxTrialCount: 18, parallelTrialCount: 1 }), []);
  });
});

describe('grid limits', () => {
  it('refuses a parameter with too many grid values, naming its step', () => {
    const errs = gridAlgorithm.validate({ parameters: [{ name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1', step: '0.000001' } }], settings: [], parallelTrialCount: 1 });
    assert.deepEqual(errs.map((e) => e.field), ['spec.parameters[0].feasibleSpace.step']);
  });
});
