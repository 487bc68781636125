import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { bayesianOptimizationAlgorithm as bo, FIT_MAX_POINTS, fitIterations, fitSubset, maximiseAcquisition, randomCandidates, shouldReuseFit } from './gp.js';
import { Rng } from './rng.js';
import { assignmentKey, parseSpace, sample } from './space.js';
import type { SuggestRequest, TrialRecord } from './types.js';

const braninParams: ParameterSpec[] = [
  { name: 'x1', parameterType: 'double', feasibleSpace: { min: '-5', max: '10' } },
  { name: 'x2', parameterType: 'double', feasibleSpace: { min: '0', max: '15' } },
];
const BRANIN_MIN = 0.397887;

function branin(a: Record<string, string>): number {
  const x1 = Number(a['x1']);
  const x2 = Number(a['x2']);
  const b = 5.1 / (4 * Math.PI * Math.PI);
  const c = 5 / Math.PI;
  return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * Math.PI)) * Math.cos(x1) + 10;
}

/** Runs the algorithm against f, `parallel` trials at a time, and returns every trial. */
function runLoop(
  parameters: ParameterSpec[], settings: Record<string, string>, f: (a: Record<string, string>) => number,
  budget: number, seed: number, parallel = 1,
): TrialRecord[] {
  const trials: TrialRecord[] = [];
  let state: Record<string, string> = {};
  let call = 0;
  while (trials.length < budget) {
    const count = Math.min(parallel, budget - trials.length);
    const req: SuggestRequest = { parameters, settings, trials, count, state, seed: seed * 1000 + call++, parallelTrialCount: parallel };
    const res = bo.suggest(req);
    assert.ok(res.assignments.length > 0, 'the algorithm returned nothing');
    state = res.state ?? {};
    for (const a of res.assignments) trials.push({ name: `t${trials.length}`, assignments: a.assignments, state: 'succeeded', value: f(a.assignments) });
  }
  return trials;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
}

