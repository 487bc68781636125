// What Katib's DB manager does with metric logs, as plain functions over Skiff's ObservationLog:
// which reported entries are kept (and how their times are written), and which a
// GetObservationLog query returns. Katib keeps times at microsecond resolution and answers them in
// UTC RFC 3339 with the fraction's trailing zeros dropped (Go's RFC3339Nano); Skiff does the same,
// so `2026-11-25T11:00:00+01:00` reads back as `2026-11-25T10:00:00Z`.
import type { MetricLog as StoredMetricLog } from '../../api/tuning-types.js';
import { UnavailableMetricValue } from '../../api/tuning-types.js';
import { GrpcError, GrpcStatus } from './grpc.js';
import type { MetricLog as WireMetricLog } from './messages.js';

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** microseconds since the epoch of an RFC 3339 time, or undefined when it is not one */
export function parseRfc3339Micros(s: string): number | undefined {
  const m = rfc3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 31 February into March; Go's parser refuses it
  if (new Date(ms).getUTCDate() !== day) return undefined;
  let offsetMin = 0;
  if (m[9]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const micros = Number((m[7] ?? '').padEnd(6, '0').slice(0, 6));
  return (ms - offsetMin * 60_000) * 1000 + micros;
}

/** UTC RFC 3339 with as many fraction digits as needed, as Go formats RFC3339Nano */
export function formatRfc3339Micros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = String(micros - Math.floor(micros / 1_000_000) * 1_000_000).padStart(6, '0').replace(/0+$/, '');
  return `${base}${frac ? `.${frac}` : ''}Z`;
}

// what Python's float() and Go's strconv.ParseFloat both read: decimals, exponents, inf, nan
const floatText = /^\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\s*$/i;

/** true for a value the Trial controller can compare: a float's text, or Katib's `unavailable` */
export function isMetricValue(v: string): boolean {
  return v === UnavailableMetricValue || floatText.test(v);
}

/**
 * The entries of a ReportObservationLog to keep, with normalised times. As Katib does, an entry with
 * no time is dropped; unlike Katib (which stores any string), a value that is not a number is
 * refused, since the Trial controller could never compare it. One bad entry refuses the whole
 * report, so a report is kept whole or not at all.
 */
export function acceptMetricLogs(logs: WireMetricLog[]): StoredMetricLog[] {
  const out: StoredMetricLog[] = [];
  logs.forEach((l, i) => {
    const path = `observation_log.metric_logs[${i}]`;
    if (l.timeStamp === '') return;
    const t = parseRfc3339Micros(l.timeStamp);
    if (t === undefined) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `${path}.time_stamp: "${l.timeStamp}" is not an RFC 3339 time`);
    if (!l.metric || l.metric.name === '') throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `${path}.metric.name: required`);
    if (!isMetricValue(l.metric.value)) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `${path}.metric.value: "${l.metric.value}" for metric "${l.metric.name}" is not a number`);
    out.push({ timeStamp: formatRfc3339Micros(t), name: l.metric.name, value: l.metric.value });
  });
  return out;
}

export interface ObservationQuery {
  metricName: string;
  startTime: string;
  endTime: string;
}

/**
 * What GetObservationLog answers: the entries of one metric (all when the name is empty) whose time
 * is within [start_time, end_time] (each bound optional), in time order; entries of the same time
 * stay in report order.
 */
export function queryMetricLogs(logs: StoredMetricLog[], q: ObservationQuery): StoredMetricLog[] {
  const bound = (s: string, field: string): number | undefined => {
    if (s === '') return undefined;
    const t = parseRfc3339Micros(s);
    if (t === undefined) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `${field}: "${s}" is not an RFC 3339 time`);
    return t;
  };
  const start = bound(q.startTime, 'start_time');
  const end = bound(q.endTime, 'end_time');
  return logs
    .map((l, i) => ({ l, i, t: parseRfc3339Micros(l.timeStamp) ?? 0 }))
    .filter(({ l, t }) => (q.metricName === '' || l.name === q.metricName) && (start === undefined || t >= start) && (end === undefined || t <= end))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map(({ l }) => l);
}
