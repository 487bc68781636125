import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseDuration } from './config.js';

it('config durations: Go durations or milliseconds, errors naming the option', () => {
  assert.equal(parseDuration('1h30m', 'eventTTL'), 5_400_000);
  assert.equal(parseDuration('250ms', 'jobPodBackoff'), 250);
  assert.equal(parseDuration(1500, 'jobPodBackoff'), 1500);
  assert.throws(() => parseDuration('10 s', 'crashLoopBackoff'), /^Error: crashLoopBackoff: "10 s" is not a duration \(use e\.g\. 10s, 5m, 1h\)$/);
  assert.throws(() => parseDuration('-5s', 'eventTTL'), /^Error: eventTTL: "-5s" is not a duration/);
});
