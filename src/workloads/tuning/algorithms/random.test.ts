import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { randomAlgorithm } from './random.js';
import { addPending, request } from './testing.js';
import type { TrialRecord } from './types.js';

const params: ParameterSpec[] = [
  { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.001', max: '0.1', distribution: 'logUniform' } },
  { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['sgd', 'adam'] } },
];

describe('random', () => {
  it('is deterministic for a seed', () => {
    const a = randomAlgorithm.suggest(request(params, { count: 5, seed: 9 }));
    const b = randomAlgorithm.suggest(request(params, { count: 5, seed: 9 }));
    const c = randomAlgorithm.suggest(request(params, { count: 5, seed: 10 }));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a.assignments, c.assignments);
    assert.equal(a.assignments.length, 5);
  });

  it('never repeats an assignment, and is done when a discrete space is used up', () => {
    const small: ParameterSpec[] = [
      { name: 'k', parameterType: 'int', feasibleSpace: { min: '1', max: '3' } },
      { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['a', 'b'] } },
    ];
    const trials: TrialRecord[] = [];
    let done = false;
    for (let call = 0; call < 4 && !done; call++) {
      const r = randomAlgorithm.suggest(request(small, { trials, count: 4, seed: call }));
      addPending(trials, r);
      done = r.done === true;
    }
    const keys = trials.map((t) => `${t.assignments.k}/${t.assignments.opt}`);
    assert.equal(new Set(keys).size, 6);
    assert.equal(keys.length, 6);
    assert.equal(done, true);
  });

  it('validates its settings by field', () => {
    const errs = randomAlgorithm.validate({ parameters: params, settings: [{ name: 'random_state', value: 'x' }, { name: 'gamma', value: '1' }], parallelTrialCount: 1 });
    assert.deepEqual(errs.map((e) => e.field), ['spec.algorithm.algorithmSettings[0].value', 'spec.algorithm.algorithmSettings[1].name']);
    assert.deepEqual(randomAlgorithm.validate({ parameters: params, settings: [{ name: 'random_state', value: '10' }], parallelTrialCount: 1 }), []);
  });
});
