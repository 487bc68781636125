// A small CEL (Common Expression Language) evaluator: enough of the language for what the KFP SDK
// emits in `triggerPolicy.condition` and `parameterExpressionSelector`, evaluated the way the KFP
// driver does (cel-go, with the custom function `parseJson`). Values: CEL int is a bigint, CEL
// double a number, plus string, bool, null, lists (arrays) and maps (plain objects). Equality is
// heterogeneous (`1 == 1.0` is true, `'1' == 1` is false); ordering across types is an error.

export class CelError extends Error {}

type Tok =
  | { k: 'num'; v: bigint | number; at: number }
  | { k: 'str'; v: string; at: number }
  | { k: 'id'; v: string; at: number }
  | { k: 'op'; v: string; at: number }
  | { k: 'end'; at: number };

export type CelNode =
  | { t: 'lit'; v: CelValue }
  | { t: 'id'; name: string }
  | { t: 'sel'; obj: CelNode; field: string }
  | { t: 'idx'; obj: CelNode; index: CelNode }
  | { t: 'call'; fn: string; target?: CelNode; args: CelNode[] }
  | { t: 'un'; op: string; x: CelNode }
  | { t: 'bin'; op: string; l: CelNode; r: CelNode }
  | { t: 'cond'; c: CelNode; a: CelNode; b: CelNode }
  | { t: 'list'; items: CelNode[] }
  | { t: 'map'; entries: [CelNode, CelNode][] };

export type CelValue = null | boolean | bigint | number | string | CelValue[] | { [k: string]: CelValue };

const OPS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')', '[', ']', '{', '}', '.', ',', ':', '?', '+', '-', '*', '/', '%'];
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '`': '`', '?': '?', a: '\x07', b: '\b', f: '\f', v: '\v' };

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) { i++; continue; }
    const at = i;
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const hex = /^0[xX][0-9a-fA-F]+[uU]?/.exec(src.slice(i));
      if (hex) {
        out.push({ k: 'num', v: BigInt(hex[0].replace(/[uU]$/, '')), at });
        i += hex[0].length;
        continue;
      }
      const m = /^(?:[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)[uU]?/.exec(src.slice(i));
      const text = (m as RegExpExecArray)[0];
      const body = text.replace(/[uU]$/, '');
      out.push({ k: 'num', v: /[.eE]/.test(body) ? Number(body) : BigInt(body), at });
      i += text.length;
      continue;
    }
    let raw = false;
    let q = c;
    if ((c === 'r' || c === 'R') && (src[i + 1] === '"' || src[i + 1] === "'")) { raw = true; q = src[i + 1] as string; i++; }
    if (q === '"' || q === "'") {
      const triple = src.startsWith(q.repeat(3), i);
      const close = triple ? q.repeat(3) : q;
      i += close.length;
      let s = '';
      for (;;) {
        if (i >= src.length) throw new CelError(`unterminated string at ${at}`);
        if (src.startsWith(close, i)) { i += close.length; break; }
        const ch = src[i] as string;
        if (!triple && (ch === '\n' || ch === '\r')) throw new CelError(`newline in string at ${at}`);
        if (ch === '\\' && !raw) {
          const e = src[i + 1] ?? '';
          if (e in ESCAPES) { s += ESCAPES[e]; i += 2; continue; }
          const u = /^(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|([0-3][0-7]{2}))/.exec(src.slice(i + 1));
          if (!u) throw new CelError(`bad escape \\${e} at ${i}`);
          const code = u[4] !== undefined ? parseInt(u[4], 8) : parseInt((u[1] ?? u[2] ?? u[3]) as string, 16);
          s += String.fromCodePoint(code);
          i += 1 + u[0].length;
          continue;
        }
        s += ch;
        i++;
      }
      out.push({ k: 'str', v: s, at });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i)) as RegExpExecArray;
      out.push({ k: 'id', v: m[0], at });
      i += m[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new CelError(`unexpected character ${JSON.stringify(c)} at ${i}`);
    out.push({ k: 'op', v: op, at });
    i += op.length;
  }
  out.push({ k: 'end', at: src.length });
  return out;
}

// binary precedence, loosest first; `?:` is handled above `||`
const LEVELS: string[][] = [['||'], ['&&'], ['==', '!=', '<', '<=', '>', '>=', 'in'], ['+', '-'], ['*', '/', '%']];

class Parser {
  private pos = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok {
    return this.toks[this.pos] as Tok;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return (t.k === 'op' || (t.k === 'id' && v === 'in')) && t.v === v;
  }
  private expect(v: string): void {
    if (!this.isOp(v)) throw new CelError(`expected ${JSON.stringify(v)} at ${this.peek().at}`);
    this.pos++;
  }

