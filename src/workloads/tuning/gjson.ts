// The part of GJSON (github.com/tidwall/gjson path syntax) that Katib's trial success and failure
// conditions use, evaluated on the trial's job object as Katib evaluates them: users copy these
// conditions from Katib's examples, so they must mean here what they mean there.
//
// Supported: keys separated by `.`, `\` escapes, `*`/`?` wildcards in keys, array indices, `#` (the
// length of an array, or with a path after it, that path of every element), queries `#(path op
// value)` (first match) and `#(...)#` (all matches) with ==, !=, <, <=, >, >=, % and !% (wildcard
// match), and `|` chaining (what follows applies to the whole result rather than to each element).

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** an error naming what is wrong with a condition, for the Trial's status */
export class GjsonSyntaxError extends Error {
  override readonly name = 'GjsonSyntaxError';
}

type Op = '==' | '!=' | '<' | '<=' | '>' | '>=' | '%' | '!%';

interface Query {
  path: string;
  op?: Op;
  value?: JsonValue;
  all: boolean;
}

interface Component {
  /** the separator before this component: '.' maps over a `#`-result, '|' takes it whole */
  sep: '.' | '|' | '';
  key?: string;
  hash?: boolean;
  query?: Query;
}

/** Evaluates `path` on `doc`; undefined where GJSON's result does not exist. */
export function gjsonGet(doc: JsonValue | unknown, path: string): JsonValue | undefined {
  if (path === '') return undefined;
  return evaluate(doc as JsonValue, parsePath(path));
}

/**
 * Katib's test of a condition on the job: the result matches when it is an object or a non-empty
 * array; the first element (or the object itself) gives the job's reason and message.
 */
export function gjsonMatch(doc: unknown, path: string): { matched: boolean; reason?: string; message?: string } {
  const r = gjsonGet(doc, path);
  let first: JsonValue | undefined;
  if (Array.isArray(r)) first = r.length ? r[0] : undefined;
  else if (r !== null && typeof r === 'object') first = r;
  if (first === undefined) return { matched: false };
  const out: { matched: boolean; reason?: string; message?: string } = { matched: true };
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    if (typeof first.reason === 'string' && first.reason) out.reason = first.reason;
    if (typeof first.message === 'string' && first.message) out.message = first.message;
  }
  return out;
}

function evaluate(cur: JsonValue | undefined, comps: Component[]): JsonValue | undefined {
  for (let i = 0; i < comps.length; i++) {
    if (cur === undefined) return undefined;
    const c = comps[i] as Component;
    if (c.hash) {
      if (!Array.isArray(cur)) return undefined;
      const rest = comps.slice(i + 1);
      if (rest.length === 0) return cur.length;
      if ((rest[0] as Component).sep === '|') {
        cur = cur.length;
        continue;
      }
      return mapThenChain(cur, rest);
    }
    if (c.query) {
      if (!Array.isArray(cur)) return undefined;
      const q = c.query;
      if (q.all) {
        const matches = cur.filter((el) => queryMatches(el, q));
        const rest = comps.slice(i + 1);
        if (rest.length && (rest[0] as Component).sep === '.') return mapThenChain(matches, rest);
        cur = matches;
        continue;
      }
      cur = cur.find((el) => queryMatches(el, q));
      continue;
    }
    cur = child(cur, c.key ?? '');
  }
  return cur;
}

/**
 * What follows `#` or `#(...)#` after a dot, up to the next `|`, applies to each element (those
 * without it left out); what follows that `|` applies to the array of results.
 */
function mapThenChain(arr: JsonValue[], rest: Component[]): JsonValue | undefined {
  let cut = rest.findIndex((c, j) => j > 0 && c.sep === '|');
  if (cut < 0) cut = rest.length;
  const each = rest.slice(0, cut).map((c, j) => (j === 0 ? { ...c, sep: '' as const } : c));
  const out: JsonValue[] = [];
  for (const el of arr) {
    const v = evaluate(el, each);
    if (v !== undefined) out.push(v);
  }
  return cut < rest.length ? evaluate(out, rest.slice(cut)) : out;
}

function child(cur: JsonValue, key: string): JsonValue | undefined {
  if (Array.isArray(cur)) {
    if (!/^\d+$/.test(key)) return undefined;
    return cur[Number(key)];
  }
  if (cur === null || typeof cur !== 'object') return undefined;
  if (/[*?]/.test(key)) {
    const re = wildcard(key);
    const k = Object.keys(cur).find((x) => re.test(x));
    return k === undefined ? undefined : cur[k];
  }
  return Object.prototype.hasOwnProperty.call(cur, key) ? cur[key] : undefined;
}

