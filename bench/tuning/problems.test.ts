import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BRANIN_OPT, HARTMANN6_OPT, bbob, branin, hartmann6, parametersOf, typicalValue } from './problems.js';
import { BenchRng } from './rng.js';

const close = (a: number, b: number, tol: number, what: string): void => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} is not within ${tol} of ${b}`);

describe('Branin and Hartmann-6', () => {
  it('Branin has 0.397887 at its three minimisers and known values elsewhere', () => {
    const p = branin();
    close(BRANIN_OPT, 0.397887, 1e-6, 'optimum');
    for (const x of [[-Math.PI, 12.275], [Math.PI, 2.275], [9.42478, 2.475]]) close(p.evaluate(x), BRANIN_OPT, 1e-9, `at ${x}`);
    close(p.evaluate([0, 0]), 55.602112642270264, 1e-9, 'at the origin');
    close(p.evaluate([10, 15]), 145.87219087939556, 1e-9, 'at the corner');
  });

  it('Hartmann-6 has -3.32237 at its minimiser and a value computed independently at the centre', () => {
    const p = hartmann6();
    close(p.evaluate(p.xOpt), -3.32237, 1e-5, 'at x_opt');
    close(HARTMANN6_OPT, -3.32237, 1e-5, 'the optimum');
    assert.ok(p.evaluate(p.xOpt) >= HARTMANN6_OPT);
    close(p.evaluate([0.5, 0.5, 0.5, 0.5, 0.5, 0.5]), -0.5053149917022333, 1e-12, 'at the centre');
  });

  it('describes the spaces as Katib double parameters', () => {
    assert.deepEqual(parametersOf(branin()), [
      { name: 'x1', parameterType: 'double', feasibleSpace: { min: '-5', max: '10' } },
      { name: 'x2', parameterType: 'double', feasibleSpace: { min: '0', max: '15' } },
    ]);
  });
});

describe('BBOB at 5-D', () => {
  for (let fn = 1; fn <= 24; fn++) {
    it(`f${fn}: f_opt at x_opt, nothing lower at random points, the same instance every time`, () => {
      for (const instance of [1, 2, 3]) {
        const p = bbob(fn, instance);
        assert.equal(p.bounds.length, 5);
        assert.ok(p.xOpt.every((v) => v >= -5 && v <= 5), `x_opt ${p.xOpt} is inside the box`);
        // f20's x_opt is the Schwefel optimum rounded to ten digits
        close(p.evaluate(p.xOpt), p.fOpt, fn === 20 ? 1e-9 : 1e-12 * Math.max(1, Math.abs(p.fOpt)), `f${fn} instance ${instance} at x_opt`);
        const rng = new BenchRng(fn * 100 + instance);
        for (let k = 0; k < 300; k++) {
          const x = p.bounds.map(() => rng.range(-5, 5));
          const v = p.evaluate(x);
          assert.ok(Number.isFinite(v), `f${fn} is finite at ${x}`);
          assert.ok(v >= p.fOpt - 1e-9, `f${fn} instance ${instance}: ${v} below f_opt ${p.fOpt} at ${x}`);
        }
        assert.equal(bbob(fn, instance).evaluate([1, -2, 3, -4, 0.5]), p.evaluate([1, -2, 3, -4, 0.5]));
      }
      assert.notEqual(bbob(fn, 1).evaluate([1, -2, 3, -4, 0.5]), bbob(fn, 2).evaluate([1, -2, 3, -4, 0.5]));
    });
  }

  it('f1 is the squared distance to x_opt', () => {
    const p = bbob(1, 7);
    const x = [1, 2, 3, 4, 5];
    close(p.evaluate(x) - p.fOpt, x.reduce((s, v, i) => s + (v - (p.xOpt[i] as number)) ** 2, 0), 1e-9, 'sphere');
  });

  it('f5 is minimised at a corner of the box', () => {
    const p = bbob(5, 1);
    assert.ok(p.xOpt.every((v) => Math.abs(v) === 5));
  });

  it('the typical value of random points lies well above the optimum', () => {
    for (const p of [branin(), hartmann6(), bbob(1, 1), bbob(21, 1)]) {
      const t = typicalValue(p);
      assert.ok(t > p.fOpt, `${p.id}: ${t} > ${p.fOpt}`);
      assert.equal(typicalValue(p), t);
    }
  });
});