  parse(): CelNode {
    const n = this.expr();
    const t = this.peek();
    if (t.k !== 'end') throw new CelError(`unexpected ${JSON.stringify('v' in t ? String(t.v) : '')} at ${t.at}`);
    return n;
  }

  private expr(): CelNode {
    const c = this.binary(0);
    if (!this.isOp('?')) return c;
    this.pos++;
    const a = this.binary(0);
    this.expect(':');
    const b = this.expr();
    return { t: 'cond', c, a, b };
  }

  private binary(level: number): CelNode {
    const ops = LEVELS[level];
    if (!ops) return this.unary();
    let l = this.binary(level + 1);
    for (;;) {
      const op = ops.find((o) => this.isOp(o));
      if (!op) return l;
      this.pos++;
      l = { t: 'bin', op, l, r: this.binary(level + 1) };
    }
  }

  private unary(): CelNode {
    if (this.isOp('!')) { this.pos++; return { t: 'un', op: '!', x: this.unary() }; }
    if (this.isOp('-')) { this.pos++; return { t: 'un', op: '-', x: this.unary() }; }
    return this.member();
  }

  private member(): CelNode {
    let n = this.primary();
    for (;;) {
      if (this.isOp('.')) {
        this.pos++;
        const id = this.peek();
        if (id.k !== 'id') throw new CelError(`expected a field name at ${id.at}`);
        this.pos++;
        if (this.isOp('(')) n = { t: 'call', fn: id.v, target: n, args: this.args(')') };
        else n = { t: 'sel', obj: n, field: id.v };
      } else if (this.isOp('[')) {
        this.pos++;
        const index = this.expr();
        this.expect(']');
        n = { t: 'idx', obj: n, index };
      } else return n;
    }
  }

  private args(close: string): CelNode[] {
    this.pos++; // the opening bracket
    const out: CelNode[] = [];
    if (this.isOp(close)) { this.pos++; return out; }
    for (;;) {
      out.push(this.expr());
      if (this.isOp(',')) { this.pos++; if (this.isOp(close)) { this.pos++; return out; } continue; }
      this.expect(close);
      return out;
    }
  }

  private primary(): CelNode {
    const t = this.peek();
    if (t.k === 'num' || t.k === 'str') { this.pos++; return { t: 'lit', v: t.v }; }
    if (t.k === 'id') {
      this.pos++;
      if (t.v === 'true' || t.v === 'false') return { t: 'lit', v: t.v === 'true' };
      if (t.v === 'null') return { t: 'lit', v: null };
      if (this.isOp('(')) return { t: 'call', fn: t.v, args: this.args(')') };
      return { t: 'id', name: t.v };
    }
    if (this.isOp('(')) {
      this.pos++;
      const n = this.expr();
      this.expect(')');
      return n;
    }
    if (this.isOp('[')) return { t: 'list', items: this.args(']') };
    if (this.isOp('{')) {
      this.pos++;
      const entries: [CelNode, CelNode][] = [];
      while (!this.isOp('}')) {
        const k = this.expr();
        this.expect(':');
        entries.push([k, this.expr()]);
        if (!this.isOp(',')) break;
        this.pos++;
      }
      this.expect('}');
      return { t: 'map', entries };
    }
    throw new CelError(t.k === 'end' ? 'unexpected end of expression' : `unexpected ${JSON.stringify(String(t.v))} at ${t.at}`);
  }
}

/** Parses a CEL expression; a syntax error is a CelError naming the expression. */
export function parseCel(expr: string): CelNode {
  try {
    return new Parser(tokenize(expr)).parse();
  } catch (e) {
    throw new CelError(`cannot parse CEL expression ${JSON.stringify(expr)}: ${(e as Error).message}`);
  }
}

/** A JSON value (e.g. a parameter value) as CEL sees a protobuf Value: every number is a double. */
export function fromJson(v: unknown): CelValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(fromJson);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromJson(x)]));
  return String(v);
}

/** A CEL result back as JSON: ints become numbers. */
export function toJson(v: CelValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toJson);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]));
  return v;
}

function typeName(v: CelValue): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return Array.isArray(v) ? 'list' : 'map';
}

const isNum = (v: CelValue): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';
const isMap = (v: CelValue): v is { [k: string]: CelValue } => v !== null && typeof v === 'object' && !Array.isArray(v);

function numCompare(a: bigint | number, b: bigint | number): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  return x < y ? -1 : x > y ? 1 : 0;
}

function celEquals(a: CelValue, b: CelValue): boolean {
  if (isNum(a) && isNum(b)) return numCompare(a, b) === 0;
  if (typeName(a) !== typeName(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => celEquals(x, b[i] as CelValue));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && celEquals(a[k] as CelValue, b[k] as CelValue));
  }
  return a === b;
}

