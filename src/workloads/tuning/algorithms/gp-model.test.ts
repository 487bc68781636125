import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { acquisitionScore, fitKernel, GpPosterior, lbfgsMinimise, logH, logNormCdf, normCdf } from './gp-model.js';
import { cholesky, choleskyAppend, choleskyInverse, symmetricEigen } from './linalg.js';
import { Rng } from './rng.js';

function randomSpd(n: number, rng: Rng): Float64Array {
  const b = Float64Array.from({ length: n * n }, () => rng.normal());
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    let s = i === j ? n : 0;
    for (let k = 0; k < n; k++) s += b[i * n + k]! * b[j * n + k]!;
    a[i * n + j] = s;
  }
  return a;
}

describe('linalg', () => {
  it('inverts through the Cholesky factor', () => {
    const n = 12;
    const a = randomSpd(n, new Rng(1));
    const inv = choleskyInverse(cholesky(a, n)!, n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += a[i * n + k]! * inv[k * n + j]!;
      assert.ok(Math.abs(s - (i === j ? 1 : 0)) < 1e-9, `(A·A⁻¹)[${i},${j}] = ${s}`);
    }
  });

  it('extends a factorisation by one row as a full refactorisation would', () => {
    const n = 9;
    const a = randomSpd(n, new Rng(2));
    const m = n - 1;
    const sub = new Float64Array(m * m);
    for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) sub[i * m + j] = a[i * n + j]!;
    const col = Float64Array.from({ length: m }, (_, i) => a[i * n + m]!);
    const grown = choleskyAppend(cholesky(sub, m)!, m, col, a[m * n + m]!)!;
    const full = cholesky(a, n)!;
    for (let k = 0; k < n * n; k++) assert.ok(Math.abs(grown[k]! - full[k]!) < 1e-9);
  });

  it('rejects a matrix that is not positive definite', () => {
    assert.equal(cholesky(Float64Array.from([1, 2, 2, 1]), 2), undefined);
  });

  it('diagonalises a symmetric matrix: A·v = λ·v for every eigenpair', () => {
    const n = 6;
    const a = randomSpd(n, new Rng(3));
    const { values, vectors } = symmetricEigen(a, n);
    for (let c = 0; c < n; c++) {
      for (let i = 0; i < n; i++) {
        let av = 0;
        for (let k = 0; k < n; k++) av += a[i * n + k]! * vectors[k * n + c]!;
        assert.ok(Math.abs(av - values[c]! * vectors[i * n + c]!) < 1e-8);
      }
    }
  });
});

describe('L-BFGS', () => {
  it('finds the minimum of the Rosenbrock function', () => {
    const fg = (x: Float64Array) => {
      const [a, b] = [x[0]!, x[1]!];
      return { f: (1 - a) ** 2 + 100 * (b - a * a) ** 2, g: Float64Array.from([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)]) };
    };
    const r = lbfgsMinimise(fg, Float64Array.from([-1.2, 1]), 500);
    assert.ok(Math.abs(r.x[0]! - 1) < 1e-3 && Math.abs(r.x[1]! - 1) < 1e-3, `ended at ${r.x.join(',')}`);
  });
});

