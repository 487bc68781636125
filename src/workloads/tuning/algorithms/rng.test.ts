import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Rng, hashString } from './rng.js';

describe('Rng', () => {
  it('repeats its sequence for a seed and differs between seeds', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const sa = Array.from({ length: 20 }, () => a.nextU32());
    const sb = Array.from({ length: 20 }, () => b.nextU32());
    const sc = Array.from({ length: 20 }, () => c.nextU32());
    assert.deepEqual(sa, sb);
    assert.notDeepEqual(sa, sc);
    assert.ok(sa.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32));
  });

  it('draws uniforms in [0,1) with the right mean and variance', () => {
    const r = new Rng(7);
    let s = 0;
    let s2 = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const u = r.uniform();
      assert.ok(u >= 0 && u < 1);
      s += u;
      s2 += u * u;
    }
    const mean = s / n;
    assert.ok(Math.abs(mean - 0.5) < 0.01, `mean ${mean}`);
    assert.ok(Math.abs(s2 / n - mean * mean - 1 / 12) < 0.005);
  });

  it('draws normals with the asked mean and deviation', () => {
    const r = new Rng(11);
    const n = 20000;
    const xs = Array.from({ length: n }, () => r.normal(3, 2));
    const mean = xs.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
    assert.ok(Math.abs(mean - 3) < 0.06, `mean ${mean}`);
    assert.ok(Math.abs(sd - 2) < 0.06, `sd ${sd}`);
  });

  it('draws integers over the whole inclusive range, evenly', () => {
    const r = new Rng(5);
    const counts = new Array(6).fill(0) as number[];
    for (let i = 0; i < 6000; i++) {
      const k = r.int(-2, 3);
      counts[k + 2]! += 1;
    }
    assert.ok(counts.every((c) => c > 850 && c < 1150), String(counts));
    assert.throws(() => r.int(3, 2), /bad integer range/);
  });

  it('chooses, weighs and shuffles', () => {
    const r = new Rng(9);
    const items = ['a', 'b', 'c'];
    const got = new Set(Array.from({ length: 100 }, () => r.choice(items)));
    assert.deepEqual([...got].sort(), items);
    const w = [0, 3, 1];
    const counts = [0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[r.weighted(w)]! += 1;
    assert.equal(counts[0], 0);
    assert.ok(counts[1]! > 2700 && counts[1]! < 3300, String(counts));
    const arr = Array.from({ length: 10 }, (_, i) => i);
    const sh = r.shuffle([...arr]);
    assert.deepEqual([...sh].sort((x, y) => x - y), arr);
    assert.notDeepEqual(sh, arr);
    assert.throws(() => r.choice([]), /empty/);
  });

  it('accepts large and fractional seeds and rejects non-finite ones', () => {
    assert.notEqual(new Rng(2 ** 40).nextU32(), new Rng(2 ** 40 + 2 ** 33).nextU32());
    assert.throws(() => new Rng(Number.NaN), /seed/);
    assert.notEqual(hashString('a'), hashString('b'));
  });
});