function compare(op: string, a: CelValue, b: CelValue): boolean {
  let c: number;
  if (isNum(a) && isNum(b)) c = numCompare(a, b);
  else if (typeof a === 'string' && typeof b === 'string') c = a < b ? -1 : a > b ? 1 : 0;
  else if (typeof a === 'boolean' && typeof b === 'boolean') c = Number(a) - Number(b);
  else throw new CelError(`no such overload: ${typeName(a)} ${op} ${typeName(b)}`);
  if (Number.isNaN(c)) return false;
  return op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0;
}

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;

function checkInt(v: bigint): bigint {
  if (v < INT_MIN || v > INT_MAX) throw new CelError('int overflow');
  return v;
}

function arith(op: string, a: CelValue, b: CelValue): CelValue {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    if ((op === '/' || op === '%') && b === 0n) throw new CelError(op === '/' ? 'division by zero' : 'modulus by zero');
    return checkInt(op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : op === '/' ? a / b : a % b);
  }
  if (typeof a === 'number' && typeof b === 'number' && op !== '%') return op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;
  if (op === '+' && typeof a === 'string' && typeof b === 'string') return a + b;
  if (op === '+' && Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  throw new CelError(`no such overload: ${typeName(a)} ${op} ${typeName(b)}`);
}

function toInt(v: CelValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new CelError(`int(${v}): out of range`);
    return checkInt(BigInt(Math.trunc(v)));
  }
  if (typeof v === 'string') {
    if (!/^[+-]?[0-9]+$/.test(v)) throw new CelError(`int(${JSON.stringify(v)}): not an integer`);
    return checkInt(BigInt(v));
  }
  throw new CelError(`no such overload: int(${typeName(v)})`);
}

function toDouble(v: CelValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === '' || Number.isNaN(Number(t)) && !/^[+-]?nan$/i.test(t)) throw new CelError(`double(${JSON.stringify(v)}): not a number`);
    return /inf/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : Number(t);
  }
  throw new CelError(`no such overload: double(${typeName(v)})`);
}

function toStr(v: CelValue): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new CelError(`no such overload: string(${typeName(v)})`);
}

function call(fn: string, args: CelValue[], target: CelValue | undefined): CelValue {
  const all = target === undefined ? args : [target, ...args];
  const one = (): CelValue => {
    if (all.length !== 1) throw new CelError(`${fn}() takes one argument, got ${all.length}`);
    return all[0] as CelValue;
  };
  switch (fn) {
    case 'int': return toInt(one());
    case 'uint': return toInt(one());
    case 'double': return toDouble(one());
    case 'string': return toStr(one());
    case 'bool': {
      const v = one();
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string' && /^(true|false|t|f|1|0|TRUE|FALSE|True|False)$/.test(v)) return /^(true|t|1|TRUE|True)$/.test(v);
      throw new CelError(`no such overload: bool(${typeName(v)} ${JSON.stringify(toJson(v))})`);
    }
    case 'parseJson': {
      const v = one();
      if (typeof v !== 'string') throw new CelError(`no such overload: parseJson(${typeName(v)})`);
      try {
        return fromJson(JSON.parse(v));
      } catch (e) {
        throw new CelError(`parseJson: ${(e as Error).message}`);
      }
    }
    case 'size': {
      const v = one();
      if (typeof v === 'string') return BigInt([...v].length);
      if (Array.isArray(v)) return BigInt(v.length);
      if (isMap(v)) return BigInt(Object.keys(v).length);
      throw new CelError(`no such overload: size(${typeName(v)})`);
    }
    case 'type': return typeName(one());
    case 'contains': case 'startsWith': case 'endsWith': {
      const [s, x] = all;
      if (all.length !== 2 || typeof s !== 'string' || typeof x !== 'string') throw new CelError(`no such overload: ${fn}`);
      return fn === 'contains' ? s.includes(x) : fn === 'startsWith' ? s.startsWith(x) : s.endsWith(x);
    }
    default: throw new CelError(`unknown function ${fn}`);
  }
}

function index(obj: CelValue, key: CelValue): CelValue {
  if (Array.isArray(obj)) {
    if (!isNum(key) || (typeof key === 'number' && !Number.isInteger(key))) throw new CelError(`no such overload: list[${typeName(key)}]`);
    const i = Number(key);
    if (i < 0 || i >= obj.length) throw new CelError(`index out of range: ${i}`);
    return obj[i] as CelValue;
  }
  if (isMap(obj)) {
    const k = typeof key === 'string' ? key : isNum(key) || typeof key === 'boolean' ? String(key) : undefined;
    if (k === undefined) throw new CelError(`no such overload: map[${typeName(key)}]`);
    if (!Object.prototype.hasOwnProperty.call(obj, k)) throw new CelError(`no such key: ${k}`);
    return obj[k] as CelValue;
  }
  throw new CelError(`no such overload: ${typeName(obj)}[${typeName(key)}]`);
}

