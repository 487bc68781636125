// kubectl's JSONPath (k8s.io/client-go/util/jsonpath), the dialect of a CRD's
// additionalPrinterColumns and of `kubectl get -o jsonpath`: `{.status.conditions[-1:].type}`,
// `.status.conditions[?(@.type=="Ready")].status`, `.spec.containers[*].name`, `..name`, unions
// `[0,2]`, slices `[1:3:2]`. The quirks are kubectl's, so a column prints on Skiff as on a cluster:
// `['a.b']` reads the fields a and b, a missing key yields nothing (or fails without allowMissing),
// a filter comparing values of different types fails.

type Node =
  | { t: 'field'; name: string }
  | { t: 'wildcard' }
  | { t: 'recursive' }
  | { t: 'array'; params: [Param, Param, Param] }
  | { t: 'union'; lists: Node[][] }
  | { t: 'filter'; left: Node[]; right: Node[]; op: string }
  | { t: 'text'; value: string }
  | { t: 'int'; value: number }
  | { t: 'float'; value: number }
  | { t: 'bool'; value: boolean }
  | { t: 'identifier'; name: string };

interface Param {
  value: number;
  known: boolean;
  /** the end of a single index `[i]`, taken as i+1 */
  derived?: boolean;
}

export class JsonPathError extends Error {}

/** A parsed template: text and `{...}` actions, each action a list of steps. */
export class JsonPath {
  private constructor(private readonly parts: Node[][], readonly source: string) {}

  /** Parses a template such as `{.status.url}` or `name: {.metadata.name}`. */
  static parse(template: string): JsonPath {
    return new JsonPath(new Parser(template).parseTemplate(), template);
  }

  /** Parses one path without braces, as a CRD column's jsonPath is written: `.status.url`. */
  static parsePath(path: string): JsonPath {
    return JsonPath.parse(`{${path}}`);
  }

  /**
   * The values each part of the template finds (a text part finds itself). Missing keys find
   * nothing when allowMissing is set and fail otherwise; a value of the wrong shape fails.
   */
  find(data: unknown, allowMissing = false): unknown[][] {
    const ev = new Evaluator(allowMissing);
    return this.parts.map((nodes) => ev.list([data], nodes));
  }
}

// ---------------------------------------------------------------- parsing

const sliceRe = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
const dictKeyRe = /^'([^']*)'$/;
const filterRe = /^([^!<>=]+)([!<>=]+)(.+?)$/s;

function isTerminator(c: string | undefined): boolean {
  return c === undefined || ' \t\r\n.,[]$@{}'.includes(c);
}

function isAlphaNumeric(c: string | undefined): boolean {
  return c !== undefined && /^[\p{L}\p{Nd}_]$/u.test(c);
}

class Parser {
  private pos = 0;

  constructor(private readonly input: string) {}

  parseTemplate(): Node[][] {
    const parts: Node[][] = [];
    let text = '';
    while (this.pos < this.input.length) {
      if (this.input[this.pos] === '{') {
        if (text) parts.push([{ t: 'text', value: text }]);
        text = '';
        this.pos++;
        parts.push(this.action());
      } else {
        text += this.input[this.pos++];
      }
    }
    if (text) parts.push([{ t: 'text', value: text }]);
    return parts;
  }

  private fail(msg: string): never {
    throw new JsonPathError(`${msg} in JSONPath ${JSON.stringify(this.input)}`);
  }

  /** the steps of one `{...}` action, up to its closing brace */
  private action(): Node[] {
    const out: Node[] = [];
    for (;;) {
      const rest = this.input.slice(this.pos);
      if (rest.startsWith('}')) {
        this.pos++;
        return out;
      }
      if (rest.startsWith('[?(')) {
        out.push(this.filter());
        continue;
      }
      if (rest.startsWith('..')) {
        if (out[out.length - 1]?.t === 'recursive') this.fail('invalid multiple recursive descent');
        this.pos += 2;
        out.push({ t: 'recursive' });
        if (isAlphaNumeric(this.input[this.pos])) out.push(this.field());
        continue;
      }
      const c = this.input[this.pos];
      if (c === undefined || c === '\r' || c === '\n') this.fail('unclosed action');
      if (c === ' ' || c === '@' || c === '$') {
        this.pos++;
      } else if (c === '[') {
        out.push(...this.array());
      } else if (c === '"' || c === "'") {
        out.push(this.quote(c));
      } else if (c === '.') {
        this.pos++;
        out.push(this.field());
      } else if (c === '+' || c === '-' || /\d/.test(c)) {
        out.push(this.number());
      } else if (isAlphaNumeric(c)) {
        out.push(this.identifier());
      } else {
        this.fail(`unrecognized character in action: ${JSON.stringify(c)}`);
      }
    }
  }

  /** a field name after `.`, up to the next unescaped terminator; `\.` keeps a dot in the name */
  private field(): Node {
    let raw = '';
    for (;;) {
      const c = this.input[this.pos];
      if (c === '\\') {
        raw += c + (this.input[this.pos + 1] ?? '');
        this.pos += 2;
        continue;
      }
      if (isTerminator(c)) break;
      raw += c;
      this.pos++;
    }
    if (raw === '*') return { t: 'wildcard' };
    return { t: 'field', name: raw.replace(/\\/g, '') };
  }

