// Metric values read from what a trial printed or wrote, as Katib's StdOut and File collectors read
// them, and their summary into a Trial's observation by the metric strategies (min / max / latest).
//
// Where Skiff differs from Katib, on purpose:
// - File/JSON: Katib keeps only values written as JSON strings (`{"loss": "0.2"}`) and silently drops
//   numbers (`{"loss": 0.2}`), which turns a natural metrics file into MetricsUnavailable. Skiff takes
//   both.
// - File/JSON timestamps in epoch seconds: Katib reads the digits after the point as nanoseconds
//   (1.5 → 1 s + 5 ns); Skiff reads them as the fraction they are.
import type { EarlyStoppingRule, Metric, MetricLog, MetricStrategyType, ObjectiveSpec, Observation } from '../../api/tuning-types.js';
import { UnavailableMetricValue } from '../../api/tuning-types.js';

/** Katib's DefaultFilter (metricscollector/v1beta1/common/const.go): group 1 the name, group 2 the value */
export const DefaultMetricsFormat = '([\\w|-]+)\\s*=\\s*([+-]?\\d*(\\.\\d+)?([Ee][+-]?\\d+)?)';

/** the time Katib stamps a value with when its line carries none (Go's zero time) */
export const ZeroTime = '0001-01-01T00:00:00Z';