function evalNode(n: CelNode, vars: Record<string, CelValue>): CelValue {
  switch (n.t) {
    case 'lit': return n.v;
    case 'id':
      if (!Object.prototype.hasOwnProperty.call(vars, n.name)) throw new CelError(`undeclared reference to ${JSON.stringify(n.name)}`);
      return vars[n.name] as CelValue;
    case 'sel': {
      const o = evalNode(n.obj, vars);
      if (!isMap(o)) throw new CelError(`no such field ${n.field} on ${typeName(o)}`);
      return index(o, n.field);
    }
    case 'idx': return index(evalNode(n.obj, vars), evalNode(n.index, vars));
    case 'call': return call(n.fn, n.args.map((a) => evalNode(a, vars)), n.target ? evalNode(n.target, vars) : undefined);
    case 'list': return n.items.map((x) => evalNode(x, vars));
    case 'map': {
      const m: { [k: string]: CelValue } = {};
      for (const [k, v] of n.entries) m[toStr(evalNode(k, vars))] = evalNode(v, vars);
      return m;
    }
    case 'cond': {
      const c = evalNode(n.c, vars);
      if (typeof c !== 'boolean') throw new CelError(`no such overload: ${typeName(c)} ? _ : _`);
      return evalNode(c ? n.a : n.b, vars);
    }
    case 'un': {
      const x = evalNode(n.x, vars);
      if (n.op === '!') {
        if (typeof x !== 'boolean') throw new CelError(`no such overload: !${typeName(x)}`);
        return !x;
      }
      if (typeof x === 'bigint') return checkInt(-x);
      if (typeof x === 'number') return -x;
      throw new CelError(`no such overload: -${typeName(x)}`);
    }
    case 'bin': {
      if (n.op === '&&' || n.op === '||') {
        // CEL's logical operators are commutative over errors: false && error is false
        const short = n.op === '||';
        let err: unknown;
        let l: CelValue | undefined;
        try { l = evalNode(n.l, vars); } catch (e) { err = e; }
        if (l === short) return short;
        const r = evalNode(n.r, vars);
        if (r === short) return short;
        if (err) throw err;
        if (typeof l !== 'boolean' || typeof r !== 'boolean') throw new CelError(`no such overload: ${typeName(l ?? null)} ${n.op} ${typeName(r)}`);
        return !short;
      }
      const l = evalNode(n.l, vars);
      const r = evalNode(n.r, vars);
      switch (n.op) {
        case '==': return celEquals(l, r);
        case '!=': return !celEquals(l, r);
        case '<': case '<=': case '>': case '>=': return compare(n.op, l, r);
        case 'in':
          if (Array.isArray(r)) return r.some((x) => celEquals(l, x));
          if (isMap(r)) return typeof l === 'string' && Object.prototype.hasOwnProperty.call(r, l);
          throw new CelError(`no such overload: ${typeName(l)} in ${typeName(r)}`);
        default: return arith(n.op, l, r);
      }
    }
  }
}

/** Evaluates an expression with the given variables (already CEL values, see fromJson). */
export function evaluateCel(expr: string, vars: Record<string, CelValue>): CelValue {
  const ast = parseCel(expr);
  try {
    return evalNode(ast, vars);
  } catch (e) {
    throw new CelError(`evaluating CEL expression ${JSON.stringify(expr)}: ${(e as Error).message}`);
  }
}

/** A task's inputs as the KFP driver's condition sees them: `inputs.parameter_values[...]`, `inputs.artifacts[...]`. */
export interface ConditionInputs {
  parameters: Record<string, unknown>;
  artifacts?: Record<string, { name: string; uri: string; metadata?: Record<string, unknown> }[]>;
}

/** `triggerPolicy.condition`: true runs the task; a non-bool result is an error. */
export function evaluateCondition(expr: string, inputs: ConditionInputs): boolean {
  const artifacts: { [k: string]: CelValue } = {};
  for (const [k, list] of Object.entries(inputs.artifacts ?? {})) artifacts[k] = { artifacts: list.map((a) => fromJson({ name: a.name, uri: a.uri, metadata: a.metadata ?? {} })) };
  const v = evaluateCel(expr, { inputs: { parameter_values: fromJson(inputs.parameters), parameters: fromJson(inputs.parameters), artifacts } });
  if (typeof v !== 'boolean') throw new CelError(`CEL expression ${JSON.stringify(expr)} is a ${typeName(v)}, not a bool`);
  return v;
}

/** `parameterExpressionSelector`: the value bound as `string_value` (JSON text unless it is a string). */
export function selectParameter(expr: string, value: unknown): unknown {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return toJson(evaluateCel(expr, { string_value: s }));
}
