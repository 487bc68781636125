import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DecodeError, decodeDeleteObservationLogRequest, decodeGetObservationLogReply, decodeGetObservationLogRequest, decodeReportObservationLogRequest,
  encodeDeleteObservationLogRequest, encodeGetObservationLogReply, encodeGetObservationLogRequest, encodeReportObservationLogRequest,
} from './messages.js';

// bytes the kubeflow-katib SDK's own katib_api_pb2 (Python protobuf) writes for these messages
const pyReport = '0a03742d31124f0a240a14323032362d31312d32355431303a30303a30305a120c0a046c6f73731204302e32350a270a14323032362d31312d32355431303a30303a30315a120f0a0861636375726163791203302e39';
const pyGet = '0a03742d3112046c6f73731a14323032362d31312d32355431303a30303a30305a';
const pyReply = '0a240a220a14323032362d31312d32355431303a30303a30305a120a0a02cebb120431652d33';
const pyEmptyReply = '0a00';
const pyDelete = '0a03742d31';

const report = {
  trialName: 't-1',
  observationLog: {
    metricLogs: [
      { timeStamp: '2026-11-25T10:00:00Z', metric: { name: 'loss', value: '0.25' } },
      { timeStamp: '2026-11-25T10:00:01Z', metric: { name: 'accuracy', value: '0.9' } },
    ],
  },
};

test('reads what the Python SDK writes', () => {
  assert.deepEqual(decodeReportObservationLogRequest(Buffer.from(pyReport, 'hex')), report);
  assert.deepEqual(decodeGetObservationLogRequest(Buffer.from(pyGet, 'hex')), { trialName: 't-1', metricName: 'loss', startTime: '2026-11-25T10:00:00Z', endTime: '' });
  assert.deepEqual(decodeDeleteObservationLogRequest(Buffer.from(pyDelete, 'hex')), { trialName: 't-1' });
  assert.deepEqual(decodeGetObservationLogReply(Buffer.from(pyReply, 'hex')), { observationLog: { metricLogs: [{ timeStamp: '2026-11-25T10:00:00Z', metric: { name: 'λ', value: '1e-3' } }] } });
});

test('writes the bytes the Python SDK writes, field for field', () => {
  assert.equal(encodeReportObservationLogRequest(report).toString('hex'), pyReport);
  assert.equal(encodeGetObservationLogRequest({ trialName: 't-1', metricName: 'loss', startTime: '2026-11-25T10:00:00Z', endTime: '' }).toString('hex'), pyGet);
  assert.equal(encodeDeleteObservationLogRequest({ trialName: 't-1' }).toString('hex'), pyDelete);
  assert.equal(encodeGetObservationLogReply({ observationLog: { metricLogs: [{ timeStamp: '2026-11-25T10:00:00Z', metric: { name: 'λ', value: '1e-3' } }] } }).toString('hex'), pyReply);
  // an empty log is still a present message: the SDK reads .observation_log.metric_logs
  assert.equal(encodeGetObservationLogReply({ observationLog: { metricLogs: [] } }).toString('hex'), pyEmptyReply);
});

test('an empty request is all defaults; a metric log without a metric says so', () => {
  assert.deepEqual(decodeReportObservationLogRequest(Buffer.alloc(0)), { trialName: '' });
  // metric_logs[0] = { time_stamp: "x" }
  const noMetric = Buffer.from([0x0a, 0x01, 0x78, 0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x78]);
  assert.deepEqual(decodeReportObservationLogRequest(noMetric), { trialName: 'x', observationLog: { metricLogs: [{ timeStamp: 'x' }] } });
});

test('fields it does not know are skipped, of every wire type', () => {
  const extra = Buffer.concat([
    Buffer.from([0x28, 0x96, 0x01]), // field 5 varint 150
    Buffer.from([0x31, 1, 2, 3, 4, 5, 6, 7, 8]), // field 6 fixed64
    Buffer.from([0x3d, 1, 2, 3, 4]), // field 7 fixed32
    Buffer.from([0x42, 0x02, 0x68, 0x69]), // field 8 bytes
  ]);
  assert.deepEqual(decodeDeleteObservationLogRequest(Buffer.concat([Buffer.from(pyDelete, 'hex'), extra])), { trialName: 't-1' });
});

test('a string field seen twice keeps the last value; a message field seen twice is merged', () => {
  const twice = Buffer.from('0a01610a0162', 'hex');
  assert.deepEqual(decodeDeleteObservationLogRequest(twice), { trialName: 'b' });
  // observation_log given in two parts, one metric log each
  const part = (ts: string): Buffer => encodeReportObservationLogRequest({ trialName: '', observationLog: { metricLogs: [{ timeStamp: ts, metric: { name: 'm', value: '1' } }] } });
  const merged = decodeReportObservationLogRequest(Buffer.concat([part('a'), part('b')]));
  assert.deepEqual(merged.observationLog?.metricLogs.map((l) => l.timeStamp), ['a', 'b']);
});

test('broken bytes are a DecodeError naming where', () => {
  assert.throws(() => decodeDeleteObservationLogRequest(Buffer.from([0x0a, 0x05, 0x61])), (e: unknown) => e instanceof DecodeError && /field 1 is truncated/.test(e.message));
  assert.throws(() => decodeDeleteObservationLogRequest(Buffer.from([0x0a])), (e: unknown) => e instanceof DecodeError && /truncated varint/.test(e.message));
  assert.throws(() => decodeDeleteObservationLogRequest(Buffer.from([0x0b])), (e: unknown) => e instanceof DecodeError && /wire type 3/.test(e.message));
  assert.throws(() => decodeDeleteObservationLogRequest(Buffer.from([0x02, 0x00])), (e: unknown) => e instanceof DecodeError && /illegal field number 0/.test(e.message));
  const badUtf8 = encodeReportObservationLogRequest({ trialName: 't', observationLog: { metricLogs: [{ timeStamp: 'x', metric: { name: 'm', value: '1' } }] } });
  // the value's one byte '1' (0x31) becomes 0xff
  badUtf8[badUtf8.length - 1] = 0xff;
  assert.throws(() => decodeReportObservationLogRequest(badUtf8), (e: unknown) => e instanceof DecodeError && e.message === 'observation_log.metric_logs[0].metric.value: not valid UTF-8');
});

test('long strings use multi-byte lengths both ways', () => {
  const name = 'n'.repeat(300);
  const bytes = encodeDeleteObservationLogRequest({ trialName: name });
  assert.deepEqual([...bytes.subarray(0, 3)], [0x0a, 0xac, 0x02]);
  assert.equal(decodeDeleteObservationLogRequest(bytes).trialName, name);
});
