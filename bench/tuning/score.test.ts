import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bestSoFarArea, bordaPoints, mannWhitneyLess, median, normalisedRegret, pickAlpha, smallestP } from './score.js';

const close = (a: number, b: number, rel: number): void => assert.ok(Math.abs(a - b) <= rel * Math.abs(b), `${a} is not within ${rel} of ${b}`);

describe('normalised regret', () => {
  it('is 0 at the optimum, 1 at the typical random value, and never negative', () => {
    assert.equal(normalisedRegret(-3, -3, 7), 0);
    assert.equal(normalisedRegret(7, -3, 7), 1);
    assert.equal(normalisedRegret(-2, -3, 7), 0.1);
    assert.equal(normalisedRegret(-3.0000001, -3, 7), 0);
    assert.throws(() => normalisedRegret(1, 2, 2));
  });

  it('median and the best-so-far area', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
    assert.equal(bestSoFarArea([5, 3, 4, 1]), (5 + 3 + 3 + 1) / 4);
  });
});

describe('Mann-Whitney U, one-sided (less), as scipy computes it', () => {
  // reference p-values from scipy.stats.mannwhitneyu(a, b, alternative='less') (scipy 1.15)
  const cases: [number[], number[], number][] = [
    [[1, 2, 3], [4, 5, 6], 0.05],
    [[4, 5, 6], [1, 2, 3], 1.0],
    [[1, 3, 5, 7, 9], [2, 4, 6, 8, 10], 0.34523809523809523],
    [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5], 0.0014136360455584039],
    [[1, 1, 2, 2, 3, 3, 4, 4, 5, 5], [3, 3, 4, 4, 5, 5, 6, 6, 7, 7], 0.007928104840523113],
    [Array.from({ length: 10 }, (_, i) => 0.1 * i), Array.from({ length: 10 }, (_, i) => 10 + 0.1 * i), 9.133589555477501e-5],
    [[5, 5, 5, 5, 5, 5, 5, 5, 5, 5], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5], 1.0],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9], [1.5, 2.5, 3.5, 30, 40, 50, 60, 70, 80, 90], 0.027506916176989502],
  ];
  for (const [a, b, p] of cases) {
    it(`${JSON.stringify(a)} < ${JSON.stringify(b)}: p = ${p}`, () => close(mannWhitneyLess(a, b), p, 1e-5));
  }

  it('the smallest p-value a number of seeds allows', () => {
    close(smallestP(3), 0.05, 1e-9);
    close(smallestP(5), 1 / 252, 1e-9);
    assert.ok(smallestP(10) < 1e-4);
  });
});

describe('Borda count', () => {
  it('alpha keeps the family-wise error under 5 %, as Optuna picks it', () => {
    assert.equal(pickAlpha(2), 0.025);
    assert.equal(pickAlpha(3), 0.01);
    assert.equal(pickAlpha(9), 0.001);
  });

  it('scores the number of contenders with fewer significant wins', () => {
    const seeds = (base: number): number[] => Array.from({ length: 10 }, (_, i) => base + i * 0.01);
    const points = bordaPoints([
      { contender: 'good', metrics: [seeds(0)] },
      { contender: 'middle', metrics: [seeds(1)] },
      { contender: 'bad', metrics: [seeds(2)] },
    ]);
    assert.deepEqual(Object.fromEntries(points), { good: 2, middle: 1, bad: 0 });
  });

  it('gives no points when nothing is significant, and ties share', () => {
    const points = bordaPoints([
      { contender: 'a', metrics: [[1, 2, 3]] },
      { contender: 'b', metrics: [[4, 5, 6]] },
    ]);
    // three seeds cannot reach p < 0.025
    assert.deepEqual(Object.fromEntries(points), { a: 0, b: 0 });
    const tied = bordaPoints([
      { contender: 'a', metrics: [[0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]] },
      { contender: 'b', metrics: [[0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]] },
      { contender: 'c', metrics: [[5, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9]] },
    ]);
    assert.deepEqual(Object.fromEntries(tied), { a: 1, b: 1, c: 0 });
  });

  it('breaks ties in wins with the next metric', () => {
    const same = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const points = bordaPoints([
      { contender: 'early', metrics: [same, same.map((v) => v + 0)] },
      { contender: 'late', metrics: [same, same.map((v) => v + 100)] },
    ]);
    assert.deepEqual(Object.fromEntries(points), { early: 1, late: 0 });
  });
});
