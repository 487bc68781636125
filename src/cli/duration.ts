/** Durations: parsing `30s`/`5m`/`1h30m` and printing ages the way kubectl does. */
import { humanDuration, parseDuration as parseGoDuration } from '../util/duration.js';

/**
 * Parses a Go-style duration (`30s`, `5m`, `1h30m`, `500ms`, `1.5h`, `2d`) into milliseconds.
 * A bare number means seconds. Returns undefined when it is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const ms = parseGoDuration(text, { days: true, bareSeconds: true });
  return ms === undefined || ms < 0 ? undefined : Math.round(ms);
}

export { humanDuration } from '../util/duration.js';

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
