// The one duration parser. Go's time.ParseDuration grammar (`1h30m`, `500ms`, `-1.5h`, `0`) is a
// superset of protojson's google.protobuf.Duration (`3600s`, `1.5s`, `-2s`), so one grammar reads
// Skiff's config, cron `@every`, KServe's autoscaling windows, KFP retry back-offs and the CLI's
// flags. Callers that forbid negatives or need a fallback say so around it, keeping their messages.
// The one printer of ages is here too: Kubernetes' HumanDuration, which kubectl's AGE columns show.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};
const DAY_MS = 86_400_000;

export interface DurationOptions {
  /** also accept `d` (24h), as the CLI does for kubectl-style flags; Go does not */
  days?: boolean;
  /** a bare number is that many seconds (`45`), as the CLI's flags allow */
  bareSeconds?: boolean;
}

/**
 * A duration in milliseconds (fractional for sub-millisecond units), or undefined when the text is not
 * a duration. Surrounding whitespace is ignored; a leading sign is allowed, as in Go.
 */
export function parseDuration(text: string, opts: DurationOptions = {}): number | undefined {
  let s = text.trim();
  if (s === '') return undefined;
  if (opts.bareSeconds && /^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  const re = opts.days ? /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y : /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  if (s === '') return undefined;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return undefined;
    const unit = m[2] as string;
    total += Number(m[1]) * (unit === 'd' ? DAY_MS : (UNIT_MS[unit] as number));
    pos = re.lastIndex;
  }
  return sign * total;
}

/**
 * A duration field with a default (KFP's retry policy: `backoffDuration: "30s"`): the default when
 * the field is absent or not a duration, never below zero.
 */
export function durationMs(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const ms = parseDuration(text);
  return ms === undefined ? fallback : Math.max(0, ms);
}

/**
 * Kubernetes' duration.HumanDuration, the AGE of `kubectl get`: `5s`, `3m2s`, `15m`, `2h5m`, `10h`,
 * `2d4h`, `45d`, `2y10d`; up to a second in the future reads `0s`, more reads `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}
