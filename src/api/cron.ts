// Cron schedules for recurring runs, as KFP's ScheduledWorkflow reads them: six fields with seconds
// (`0 */2 * * * *`: second minute hour day-of-month month day-of-week), five fields (no seconds:
// the minute's second 0), `?` for "any" in the day fields, month and weekday names, and the
// descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly and `@every 30s`.
// Times are UTC. When both day fields are restricted, a day matches either (as cron does).
import { parseDuration as parseGoDuration } from '../util/duration.js';

export interface Schedule {
  /** the first fire time strictly after `after`, or undefined when none comes within ten years */
  next(after: Date): Date | undefined;
}

interface Field {
  name: string;
  min: number;
  max: number;
  names?: string[];
}

const FIELDS: Field[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day of week', min: 0, max: 6, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

function value(f: Field, s: string): number {
  const upper = s.toUpperCase();
  const named = f.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + f.min;
  if (!/^\d+$/.test(s)) throw new Error(`${f.name}: "${s}" is not a number${f.names ? ' or a name' : ''}`);
  let n = Number(s);
  if (f.name === 'day of week' && n === 7) n = 0; // 7 is Sunday too
  if (n < f.min || n > f.max) throw new Error(`${f.name}: ${n} is out of range ${f.min}-${f.max}`);
  return n;
}

/** the set of values a field allows, and whether it was `*` or `?` */
function parseField(f: Field, text: string): { values: Set<number>; star: boolean } {
  const values = new Set<number>();
  let star = false;
  for (const part of text.split(',')) {
    if (part === '') throw new Error(`${f.name}: empty list element in "${text}"`);
    const [range = '', stepText, ...extra] = part.split('/');
    if (extra.length) throw new Error(`${f.name}: too many "/" in "${part}"`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) throw new Error(`${f.name}: step "${stepText}" must be a positive integer`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      lo = f.min;
      hi = f.max;
      if (stepText === undefined) star = true;
    } else if (range.includes('-')) {
      const [a = '', b = '', ...more] = range.split('-');
      if (more.length) throw new Error(`${f.name}: bad range "${range}"`);
      lo = value(f, a);
      hi = value(f, b);
      if (f.name === 'day of week' && b === '7') hi = 6;
      if (lo > hi) throw new Error(`${f.name}: range "${range}" runs backwards`);
    } else {
      lo = value(f, range);
      // `5/10` means from 5 to the end, every 10
      hi = stepText !== undefined ? f.max : lo;
    }
    for (let n = lo; n <= hi; n += step) values.add(n);
  }
  return { values, star };
}

class CronSchedule implements Schedule {
  constructor(private readonly sets: Set<number>[], private readonly domStar: boolean, private readonly dowStar: boolean) {}

  private dayMatches(d: Date): boolean {
    const dom = this.sets[3] as Set<number>;
    const dow = this.sets[5] as Set<number>;
    const a = dom.has(d.getUTCDate());
    const b = dow.has(d.getUTCDay());
    if (this.domStar || this.dowStar) return a && b;
    return a || b;
  }

  next(after: Date): Date | undefined {
    const [sec, min, hour, , month] = this.sets as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
    const t = new Date(Math.floor(after.getTime() / 1000) * 1000 + 1000);
    const limit = after.getTime() + 10 * 366 * 24 * 3600 * 1000;
    while (t.getTime() <= limit) {
      if (!month.has(t.getUTCMonth() + 1)) {
        t.setUTCMonth(t.getUTCMonth() + 1, 1);
        t.setUTCHours(0, 0, 0, 0);
        continue;
      }
      if (!this.dayMatches(t)) {
        t.setUTCDate(t.getUTCDate() + 1);
        t.setUTCHours(0, 0, 0, 0);
        continue;
      }
      if (!hour.has(t.getUTCHours())) {
        t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
        continue;
      }
      if (!min.has(t.getUTCMinutes())) {
        t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
        continue;
      }
      if (!sec.has(t.getUTCSeconds())) {
        t.setUTCSeconds(t.getUTCSeconds() + 1, 0);
        continue;
      }
      return t;
    }
    return undefined;
  }
}

/** A fixed interval: the next fire time is `after` plus the interval (whole seconds). */
export class IntervalSchedule implements Schedule {
  readonly ms: number;
  constructor(ms: number) {
    if (!(ms >= 1000)) throw new Error('the interval must be at least one second');
    this.ms = Math.floor(ms / 1000) * 1000;
  }
  next(after: Date): Date {
    return new Date(after.getTime() + this.ms);
  }
}

/** A Go duration (`30s`, `1m30s`, `1.5h`, `500ms`) in milliseconds; throws naming what is wrong. */
export function parseDuration(s: string): number {
  if (!s) throw new Error('empty duration');
  const ms = parseGoDuration(s);
  if (ms === undefined || ms < 0) throw new Error(`"${s}" is not a duration (e.g. 30s, 5m, 1h30m)`);
  return ms;
}

/** A cron expression of six fields (with seconds) or five (without). Throws naming what is wrong. */
export function parseCron(expr: string): Schedule {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) throw new Error(`expected 5 or 6 space-separated fields (second minute hour day-of-month month day-of-week), got ${parts.length}`);
  const fields = parts.length === 5 ? ['0', ...parts] : parts;
  const parsed = fields.map((text, i) => parseField(FIELDS[i] as Field, text));
  return new CronSchedule(parsed.map((p) => p.values), parsed[3]?.star ?? false, parsed[5]?.star ?? false);
}

/** A cron expression or a descriptor (`@hourly`, `@every 30s`). */
export function parseSchedule(expr: string): Schedule {
  const e = expr.trim();
  if (e.startsWith('@every')) {
    const d = e.slice('@every'.length).trim();
    return new IntervalSchedule(parseDuration(d));
  }
  if (e.startsWith('@')) {
    const c = DESCRIPTORS[e.toLowerCase()];
    if (!c) throw new Error(`unknown descriptor "${e}": supported: ${[...Object.keys(DESCRIPTORS), '@every <duration>'].join(', ')}`);
    return parseCron(c);
  }
  return parseCron(e);
}