/** a bad metricsFormat or metrics file, with the field or line at fault */
export class MetricsParseError extends Error {
  override readonly name = 'MetricsParseError';
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** whether `s` parses as Go's time.RFC3339Nano (the fraction is optional) */
export function isRfc3339(s: string): boolean {
  return rfc3339.test(s) && Number.isFinite(Date.parse(s.replace(/\.\d+/, '')));
}

/**
 * Compiles metricsFormat regexes (Go RE2 syntax, as users write them for Katib) for JavaScript.
 * Each must have two groups: the name and the value.
 */
export function compileFormats(formats: string[] | undefined): RegExp[] {
  const list = formats?.length ? formats : [DefaultMetricsFormat];
  return list.map((f, i) => {
    let re: RegExp;
    try {
      re = new RegExp(f.replace(/\(\?P</g, '(?<'), 'g');
    } catch (e) {
      throw new MetricsParseError(`metricsCollector.source.filter.metricsFormat[${i}]: ${(e as Error).message}`);
    }
    const groups = new RegExp(`${re.source}|`).exec('')?.length ?? 1;
    if (groups - 1 < 2) throw new MetricsParseError(`metricsCollector.source.filter.metricsFormat[${i}]: "${f}" must have two groups (the metric's name and its value)`);
    return re;
  });
}

/**
 * TEXT lines (a container's log or a TEXT metrics file): only lines that contain a requested name
 * are scanned; a value counts when its name equals a requested one; the line's first space-separated
 * token, if it is an RFC 3339 time, stamps its values.
 */
export function parseTextMetrics(text: string, names: string[], formats?: RegExp[]): MetricLog[] {
  const regexes = formats ?? compileFormats(undefined);
  const out: MetricLog[] = [];
  for (const line of text.split('\n')) {
    if (!names.some((n) => line.includes(n))) continue;
    const sp = line.indexOf(' ');
    const first = sp < 0 ? '' : line.slice(0, sp);
    const timeStamp = first && isRfc3339(first) ? first : ZeroTime;
    for (const re of regexes) {
      re.lastIndex = 0;
      for (const m of line.matchAll(re)) {
        const name = (m[1] ?? '').trim();
        const value = (m[2] ?? '').trim();
        // `loss=nan` gives the default format's number group nothing: no value, not an empty one
        if (names.includes(name) && value !== '') out.push({ timeStamp, name, value });
      }
    }
  }
  return out;
}

/**
 * JSON lines: one object per line, empty lines skipped, values as strings (Katib) or numbers
 * (Skiff), stamped by a `timestamp` key (RFC 3339 or epoch seconds). A line that is not JSON is an
 * error naming it, as Katib's collector fails.
 */
export function parseJsonMetrics(text: string, names: string[]): MetricLog[] {
  const out: MetricLog[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (!line) continue;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw new MetricsParseError(`metrics file line ${i + 1} is not JSON: ${(e as Error).message}`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new MetricsParseError(`metrics file line ${i + 1} is not a JSON object`);
    const rec = obj as Record<string, unknown>;
    const timeStamp = jsonTimestamp(rec.timestamp);
    for (const name of names) {
      const v = rec[name];
      if (typeof v === 'string' && v.trim() !== '') out.push({ timeStamp, name, value: v.trim() });
      else if (typeof v === 'number' && Number.isFinite(v)) out.push({ timeStamp, name, value: String(v) });
    }
  }
  return out;
}

function jsonTimestamp(v: unknown): string {
  if (typeof v === 'string') return isRfc3339(v) ? v : ZeroTime;
  if (typeof v === 'number' && Number.isFinite(v)) return epochToRfc3339(v);
  return ZeroTime;
}

/** epoch seconds as RFC 3339 with nanoseconds (trailing zeros dropped, as Go prints RFC3339Nano) */
export function epochToRfc3339(seconds: number): string {
  const whole = Math.floor(seconds);
  let nanos = Math.round((seconds - whole) * 1e9);
  let s = whole;
  if (nanos >= 1e9) {
    s += 1;
    nanos -= 1e9;
  }
  const base = new Date(s * 1000).toISOString().slice(0, 19);
  const frac = nanos ? `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
  return `${base}${frac}Z`;
}

/** a timestamp's instant as [whole seconds since the epoch, nanoseconds], for exact ordering */
export function timeKey(ts: string): [number, number] {
  const m = rfc3339.exec(ts);
  if (!m) return [Number.NaN, 0];
  const secs = Date.parse(ts.replace(/\.\d+/, '')) / 1000;
  const nanos = m[7] ? Number((m[7].slice(1) + '000000000').slice(0, 9)) : 0;
  return [secs, nanos];
}

function after(a: [number, number], b: [number, number]): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

/** a value as Go's strconv.ParseFloat reads the numbers metrics are written as */
function parseNumber(s: string): number | undefined {
  const t = s.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$/i.test(t)) return undefined;
  const lower = t.toLowerCase().replace(/^\+/, '');
  if (lower === 'inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (lower.endsWith('nan')) return Number.NaN;
  return Number(t);
}

export interface StrategyEntry {
  name: string;
  value: MetricStrategyType;
}

/**
 * The strategy of every metric the trial reports: those the objective lists, then, for the
 * objective and each additional metric without one, min for minimize and max for maximize (Katib's
 * defaulting, which gives additional metrics their objective's direction too).
 */
export function metricStrategies(objective: ObjectiveSpec | undefined): StrategyEntry[] {
  const out: StrategyEntry[] = [...(objective?.metricStrategies ?? [])];
  const dflt: MetricStrategyType = objective?.type === 'maximize' ? 'max' : 'min';
  for (const name of metricNames(objective)) if (!out.some((s) => s.name === name)) out.push({ name, value: dflt });
  return out;
}

/** the objective's metric first (Katib's collectors rely on the order), then the additional ones */
export function metricNames(objective: ObjectiveSpec | undefined): string[] {
  const names: string[] = [];
  if (objective?.objectiveMetricName) names.push(objective.objectiveMetricName);
  for (const n of objective?.additionalMetricNames ?? []) if (!names.includes(n)) names.push(n);
  return names;
}

/**
 * Summarises metric logs into an observation, as Katib's trial controller does: for each metric
 * with a strategy, min and max over its numeric values and latest = the value with the greatest
 * timestamp (on a tie, the later record); "unavailable" where there was none.
 */
export function summarise(logs: MetricLog[], strategies: StrategyEntry[]): Observation {
  const metrics = new Map<string, Metric>();
  const mins = new Map<string, number>();
  const maxs = new Map<string, number>();
  const latestAt = new Map<string, [number, number]>();
  for (const s of strategies) {
    if (!metrics.has(s.name)) metrics.set(s.name, { name: s.name, min: UnavailableMetricValue, max: UnavailableMetricValue, latest: UnavailableMetricValue });
  }
  for (const log of logs) {
    const m = metrics.get(log.name);
    if (!m) continue;
    const v = parseNumber(log.value);
    if (v !== undefined && !Number.isNaN(v)) {
      const lo = mins.get(log.name);
      const hi = maxs.get(log.name);
      if (lo === undefined || v < lo) {
        mins.set(log.name, v);
        m.min = log.value;
      }
      if (hi === undefined || v > hi) {
        maxs.set(log.name, v);
        m.max = log.value;
      }
    }
    const at = timeKey(log.timeStamp);
    const prev = latestAt.get(log.name);
    if (!prev || !after(prev, at)) {
      latestAt.set(log.name, at);
      m.latest = log.value;
    }
  }
  return { metrics: [...metrics.values()] };
}

/** the value the strategy picks for `name`, or undefined when unavailable */
export function strategyValue(obs: Observation | undefined, name: string, strategy: MetricStrategyType): string | undefined {
  const m = obs?.metrics?.find((x) => x.name === name);
  const v = m?.[strategy];
  return v === undefined || v === UnavailableMetricValue ? undefined : v;
}

/** whether the objective metric has a value: what Katib calls an available observation */
export function observationAvailable(obs: Observation | undefined, objective: ObjectiveSpec | undefined): boolean {
  const name = objective?.objectiveMetricName;
  if (!name) return false;
  const m = obs?.metrics?.find((x) => x.name === name);
  return m?.latest !== undefined && m.latest !== UnavailableMetricValue;
}

/**
 * Katib's early-stopping rule (its file collector's updateStopRules), replayed over the values read
 * so far in report order: the objective is compared as its best so far (max for maximize, min for
 * minimize), other metrics as reported. A rule with a startStep is looked at once, at exactly its
 * startStep-th value; one without, at every value. Returns true when every rule has fired.
 * Replaying from the start makes the answer the same after a controller restart.
 */
export function earlyStopped(logs: MetricLog[], rules: EarlyStoppingRule[], objective: ObjectiveSpec | undefined): boolean {
  if (!rules.length) return false;
  const objName = objective?.objectiveMetricName;
  const maximize = objective?.type === 'maximize';
  const pending = rules.map((r, i) => {
    const limit = Number(r.value);
    if (r.value === undefined || r.value.trim() === '' || Number.isNaN(limit)) throw new MetricsParseError(`spec.earlyStoppingRules[${i}].value: "${r.value}" is not a number`);
    return { rule: r, limit, countdown: r.startStep ?? 0 };
  });
  let best: number | undefined;
  let open = pending.slice();
  for (const log of logs) {
    let v = parseNumber(log.value);
    if (v === undefined || Number.isNaN(v)) continue;
    if (!open.some((p) => p.rule.name === log.name)) continue;
    if (log.name === objName) {
      if (best === undefined || (maximize ? v > best : v < best)) best = v;
      v = best;
    }
    open = open.filter((p) => {
      if (p.rule.name !== log.name) return true;
      if (p.countdown > 0) {
        p.countdown--;
        if (p.countdown > 0) return true;
        p.countdown = -1; // looked at now, and never again
      } else if (p.countdown < 0) return true;
      const fired = p.rule.comparison === 'equal' ? v === p.limit : p.rule.comparison === 'less' ? (v as number) < p.limit : (v as number) > p.limit;
      return !fired;
    });
    if (!open.length) return true;
  }
  return false;
}
