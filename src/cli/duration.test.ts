import { test } from 'node:test';
import assert from 'node:assert/strict';
import { age, humanDuration, parseDuration, shortDuration } from './duration.js';

void test('parseDuration understands Go-style durations and bare seconds', () => {
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1.5h'), 5_400_000);
  assert.equal(parseDuration('2d'), 172_800_000);
  assert.equal(parseDuration('45'), 45_000);
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration(''), undefined);
  assert.equal(parseDuration('soon'), undefined);
  assert.equal(parseDuration('5x'), undefined);
  assert.equal(parseDuration('-5s'), undefined);
});

void test('humanDuration matches kubectl ages', () => {
  const s = 1000;
  const m = 60 * s;
  const h = 60 * m;
  const d = 24 * h;
  assert.equal(humanDuration(0), '0s');
  assert.equal(humanDuration(-500), '0s');
  assert.equal(humanDuration(-5000), '<invalid>');
  assert.equal(humanDuration(5 * s), '5s');
  assert.equal(humanDuration(119 * s), '119s');
  assert.equal(humanDuration(3 * m + 2 * s), '3m2s');
  assert.equal(humanDuration(4 * m), '4m');
  assert.equal(humanDuration(15 * m + 20 * s), '15m');
  assert.equal(humanDuration(179 * m), '179m');
  assert.equal(humanDuration(3 * h + 5 * m), '3h5m');
  assert.equal(humanDuration(5 * h), '5h');
  assert.equal(humanDuration(10 * h + 30 * m), '10h');
  assert.equal(humanDuration(47 * h), '47h');
  assert.equal(humanDuration(2 * d + 4 * h), '2d4h');
  assert.equal(humanDuration(3 * d), '3d');
  assert.equal(humanDuration(45 * d), '45d');
  assert.equal(humanDuration(3 * 365 * d + 10 * d), '3y10d');
  assert.equal(humanDuration(9 * 365 * d), '9y');
});

void test('age of timestamps', () => {
  const now = Date.parse('2025-01-01T00:10:00Z');
  assert.equal(age('2025-01-01T00:09:55Z', now), '5s');
  assert.equal(age('2025-01-01T00:07:58Z', now), '2m2s');
  assert.equal(age(undefined, now), '<unknown>');
  assert.equal(age('garbage', now), '<unknown>');
});

void test('shortDuration for messages', () => {
  assert.equal(shortDuration(30_000), '30s');
  assert.equal(shortDuration(300_000), '5m');
  assert.equal(shortDuration(5_400_000), '1h30m');
  assert.equal(shortDuration(0), '0ms');
});
