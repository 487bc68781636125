import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import type { CmaState } from './cmaes.js';
import { cmaesAlgorithm as cma, defaultPopulation, strategyConstants } from './cmaes.js';
import { assignmentKey, parseSpace } from './space.js';
import type { TrialRecord } from './types.js';

function box(dim: number, lo: number, hi: number): ParameterSpec[] {
  return Array.from({ length: dim }, (_, i) => ({ name: `x${i}`, parameterType: 'double' as const, feasibleSpace: { min: String(lo), max: String(hi) } }));
}

function xs(a: Record<string, string>, dim: number): number[] {
  return Array.from({ length: dim }, (_, i) => Number(a[`x${i}`]));
}

/** Runs CMA-ES against f; every returned assignment is evaluated before the next call. */
function runLoop(
  parameters: ParameterSpec[], settings: Record<string, string>, f: (a: Record<string, string>) => number | undefined,
  budget: number, seed: number, parallel = 1, count = parallel,
): { trials: TrialRecord[]; states: CmaState[] } {
  const trials: TrialRecord[] = [];
  const states: CmaState[] = [];
  let state: Record<string, string> = {};
  for (let call = 0; trials.length < budget; call++) {
    const res = cma.suggest({ parameters, settings, trials, count: Math.min(count, budget - trials.length), state, seed: seed * 100000 + call, parallelTrialCount: parallel });
    assert.ok(res.assignments.length > 0, `call ${call} returned nothing`);
    state = res.state ?? {};
    states.push(JSON.parse(state['cmaes']!) as CmaState);
    for (const a of res.assignments) {
      const v = f(a.assignments);
      trials.push(v === undefined
        ? { name: `t${trials.length}`, assignments: a.assignments, state: 'failed' }
        : { name: `t${trials.length}`, assignments: a.assignments, state: 'succeeded', value: v });
    }
  }
  return { trials, states };
}

const best = (trials: TrialRecord[]): number => Math.min(...trials.filter((t) => t.value !== undefined).map((t) => t.value!));

