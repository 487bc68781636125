import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ParameterSpec } from '../../../api/tuning-types.js';
import { Rng } from './rng.js';
import { assignmentKey, checkParameters, decode, encode, formatNumber, gridValues, parseSpace, sample, SpaceError } from './space.js';

const params: ParameterSpec[] = [
  { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.0001', max: '0.1', distribution: 'logUniform' } },
  { name: 'layers', parameterType: 'int', feasibleSpace: { min: '2', max: '5' } },
  { name: 'momentum', parameterType: 'double', feasibleSpace: { min: '0.5', max: '0.9', step: '0.1' } },
  { name: 'opt', parameterType: 'categorical', feasibleSpace: { list: ['sgd', 'adam', 'ftrl'] } },
  { name: 'batch', parameterType: 'discrete', feasibleSpace: { list: ['16', '32', '64'] } },
];

describe('parseSpace', () => {
  it('parses every kind with Katib defaults', () => {
    const s = parseSpace(params);
    assert.equal(s.dim, 5);
    const [lr, layers, mom, opt] = s.params;
    assert.equal(lr?.kind === 'numeric' && lr.log, true);
    assert.equal(layers?.kind === 'numeric' && layers.step, 1);
    assert.equal(layers?.kind === 'numeric' && layers.distribution, 'uniform');
    assert.equal(mom?.kind === 'numeric' && mom.max, 0.9);
    assert.deepEqual(opt?.kind === 'categorical' && opt.choices, ['sgd', 'adam', 'ftrl']);
  });

  it('names the bad field', () => {
    const bad: ParameterSpec[] = [
      { name: 'a', parameterType: 'int', feasibleSpace: { min: '1.5', max: '3' } },
      { name: 'b', parameterType: 'double', feasibleSpace: { min: '3', max: '1' } },
      { name: 'c', parameterType: 'double', feasibleSpace: { min: '0', max: '1', distribution: 'logUniform' } },
      { name: 'd', parameterType: 'categorical', feasibleSpace: { list: [] } },
      { name: 'e', parameterType: 'double', feasibleSpace: { min: '0', max: '1', step: '-1' } },
      { name: 'f', parameterType: 'unknown', feasibleSpace: {} },
      { name: 'g', parameterType: 'double', feasibleSpace: { max: '1' } },
      { name: 'h', parameterType: 'categorical', feasibleSpace: { list: ['x'], min: '1' } },
      { name: 'i', parameterType: 'double', feasibleSpace: { min: 'x', max: '1' } },
      { name: 'a', parameterType: 'double', feasibleSpace: { min: '0', max: '1', distribution: 'gamma' as never } },
    ];
    const errs = checkParameters(bad);
    const fields = errs.map((e) => e.field);
    assert.deepEqual(fields, [
      'spec.parameters[0].feasibleSpace.min',
      'spec.parameters[1].feasibleSpace.max',
      'spec.parameters[2].feasibleSpace.min',
      'spec.parameters[3].feasibleSpace.list',
      'spec.parameters[4].feasibleSpace.step',
      'spec.parameters[5].parameterType',
      'spec.parameters[6].feasibleSpace.min',
      'spec.parameters[7].feasibleSpace.min',
      'spec.parameters[8].feasibleSpace.min',
      'spec.parameters[9].name',
      'spec.parameters[9].feasibleSpace.distribution',
    ]);
    assert.throws(() => parseSpace(bad), SpaceError);
    assert.equal(checkParameters([]).at(0)?.field, 'spec.parameters');
  });
});

describe('encode / decode', () => {
  const s = parseSpace(params);

  it('round-trips every assignment drawn', () => {
    const rng = new Rng(1);
    for (let i = 0; i < 300; i++) {
      const a = sample(s, rng);
      const p = encode(s, a);
      assert.ok(p.every((u) => u >= 0 && u <= 1));
      assert.deepEqual(decode(s, p), a);
    }
  });

  it('decodes ints without a decimal point, steps without float noise, all within bounds', () => {
    const rng = new Rng(2);
    const seenLayers = new Set<string>();
    const seenMom = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const a = decode(s, [rng.uniform(), rng.uniform(), rng.uniform(), rng.uniform(), rng.uniform()]);
      seenLayers.add(a.layers!);
      seenMom.add(a.momentum!);
      const lr = Number(a.lr);
      assert.ok(lr >= 0.0001 && lr <= 0.1, a.lr);
    }
    assert.deepEqual([...seenLayers].sort(), ['2', '3', '4', '5']);
    assert.deepEqual([...seenMom].sort(), ['0.5', '0.6', '0.7', '0.8', '0.9']);
    assert.deepEqual(decode(s, [0, 0, 0, 0, 0]), { lr: '0.0001', layers: '2', momentum: '0.5', opt: 'sgd', batch: '16' });
    assert.deepEqual(decode(s, [1, 1, 1, 1, 1]), { lr: '0.1', layers: '5', momentum: '0.9', opt: 'ftrl', batch: '64' });
  });

  it('spreads log-uniform values evenly over decades', () => {
    const rng = new Rng(3);
    let below = 0;
    for (let i = 0; i < 3000; i++) if (Number(sample(s, rng).lr) < 0.001) below++;
    // one decade of three: a third of the draws
    assert.ok(below > 850 && below < 1150, String(below));
  });

  it('keeps normal and logNormal draws inside [min, max], centred', () => {
    const sp = parseSpace([
      { name: 'n', parameterType: 'double', feasibleSpace: { min: '0', max: '6', distribution: 'normal' } },
      { name: 'ln', parameterType: 'double', feasibleSpace: { min: '1', max: '10000', distribution: 'logNormal' } },
    ]);
    const rng = new Rng(4);
    let mid = 0;
    let lnMid = 0;
    for (let i = 0; i < 2000; i++) {
      const a = sample(sp, rng);
      const n = Number(a.n);
      const ln = Number(a.ln);
      assert.ok(n >= 0 && n <= 6 && ln >= 1 && ln <= 10000);
      if (n >= 2 && n <= 4) mid++;
      if (ln >= 10 ** (4 / 3) && ln <= 10 ** (8 / 3)) lnMid++;
    }
    // ±1 sigma holds 68%
    assert.ok(mid > 1250 && mid < 1480, String(mid));
    assert.ok(lnMid > 1250 && lnMid < 1480, String(lnMid));
  });

  it('snaps stepped doubles from min and stops at the last step below max', () => {
    const sp = parseSpace([{ name: 'x', parameterType: 'double', feasibleSpace: { min: '0.05', max: '0.33', step: '0.1' } }]);
    assert.deepEqual(gridValues(sp.params[0]!), ['0.05', '0.15', '0.25']);
    assert.equal(decode(sp, [1]).x, '0.25');
    const ints = parseSpace([{ name: 'k', parameterType: 'int', feasibleSpace: { min: '1', max: '10', step: '3' } }]);
    assert.deepEqual(gridValues(ints.params[0]!), ['1', '4', '7', '10']);
  });

  it('handles min == max', () => {
    const sp = parseSpace([{ name: 'x', parameterType: 'double', feasibleSpace: { min: '2', max: '2' } }]);
    assert.equal(decode(sp, [0.3]).x, '2');
    assert.equal(encode(sp, { x: '2' })[0]! >= 0, true);
  });

  it('rejects values off the list and missing parameters', () => {
    assert.throws(() => encode(s, { lr: '0.01', layers: '2', momentum: '0.5', opt: 'rmsprop', batch: '16' }), /opt/);
    assert.throws(() => encode(s, { lr: '0.01' }), /layers/);
  });
});

describe('assignmentKey', () => {
  it('compares numbers by value and ignores extra keys', () => {
    const s = parseSpace(params);
    const a = { lr: '0.01', layers: '3', momentum: '0.5', opt: 'sgd', batch: '32' };
    const b = { momentum: '0.50', lr: '1e-2', layers: '3', opt: 'sgd', batch: '32.0', extra: 'x' };
    assert.equal(assignmentKey(s, a), assignmentKey(s, b));
    assert.notEqual(assignmentKey(s, a), assignmentKey(s, { ...a, opt: 'adam' }));
  });

  it('formats numbers without float noise', () => {
    assert.equal(formatNumber(0.1 + 0.2), '0.3');
    assert.equal(formatNumber(3), '3');
    assert.equal(formatNumber(1e-7), '1e-7');
  });
});
