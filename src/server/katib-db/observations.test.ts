import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GrpcError, GrpcStatus } from './grpc.js';
import { acceptMetricLogs, formatRfc3339Micros, isMetricValue, parseRfc3339Micros, queryMetricLogs } from './observations.js';

const at = (s: string): number => {
  const t = parseRfc3339Micros(s);
  assert.notEqual(t, undefined, s);
  return t as number;
};

test('RFC 3339 times read to the microsecond, offsets applied, and written back in UTC as Go does', () => {
  assert.equal(at('1970-01-01T00:00:01Z'), 1_000_000);
  assert.equal(at('1970-01-01T00:00:00.000001Z'), 1);
  // nanoseconds beyond the microsecond are dropped, as Katib's MySQL column keeps microseconds
  assert.equal(at('1970-01-01T00:00:00.123456789Z'), 123456);
  assert.equal(at('1970-01-01T01:00:00+01:00'), 0);
  assert.equal(at('1969-12-31T23:30:00-00:30'), 0);
  assert.equal(formatRfc3339Micros(at('2026-11-25T11:00:00+01:00')), '2026-11-25T10:00:00Z');
  assert.equal(formatRfc3339Micros(at('2026-11-25T10:00:00.500Z')), '2026-11-25T10:00:00.5Z');
  assert.equal(formatRfc3339Micros(at('2026-11-25T10:00:00.000010Z')), '2026-11-25T10:00:00.00001Z');
  for (const bad of ['', '2026-11-25', '2026-11-25 10:00:00Z', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-11-25T24:00:00Z', '2026-11-25T10:00:00', '2026-11-25T10:00:00+1:00']) {
    assert.equal(parseRfc3339Micros(bad), undefined, bad);
  }
});

test('metric values: what float() reads, and Katib\'s "unavailable"', () => {
  for (const ok of ['0.5', '-1', '+2.', '.98', '1e-3', '-7.53e-05', '1E0', 'inf', '-Infinity', 'nan', ' 3 ', 'unavailable']) assert.equal(isMetricValue(ok), true, ok);
  for (const bad of ['', 'abc', '1,5', '0x10', '1e', '--1', 'Unavailable', 'None']) assert.equal(isMetricValue(bad), false, bad);
});

test('a report keeps entries in order with normalised times, and drops entries with no time as Katib does', () => {
  const kept = acceptMetricLogs([
    { timeStamp: '2026-11-25T11:00:00+01:00', metric: { name: 'loss', value: '0.5' } },
    { timeStamp: '', metric: { name: 'loss', value: '0.4' } },
    { timeStamp: '2026-11-25T10:00:01Z', metric: { name: 'accuracy', value: '0.9' } },
  ]);
  assert.deepEqual(kept, [
    { timeStamp: '2026-11-25T10:00:00Z', name: 'loss', value: '0.5' },
    { timeStamp: '2026-11-25T10:00:01Z', name: 'accuracy', value: '0.9' },
  ]);
});

function refused(fn: () => unknown, code: number, message: string): void {
  assert.throws(fn, (e: unknown) => e instanceof GrpcError && e.code === code && e.message === message);
}

test('a report with a bad entry is refused whole, naming the entry and field', () => {
  const good = { timeStamp: '2026-11-25T10:00:00Z', metric: { name: 'loss', value: '1' } };
  refused(() => acceptMetricLogs([good, { timeStamp: '2026-11-25T10:00:00Z', metric: { name: 'loss', value: 'abc' } }]), GrpcStatus.INVALID_ARGUMENT, 'observation_log.metric_logs[1].metric.value: "abc" for metric "loss" is not a number');
  refused(() => acceptMetricLogs([{ timeStamp: 'yesterday', metric: { name: 'loss', value: '1' } }]), GrpcStatus.INVALID_ARGUMENT, 'observation_log.metric_logs[0].time_stamp: "yesterday" is not an RFC 3339 time');
  refused(() => acceptMetricLogs([good, good, { timeStamp: '2026-11-25T10:00:00Z' }]), GrpcStatus.INVALID_ARGUMENT, 'observation_log.metric_logs[2].metric.name: required');
  refused(() => acceptMetricLogs([{ timeStamp: '2026-11-25T10:00:00Z', metric: { name: '', value: '1' } }]), GrpcStatus.INVALID_ARGUMENT, 'observation_log.metric_logs[0].metric.name: required');
});

test('a query filters by metric and by an inclusive time range, and answers in time order', () => {
  const logs = [
    { timeStamp: '2026-11-25T10:00:02Z', name: 'loss', value: '3' },
    { timeStamp: '2026-11-25T10:00:00Z', name: 'loss', value: '1' },
    { timeStamp: '2026-11-25T10:00:01Z', name: 'accuracy', value: '0.5' },
    { timeStamp: '2026-11-25T10:00:00Z', name: 'loss', value: '2' },
    { timeStamp: '2026-11-25T10:00:03.5Z', name: 'loss', value: '4' },
  ];
  const values = (q: { metricName?: string; startTime?: string; endTime?: string }): string[] => queryMetricLogs(logs, { metricName: '', startTime: '', endTime: '', ...q }).map((l) => l.value);
  // same-second entries keep the order they were reported in
  assert.deepEqual(values({}), ['1', '2', '0.5', '3', '4']);
  assert.deepEqual(values({ metricName: 'loss' }), ['1', '2', '3', '4']);
  assert.deepEqual(values({ metricName: 'nothing' }), []);
  assert.deepEqual(values({ startTime: '2026-11-25T10:00:01Z' }), ['0.5', '3', '4']);
  assert.deepEqual(values({ endTime: '2026-11-25T10:00:01Z' }), ['1', '2', '0.5']);
  assert.deepEqual(values({ metricName: 'loss', startTime: '2026-11-25T11:00:01+01:00', endTime: '2026-11-25T10:00:03.5Z' }), ['3', '4']);
  refused(() => values({ startTime: 'soon' }), GrpcStatus.INVALID_ARGUMENT, 'start_time: "soon" is not an RFC 3339 time');
  refused(() => values({ endTime: '2026' }), GrpcStatus.INVALID_ARGUMENT, 'end_time: "2026" is not an RFC 3339 time');
});
