// KFP list queries over the API shapes: `filter` (a JSON Filter: predicates on a field, with
// operations as names or numbers and values in camelCase or snake_case), `sort_by`
// (`created_at desc`), `page_size` and an opaque `page_token`. Errors name what is wrong (400).
import { ApiError, StatusReason } from '../../api/errors.js';

export type Shape = Record<string, unknown>;

const OPS = ['UNSPECIFIED', 'EQUALS', 'NOT_EQUALS', 'GREATER_THAN', '', 'GREATER_THAN_EQUALS', 'LESS_THAN', 'LESS_THAN_EQUALS', 'IN', 'IS_SUBSTRING'] as const;
export type Op = Exclude<(typeof OPS)[number], '' | 'UNSPECIFIED'>;

export interface Predicate {
  key: string;
  op: Op;
  /** a single value, or the list for IN */
  value: string | number | boolean | (string | number)[];
  /** the value was a timestamp */
  time?: boolean;
}

const bad = (msg: string): ApiError => new ApiError(StatusReason.BadRequest, msg);

function opOf(raw: unknown, i: number): Op {
  let name: string | undefined;
  if (typeof raw === 'number' || (typeof raw === 'string' && /^\d+$/.test(raw))) name = OPS[Number(raw)];
  else if (typeof raw === 'string') name = raw.toUpperCase();
  if (!name || name === 'UNSPECIFIED' || !(OPS as readonly string[]).includes(name)) {
    throw bad(`filter.predicates[${i}].operation: ${JSON.stringify(raw)} is not one of EQUALS, NOT_EQUALS, GREATER_THAN, GREATER_THAN_EQUALS, LESS_THAN, LESS_THAN_EQUALS, IN, IS_SUBSTRING (or 1-3, 5-9)`);
  }
  return name as Op;
}

function timeOf(v: unknown, field: string): number {
  if (typeof v === 'string') {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return t;
  } else if (v && typeof v === 'object' && 'seconds' in v) {
    return Number((v as { seconds: unknown }).seconds) * 1000;
  }
  throw bad(`${field}: ${JSON.stringify(v)} is not an RFC3339 timestamp`);
}

function listOf(v: unknown, field: string): unknown[] {
  const values = v && typeof v === 'object' && !Array.isArray(v) ? (v as { values?: unknown }).values : v;
  if (!Array.isArray(values)) throw bad(`${field}: expected {"values": [...]}`);
  return values;
}

/**
 * Parses a KFP `filter` query parameter; `keys` are the keys this list accepts (the shape's field
 * names). An empty or absent filter is no predicates.
 */
export function parseFilter(text: string | undefined, keys: readonly string[]): Predicate[] {
  if (text === undefined || text.trim() === '') return [];
  let f: any;
  try {
    f = JSON.parse(text);
  } catch (e) {
    throw bad(`filter: not valid JSON: ${(e as Error).message}`);
  }
  if (!f || typeof f !== 'object' || Array.isArray(f)) throw bad('filter: expected a JSON object {"predicates": [...]}');
  for (const k of Object.keys(f)) if (k !== 'predicates') throw bad(`filter: unknown field "${k}": expected {"predicates": [...]}`);
  const preds = f.predicates ?? [];
  if (!Array.isArray(preds)) throw bad('filter.predicates: expected a list');
  return preds.map((p: any, i: number): Predicate => {
    const at = `filter.predicates[${i}]`;
    if (!p || typeof p !== 'object') throw bad(`${at}: expected an object`);
    const key = p.key;
    if (typeof key !== 'string' || !key) throw bad(`${at}.key: required`);
    if (!keys.includes(key)) throw bad(`${at}.key: "${key}" cannot be filtered on; supported keys: ${keys.join(', ')}`);
    const op = opOf(p.operation ?? p.op, i);
    const get = (...names: string[]): unknown => {
      for (const n of names) if (p[n] !== undefined) return p[n];
      return undefined;
    };
    let value: Predicate['value'] | undefined;
    let time = false;
    const s = get('stringValue', 'string_value');
    const n = get('intValue', 'int_value', 'longValue', 'long_value');
    const b = get('boolValue', 'bool_value');
    const ts = get('timestampValue', 'timestamp_value');
    const ss = get('stringValues', 'string_values');
    const ns = get('intValues', 'int_values', 'longValues', 'long_values');
    if (s !== undefined) value = String(s);
    else if (n !== undefined) {
      value = Number(n);
      if (!Number.isFinite(value)) throw bad(`${at}.int_value: ${JSON.stringify(n)} is not a number`);
    } else if (b !== undefined) value = b === true || b === 'true';
    else if (ts !== undefined) {
      value = timeOf(ts, `${at}.timestamp_value`);
      time = true;
    } else if (ss !== undefined) value = listOf(ss, `${at}.string_values`).map(String);
    else if (ns !== undefined) value = listOf(ns, `${at}.int_values`).map(Number);
    if (value === undefined) throw bad(`${at}: a value is required (string_value, int_value, long_value, bool_value, timestamp_value, string_values, int_values or long_values)`);
    if (op === 'IN' && !Array.isArray(value)) throw bad(`${at}: IN needs string_values, int_values or long_values`);
    if (op !== 'IN' && Array.isArray(value)) throw bad(`${at}: ${op} needs a single value, not a list`);
    if (op === 'IS_SUBSTRING' && typeof value !== 'string') throw bad(`${at}: IS_SUBSTRING needs a string_value`);
    return { key, op, value, time };
  });
}

