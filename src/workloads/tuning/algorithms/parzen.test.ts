import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ParzenEstimator, defaultWeights, logSumExp, normalCdf } from './parzen.js';
import { Rng } from './rng.js';
import { parseSpace } from './space.js';

const space = parseSpace([
  { name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
  { name: 'c', parameterType: 'categorical', feasibleSpace: { list: ['a', 'b', 'c'] } },
]);

function integrate1d(pe: ParzenEstimator): number {
  const n = 4000;
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.exp(pe.logPdf([(i + 0.5) / n]));
  return s / n;
}

describe('ParzenEstimator', () => {
  for (const multivariate of [false, true]) {
    it(`is a density on [0,1] (${multivariate ? 'multivariate' : 'univariate'})`, () => {
      const pts = [[0.02], [0.1], [0.5], [0.97]];
      const pe = new ParzenEstimator([space.params[0]!], pts, defaultWeights(pts.length), { priorWeight: 1, multivariate });
      assert.ok(Math.abs(integrate1d(pe) - 1) < 1e-3, String(integrate1d(pe)));
    });
  }

  it('puts mass near the observations and samples there', () => {
    const pts = [[0.2, 0.5 / 3], [0.22, 0.5 / 3], [0.21, 0.5 / 3], [0.19, 0.5 / 3]];
    const pe = new ParzenEstimator(space.params, pts, defaultWeights(4), { priorWeight: 1, multivariate: true });
    assert.ok(pe.logPdf([0.2, 0.1]) > pe.logPdf([0.8, 0.1]) + 1);
    assert.ok(pe.logPdf([0.2, 0.1]) > pe.logPdf([0.2, 0.9]));
    const draws = pe.sample(new Rng(1), 2000);
    const near = draws.filter((d) => Math.abs(d[0]! - 0.2) < 0.15).length;
    const catA = draws.filter((d) => d[1]! < 1 / 3).length;
    // uniform draws would put 30% there
    assert.ok(near > 1000, String(near));
    // 4 of 5 components lean to 'a' ((1 + 1/3) / 2 each), the prior is uniform
    assert.ok(catA > 1150 && catA < 1450, String(catA));
    assert.ok(draws.every((d) => d[0]! >= 0 && d[0]! <= 1));
  });

  it('categorical probabilities sum to one', () => {
    const pe = new ParzenEstimator([space.params[1]!], [[0.1], [0.9]], [1, 1], { priorWeight: 1, multivariate: false });
    const total = [1 / 6, 0.5, 5 / 6].reduce((s, u) => s + Math.exp(pe.logPdf([u])), 0);
    assert.ok(Math.abs(total - 1) < 1e-9, String(total));
  });
});

describe('numerics', () => {
  it('normal cdf and logsumexp', () => {
    assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
    assert.ok(Math.abs(normalCdf(1.96) - 0.9750021) < 1e-6);
    assert.ok(Math.abs(logSumExp([1000, 1000]) - (1000 + Math.log(2))) < 1e-9);
    assert.equal(logSumExp([]), -Infinity);
  });
});
