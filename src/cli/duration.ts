/** Durations: parsing `30s`/`5m`/`1h30m` and printing ages the way kubectl does. */
import { parseDuration as parseGoDuration } from '../util/duration.js';

/**
 * Parses a Go-style duration (`30s`, `5m`, `1h30m`, `500ms`, `1.5h`, `2d`) into milliseconds.
 * A bare number means seconds. Returns undefined when it is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const ms = parseGoDuration(text, { days: true, bareSeconds: true });
  return ms === undefined || ms < 0 ? undefined : Math.round(ms);
}

/** kubectl's `duration.HumanDuration`: `5s`, `3m2s`, `15m`, `2h5m`, `10h`, `2d4h`, `45d`, `2y10d`. */
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

/** Age of an RFC 3339 timestamp relative to `now`, or `<unknown>`. */
export function age(timestamp: string | undefined | null, now: number): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

/** Short form of a duration for messages: `30s`, `5m`, `1h30m`. */
export function shortDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Mon, 02 Jan 2006 15:04:05 -0700` in local time, as kubectl describe prints times. */
export function formatTimestamp(timestamp: string | undefined | null): string {
  if (!timestamp) return '<unset>';
  const d = new Date(timestamp);
  if (Number.isNaN(d.getTime())) return timestamp;
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return (
    `${DAYS[d.getDay()]}, ${p2(d.getDate())} ${MONTHS[d.getMonth()]} ${d.getFullYear()} ` +
    `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${sign}${p2(Math.floor(abs / 60))}${p2(abs % 60)}`
  );
}