const isTimeKey = (k: string): boolean => /_at$|_time$/.test(k);

function compare(a: unknown, b: unknown, time: boolean): number {
  if (time) return timeOf(a, 'field') - timeOf(b, 'field');
  if (typeof b === 'number') return Number(a) - b;
  if (typeof b === 'boolean') return Number(a === true || a === 'true') - Number(b);
  return String(a ?? '').localeCompare(String(b));
}

export function matches(item: Shape, preds: Predicate[]): boolean {
  return preds.every((p) => {
    const field = item[p.key];
    const time = p.time || (isTimeKey(p.key) && typeof p.value === 'string' && !Number.isNaN(Date.parse(p.value)));
    const v = time && typeof p.value === 'string' ? Date.parse(p.value) : p.value;
    const actual = time ? (field === undefined ? 0 : Date.parse(String(field))) : field;
    const cmp = (x: unknown): number => (time ? Number(actual) - Number(x) : compare(actual, x, false));
    switch (p.op) {
      case 'EQUALS': return field !== undefined && cmp(v) === 0;
      case 'NOT_EQUALS': return field === undefined || cmp(v) !== 0;
      case 'GREATER_THAN': return field !== undefined && cmp(v) > 0;
      case 'GREATER_THAN_EQUALS': return field !== undefined && cmp(v) >= 0;
      case 'LESS_THAN': return field !== undefined && cmp(v) < 0;
      case 'LESS_THAN_EQUALS': return field !== undefined && cmp(v) <= 0;
      case 'IN': return field !== undefined && (v as (string | number)[]).some((x) => cmp(x) === 0);
      case 'IS_SUBSTRING': return typeof field === 'string' && field.includes(String(v));
    }
    return false;
  });
}

export interface Sort {
  key: string;
  desc: boolean;
}

/** `created_at`, `display_name desc`, `name asc`; empty is created_at ascending */
export function parseSort(text: string | undefined, keys: readonly string[]): Sort {
  const t = (text ?? '').trim();
  if (!t) return { key: 'created_at', desc: false };
  const [key = '', dir, ...extra] = t.split(/\s+/);
  if (extra.length || (dir !== undefined && !['asc', 'desc'].includes(dir.toLowerCase()))) throw bad(`sort_by: "${t}" is not "<field>", "<field> asc" or "<field> desc"`);
  if (!keys.includes(key)) throw bad(`sort_by: "${key}" cannot be sorted on; supported keys: ${keys.join(', ')}`);
  return { key, desc: dir?.toLowerCase() === 'desc' };
}

export function sortItems(items: Shape[], sort: Sort, idKey: string): Shape[] {
  const time = isTimeKey(sort.key);
  const key = (s: Shape): unknown => s[sort.key];
  return [...items].sort((a, b) => {
    let c: number;
    const x = key(a);
    const y = key(b);
    if (time) c = (x === undefined ? 0 : Date.parse(String(x))) - (y === undefined ? 0 : Date.parse(String(y)));
    else if (typeof x === 'number' && typeof y === 'number') c = x - y;
    else c = String(x ?? '').localeCompare(String(y ?? ''));
    if (c === 0) c = String(a[idKey] ?? '').localeCompare(String(b[idKey] ?? ''));
    return sort.desc ? -c : c;
  });
}

export interface Page {
  items: Shape[];
  total_size: number;
  next_page_token?: string;
}

export const defaultPageSize = 20;
export const maxPageSize = 1000;

function pageSizeOf(text: string | undefined): number {
  if (text === undefined || text === '') return defaultPageSize;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw bad(`page_size: "${text}" must be a non-negative integer`);
  return n === 0 ? defaultPageSize : Math.min(n, maxPageSize);
}

/** The token carries the offset and the query it belongs to, so it cannot be used with another. */
function tokenFor(offset: number, query: string): string {
  return Buffer.from(JSON.stringify({ o: offset, q: query })).toString('base64url');
}

function offsetOf(token: string | undefined, query: string): number {
  if (!token) return 0;
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { o?: unknown; q?: unknown };
    if (typeof t.o === 'number' && Number.isInteger(t.o) && t.o >= 0 && t.q === query) return t.o;
  } catch {
    // falls through
  }
  throw bad('page_token: not a token this list gave out (or one for another filter or sort_by)');
}

export interface ListQuery {
  filter?: string;
  sort_by?: string;
  page_size?: string;
  page_token?: string;
}

/** Filters, sorts and pages a whole list of shapes. */
export function listPage(all: Shape[], q: ListQuery, opts: { keys: readonly string[]; idKey: string }): Page {
  const preds = parseFilter(q.filter, opts.keys);
  const sort = parseSort(q.sort_by, opts.keys);
  const size = pageSizeOf(q.page_size);
  const query = `${q.filter ?? ''}|${sort.key} ${sort.desc}`;
  const offset = offsetOf(q.page_token, query);
  const kept = sortItems(all.filter((s) => matches(s, preds)), sort, opts.idKey);
  const items = kept.slice(offset, offset + size);
  const page: Page = { items, total_size: kept.length };
  if (offset + size < kept.length) page.next_page_token = tokenFor(offset + size, query);
  return page;
}