  private identifier(): Node {
    const start = this.pos;
    while (!isTerminator(this.input[this.pos])) this.pos++;
    const value = this.input.slice(start, this.pos);
    if (value === 'true' || value === 'false') return { t: 'bool', value: value === 'true' };
    return { t: 'identifier', name: value };
  }

  private number(): Node {
    const start = this.pos;
    if (this.input[this.pos] === '+' || this.input[this.pos] === '-') this.pos++;
    while (this.input[this.pos] === '.' || /\d/.test(this.input[this.pos] ?? '')) this.pos++;
    const text = this.input.slice(start, this.pos);
    if (/^[+-]?\d+$/.test(text)) return { t: 'int', value: Number(text) };
    const f = Number(text);
    if (text !== '' && !Number.isNaN(f) && /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) return { t: 'float', value: f };
    return this.fail(`cannot parse number ${text}`);
  }

  private quote(q: string): Node {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const c = this.input[this.pos++];
      if (c === undefined || c === '\n') this.fail('unterminated quoted string');
      if (c === q && this.input[this.pos - 2] !== '\\') break;
    }
    return { t: 'text', value: unquote(this.input.slice(start, this.pos)) };
  }

  /** `[...]`: an index or slice, `*`, a union `[a,b]` or a key `['k']` */
  private array(): Node[] {
    const end = this.input.indexOf(']', this.pos);
    const nl = this.input.indexOf('\n', this.pos);
    if (end < 0 || (nl >= 0 && nl < end)) this.fail('unterminated array');
    let text = this.input.slice(this.pos + 1, end);
    this.pos = end + 1;
    if (text === '*') text = ':';
    const parts = text.split(',');
    if (parts.length > 1) {
      return [{ t: 'union', lists: parts.map((p) => new Parser(`{[${p.trim()}]}`).parseTemplate()[0] ?? []) }];
    }
    const key = dictKeyRe.exec(text);
    if (key) return new Parser(`{.${key[1]}}`).parseTemplate()[0] ?? [];
    const m = sliceRe.exec(text);
    if (!m) this.fail(`invalid array index ${text}`);
    const params: [Param, Param, Param] = [{ value: 0, known: false }, { value: 0, known: false }, { value: 0, known: false }];
    for (let i = 0; i < 3; i++) {
      let v = m[i + 1];
      if (v !== undefined && v !== '') {
        if (i > 0) v = v.slice(1);
        if (i > 0 && v === '') params[i] = { value: 0, known: false };
        else if (/^-?\d+$/.test(v)) params[i] = { value: Number(v), known: true };
        else this.fail(`array index ${v} is not a number`);
      } else if (i === 1) {
        params[1] = { value: params[0].value + 1, known: true, derived: true };
      }
    }
    return [{ t: 'array', params }];
  }

  /** `[?(@.type=="Ready")]` or `[?(@.tag)]` (exists) */
  private filter(): Node {
    this.pos += 3;
    const start = this.pos;
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const c = this.input[this.pos++];
      if (c === undefined || c === '\n') this.fail('unterminated filter');
      if (c === '"' || c === "'") {
        if (!begin) {
          begin = true;
          pair = c;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && c === pair) end = true;
      } else if (c === ')' && begin === end) {
        break;
      }
    }
    if (this.input[this.pos++] !== ']') this.fail('unclosed array expect ]');
    const text = this.input.slice(start, this.pos - 2);
    const m = filterRe.exec(text);
    const sub = (s: string): Node[] => new Parser(`{${s}}`).parseTemplate()[0] ?? [];
    if (!m) return { t: 'filter', left: sub(text), right: [], op: 'exists' };
    return { t: 'filter', left: sub(m[1] ?? ''), right: sub(m[3] ?? ''), op: m[2] ?? '' };
  }
}

/** Go's strconv.Unquote, extended to single quotes as kubectl's parser does */
function unquote(s: string): string {
  const q = s[0];
  const body = s.slice(1, -1);
  if (!body.includes('\\')) return body;
  const escapes: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"' };
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e !== undefined && e in escapes && (e !== "'" || q === "'") && (e !== '"' || q === '"')) out += escapes[e];
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== n) throw new JsonPathError(`unquote string ${s}: invalid syntax`);
      out += e === 'x' ? String.fromCharCode(parseInt(hex, 16)) : String.fromCodePoint(parseInt(hex, 16));
      i += n;
    } else throw new JsonPathError(`unquote string ${s}: invalid syntax`);
  }
  return out;
}

// ---------------------------------------------------------------- evaluation

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's comparison kinds: a JSON integer is an int, any other number a float */
function kindOf(v: unknown): 'bool' | 'int' | 'float' | 'string' | undefined {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return undefined;
}

/** a typed literal of the filter's right side keeps the kind it was written as */
interface Typed {
  v: unknown;
  kind?: 'int' | 'float';
}

