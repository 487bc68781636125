import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { HYPERBAND_LABELS, hyperbandAlgorithm, hyperbandBrackets, sMaxOf } from './hyperband.js';
import { addPending, request } from './testing.js';
import type { TrialRecord } from './types.js';

const params: ParameterSpec[] = [
  { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.001', max: '0.1', distribution: 'logUniform' } },
  { name: 'epochs', parameterType: 'int', feasibleSpace: { min: '1', max: '9' } },
];
const settings = { resource_name: 'epochs', r_l: '9', eta: '3' };
// a good lr is near 0.01; more epochs always help
const loss = (a: Record<string, string>) => Math.abs(Math.log10(Number(a.lr)) + 2) + 1 / Number(a.epochs);

describe('hyperband arithmetic', () => {
  it('plans Katib\'s brackets for r_l=9, eta=3', () => {
    assert.equal(sMaxOf(9, 3), 2);
    assert.deepEqual(hyperbandBrackets(9, 3), [
      [{ n: 9, r: 1 }, { n: 3, r: 3 }, { n: 1, r: 9 }],
      [{ n: 5, r: 3 }, { n: 2, r: 9 }],
      [{ n: 3, r: 9 }],
    ]);
    assert.equal(sMaxOf(243, 3), 5);
    assert.deepEqual(hyperbandBrackets(81, 3)[0]!.map((r) => r.n), [81, 27, 9, 3, 1]);
  });
});

describe('hyperband search', () => {
  function run(parallel: number, failing?: (t: TrialRecord) => boolean): { trials: TrialRecord[]; calls: number; done: boolean } {
    const trials: TrialRecord[] = [];
    let state: Record<string, string> = {};
    let done = false;
    let calls = 0;
    while (!done && calls < 200) {
      const running = trials.filter((t) => t.state === 'pending').length;
      const r = hyperbandAlgorithm.suggest(request(params, { settings, trials, state, count: parallel - running, seed: calls, parallelTrialCount: parallel }));
      calls++;
      state = r.state ?? state;
      done = r.done === true;
      addPending(trials, r);
      // finish the oldest running trial
      const next = trials.find((t) => t.state === 'pending');
      if (next) {
        if (failing?.(next)) next.state = 'failed';
        else Object.assign(next, { state: 'succeeded', value: loss(next.assignments) });
      }
    }
    return { trials, calls, done };
  }

  it('runs every rung with its resource, promotes the best third, and ends', () => {
    const { trials, done } = run(9);
    assert.equal(done, true);
    const byRung = (s: number, i: number) => trials.filter((t) => t.labels?.[HYPERBAND_LABELS.bracket] === String(s) && t.labels?.[HYPERBAND_LABELS.rung] === String(i));
    const sizes = [[2, 0], [2, 1], [2, 2], [1, 0], [1, 1], [0, 0]].map(([s, i]) => byRung(s!, i!).length);
    assert.deepEqual(sizes, [9, 3, 1, 5, 2, 3]);
    assert.deepEqual([...new Set(byRung(2, 0).map((t) => t.assignments.epochs))], ['1']);
    assert.deepEqual([...new Set(byRung(2, 1).map((t) => t.assignments.epochs))], ['3']);
    assert.deepEqual([...new Set(byRung(1, 1).map((t) => t.assignments.epochs))], ['9']);
    // the promoted ones are the best three of rung 0, same lr, parent labelled
    const rung0 = byRung(2, 0).sort((a, b) => a.value! - b.value!);
    const promoted = byRung(2, 1);
    assert.deepEqual(promoted.map((t) => t.labels?.[HYPERBAND_LABELS.parent]).sort(), rung0.slice(0, 3).map((t) => t.name).sort());
    for (const t of promoted) {
      const parent = trials.find((p) => p.name === t.labels?.[HYPERBAND_LABELS.parent])!;
      assert.equal(t.assignments.lr, parent.assignments.lr);
    }
    assert.equal(trials.length, 23);
    const after = hyperbandAlgorithm.suggest(request(params, { settings, trials, state: { s: '-1', i: '0' }, count: 3 }));
    assert.deepEqual(after.assignments, []);
    assert.equal(after.done, true);
  });

  it('waits for a rung to finish before promoting', () => {
    const trials: TrialRecord[] = [];
    const first = hyperbandAlgorithm.suggest(request(params, { settings, trials, count: 9, parallelTrialCount: 9 }));
    assert.equal(first.assignments.length, 9);
    addPending(trials, first);
    trials.slice(0, 8).forEach((t) => Object.assign(t, { state: 'succeeded', value: loss(t.assignments) }));
    const wait = hyperbandAlgorithm.suggest(request(params, { settings, trials, state: first.state!, count: 8, parallelTrialCount: 9 }));
    assert.deepEqual(wait.assignments, []);
    assert.notEqual(wait.done, true);
    Object.assign(trials[8]!, { state: 'succeeded', value: loss(trials[8]!.assignments) });
    const next = hyperbandAlgorithm.suggest(request(params, { settings, trials, state: wait.state!, count: 9, parallelTrialCount: 9 }));
    assert.equal(next.assignments.length, 3);
    assert.ok(next.assignments.every((a) => a.assignments.epochs === '3'));
  });

  it('hands a rung out over several calls when fewer slots are free', () => {
    const { trials, done } = run(9, undefined);
    assert.ok(done);
    const small = (() => {
      const ts: TrialRecord[] = [];
      let state: Record<string, string> = {};
      for (let c = 0; c < 3; c++) {
        const r = hyperbandAlgorithm.suggest(request(params, { settings, trials: ts, state, count: 4, seed: c, parallelTrialCount: 9 }));
        state = r.state ?? state;
        addPending(ts, r);
      }
      return ts;
    })();
    assert.equal(small.length, 9);
    assert.equal(new Set(small.map((t) => t.assignments.lr)).size, 9);
    assert.equal(trials.length, 23);
  });

  it('does not promote failed trials', () => {
    const { trials, done } = run(9, (t) => t.labels?.[HYPERBAND_LABELS.rung] === '0' && Number(t.assignments.lr) > 0.01);
    assert.ok(done);
    const promoted = trials.filter((t) => t.labels?.[HYPERBAND_LABELS.parent]);
    for (const t of promoted) {
      const parent = trials.find((p) => p.name === t.labels?.[HYPERBAND_LABELS.parent])!;
      assert.notEqual(parent.state, 'failed');
    }
  });

  it('validates its settings and parallelTrialCount by field', () => {
    const v = (s: { name: string; value: string }[], parallelTrialCount = 9) => hyperbandAlgorithm.validate({ parameters: params, settings: s, parallelTrialCount }).map((e) => e.field);
    assert.deepEqual(v([{ name: 'resource_name', value: 'epochs' }, { name: 'r_l', value: '9' }]), []);
    assert.deepEqual(v([{ name: 'resource_name', value: 'epochs' }, { name: 'r_l', value: '9' }], 8), ['spec.parallelTrialCount']);
    assert.deepEqual(v([{ name: 'resource_name', value: 'batch' }, { name: 'r_l', value: '0' }]), ['spec.algorithm.algorithmSettings[1].value', 'spec.algorithm.algorithmSettings[0].value']);
    assert.deepEqual(v([{ name: 'r_l', value: '9' }, { name: 'eta', value: '1' }, { name: 'foo', value: '1' }]), [
      'spec.algorithm.algorithmSettings[1].value',
      'spec.algorithm.algorithmSettings[2].name',
      'spec.algorithm.algorithmSettings',
    ]);
    const cat = hyperbandAlgorithm.validate({
      parameters: [...params, { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['a'] } }],
      settings: [{ name: 'resource_name', value: 'opt' }, { name: 'r_l', value: '3' }],
      parallelTrialCount: 3,
    });
    assert.deepEqual(cat.map((e) => e.field), ['spec.parameters[2].parameterType']);
  });
});
