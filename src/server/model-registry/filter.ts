// The Model Registry's `filterQuery`: a SQL-like condition over an entity's own properties and its
// custom properties, as upstream documents it:
//   expr    := and (OR and)*
//   and     := unary (AND unary)*
//   unary   := '(' expr ')' | cmp
//   cmp     := path op value | path IN '(' value (',' value)* ')'
//   op      := = | != | <> | < | > | <= | >= | LIKE | ILIKE
//   path    := seg ('.' seg)*     seg := identifier | `backticked name`
//   value   := 'string' | "string" | number | true | false
// A path ending in `.string_value`, `.int_value`, `.double_value` or `.bool_value` names a custom
// property of that type; another path is the entity's own property when it has one by that name,
// else a custom property of any type. Keywords are case-insensitive. A malformed query is an error
// that says where.

export type Scalar = string | number | boolean;

export type Filter =
  | { op: 'and' | 'or'; left: Filter; right: Filter }
  | { op: 'cmp'; path: PropertyPath; cmp: Comparison; value: Scalar }
  | { op: 'in'; path: PropertyPath; values: Scalar[] };

export type Comparison = '=' | '!=' | '<' | '>' | '<=' | '>=' | 'LIKE' | 'ILIKE';

export const valueTypes = ['string_value', 'int_value', 'double_value', 'bool_value'] as const;
export type ValueType = (typeof valueTypes)[number];

export interface PropertyPath {
  /** the name as written, dots and all (`mlflow.source.type`) */
  name: string;
  /** the custom property value's type, when the path names one */
  type?: ValueType;
}

export class FilterError extends Error {}

type Token =
  | { t: 'word'; v: string; at: number }
  | { t: 'quoted'; v: string; at: number }
  | { t: 'string'; v: string; at: number }
  | { t: 'number'; v: number; at: number }
  | { t: 'punct'; v: string; at: number }
  | { t: 'end'; at: number };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const at = i;
    if (c === "'" || c === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new FilterError(`unterminated string starting at position ${at + 1}`);
        const d = src[i] as string;
        if (d === '\\' && i + 1 < src.length) {
          v += src[i + 1];
          i += 2;
        } else if (d === c && src[i + 1] === c) {
          v += c;
          i += 2;
        } else if (d === c) {
          i++;
          break;
        } else {
          v += d;
          i++;
        }
      }
      out.push({ t: 'string', v, at });
      continue;
    }
    if (c === '`') {
      const end = src.indexOf('`', i + 1);
      if (end < 0) throw new FilterError(`unterminated backtick name starting at position ${at + 1}`);
      const v = src.slice(i + 1, end);
      if (v === '') throw new FilterError(`empty backtick name at position ${at + 1}`);
      out.push({ t: 'quoted', v, at });
      i = end + 1;
      continue;
    }
    const num = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(src.slice(i));
    if (num && (c !== '-' || /[\d.]/.test(src[i + 1] ?? ''))) {
      out.push({ t: 'number', v: Number(num[0]), at });
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (word) {
      out.push({ t: 'word', v: word[0], at });
      i += word[0].length;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '!=' || two === '<>' || two === '<=' || two === '>=') {
      out.push({ t: 'punct', v: two, at });
      i += 2;
      continue;
    }
    if ('=<>(),.'.includes(c)) {
      out.push({ t: 'punct', v: c, at });
      i++;
      continue;
    }
    throw new FilterError(`unexpected character ${JSON.stringify(c)} at position ${at + 1}`);
  }
  out.push({ t: 'end', at: src.length });
  return out;
}

const describe = (t: Token): string => {
  if (t.t === 'end') return 'the end of the query';
  if (t.t === 'string') return `the string ${JSON.stringify(t.v)} at position ${t.at + 1}`;
  if (t.t === 'quoted') return `\`${t.v}\` at position ${t.at + 1}`;
  return `${JSON.stringify(String(t.v))} at position ${t.at + 1}`;
};

class Parser {
  private i = 0;
  constructor(private readonly toks: Token[]) {}

  private peek(): Token {
    return this.toks[this.i] as Token;
  }

  private next(): Token {
    return this.toks[this.i++] as Token;
  }

  private isWord(w: string): boolean {
    const t = this.peek();
    return t.t === 'word' && t.v.toUpperCase() === w;
  }

  private isPunct(p: string): boolean {
    const t = this.peek();
    return t.t === 'punct' && t.v === p;
  }

  parse(): Filter {
    const f = this.or();
    const t = this.peek();
    if (t.t !== 'end') throw new FilterError(`unexpected ${describe(t)}: expected AND, OR or the end of the query`);
    return f;
  }