function compare(a: Typed, b: Typed, op: string): boolean {
  const ka = a.kind ?? kindOf(a.v);
  const kb = b.kind ?? kindOf(b.v);
  if (ka === undefined || kb === undefined) throw new JsonPathError('invalid type for comparison');
  if (ka !== kb) throw new JsonPathError('incompatible types for comparison');
  const x = a.v as number | string | boolean;
  const y = b.v as number | string | boolean;
  switch (op) {
    case '==': return x === y;
    case '!=': return x !== y;
  }
  if (ka === 'bool') throw new JsonPathError('invalid type for comparison');
  switch (op) {
    case '<': return x < y;
    case '>': return x > y;
    case '<=': return x <= y;
    case '>=': return x >= y;
  }
  throw new JsonPathError(`unrecognized filter operator ${op}`);
}

class Evaluator {
  constructor(private readonly allowMissing: boolean) {}

  list(input: unknown[], nodes: Node[]): unknown[] {
    return this.typed(input.map((v) => ({ v })), nodes).map((t) => t.v);
  }

  private typed(input: Typed[], nodes: Node[]): Typed[] {
    let cur = input;
    for (const n of nodes) cur = this.step(cur, n);
    return cur;
  }

  private step(input: Typed[], n: Node): Typed[] {
    switch (n.t) {
      case 'text': return [{ v: n.value }];
      case 'int': return input.map(() => ({ v: n.value, kind: 'int' as const }));
      case 'float': return input.map(() => ({ v: n.value, kind: 'float' as const }));
      case 'bool': return input.map(() => ({ v: n.value }));
      case 'identifier': throw new JsonPathError(`unrecognized identifier ${n.name}`);
      case 'field': return this.field(input, n.name);
      case 'wildcard': return this.children(input);
      case 'recursive': return this.recursive(input);
      case 'array': return this.array(input, n.params);
      case 'union': return n.lists.flatMap((l) => this.typed(input, l));
      case 'filter': return this.filter(input, n);
    }
  }

  private field(input: Typed[], name: string): Typed[] {
    if (input.length === 0) return [];
    const out: Typed[] = [];
    for (const { v } of input) {
      if (isObject(v) && Object.prototype.hasOwnProperty.call(v, name)) out.push({ v: v[name] });
    }
    if (out.length === 0 && !this.allowMissing) throw new JsonPathError(`${name} is not found`);
    return out;
  }

  private children(input: Typed[]): Typed[] {
    const out: Typed[] = [];
    for (const { v } of input) {
      if (Array.isArray(v)) out.push(...v.map((x) => ({ v: x })));
      else if (isObject(v)) out.push(...Object.values(v).map((x) => ({ v: x })));
      // Go indexes a string by byte
      else if (typeof v === 'string') out.push(...[...Buffer.from(v, 'utf8')].map((x) => ({ v: x })));
    }
    return out;
  }

  private recursive(input: Typed[]): Typed[] {
    const out: Typed[] = [];
    for (const t of input) {
      if (t.v === null || t.v === undefined) continue;
      const kids = this.children([t]);
      if (kids.length) out.push(t, ...this.recursive(kids));
    }
    return out;
  }

  private array(input: Typed[], params: [Param, Param, Param]): Typed[] {
    const out: Typed[] = [];
    for (const { v } of input) {
      if (v === null || v === undefined) continue;
      if (!Array.isArray(v)) throw new JsonPathError(`${typeof v} is not array or slice`);
      const len = v.length;
      let start = params[0].known ? params[0].value : 0;
      if (start < 0) start += len;
      let end = params[1].known ? params[1].value : len;
      if (end < 0 || (end === 0 && params[1].derived)) end += len;
      if (end === start) return out;
      if (start >= len || start < 0) throw new JsonPathError(`array index out of bounds: index ${start}, length ${len}`);
      if (end > len || end < 0) throw new JsonPathError(`array index out of bounds: index ${end - 1}, length ${len}`);
      if (start > end) throw new JsonPathError(`starting index ${start} is greater than ending index ${end}`);
      let step = 1;
      if (params[2].known) {
        if (params[2].value <= 0) throw new JsonPathError('step must be > 0');
        step = params[2].value;
      }
      for (let i = start; i < end; i += step) out.push({ v: v[i] });
    }
    return out;
  }

  private filter(input: Typed[], n: { left: Node[]; right: Node[]; op: string }): Typed[] {
    const out: Typed[] = [];
    for (const { v } of input) {
      if (!Array.isArray(v)) throw new JsonPathError(`${JSON.stringify(v)} is not array or slice and cannot be filtered`);
      for (const item of v) {
        const at = [{ v: item }];
        if (n.op === 'exists') {
          let found: Typed[] = [];
          try {
            found = this.typed(at, n.left);
          } catch {
            found = [];
          }
          if (found.length) out.push({ v: item });
          continue;
        }
        const lefts = this.typed(at, n.left);
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new JsonPathError('can only compare one element at a time');
        const rights = this.typed(at, n.right);
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new JsonPathError('can only compare one element at a time');
        if (compare(lefts[0] as Typed, rights[0] as Typed, n.op)) out.push({ v: item });
      }
    }
    return out;
  }
}
