// Label selector syntax as Kubernetes parses it (k8s.io/apimachinery's labels.Parse): the same tokens,
// the same grammar and the same error texts, so `kubectl get -l 'app in (a,b'` is refused here with
// the words a cluster uses.
//
//   selector    := requirement ("," requirement)*
//   requirement := ["!"] KEY [ ("in" | "notin") "(" values ")" | ("=" | "==" | "!=" | ">" | "<") [VALUE] ]
import { ApiError, StatusReason } from '../api/errors.js';

export type LabelRequirement =
  | { key: string; op: 'exists' | '!exists' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

type Tok = 'id' | 'end' | ',' | '!' | '(' | ')' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin' | 'error';

interface Item {
  tok: Tok;
  lit: string;
}

const symbols = new Set(['=', '!', '(', ')', ',', '>', '<']);
const symbolTokens = new Set(['=', '==', '!', '!=', '(', ')', ',', '>', '<']);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

function lex(s: string): Item[] {
  const out: Item[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isSpace(s[i] as string)) i++;
    if (i >= s.length) {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    if (symbols.has(s[i] as string)) {
      // the longest run of symbols that is still a token
      let buf = '';
      let best: Item | undefined;
      while (i < s.length && symbols.has(s[i] as string)) {
        buf += s[i];
        if (symbolTokens.has(buf)) best = { tok: buf as Tok, lit: buf };
        else if (best) break;
        i++;
      }
      out.push(best ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
      continue;
    }
    let word = '';
    while (i < s.length && !symbols.has(s[i] as string) && !isSpace(s[i] as string)) word += s[i++];
    out.push({ tok: word === 'in' || word === 'notin' ? word : 'id', lit: word });
  }
}

const labelKeyFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelKeyRe = new RegExp(`^${labelKeyFmt}$`);
const labelValueFmt = `(${labelKeyFmt})?`;
const labelValueRe = new RegExp(`^${labelValueFmt}$`);
const subdomainFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const subdomainRe = new RegExp(`^${subdomainFmt}$`);

/** content.RegexError's wording, double spaces before "or" included */
function regexError(msg: string, re: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

const keyMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** the problems of a label key (a qualified name), in Kubernetes' words */
export function labelKeyErrors(key: string): string[] {
  const errs: string[] = [];
  const parts = key.split('/');
  if (parts.length > 2) {
    return [`a valid label key ${regexError(keyMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const name = parts[parts.length - 1] as string;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (!prefix) errs.push('prefix part must be non-empty');
    else {
      if (Buffer.byteLength(prefix) > 253) errs.push('prefix part must be no more than 253 bytes');
      if (!subdomainRe.test(prefix)) {
        errs.push(`prefix part ${regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", subdomainFmt, 'example.com')}`);
      }
    }
  }
  if (!name) errs.push('name part must be non-empty');
  else if (Buffer.byteLength(name) > 63) errs.push('name part must be no more than 63 bytes');
  if (!labelKeyRe.test(name)) errs.push(`name part ${regexError(keyMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** the problems of a label value, in Kubernetes' words */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > 63) errs.push('must be no more than 63 bytes');
  if (!labelValueRe.test(value)) {
    errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

class SyntaxError_ extends Error {}

/** a field.Error's text: `path: Invalid value: <value>: detail` */
function invalid(path: string, value: string | string[], detail: string): string {
  return `${path}: Invalid value: ${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value)}: ${detail}`;
}

function requirement(key: string, op: LabelRequirement['op'], values: string[]): LabelRequirement {
  // NewRequirement's checks, as one aggregate
  const errs: string[] = [];
  if ((op === 'in' || op === 'notin') && values.length === 0) errs.push(invalid('values', values, "for 'in', 'notin' operators, values set can't be empty"));
  if (op === 'gt' || op === 'lt') {
    values.forEach((v, i) => {
      if (!/^[+-]?\d+$/.test(v)) errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
    });
  }
  values.forEach((v, i) => {
    const bad = labelValueErrors(v);
    if (bad.length) errs.push(invalid(`values[${i}][${key}]`, v, bad.join('; ')));
  });
  const unique = [...new Set(errs)];
  if (unique.length) throw new SyntaxError_(`unable to parse requirement: ${unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`}`);
  switch (op) {
    case 'exists':
    case '!exists':
      return { key, op };
    case 'in':
    case 'notin':
      return { key, op, values };
    case 'gt':
    case 'lt':
      return { key, op, value: Number(values[0]) };
    default:
      return { key, op, value: values[0] ?? '' };
  }
}

const operatorOf: Partial<Record<Tok, LabelRequirement['op']>> = { in: 'in', notin: 'notin', '=': '=', '==': '=', '!=': '!=', '>': 'gt', '<': 'lt' };

/** Parses a label selector as Kubernetes does; a refusal is the 400 kube-apiserver answers. */
export function parseLabels(selector: string): LabelRequirement[] {
  const items = lex(selector);
  let pos = 0;
  // inside values, `in` and `notin` are plain words
  const look = (): Item => {
    const it = items[pos] as Item;
    return it.tok === 'in' || it.tok === 'notin' ? { tok: 'id', lit: it.lit } : it;
  };
  const next = (asWord = true): Item => {
    const it = items[pos++] as Item;
    return asWord && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  };
  const fail = (msg: string): never => {
    throw new SyntaxError_(msg);
  };
  const parseRequirement = (): LabelRequirement => {
    let it = next();
    let op: LabelRequirement['op'] | undefined;
    if (it.tok === '!') {
      op = '!exists';
      it = next();
    }
    if (it.tok !== 'id') fail(`found '${it.lit}', expected: identifier`);
    const key = it.lit;
    const keyErrs = labelKeyErrors(key);
    if (keyErrs.length) fail(`<nil>: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    const after = look().tok;
    if (after === 'end' || after === ',') return requirement(key, op ?? 'exists', []);
    if (op === '!exists') return requirement(key, op, []);
    const opItem = next(false);
    const binary = operatorOf[opItem.tok];
    if (!binary) fail(`found '${opItem.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    const o = binary as LabelRequirement['op'];
    if (o === 'in' || o === 'notin') return requirement(key, o, [...new Set(parseValues())].sort());
    const v = look();
    if (v.tok === 'end' || v.tok === ',') return requirement(key, o, ['']);
    const val = next();
    if (val.tok !== 'id') fail(`found '${val.lit}', expected: identifier`);
    return requirement(key, o, [val.lit]);
  };
  const parseValues = (): string[] => {
    const open = next();
    if (open.tok !== '(') fail(`found '${open.lit}' expected: '('`);
    const first = look();
    if (first.tok === ')') {
      next();
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',') fail(`found '${first.lit}', expected: ',', ')' or identifier`);
    const values: string[] = [];
    for (;;) {
      const it = next();
      if (it.tok === 'id') {
        values.push(it.lit);
        const after = look();
        if (after.tok === ',') continue;
        if (after.tok === ')') break;
        fail(`found '${after.lit}', expected: ',' or ')'`);
      } else if (it.tok === ',') {
        if (values.length === 0) values.push('');
        const after = look();
        if (after.tok === ')') {
          values.push('');
          break;
        }
        if (after.tok === ',') values.push('');
      } else {
        fail(`found '${it.lit}', expected: ',', or identifier`);
      }
    }
    if (next().tok !== ')') fail(`found '${first.lit}', expected: ')'`);
    return values;
  };
  try {
    const out: LabelRequirement[] = [];
    for (;;) {
      const it = look();
      if (it.tok === 'end') return out;
      if (it.tok !== 'id' && it.tok !== '!') fail(`found '${it.lit}', expected: !, identifier, or 'end of string'`);
      try {
        out.push(parseRequirement());
      } catch (e) {
        if (e instanceof SyntaxError_ && !e.message.startsWith('unable to parse requirement: ')) throw new SyntaxError_(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      const sep = next();
      if (sep.tok === 'end') return out;
      if (sep.tok !== ',') fail(`found '${sep.lit}', expected: ',' or 'end of string'`);
      const after = look();
      if (after.tok !== 'id' && after.tok !== '!') fail(`found '${after.lit}', expected: identifier after ','`);
    }
  } catch (e) {
    if (e instanceof SyntaxError_) throw new ApiError(StatusReason.BadRequest, e.message);
    throw e;
  }
}