function wildcard(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i] as string);
    else if (ch === '*') re += '[\\s\\S]*';
    else if (ch === '?') re += '[\\s\\S]';
    else re += escapeRe(ch);
  }
  return new RegExp(`^${re}$`);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function queryMatches(el: JsonValue, q: Query): boolean {
  const v = q.path === '' ? el : gjsonGet(el, q.path);
  if (v === undefined) return false;
  if (q.op === undefined) return true;
  const rhs = q.value as JsonValue;
  switch (q.op) {
    case '%':
    case '!%': {
      if (typeof v !== 'string' || typeof rhs !== 'string') return false;
      const m = wildcard(rhs).test(v);
      return q.op === '%' ? m : !m;
    }
    case '==':
      return typeof v === typeof rhs && !isComposite(v) && v === rhs;
    case '!=':
      return typeof v === typeof rhs && !isComposite(v) && v !== rhs;
    default: {
      if (typeof v !== typeof rhs || isComposite(v) || v === null) return false;
      const a = v as number | string | boolean;
      const b = rhs as number | string | boolean;
      if (q.op === '<') return a < b;
      if (q.op === '<=') return a <= b;
      if (q.op === '>') return a > b;
      return a >= b;
    }
  }
}

function isComposite(v: JsonValue): boolean {
  return v !== null && typeof v === 'object';
}

// ---- parsing -------------------------------------------------------------------------------------

function parsePath(path: string): Component[] {
  const comps: Component[] = [];
  let i = 0;
  let sep: Component['sep'] = '';
  while (i <= path.length) {
    if (path.startsWith('#(', i)) {
      const end = closing(path, i + 1);
      const body = path.slice(i + 2, end);
      let j = end + 1;
      const all = path[j] === '#';
      if (all) j++;
      comps.push({ sep, query: parseQuery(body, all, path) });
      i = j;
    } else {
      let key = '';
      let raw = '';
      while (i < path.length && path[i] !== '.' && path[i] !== '|') {
        if (path[i] === '\\' && i + 1 < path.length) {
          // an escaped character is part of the key; keep the escape for wildcard keys
          raw += path.slice(i, i + 2);
          key += path[i + 1];
          i += 2;
        } else {
          raw += path[i];
          key += path[i];
          i++;
        }
      }
      if (raw === '#') comps.push({ sep, hash: true });
      else comps.push({ sep, key: /[*?]/.test(raw) ? raw : key });
    }
    if (i >= path.length) break;
    const ch = path[i];
    if (ch !== '.' && ch !== '|') throw new GjsonSyntaxError(`condition "${path}": unexpected "${ch}" at ${i} (a query's closing ")" must be followed by ".", "|" or "#")`);
    sep = ch;
    i++;
    if (i === path.length) throw new GjsonSyntaxError(`condition "${path}": ends with "${ch}"`);
  }
  return comps;
}

/** index of the ")" closing the "(" at `open`, skipping quoted strings */
function closing(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === '\\') i++;
    } else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i;
  }
  throw new GjsonSyntaxError(`condition "${s}": query at ${open - 1} has no closing ")"`);
}

function parseQuery(body: string, all: boolean, whole: string): Query {
  // the operator is the first one outside quotes and nested parentheses
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '"') {
      for (i++; i < body.length && body[i] !== '"'; i++) if (body[i] === '\\') i++;
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    if (depth > 0) continue;
    const two = body.slice(i, i + 2);
    let op: Op | undefined;
    if (two === '==' || two === '!=' || two === '<=' || two === '>=' || two === '!%') op = two;
    else if (ch === '<' || ch === '>' || ch === '%') op = ch;
    else if (ch === '=') op = '=='; // GJSON reads a single "=" as "=="
    if (!op) continue;
    const width = op.length === 2 && two === op ? 2 : 1;
    const path = body.slice(0, i).trim();
    const text = body.slice(i + width).trim();
    return { path, op, value: literal(text, whole), all };
  }
  return { path: body.trim(), all };
}

function literal(text: string, whole: string): JsonValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (text.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v === 'string') return v;
    } catch {
      // reported below
    }
    throw new GjsonSyntaxError(`condition "${whole}": bad string ${text} in a query`);
  }
  const n = Number(text);
  if (text !== '' && Number.isFinite(n)) return n;
  throw new GjsonSyntaxError(`condition "${whole}": a query compares with "${text}", which is neither a quoted string, a number, true, false nor null`);
}
