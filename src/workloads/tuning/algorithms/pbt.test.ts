import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { PBT_LABELS, pbtAlgorithm, perturb } from './pbt.js';
import { Rng } from './rng.js';
import { parseSpace } from './space.js';
import { addPending, request } from './testing.js';
import type { TrialRecord } from './types.js';

const params: ParameterSpec[] = [
  { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.0001', max: '0.02' } },
  { name: 'layers', parameterType: 'int', feasibleSpace: { min: '1', max: '8' } },
];
const settings = { suggestion_trial_dir: '/var/log/katib/checkpoints/', n_population: '6', truncation_threshold: '0.34' };
const loss = (a: Record<string, string>) => Math.abs(Number(a.lr) - 0.01) * 100 + Math.abs(Number(a.layers) - 4);

function run(generations: number, failing?: (t: TrialRecord) => boolean): TrialRecord[] {
  const trials: TrialRecord[] = [];
  let state: Record<string, string> = {};
  for (let call = 0; call < 200; call++) {
    const running = trials.filter((t) => t.state === 'pending').length;
    const r = pbtAlgorithm.suggest(request(params, { settings, trials, state, count: 4 - running, seed: 1000 + call, parallelTrialCount: 4 }));
    state = r.state ?? state;
    addPending(trials, r);
    const next = trials.find((t) => t.state === 'pending');
    if (next) {
      if (failing?.(next)) next.state = 'failed';
      else Object.assign(next, { state: 'succeeded', value: loss(next.assignments) });
    }
    if (Number(state.generation) >= generations) break;
  }
  return trials;
}

describe('pbt', () => {
  it('trains generations of n_population, each member continuing a labelled parent of the last', () => {
    const trials = run(4);
    const gen = (g: number) => trials.filter((t) => t.labels?.[PBT_LABELS.generation] === String(g));
    for (let g = 0; g < 4; g++) assert.equal(gen(g).length, 6, `generation ${g}`);
    assert.ok(gen(0).every((t) => t.labels?.[PBT_LABELS.parent] === undefined));
    for (let g = 1; g < 4; g++) {
      const parents = new Set(gen(g - 1).map((t) => t.name));
      assert.ok(gen(g).every((t) => parents.has(t.labels![PBT_LABELS.parent]!)), `generation ${g}`);
    }
    // exploit: the worst third of generation 0 copy one of the best third, parent = that best trial
    const ranked = gen(0).sort((a, b) => a.value! - b.value!);
    const best = new Set(ranked.slice(0, 3).map((t) => t.name));
    const copies = gen(1).filter((t) => best.has(t.labels![PBT_LABELS.parent]!) && JSON.stringify(t.assignments) === JSON.stringify(trials.find((p) => p.name === t.labels![PBT_LABELS.parent])!.assignments));
    assert.ok(copies.length >= 2, `${copies.length} exploiting members`);
    // the population improves
    const mean = (ts: TrialRecord[]) => ts.reduce((s, t) => s + t.value!, 0) / ts.length;
    assert.ok(mean(gen(3)) < mean(gen(0)), `${mean(gen(3))} vs ${mean(gen(0))}`);
  });

  it('is deterministic for a seed, and replaces failed members', () => {
    assert.deepEqual(run(2), run(2));
    let failures = 0;
    const trials = run(2, (t) => t.labels?.[PBT_LABELS.generation] === '0' && failures++ < 2);
    const gen0 = trials.filter((t) => t.labels?.[PBT_LABELS.generation] === '0');
    assert.equal(gen0.length, 8);
    assert.equal(gen0.filter((t) => t.state === 'succeeded').length, 6);
  });

  it('perturbs by ×0.8 / ×1.2 within bounds and moves ints and lists', () => {
    const space = parseSpace([...params, { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['a', 'b', 'c'] } }]);
    const rng = new Rng(3);
    const lrs = new Set<string>();
    for (let i = 0; i < 50; i++) {
      lrs.add(perturb(space.params[0]!, '0.01', rng));
      const k = perturb(space.params[1]!, '1', rng);
      assert.ok(k === '2' || k === '1', k);
      const o = perturb(space.params[2]!, 'a', rng);
      assert.ok(o === 'b' || o === 'c', o);
    }
    assert.deepEqual([...lrs].sort(), ['0.008', '0.012']);
    for (let seed = 0; seed < 10; seed++) assert.ok(Number(perturb(space.params[0]!, '0.02', new Rng(seed))) <= 0.02);
  });

  it('resamples with resample_probability instead of perturbing', () => {
    const trials = (() => {
      const ts: TrialRecord[] = [];
      let state: Record<string, string> = {};
      const s = { ...settings, resample_probability: '0' };
      for (let call = 0; call < 40; call++) {
        const r = pbtAlgorithm.suggest(request(params, { settings: s, trials: ts, state, count: 6, seed: call }));
        state = r.state ?? state;
        for (const t of addPending(ts, r)) Object.assign(t, { state: 'succeeded', value: loss(t.assignments) });
        if (Number(state.generation) >= 2) break;
      }
      return ts;
    })();
    // probability 0: every member keeps its source's (or donor's) assignments exactly
    const gen1 = trials.filter((t) => t.labels?.[PBT_LABELS.generation] === '1');
    assert.equal(gen1.length, 6);
    for (const t of gen1) {
      const parent = trials.find((p) => p.name === t.labels![PBT_LABELS.parent])!;
      assert.deepEqual(t.assignments, parent.assignments);
    }
  });

  it('validates its settings by field', () => {
    const v = (s: { name: string; value: string }[]) => pbtAlgorithm.validate({ parameters: params, settings: s, parallelTrialCount: 3 }).map((e) => e.field);
    const ok = [{ name: 'suggestion_trial_dir', value: '/x' }, { name: 'n_population', value: '5' }, { name: 'truncation_threshold', value: '0.2' }];
    assert.deepEqual(v(ok), []);
    assert.deepEqual(v([{ name: 'suggestion_trial_dir', value: '/x' }, { name: 'n_population', value: '4' }, { name: 'truncation_threshold', value: '1.5' }, { name: 'resample_probability', value: '-1' }]), [
      'spec.algorithm.algorithmSettings[1].value',
      'spec.algorithm.algorithmSettings[2].value',
      'spec.algorithm.algorithmSettings[3].value',
    ]);
    assert.deepEqual(v([{ name: 'n_population', value: '5' }]), ['spec.algorithm.algorithmSettings', 'spec.algorithm.algorithmSettings']);
  });
});
