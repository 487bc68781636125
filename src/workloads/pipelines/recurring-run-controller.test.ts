import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dueTimes } from './recurring-run-controller.js';
import { makeRecurringRun } from './testing.js';

/** created at midnight, 2024-01-01 */
const rr = () => makeRecurringRun('rr');
const t = (s: string): Date => new Date(s);
const isos = (ds: Date[]): string[] => ds.map((d) => d.toISOString().replace('.000Z', 'Z'));

describe('recurring run fire times', () => {
  it('fires a periodic trigger an interval after creation, then every interval', () => {
    const r = dueTimes(rr().periodic(60).obj(), t('2024-01-01T00:02:30Z'));
    assert.deepEqual(isos(r.due), ['2024-01-01T00:01:00Z', '2024-01-01T00:02:00Z']);
    assert.equal(r.next?.toISOString(), '2024-01-01T00:03:00.000Z');
  });

  it('goes on from the last time it started a run (every missed one is due)', () => {
    const r = dueTimes(rr().cron('0 0 * * * *').lastScheduled('2024-01-01T03:00:00Z').obj(), t('2024-01-01T06:30:00Z'));
    assert.deepEqual(isos(r.due), ['2024-01-01T04:00:00Z', '2024-01-01T05:00:00Z', '2024-01-01T06:00:00Z']);
  });

  it('waits for the start time and stops at the end time', () => {
    const before = dueTimes(rr().periodic(10, { startTime: '2024-01-02T00:00:00Z' }).obj(), t('2024-01-01T12:00:00Z'));
    assert.deepEqual(before.due, []);
    assert.equal(before.next?.toISOString(), '2024-01-02T00:00:00.000Z');
    const ended = dueTimes(rr().cron('0 */10 * * * *', { endTime: '2024-01-01T00:25:00Z' }).obj(), t('2024-01-01T02:00:00Z'));
    assert.deepEqual(isos(ended.due), ['2024-01-01T00:10:00Z', '2024-01-01T00:20:00Z']);
    assert.equal(ended.next, undefined);
  });

  it('keeps only the latest fire times after a very long outage', () => {
    const r = dueTimes(rr().periodic(1).obj(), t('2024-01-02T00:00:00Z'), 5);
    assert.equal(r.due.length, 5);
    assert.equal(isos(r.due).at(-1), '2024-01-02T00:00:00Z');
  });
});
