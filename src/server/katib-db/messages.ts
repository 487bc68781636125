// The few messages of Katib's DBManager gRPC API (katib's pkg/apis/manager/v1beta1/api.proto,
// package api.v1.beta1) in protobuf's wire format, for the SDK's report_metrics and
// get_trial_metrics. All their fields are strings, nested messages or repeated messages, so a
// general protobuf library would be more than these need. Unknown fields are skipped as proto3
// readers do, so a newer SDK that adds a field still talks to Skiff.

/** a message Skiff cannot read: the caller gets INVALID_ARGUMENT with this text */
export class DecodeError extends Error {}

export interface Metric {
  name: string;
  value: string;
}

export interface MetricLog {
  timeStamp: string;
  /** absent when the sender left it unset */
  metric?: Metric;
}

export interface ObservationLog {
  metricLogs: MetricLog[];
}

export interface ReportObservationLogRequest {
  trialName: string;
  observationLog?: ObservationLog;
}

export interface GetObservationLogRequest {
  trialName: string;
  metricName: string;
  startTime: string;
  endTime: string;
}

export interface GetObservationLogReply {
  observationLog: ObservationLog;
}

export interface DeleteObservationLogRequest {
  trialName: string;
}

// ---------------------------------------------------------------- reading

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

function readVarint(buf: Buffer, at: { i: number }): number {
  let out = 0;
  let mul = 1;
  for (let n = 0; n < 10; n++) {
    if (at.i >= buf.length) throw new DecodeError('truncated varint');
    const b = buf[at.i++] as number;
    out += (b & 0x7f) * mul;
    if (b < 0x80) return out;
    mul *= 128;
  }
  throw new DecodeError('varint longer than 10 bytes');
}

/** the length-delimited fields of one message by number, in wire order (other wire types skipped) */
function fields(buf: Buffer, message: string): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  const at = { i: 0 };
  while (at.i < buf.length) {
    const key = readVarint(buf, at);
    const num = Math.floor(key / 8);
    const wire = key % 8;
    if (num < 1) throw new DecodeError(`${message}: illegal field number ${num}`);
    switch (wire) {
      case WIRE_VARINT:
        readVarint(buf, at);
        break;
      case WIRE_I64:
      case WIRE_I32: {
        const n = wire === WIRE_I64 ? 8 : 4;
        if (at.i + n > buf.length) throw new DecodeError(`${message}: field ${num} is truncated`);
        at.i += n;
        break;
      }
      case WIRE_LEN: {
        const len = readVarint(buf, at);
        if (at.i + len > buf.length) throw new DecodeError(`${message}: field ${num} is truncated`);
        const list = out.get(num) ?? [];
        list.push(buf.subarray(at.i, at.i + len));
        out.set(num, list);
        at.i += len;
        break;
      }
      default:
        throw new DecodeError(`${message}: field ${num} has wire type ${wire}, which proto3 does not use`);
    }
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** a string field: proto3 keeps the last value of a repeated scalar, and requires valid UTF-8 */
function str(f: Map<number, Buffer[]>, num: number, path: string): string {
  const all = f.get(num);
  const last = all?.[all.length - 1];
  if (!last) return '';
  try {
    return utf8.decode(last);
  } catch {
    throw new DecodeError(`${path}: not valid UTF-8`);
  }
}

/** a message field: proto3 merges repeated occurrences, which concatenating the bytes does */
function sub(f: Map<number, Buffer[]>, num: number): Buffer | undefined {
  const all = f.get(num);
  return all ? Buffer.concat(all) : undefined;
}

function decodeMetric(buf: Buffer, path: string): Metric {
  const f = fields(buf, path);
  return { name: str(f, 1, `${path}.name`), value: str(f, 2, `${path}.value`) };
}

function decodeMetricLog(buf: Buffer, path: string): MetricLog {
  const f = fields(buf, path);
  const m = sub(f, 2);
  return { timeStamp: str(f, 1, `${path}.time_stamp`), ...(m ? { metric: decodeMetric(m, `${path}.metric`) } : {}) };
}

export function decodeObservationLog(buf: Buffer, path = 'observation_log'): ObservationLog {
  const f = fields(buf, path);
  return { metricLogs: (f.get(1) ?? []).map((b, i) => decodeMetricLog(b, `${path}.metric_logs[${i}]`)) };
}

export function decodeReportObservationLogRequest(buf: Buffer): ReportObservationLogRequest {
  const f = fields(buf, 'ReportObservationLogRequest');
  const log = sub(f, 2);
  return { trialName: str(f, 1, 'trial_name'), ...(log ? { observationLog: decodeObservationLog(log) } : {}) };
}

export function decodeGetObservationLogRequest(buf: Buffer): GetObservationLogRequest {
  const f = fields(buf, 'GetObservationLogRequest');
  return { trialName: str(f, 1, 'trial_name'), metricName: str(f, 2, 'metric_name'), startTime: str(f, 3, 'start_time'), endTime: str(f, 4, 'end_time') };
}

export function decodeDeleteObservationLogRequest(buf: Buffer): DeleteObservationLogRequest {
  return { trialName: str(fields(buf, 'DeleteObservationLogRequest'), 1, 'trial_name') };
}

// ---------------------------------------------------------------- writing

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}

/** one length-delimited field (a present message is written even when empty) */
function lenField(num: number, body: Buffer): Buffer {
  return Buffer.concat([varint(num * 8 + WIRE_LEN), varint(body.length), body]);
}

/** proto3 leaves an empty string off the wire */
function strField(num: number, s: string): Buffer {
  return s === '' ? Buffer.alloc(0) : lenField(num, Buffer.from(s, 'utf8'));
}

export function encodeMetric(m: Metric): Buffer {
  return Buffer.concat([strField(1, m.name), strField(2, m.value)]);
}

export function encodeMetricLog(l: MetricLog): Buffer {
  return Buffer.concat([strField(1, l.timeStamp), ...(l.metric ? [lenField(2, encodeMetric(l.metric))] : [])]);
}

export function encodeObservationLog(o: ObservationLog): Buffer {
  return Buffer.concat(o.metricLogs.map((l) => lenField(1, encodeMetricLog(l))));
}

export function encodeReportObservationLogRequest(r: ReportObservationLogRequest): Buffer {
  return Buffer.concat([strField(1, r.trialName), ...(r.observationLog ? [lenField(2, encodeObservationLog(r.observationLog))] : [])]);
}

export function encodeGetObservationLogRequest(r: GetObservationLogRequest): Buffer {
  return Buffer.concat([strField(1, r.trialName), strField(2, r.metricName), strField(3, r.startTime), strField(4, r.endTime)]);
}

export function encodeGetObservationLogReply(r: GetObservationLogReply): Buffer {
  // Katib always sets the log, so a client reading `.observation_log.metric_logs` sees a message
  return lenField(1, encodeObservationLog(r.observationLog));
}

export function encodeDeleteObservationLogRequest(r: DeleteObservationLogRequest): Buffer {
  return strField(1, r.trialName);
}

export function decodeGetObservationLogReply(buf: Buffer): GetObservationLogReply {
  const log = sub(fields(buf, 'GetObservationLogReply'), 1);
  return { observationLog: log ? decodeObservationLog(log) : { metricLogs: [] } };
}