describe('Gaussian process', () => {
  const none = [false, false];

  it('interpolates noise-free data and predicts between the points', () => {
    const rng = new Rng(7);
    const f = (x: number[]) => Math.sin(5 * x[0]!) + x[1]! * x[1]!;
    const xs = Array.from({ length: 40 }, () => [rng.uniform(), rng.uniform()]);
    const ys = xs.map(f);
    const params = fitKernel(xs, ys, none);
    const gp = new GpPosterior(xs, ys, params, none);
    for (let i = 0; i < xs.length; i++) {
      const p = gp.predict(xs[i]!);
      assert.ok(Math.abs(p.mean - ys[i]!) < 1e-2, `at a training point: ${p.mean} vs ${ys[i]}`);
      assert.ok(p.variance < 1e-3);
    }
    let err = 0;
    for (let i = 0; i < 50; i++) {
      const x = [rng.uniform(), rng.uniform()];
      err += Math.abs(gp.predict(x).mean - f(x));
    }
    assert.ok(err / 50 < 0.05, `mean held-out error ${err / 50}`);
    assert.ok(Math.exp(params.logNoise) < 1e-3, `noise ${Math.exp(params.logNoise)}`);
  });

  it('learns a shorter length scale on the wiggly dimension', () => {
    const rng = new Rng(11);
    const xs = Array.from({ length: 40 }, () => [rng.uniform(), rng.uniform()]);
    const ys = xs.map((x) => Math.sin(12 * x[0]!) + 0.5 * x[1]!);
    const params = fitKernel(xs, ys, none);
    const [l0, l1] = params.logLength.map(Math.exp) as [number, number];
    assert.ok(l0 * 3 < l1, `length scales ${l0} (wiggly) and ${l1} (linear)`);
  });

  it('learns to ignore a categorical that does not matter and to use one that does', () => {
    const rng = new Rng(5);
    const cat = [false, true, true];
    const xs = Array.from({ length: 40 }, () => [rng.uniform(), rng.int(0, 2), rng.int(0, 2)]);
    const ys = xs.map((x) => Math.sin(4 * x[0]!) + (x[2] === 1 ? 2 : 0));
    const params = fitKernel(xs, ys, cat);
    const [, lIgnored, lUsed] = params.logLength.map(Math.exp) as [number, number, number];
    assert.ok(lUsed < lIgnored, `length scales: used ${lUsed}, ignored ${lIgnored}`);
  });

  it('appending a believed point collapses the variance there and leaves the mean', () => {
    const xs = [[0.1, 0.1], [0.9, 0.9], [0.5, 0.2]];
    const ys = [0, 1, 0.5];
    const gp = new GpPosterior(xs, ys, { logLength: [Math.log(0.3), Math.log(0.3)], logSignal: 0, logNoise: Math.log(1e-6) }, none);
    const q = [0.3, 0.7];
    const before = gp.predict(q);
    gp.append(q, before.mean);
    const after = gp.predict(q);
    assert.ok(after.variance < before.variance / 100);
    assert.ok(Math.abs(after.mean - before.mean) < 1e-6);
    assert.equal(gp.size, 4);
  });
});

describe('acquisition functions', () => {
  it('normal cdf and its log agree with known values and stay finite far in the tail', () => {
    assert.ok(Math.abs(normCdf(0) - 0.5) < 1e-7);
    assert.ok(Math.abs(normCdf(1.96) - 0.9750021) < 1e-6);
    assert.ok(Math.abs(logNormCdf(-3) - Math.log(normCdf(-3))) < 1e-5);
    assert.ok(Math.abs(logNormCdf(-5.99) - logNormCdf(-6.01)) < 0.2);
    assert.ok(Number.isFinite(logNormCdf(-40)) && logNormCdf(-40) < logNormCdf(-30));
  });

  it('log expected improvement is continuous where it switches to the tail series and decreasing in z↓', () => {
    assert.ok(Math.abs(logH(0) - Math.log(1 / Math.sqrt(2 * Math.PI))) < 1e-6);
    // d/dz log h(z) ≈ −z in the tail, so across z = −6 ± 0.001 it moves by about 0.012 and no more
    assert.ok(Math.abs(logH(-5.999) - logH(-6.001) - 0.012) < 0.004);
    let prev = Infinity;
    for (let z = 3; z > -50; z -= 0.5) {
      const v = logH(z);
      assert.ok(Number.isFinite(v) && v < prev, `logH(${z}) = ${v}`);
      prev = v;
    }
  });

  it('EI rises with a lower mean and with more uncertainty; LCB and PI order the same way', () => {
    for (const name of ['EI', 'PI', 'LCB'] as const) {
      assert.ok(acquisitionScore(name, -1, 0.5, 0) > acquisitionScore(name, 0, 0.5, 0), name);
    }
    assert.ok(acquisitionScore('EI', 1, 1, 0) > acquisitionScore('EI', 1, 0.1, 0));
    assert.ok(acquisitionScore('LCB', 1, 1, 0) > acquisitionScore('LCB', 1, 0.1, 0));
  });
});
