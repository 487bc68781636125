// Label and field selectors, parsed once and matched against objects.
import { ApiError, StatusReason } from '../api/errors.js';
import type { KObject } from '../api/meta.js';
import { parseLabels } from './label-selector.js';
import type { LabelRequirement } from './label-selector.js';

export type Requirement = LabelRequirement;

export type Selector = Requirement[];

/** Parses a label selector: `a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`, as Kubernetes does. */
export function parseLabelSelector(s: string | undefined): Selector {
  if (!s || !s.trim()) return [];
  return parseLabels(s);
}

/** Splits a field selector into terms at commas that are not escaped with a backslash. */
function fieldTerms(s: string): string[] {
  const out: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** A field selector value with its `\\`, `\,` and `\=` escapes undone, refusing bare `,` and `=`. */
function unescapeFieldValue(v: string): string {
  let out = '';
  let escaped = false;
  for (const c of v) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') throw new ApiError(StatusReason.BadRequest, `invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      escaped = false;
    } else if (c === '\\') escaped = true;
    else if (c === ',' || c === '=') throw new ApiError(StatusReason.BadRequest, `invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (escaped) throw new ApiError(StatusReason.BadRequest, 'invalid field selector: invalid escape sequence: \\');
  return out;
}

/**
 * Parses a field selector as Kubernetes does: terms `path=value`, `path==value` or `path!=value`
 * split at unescaped commas, the operator the first one found, nothing trimmed.
 */
export function parseFieldSelector(s: string | undefined): Selector {
  if (!s) return [];
  const out: Selector = [];
  for (const term of fieldTerms(s).sort()) {
    if (term === '') continue;
    let i = 0;
    let op: '!=' | '==' | '=' | undefined;
    for (; i < term.length && !op; i++) op = (['!=', '==', '='] as const).find((o) => term.startsWith(o, i));
    if (!op) throw new ApiError(StatusReason.BadRequest, `invalid selector: '${s}'; can't understand '${term}'`);
    const at = i - 1;
    out.push({ key: term.slice(0, at), op: op === '!=' ? '!=' : '=', value: unescapeFieldValue(term.slice(at + op.length)) });
  }
  return out;
}

function matches(req: Requirement, value: string | undefined): boolean {
  switch (req.op) {
    case 'exists': return value !== undefined;
    case '!exists': return value === undefined;
    case '=': return value === req.value;
    case '!=': return value !== req.value;
    case 'in': return value !== undefined && req.values.includes(value);
    case 'notin': return value === undefined || !req.values.includes(value);
    // Gt and Lt compare a label that holds an integer; any other label does not match
    case 'gt':
    case 'lt': {
      if (value === undefined || !/^[+-]?\d+$/.test(value)) return false;
      return req.op === 'gt' ? Number(value) > req.value : Number(value) < req.value;
    }
  }
}

export function matchLabels(sel: Selector, labels: Record<string, string> | undefined): boolean {
  return sel.every((r) => matches(r, labels?.[r.key]));
}

export function fieldValue(obj: KObject, path: string): string | undefined {
  let cur: any = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[part];
  }
  if (cur === undefined || cur === null) return path === 'metadata.namespace' ? '' : undefined;
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

export function matchFields(sel: Selector, obj: KObject): boolean {
  return sel.every((r) => matches(r, fieldValue(obj, r.key) ?? (r.op === '=' || r.op === '!=' ? '' : undefined)));
}

/** matchLabels/matchExpressions of a LabelSelector object, as Jobs and Services carry. */
export function selectorFromObject(sel: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined): Selector {
  const out: Selector = [];
  for (const [key, value] of Object.entries(sel?.matchLabels ?? {})) out.push({ key, op: '=', value });
  for (const e of sel?.matchExpressions ?? []) {
    if (e.operator === 'In') out.push({ key: e.key, op: 'in', values: e.values ?? [] });
    else if (e.operator === 'NotIn') out.push({ key: e.key, op: 'notin', values: e.values ?? [] });
    else if (e.operator === 'Exists') out.push({ key: e.key, op: 'exists' });
    else if (e.operator === 'DoesNotExist') out.push({ key: e.key, op: '!exists' });
  }
  return out;
}