  private or(): Filter {
    let left = this.and();
    while (this.isWord('OR')) {
      this.next();
      left = { op: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Filter {
    let left = this.unary();
    while (this.isWord('AND')) {
      this.next();
      left = { op: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): Filter {
    if (this.isPunct('(')) {
      this.next();
      const f = this.or();
      if (!this.isPunct(')')) throw new FilterError(`expected ")" but found ${describe(this.peek())}`);
      this.next();
      return f;
    }
    const path = this.path();
    if (this.isWord('IN')) {
      this.next();
      if (!this.isPunct('(')) throw new FilterError(`expected "(" after IN but found ${describe(this.peek())}`);
      this.next();
      const values = [this.value()];
      while (this.isPunct(',')) {
        this.next();
        values.push(this.value());
      }
      if (!this.isPunct(')')) throw new FilterError(`expected "," or ")" in the IN list but found ${describe(this.peek())}`);
      this.next();
      return { op: 'in', path, values };
    }
    const t = this.next();
    let cmp: Comparison;
    if (t.t === 'punct' && ['=', '!=', '<>', '<', '>', '<=', '>='].includes(t.v)) cmp = (t.v === '<>' ? '!=' : t.v) as Comparison;
    else if (t.t === 'word' && ['LIKE', 'ILIKE'].includes(t.v.toUpperCase())) cmp = t.v.toUpperCase() as Comparison;
    else throw new FilterError(`expected a comparison operator (=, !=, <>, <, >, <=, >=, LIKE, ILIKE, IN) after ${path.name} but found ${describe(t)}`);
    const value = this.value();
    if ((cmp === 'LIKE' || cmp === 'ILIKE') && typeof value !== 'string') throw new FilterError(`${cmp} needs a string pattern, not ${JSON.stringify(value)}`);
    return { op: 'cmp', path, cmp, value };
  }

  private segment(): string {
    const t = this.next();
    if (t.t === 'word' || t.t === 'quoted') return t.v;
    throw new FilterError(`expected a property name but found ${describe(t)}`);
  }

  private path(): PropertyPath {
    const segs = [this.segment()];
    while (this.isPunct('.')) {
      this.next();
      segs.push(this.segment());
    }
    const last = segs[segs.length - 1] as string;
    if (segs.length > 1 && (valueTypes as readonly string[]).includes(last)) return { name: segs.slice(0, -1).join('.'), type: last as ValueType };
    return { name: segs.join('.') };
  }

  private value(): Scalar {
    const t = this.next();
    if (t.t === 'string' || t.t === 'number') return t.v;
    if (t.t === 'word' && ['TRUE', 'FALSE'].includes(t.v.toUpperCase())) return t.v.toUpperCase() === 'TRUE';
    throw new FilterError(`expected a value (a quoted string, a number, true or false) but found ${describe(t)}`);
  }
}

/** the parsed query; a FilterError says what is wrong and where */
export function parseFilter(src: string): Filter {
  if (src.trim() === '') throw new FilterError('the query is empty');
  return new Parser(tokenize(src)).parse();
}

/** What a filter reads of one entity: its own property by name, and its custom properties. */
export interface FilterSubject {
  own(name: string): Scalar | undefined;
  custom(name: string): { type: ValueType; value: Scalar } | undefined;
}

function likeRegex(pattern: string, flags: string): RegExp {
  let re = '';
  for (const ch of pattern) re += ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${re}$`, flags);
}

/** a numeric reading of a value, for comparisons of numbers with the decimal strings ids and times are */
const numeric = (v: Scalar): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? Number(v) : undefined);

function compare(actual: Scalar, cmp: Comparison, want: Scalar): boolean {
  if (cmp === 'LIKE' || cmp === 'ILIKE') return typeof actual === 'string' && likeRegex(String(want), cmp === 'ILIKE' ? 'is' : 's').test(actual);
  let a: Scalar = actual;
  let b: Scalar = want;
  const na = numeric(actual);
  const nb = numeric(want);
  if (typeof actual === 'boolean' || typeof want === 'boolean') {
    if (typeof actual !== typeof want) return cmp === '!=';
  } else if (na !== undefined && nb !== undefined && (typeof actual === 'number' || typeof want === 'number')) {
    a = na;
    b = nb;
  } else {
    a = String(actual);
    b = String(want);
  }
  switch (cmp) {
    case '=': return a === b;
    case '!=': return a !== b;
    case '<': return a < b;
    case '>': return a > b;
    case '<=': return a <= b;
    case '>=': return a >= b;
  }
}

function read(s: FilterSubject, p: PropertyPath): Scalar | undefined {
  if (p.type) {
    const c = s.custom(p.name);
    return c && c.type === p.type ? c.value : undefined;
  }
  return s.own(p.name) ?? s.custom(p.name)?.value;
}

/** whether the entity matches; a property it lacks matches no comparison (as SQL's NULL) */
export function matches(f: Filter, s: FilterSubject): boolean {
  switch (f.op) {
    case 'and': return matches(f.left, s) && matches(f.right, s);
    case 'or': return matches(f.left, s) || matches(f.right, s);
    case 'in': {
      const v = read(s, f.path);
      return v !== undefined && f.values.some((w) => compare(v, '=', w));
    }
    case 'cmp': {
      const v = read(s, f.path);
      return v !== undefined && compare(v, f.cmp, f.value);
    }
  }
}
