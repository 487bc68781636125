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

/** Splits on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p.length > 0);
}

/** Parses a field selector: `metadata.name=x,status.phase!=Running` (any dotted path). */
export function parseFieldSelector(s: string | undefined): Selector {
  if (!s || !s.trim()) return [];
  return splitTop(s).map((part): Requirement => {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw new ApiError(StatusReason.BadRequest, `invalid field selector "${s}": expected path=value or path!=value in "${part}"`);
    return { key: m[1] ?? '', op: m[2] === '!=' ? '!=' : '=', value: (m[3] ?? '').trim() };
  });
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