describe('cmaes', () => {
  const shift = [1.2, -0.7, 2.5, -1.9, 0.4];

  it('converges on a shifted 5-D sphere', () => {
    const f = (a: Record<string, string>) => xs(a, 5).reduce((s, v, i) => s + (v - shift[i]!) ** 2, 0);
    const { trials } = runLoop(box(5, -5, 5), {}, f, 800, 1, 1, 8);
    assert.ok(best(trials) < 1e-6, `best ${best(trials)}`);
  });

  it('converges on a 5-D ellipsoid with condition number 10⁴ (the covariance adapts)', () => {
    const f = (a: Record<string, string>) => xs(a, 5).reduce((s, v, i) => s + 10 ** (i) * (v - shift[i]!) ** 2, 0);
    const { trials, states } = runLoop(box(5, -5, 5), {}, f, 1500, 2, 4, 8);
    assert.ok(best(trials) < 1e-5, `best ${best(trials)}`);
    // the learnt covariance stretches along the flattest axis: C₀₀ ≫ C₄₄
    const last = states.at(-1)!;
    assert.ok(last.cov[0]! > 100 * last.cov[4 * 5 + 4]!, `C diag ${last.cov.filter((_, k) => k % 6 === 0).join(', ')}`);
  });

  it('IPOP restarts on Rastrigin, doubling the population each time', () => {
    const f = (a: Record<string, string>) => xs(a, 2).reduce((s, v) => s + v * v - 10 * Math.cos(2 * Math.PI * v) + 10, 0);
    const { states } = runLoop(box(2, -5.12, 5.12), { restart_strategy: 'ipop' }, f, 2400, 3, 1, 64);
    const lambda0 = defaultPopulation(2);
    const last = states.at(-1)!;
    assert.ok(last.restarts >= 2, `restarts ${last.restarts}`);
    const lambdas = [...new Set(states.map((s) => s.lambda))];
    assert.deepEqual(lambdas.slice(0, 3), [lambda0, 2 * lambda0, 4 * lambda0]);
  });

  it('without a restart strategy the population never changes', () => {
    const f = (a: Record<string, string>) => xs(a, 2).reduce((s, v) => s + v * v - 10 * Math.cos(2 * Math.PI * v) + 10, 0);
    const { states } = runLoop(box(2, -5.12, 5.12), { restart_strategy: 'none' }, f, 1500, 3, 1, 64);
    assert.deepEqual([...new Set(states.map((s) => s.lambda))], [defaultPopulation(2)]);
    assert.equal(states.at(-1)!.restarts, 0);
  });

  it('BIPOP alternates large and small populations', () => {
    const f = (a: Record<string, string>) => xs(a, 2).reduce((s, v) => s + v * v - 10 * Math.cos(2 * Math.PI * v) + 10, 0);
    const { states } = runLoop(box(2, -5.12, 5.12), { restart_strategy: 'bipop' }, f, 2400, 4, 1, 64);
    const lambda0 = defaultPopulation(2);
    const large = states.find((s) => s.regime === 'large' && s.largeRestarts === 1);
    assert.equal(large?.lambda, 2 * lambda0, 'the first restart is a large run with twice the population');
    const small = states.find((s) => s.regime === 'small');
    assert.ok(small, 'then a small-population run');
    assert.ok(small.lambda >= lambda0 && small.lambda < large.lambda);
    // a small run starts with a step at most σ₀ (σ₀·10^(−2U))
    assert.ok(small.generation > 0 || small.sigma <= small.sigma0);
  });

  it('is deterministic per seed and differs across seeds', () => {
    const f = (a: Record<string, string>) => xs(a, 3).reduce((s, v) => s + v * v, 0);
    const run = (seed: number) => runLoop(box(3, -1, 1), {}, f, 40, seed, 3).trials.map((t) => JSON.stringify(t.assignments));
    assert.deepEqual(run(7), run(7));
    assert.notDeepEqual(run(7), run(8));
  });

  it('hands out members of one generation in parallel with no duplicates, and waits for the generation', () => {
    const parameters: ParameterSpec[] = [
      { name: 'a', parameterType: 'int', feasibleSpace: { min: '0', max: '3' } },
      { name: 'b', parameterType: 'int', feasibleSpace: { min: '0', max: '3' } },
      { name: 'c', parameterType: 'categorical', feasibleSpace: { list: ['p', 'q'] } },
    ];
    const space = parseSpace(parameters);
    const res = cma.suggest({ parameters, settings: {}, trials: [], count: 10, state: {}, seed: 1, parallelTrialCount: 3 });
    const st = JSON.parse(res.state!['cmaes']!) as CmaState;
    assert.equal(st.lambda, defaultPopulation(2));
    assert.ok(res.assignments.length <= st.lambda);
    const keys = res.assignments.map((a) => assignmentKey(space, a.assignments));
    assert.equal(new Set(keys).size, keys.length);
    // all handed out and pending: nothing more until they finish
    const trials: TrialRecord[] = res.assignments.map((a, i) => ({ name: `t${i}`, assignments: a.assignments, state: 'pending' }));
    const again = cma.suggest({ parameters, settings: {}, trials, count: 3, state: res.state!, seed: 2, parallelTrialCount: 3 });
    assert.deepEqual(again.assignments, []);
    // the whole 32-point space is walked without a repeat, failures included
    const all = runLoop(parameters, { restart_strategy: 'ipop' }, (a) => (a['c'] === 'p' ? undefined : Number(a['a']) + Number(a['b'])), 32, 5, 3).trials;
    const allKeys = all.map((t) => assignmentKey(space, t.assignments));
    assert.equal(new Set(allKeys).size, allKeys.length);
  });

  it('a failed trial takes the worst value of its generation and the search still converges', () => {
    const f = (a: Record<string, string>) => {
      const v = xs(a, 4);
      if (v[0]! > 3) return undefined; // crashes in one corner
      return v.reduce((s, x, i) => s + (x - shift[i]!) ** 2, 0);
    };
    const { trials } = runLoop(box(4, -5, 5), { sigma: '0.3' }, f, 600, 6, 2);
    assert.ok(trials.some((t) => t.state === 'failed'));
    assert.ok(best(trials) < 1e-5, `best ${best(trials)}`);
  });

  it('strategy constants match Hansen\'s table for n = 10', () => {
    const c = strategyConstants(10, defaultPopulation(10));
    assert.equal(defaultPopulation(10), 10);
    assert.equal(c.mu, 5);
    assert.equal(c.weights.length, 10);
    assert.ok(Math.abs(c.weights.slice(0, 5).reduce((a, b) => a + b, 0) - 1) < 1e-12);
    assert.ok(c.weights.slice(5).every((w) => w < 0), 'the worse half has negative weights');
    assert.ok(c.weights.every((w, i) => i === 0 || w < c.weights[i - 1]!), 'weights decrease with rank');
    assert.ok(Math.abs(c.muEff - 3.1672) < 1e-3, `muEff ${c.muEff}`);
    assert.ok(Math.abs(c.chiN - 3.0847) < 1e-3, `chiN ${c.chiN}`);
  });

  it('validates: two numeric parameters needed, settings by field', () => {
    const v = (parameters: ParameterSpec[], settings: { name: string; value: string }[]) => cma.validate({ parameters, settings, parallelTrialCount: 1 });
    assert.deepEqual(v(box(2, 0, 1), [{ name: 'random_state', value: '3' }, { name: 'sigma', value: '0.2' }, { name: 'restart_strategy', value: 'bipop' }]), []);
    const one = v([...box(1, 0, 1), { name: 'c', parameterType: 'categorical', feasibleSpace: { list: ['a', 'b'] } }], []);
    assert.equal(one.length, 1);
    assert.equal(one[0]!.field, 'spec.parameters');
    assert.equal(v(box(2, 0, 1), [{ name: 'sigma', value: '0' }])[0]!.field, 'spec.algorithm.algorithmSettings[0].value');
    assert.equal(v(box(2, 0, 1), [{ name: 'random_state', value: '1' }, { name: 'restart_strategy', value: 'lipop' }])[0]!.field, 'spec.algorithm.algorithmSettings[1].value');
    assert.equal(v(box(2, 0, 1), [{ name: 'popsize', value: '10' }])[0]!.field, 'spec.algorithm.algorithmSettings[0].name');
  });
});