describe('bayesianoptimization', () => {
  it('beats random search on Branin: median regret over 10 seeds with 40 trials', () => {
    const gpRegret: number[] = [];
    const randomRegret: number[] = [];
    const space = parseSpace(braninParams);
    for (let seed = 1; seed <= 10; seed++) {
      const trials = runLoop(braninParams, { acq_func: 'EI' }, branin, 40, seed);
      gpRegret.push(Math.min(...trials.map((t) => t.value!)) - BRANIN_MIN);
      const rng = new Rng(seed);
      let best = Infinity;
      for (let i = 0; i < 40; i++) best = Math.min(best, branin(sample(space, rng)));
      randomRegret.push(best - BRANIN_MIN);
    }
    const g = median(gpRegret);
    const r = median(randomRegret);
    assert.ok(g < r / 100, `median regret: GP ${g}, random ${r}`);
    assert.ok(g < 0.01, `median GP regret ${g}`);
  });

  it('gp_hedge also converges on Branin and keeps its gains in the state', () => {
    const trials = runLoop(braninParams, {}, branin, 30, 3);
    assert.ok(Math.min(...trials.map((t) => t.value!)) - BRANIN_MIN < 0.5);
  });

  it('expected improvement prefers an unexplored promising region over known ground', () => {
    // f is low towards x = 1 (the data slope down that way) and nothing was tried beyond 0.6
    const parameters: ParameterSpec[] = [
      { name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
      { name: 'y', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
    ];
    const rng = new Rng(4);
    const trials: TrialRecord[] = [];
    for (let i = 0; i < 15; i++) {
      const x = 0.6 * rng.uniform();
      const y = rng.uniform();
      trials.push({ name: `t${i}`, assignments: { x: String(x), y: String(y) }, state: 'succeeded', value: -x + 0.1 * (y - 0.5) ** 2 });
    }
    const res = bo.suggest({ parameters, settings: { acq_func: 'EI' }, trials, count: 3, state: {}, seed: 9, parallelTrialCount: 3 });
    const xs = res.assignments.map((a) => Number(a.assignments['x']));
    const ys = res.assignments.map((a) => Number(a.assignments['y']));
    assert.ok(xs.every((x) => x > 0.8), `suggested x ${xs.join(', ')}`);
    // a batch of three does not stack on the acquisition's one maximum (the believed pending
    // points remove their own uncertainty)
    for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) assert.ok(Math.hypot(xs[i]! - xs[j]!, ys[i]! - ys[j]!) > 0.02, `y ${ys.join(', ')}`);
  });

  it('a parallel batch holds no duplicates, none equal to a pending or finished trial, and spreads out', () => {
    const parameters: ParameterSpec[] = [
      { name: 'a', parameterType: 'int', feasibleSpace: { min: '0', max: '4' } },
      { name: 'b', parameterType: 'categorical', feasibleSpace: { list: ['x', 'y', 'z'] } },
      { name: 'c', parameterType: 'double', feasibleSpace: { min: '0', max: '1', step: '0.25' } },
    ];
    const space = parseSpace(parameters);
    const f = (a: Record<string, string>) => (Number(a['a']) - 2) ** 2 + (a['b'] === 'y' ? 0 : 1) + Number(a['c']);
    const trials: TrialRecord[] = [];
    let state: Record<string, string> = {};
    // 75 points in all: the search must stop short of repeating, pending trials included
    for (let call = 0; trials.length < 75 && call < 40; call++) {
      const res = bo.suggest({ parameters, settings: { n_initial_points: '5' }, trials, count: 4, state, seed: call, parallelTrialCount: 4 });
      state = res.state ?? {};
      // half of each batch stays pending for the next call
      res.assignments.forEach((a, i) => trials.push({ name: `t${trials.length}`, assignments: a.assignments, state: i % 2 === 0 ? 'pending' : 'succeeded', value: i % 2 === 0 ? undefined : f(a.assignments) }));
      for (const t of trials) if (t.state === 'pending' && Number(t.name.slice(1)) < trials.length - 4) Object.assign(t, { state: 'succeeded', value: f(t.assignments) });
      if (res.assignments.length === 0) break;
    }
    const keys = trials.map((t) => assignmentKey(space, t.assignments));
    assert.equal(new Set(keys).size, keys.length, 'a duplicate assignment');
    assert.equal(keys.length, 75, 'the whole finite space is visited without a repeat');
  });

  it('with failed trials the model still fits and the search avoids the failing region', () => {
    const parameters: ParameterSpec[] = [
      { name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
      { name: 'y', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
    ];
    const trials: TrialRecord[] = [];
    let state: Record<string, string> = {};
    for (let call = 0; call < 30; call++) {
      const res = bo.suggest({ parameters, settings: { n_initial_points: '5', acq_func: 'EI' }, trials, count: 1, state, seed: call, parallelTrialCount: 1 });
      state = res.state ?? {};
      const a = res.assignments[0]!.assignments;
      const x = Number(a['x']);
      // the optimum of the smooth part (x = 0.1) lies inside a region where the trial crashes
      if (x < 0.3) trials.push({ name: `t${call}`, assignments: a, state: 'failed' });
      else trials.push({ name: `t${call}`, assignments: a, state: 'succeeded', value: (x - 0.1) ** 2 + (Number(a['y']) - 0.5) ** 2 });
    }
    const lastTen = trials.slice(-10);
    assert.ok(lastTen.filter((t) => t.state === 'failed').length <= 3, `failed among the last ten: ${lastTen.filter((t) => t.state === 'failed').length}`);
    const best = Math.min(...trials.filter((t) => t.value !== undefined).map((t) => t.value!));
    assert.ok(best < 0.06, `best ${best}`);
  });

  it('is deterministic per seed and differs across seeds', () => {
    const a = runLoop(braninParams, {}, branin, 14, 5).map((t) => JSON.stringify(t.assignments));
    const b = runLoop(braninParams, {}, branin, 14, 5).map((t) => JSON.stringify(t.assignments));
    const c = runLoop(braninParams, {}, branin, 14, 6).map((t) => JSON.stringify(t.assignments));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a.slice(10), c.slice(10));
  });

  it('respects a logUniform parameter: the search runs on its log scale', () => {
    const parameters: ParameterSpec[] = [
      { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.00001', max: '1', distribution: 'logUniform' } },
      { name: 'm', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
    ];
    const f = (a: Record<string, string>) => (Math.log10(Number(a['lr'])) + 4) ** 2 + (Number(a['m']) - 0.5) ** 2;
    const trials = runLoop(parameters, { acq_func: 'EI' }, f, 30, 2);
    const best = trials.reduce((x, y) => (x.value! < y.value! ? x : y));
    assert.ok(Math.abs(Math.log10(Number(best.assignments['lr'])) + 4) < 0.3, `best lr ${best.assignments['lr']}`);
  });

  it('maximiseAcquisition returns undefined when every point is taken', () => {
    const space = parseSpace([{ name: 'a', parameterType: 'categorical', feasibleSpace: { list: ['p', 'q'] } }]);
    assert.deepEqual(maximiseAcquisition(space, () => ({ mean: 0, variance: 1 }), [() => 0, () => 1], new Rng(1), () => false, []), [undefined, undefined]);
  });

  it('caps the hyperparameter fit as the history grows', () => {
    assert.ok(fitIterations(50, false) >= fitIterations(500, false));
    assert.ok(fitIterations(500, true) >= 5 && fitIterations(500, true) < fitIterations(50, true));
    assert.equal(shouldReuseFit(90, 89), false);
    assert.equal(shouldReuseFit(150, 140), true);
    assert.equal(shouldReuseFit(300, 290), true);
    assert.equal(shouldReuseFit(330, 300), false);
    assert.equal(shouldReuseFit(300, 0), false);
    assert.deepEqual(fitSubset(5), [0, 1, 2, 3, 4]);
    const sub = fitSubset(600);
    assert.equal(sub.length, FIT_MAX_POINTS);
    assert.equal(new Set(sub).size, FIT_MAX_POINTS);
    assert.equal(sub[0], 0);
    assert.equal(sub.at(-1), 599);
    assert.equal(randomCandidates(50), 1000);
    assert.ok(randomCandidates(400) < 1000 && randomCandidates(5000) === 250);
  });

  it('validates settings naming the field', () => {
    const v = (settings: { name: string; value: string }[]) => bo.validate({ parameters: braninParams, settings, parallelTrialCount: 1 });
    assert.deepEqual(v([{ name: 'base_estimator', value: 'GP' }, { name: 'acq_func', value: 'LCB' }, { name: 'acq_optimizer', value: 'lbfgs' }, { name: 'n_initial_points', value: '3' }, { name: 'random_state', value: '7' }]), []);
    const rf = v([{ name: 'acq_func', value: 'EI' }, { name: 'base_estimator', value: 'RF' }]);
    assert.equal(rf.length, 1);
    assert.equal(rf[0]!.field, 'spec.algorithm.algorithmSettings[1].value');
    assert.match(rf[0]!.message, /only "GP"/);
    assert.equal(v([{ name: 'n_initial_points', value: '-1' }])[0]!.field, 'spec.algorithm.algorithmSettings[0].value');
    assert.match(v([{ name: 'acq_func', value: 'EIps' }])[0]!.message, /running time/);
    assert.equal(v([{ name: 'acq_optimizer', value: 'adam' }])[0]!.field, 'spec.algorithm.algorithmSettings[0].value');
    assert.equal(v([{ name: 'kappa', value: '2' }])[0]!.field, 'spec.algorithm.algorithmSettings[0].name');
    const badSpace = bo.validate({ parameters: [{ name: 'x', parameterType: 'double', feasibleSpace: { min: '1' } }], settings: [], parallelTrialCount: 1 });
    assert.ok(badSpace.some((e) => e.field.startsWith('spec.parameters[0]')));
  });
});
