import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ParzenEstimator, defaultWeights, logSumExp, neighbourSigmas, normalCdf } from './parzen.js';
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
  it('is a density on [0,1]', () => {
    const pts = [[0.02], [0.1], [0.5], [0.97]];
    const pe = new ParzenEstimator([space.params[0]!], pts, defaultWeights(pts.length), { priorWeight: 1 });
    assert.ok(Math.abs(integrate1d(pe) - 1) < 1e-3, String(integrate1d(pe)));
  });

  it('puts mass near the observations and samples there', () => {
    const pts = [[0.2, 0.5 / 3], [0.22, 0.5 / 3], [0.21, 0.5 / 3], [0.19, 0.5 / 3]];
    const pe = new ParzenEstimator(space.params, pts, defaultWeights(4), { priorWeight: 1 });
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

  it('bandwidths reach the farther neighbour, the outermost only inwards, the prior centre no neighbour', () => {
    const close = (a: number[], b: number[]) => a.every((x, i) => Math.abs(x - b[i]!) < 1e-12);
    assert.ok(close(neighbourSigmas([0.8, 0.1, 0.3]), [0.5, 0.2, 0.5]));
    // a lone observation reaches to the farther end of the cube
    assert.ok(close(neighbourSigmas([0.3]), [0.7]));
    // two observations around the centre: 0.1 apart, not 0.05 to a prior kernel between them
    assert.ok(close(neighbourSigmas([0.45, 0.55]), [0.1, 0.1]));
  });

  it('multivariate kernels narrow to the spread of the observations along each dimension', () => {
    // tight in x, spread over y: the 2-D estimator stays sharp along x (Optuna 4.x gave both
    // dimensions one 0.2·n^(-1/6), about 0.11 here, and x would lose under 0.4 nats at 0.6)
    const pts = Array.from({ length: 30 }, (_, i) => [0.5 + ((i % 5) - 2) * 0.002, (i + 0.5) / 30]);
    const two = parseSpace([
      { name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
      { name: 'y', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } },
    ]);
    const pe = new ParzenEstimator(two.params, pts, defaultWeights(pts.length), { priorWeight: 1 });
    assert.ok(pe.logPdf([0.5, 0.5]) > pe.logPdf([0.6, 0.5]) + 2, `${pe.logPdf([0.5, 0.5])} vs ${pe.logPdf([0.6, 0.5])}`);
    assert.ok(Math.abs(pe.logPdf([0.5, 0.5]) - pe.logPdf([0.5, 0.6])) < 0.5);
  });

  it('a categorical kernel gives its own choice (1 + w/c) / (1 + w), however many observations', () => {
    const cat = [space.params[1]!];
    const own = (n: number) => {
      // all observations alike: the mixture is n such kernels and the uniform prior
      const pts = Array.from({ length: n }, () => [0.5 / 3]);
      const pe = new ParzenEstimator(cat, pts, defaultWeights(n), { priorWeight: 1 });
      return ((n + 1) * Math.exp(pe.logPdf([0.5 / 3])) - 1 / 3) / n;
    };
    for (const n of [1, 4, 19]) assert.ok(Math.abs(own(n) - 2 / 3) < 1e-9, `${n}: ${own(n)}`);
  });

  it('categorical probabilities sum to one', () => {
    const pe = new ParzenEstimator([space.params[1]!], [[0.1], [0.9]], [1, 1], { priorWeight: 1 });
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
