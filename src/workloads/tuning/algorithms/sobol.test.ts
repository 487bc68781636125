import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { directionNumbers, sobolAlgorithm, sobolPoint } from './sobol.js';
import { addPending, request } from './testing.js';
import type { TrialRecord } from './types.js';

describe('sobol sequence', () => {
  it('matches the reference points (Joe–Kuo directions, Gray-code order)', () => {
    const d = directionNumbers(128);
    assert.deepEqual(sobolPoint(d, 0).slice(0, 4), [0, 0, 0, 0]);
    assert.deepEqual(sobolPoint(d, 4).slice(0, 4), [0.375, 0.375, 0.625, 0.875]);
    assert.deepEqual(sobolPoint(d, 4).slice(8, 12), [0.875, 0.625, 0.875, 0.375]);
    const p77 = sobolPoint(d, 77);
    assert.deepEqual([p77[3], p77[17], p77[60], p77[127]], [0.7734375, 0.8828125, 0.8515625, 0.4140625]);
    const p1000 = sobolPoint(d, 1000);
    assert.deepEqual([p1000[5], p1000[40], p1000[99]], [0.9072265625, 0.9130859375, 0.1865234375]);
  });

  it('fills the square evenly: each of 16 cells gets one of the first 16 points', () => {
    const d = directionNumbers(2);
    const cells = new Set<string>();
    for (let n = 0; n < 16; n++) {
      const [x, y] = sobolPoint(d, n);
      cells.add(`${Math.floor(x! * 4)},${Math.floor(y! * 4)}`);
    }
    assert.equal(cells.size, 16);
  });
});

describe('sobol algorithm', () => {
  const params: ParameterSpec[] = [
    { name: 'x', parameterType: 'double', feasibleSpace: { min: '-1', max: '1' } },
    { name: 'k', parameterType: 'int', feasibleSpace: { min: '1', max: '3' } },
  ];

  it('continues the sequence through its state, never repeating, deterministic for a seed', () => {
    const trials: TrialRecord[] = [];
    let state: Record<string, string> = {};
    for (let call = 0; call < 3; call++) {
      const r = sobolAlgorithm.suggest(request(params, { trials, count: 4, state, seed: call === 0 ? 5 : 1000 + call }));
      state = r.state ?? state;
      addPending(trials, r);
    }
    assert.equal(trials.length, 12);
    assert.equal(new Set(trials.map((t) => JSON.stringify(t.assignments))).size, 12);
    const again = sobolAlgorithm.suggest(request(params, { count: 4, seed: 5 }));
    assert.deepEqual(again.assignments.map((a) => a.assignments), trials.slice(0, 4).map((t) => t.assignments));
  });

  it('finishes a small discrete space and says done', () => {
    const small: ParameterSpec[] = [{ name: 'k', parameterType: 'int', feasibleSpace: { min: '1', max: '3' } }];
    const r = sobolAlgorithm.suggest(request(small, { count: 5 }));
    assert.deepEqual(r.assignments.map((a) => a.assignments.k).sort(), ['1', '2', '3']);
    assert.equal(r.done, true);
  });

  it('takes no settings', () => {
    const errs = sobolAlgorithm.validate({ parameters: params, settings: [{ name: 'random_state', value: '1' }], parallelTrialCount: 1 });
    assert.deepEqual(errs.map((e) => e.field), ['spec.algorithm.algorithmSettings[0].name']);
  });
});
