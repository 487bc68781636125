import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCron, parseDuration, parseSchedule } from './cron.js';

const at = (s: string): Date => new Date(s);
const next = (expr: string, after: string): string | undefined => parseSchedule(expr).next(at(after))?.toISOString().replace('.000Z', 'Z');

describe('cron schedules', () => {
  it('reads six fields with seconds, as KFP writes them', () => {
    assert.equal(next('0 */2 * * * *', '2024-01-01T00:00:00Z'), '2024-01-01T00:02:00Z');
    assert.equal(next('0 */2 * * * *', '2024-01-01T00:01:59Z'), '2024-01-01T00:02:00Z');
    assert.equal(next('*/10 * * * * *', '2024-01-01T00:00:05Z'), '2024-01-01T00:00:10Z');
    assert.equal(next('30 15 10 * * *', '2024-01-01T10:15:30Z'), '2024-01-02T10:15:30Z');
  });

  it('reads five fields as minute-level with second 0', () => {
    assert.equal(next('*/15 * * * *', '2024-01-01T00:07:13Z'), '2024-01-01T00:15:00Z');
    assert.equal(next('0 9 * * 1-5', '2024-01-05T09:00:00Z'), '2024-01-08T09:00:00Z'); // Fri → Mon
  });

  it('reads names, ranges, lists, steps from a start, ? and Sunday as 7', () => {
    assert.equal(next('0 0 9 ? * MON-FRI', '2024-01-06T00:00:00Z'), '2024-01-08T09:00:00Z');
    assert.equal(next('0 0 0 1 JAN,JUL *', '2024-02-01T00:00:00Z'), '2024-07-01T00:00:00Z');
    assert.equal(next('5/20 * * * * *', '2024-01-01T00:00:26Z'), '2024-01-01T00:00:45Z');
    assert.equal(next('0 0 0 * * 7', '2024-01-01T00:00:00Z'), '2024-01-07T00:00:00Z');
    assert.equal(next('0 0 12 29 2 *', '2024-03-01T00:00:00Z'), '2028-02-29T12:00:00Z');
  });

  it('matches either day field when both are restricted', () => {
    // the 15th, or any Monday
    assert.equal(next('0 0 0 15 * MON', '2024-01-09T00:00:00Z'), '2024-01-15T00:00:00Z');
    assert.equal(next('0 0 0 15 * MON', '2024-01-15T00:00:00Z'), '2024-01-22T00:00:00Z');
  });

  it('reads descriptors and @every', () => {
    assert.equal(next('@hourly', '2024-01-01T00:30:00Z'), '2024-01-01T01:00:00Z');
    assert.equal(next('@daily', '2024-01-01T00:30:00Z'), '2024-01-02T00:00:00Z');
    assert.equal(next('@every 30s', '2024-01-01T00:00:10Z'), '2024-01-01T00:00:40Z');
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('1.5s'), 1500);
  });

  it('rejects what it cannot read, saying why', () => {
    assert.throws(() => parseCron('* * *'), /expected 5 or 6 .* got 3/);
    assert.throws(() => parseCron('61 * * * * *'), /second: 61 is out of range 0-59/);
    assert.throws(() => parseCron('0 0 25 * * *'), /hour: 25 is out of range/);
    assert.throws(() => parseCron('0 0 0 * FOO *'), /month: "FOO" is not a number or a name/);
    assert.throws(() => parseCron('*/0 * * * * *'), /step "0"/);
    assert.throws(() => parseCron('0 0 5-2 * * *'), /runs backwards/);
    assert.throws(() => parseSchedule('@fortnightly'), /unknown descriptor/);
    assert.throws(() => parseSchedule('@every soon'), /not a duration/);
    assert.throws(() => parseSchedule('@every 10ms'), /at least one second/);
  });

  it('gives up on a date that never comes', () => {
    assert.equal(parseCron('0 0 0 31 2 *').next(at('2024-01-01T00:00:00Z')), undefined);
  });
});
