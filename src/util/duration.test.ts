import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationMs, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it('reads Go durations', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('1.5h'), 5_400_000);
    assert.equal(parseDuration('2h45m30.5s'), 9_930_500);
    assert.equal(parseDuration('1500us'), 1.5);
    assert.equal(parseDuration('1500µs'), 1.5);
    assert.equal(parseDuration('2000000ns'), 2);
    assert.equal(parseDuration('.5s'), 500);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('-1m'), -60_000);
    assert.equal(parseDuration(' 30s '), 30_000);
  });

  it('reads protojson durations', () => {
    assert.equal(parseDuration('3600s'), 3_600_000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('0s'), 0);
    assert.equal(parseDuration('-2.25s'), -2250);
  });

  it('says undefined for what is not a duration', () => {
    for (const s of ['', ' ', '5', '1h30', 'soon', '5x', 's', '1d', '--1s', '1h 30m', '-', '1..5s']) assert.equal(parseDuration(s), undefined, s);
  });

  it('takes days and bare seconds only when asked', () => {
    assert.equal(parseDuration('2d', { days: true }), 172_800_000);
    assert.equal(parseDuration('1d12h', { days: true }), 129_600_000);
    assert.equal(parseDuration('45', { bareSeconds: true }), 45_000);
    assert.equal(parseDuration('45'), undefined);
  });
});

describe('durationMs', () => {
  it('falls back when absent or malformed and never goes below zero', () => {
    assert.equal(durationMs(undefined, 7), 7);
    assert.equal(durationMs('', 7), 7);
    assert.equal(durationMs('soon', 7), 7);
    assert.equal(durationMs('30s', 7), 30_000);
    assert.equal(durationMs('-5s', 7), 0);
  });
});
