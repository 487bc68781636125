// What the Kubernetes API server does with an object of a kind a CRD defines, read from the served
// version's openAPIV3Schema (src/api/schemas/openapi.json): the schema's defaults, its structural
// checks (src/api/structural-schema.ts), then its `x-kubernetes-validations` rules, evaluated in CEL
// as apiextensions-apiserver evaluates them:
//
//   - `self` is the value the rule sits on, after defaulting; integers are CEL ints;
//   - a rule that names `oldSelf` is a transition rule: it runs on update only, where the old object
//     has a value at the same place (through object fields and `map` lists matched by their keys);
//   - a rule that is false fails with its message, on the rule's path (`<nil>` for the object's root):
//     `Invalid value: <message>` for an object or a list, `Invalid value: "<the value>": <message>` for
//     a scalar;
//   - when the schema already refused the object's shape (a wrong type, a missing required field, an
//     unsupported enum value, too many items), no rule runs, and one cause without a field says so,
//     worded as the API server words it.
//
// A kind keeps its own admission checks (Kueue's webhooks) beside these; see src/api/kueue.ts.
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import type { FieldError } from './errors.js';
import { schemaCatalog } from './openapi-schemas.js';
import type { SchemaNode } from './openapi-schemas.js';
import { SchemaSet } from './structural-schema.js';
import type { StructuralSchema } from './structural-schema.js';
import { isPlainObject } from '../util/objects.js';

interface ValidationRule {
  rule: string;
  message?: string;
  reason?: string;
  fieldPath?: string;
}

const structural = new SchemaSet({});
const env = celEnv({});
type Program = ReturnType<typeof plan>;
/** each rule's text planned once: the rules are few, the objects many */
const programs = new Map<string, Program | Error>();

function program(rule: string): Program | Error {
  let p = programs.get(rule);
  if (!p) {
    try {
      p = plan(env, parse(rule));
    } catch (e) {
      p = e instanceof Error ? e : new Error(String(e));
    }
    programs.set(rule, p);
  }
  return p;
}

/** the openAPIV3Schema of a served CRD version */
export function crdSchema(group: string, version: string, kind: string): SchemaNode {
  const crd = schemaCatalog().crd(group, version, kind);
  if (!crd) throw new Error(`no CRD schema for ${group}/${version} ${kind} in openapi.json (scripts/gen-openapi.mjs)`);
  return crd.schema;
}

/** Fills the schema's defaults into `obj` and drops its non-nullable nulls, in place, as the API server decodes an object. */
export function applyCrdDefaults(group: string, version: string, kind: string, obj: unknown): void {
  structural.applyDefaults(obj, crdSchema(group, version, kind) as StructuralSchema);
}

export interface CrdValidateOptions {
  /** top-level fields the schema's structural checks leave alone (an object's status on the main resource); rules still see them */
  skip?: string[];
}

/** the field errors kube-apiserver lets a CEL check go ahead after: none of these */
const blocking = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/**
 * The schema's structural checks, then (when they leave the object's shape sound) its CEL rules, with
 * `old` as the rules' `oldSelf` on update.
 */
export function validateCrdObject(group: string, version: string, kind: string, obj: unknown, old?: unknown, opts: CrdValidateOptions = {}): FieldError[] {
  const schema = crdSchema(group, version, kind);
  const errs = structural.validate(obj, schema as StructuralSchema, '', { skip: opts.skip });
  if (errs.some((e) => blocking.has(e.type))) {
    errs.push({ field: '<nil>', type: 'FieldValueInvalid', message: 'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' });
    return errs;
  }
  evaluateRules(schema, obj, old, '', errs);
  return errs;
}

/**
 * The values of an object of a CRD's kind whose JSON type its schema does not allow, worded as
 * kube-apiserver words them (`spec.x: Invalid value: "string": spec.x in body must be of type
 * integer: "string"`): for kinds whose own checks are written by hand, which would otherwise word a
 * wrong type their own way. The status is left to the status endpoint. None for a version without a
 * served schema.
 */
export function crdTypeErrors(group: string, version: string, kind: string, obj: unknown): FieldError[] {
  const crd = schemaCatalog().crd(group, version, kind);
  if (!crd) return [];
  return structural.validate(obj, crd.schema as StructuralSchema, '', { skip: ['status'] }).filter((e) => e.type === 'FieldValueTypeInvalid');
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** a JSON value as the API server hands it to CEL: integers of integer fields are ints, not doubles */
function celValue(value: unknown, s: SchemaNode | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    const integral = s?.type === 'integer' || s?.['x-kubernetes-int-or-string'] === true;
    return integral && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => celValue(v, s?.items));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const ps = s?.properties?.[k] ?? (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
      out[k] = celValue(v, ps);
    }
    return out;
  }
  return value;
}

/** the old item of a `map` list that has the same keys as `item` */
function correlated(s: SchemaNode, item: unknown, old: unknown): unknown {
  if (s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(old) || !isPlainObject(item)) return undefined;
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  return old.find((o) => isPlainObject(o) && keys.every((k) => o[k] === item[k]));
}

function scalarShown(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/** a rule's path as kube-apiserver prints it: the object's root has none, shown `<nil>` */
function rulePath(path: string, rule?: ValidationRule): string {
  const at = rule?.fieldPath ? `${path}${rule.fieldPath.startsWith('.') ? '' : '.'}${rule.fieldPath}`.replace(/^\./, '') : path;
  return at || '<nil>';
}

function ruleError(path: string, s: SchemaNode, value: unknown, rule: ValidationRule, detail: string): FieldError {
  const at = rulePath(path, rule);
  switch (rule.reason) {
    case 'FieldValueForbidden':
      return { field: at, type: 'FieldValueForbidden', message: `Forbidden: ${detail}` };
    case 'FieldValueRequired':
      return { field: at, type: 'FieldValueRequired', message: `Required value: ${detail}` };
  }
  // an object or a list is not printed, a scalar is
  const message = s.type === 'object' || s.type === 'array' ? `Invalid value: ${detail}` : `Invalid value: ${scalarShown(value)}: ${detail}`;
  return { field: at, type: 'FieldValueInvalid', message };
}

function evaluateRules(s: SchemaNode, value: unknown, old: unknown, path: string, errs: FieldError[]): void {
  if (value === null || value === undefined) return;
  const rules = s['x-kubernetes-validations'] as ValidationRule[] | undefined;
  // the values CEL sees, made once for all the rules of this place
  let vars: Record<string, never> | undefined;
  for (const rule of rules ?? []) {
    if (/\boldSelf\b/.test(rule.rule) && (old === undefined || old === null)) continue;
    const detail = rule.message?.trim() || `failed rule: ${rule.rule.trim()}`;
    const run = program(rule.rule);
    let result: unknown;
    try {
      vars ??= { self: celValue(value, s), oldSelf: celValue(old, s) } as unknown as Record<string, never>;
      result = run instanceof Error ? run : run(vars);
    } catch (e) {
      result = e;
    }
    if (result === true) continue;
    if (result instanceof Error || isCelError(result)) {
      const why = (result as Error).message;
      errs.push({ field: rulePath(path), type: 'FieldValueInvalid', message: `Invalid value: ${s.type === 'object' || s.type === 'array' ? '' : `${scalarShown(value)}: `}${why} evaluating rule: ${rule.message?.trim() || rule.rule.trim()}` });
      continue;
    }
    errs.push(ruleError(path, s, value, rule, detail));
  }
  if (Array.isArray(value)) {
    if (!s.items) return;
    const items = s.items;
    value.forEach((item, i) => evaluateRules(items, item, correlated(s, item, old), `${path}[${i}]`, errs));
    return;
  }
  if (!isPlainObject(value)) return;
  if (s.properties) {
    for (const [key, ps] of Object.entries(s.properties)) {
      if (value[key] === undefined) continue;
      evaluateRules(ps, value[key], isPlainObject(old) ? old[key] : undefined, join(path, key), errs);
    }
  } else if (typeof s.additionalProperties === 'object') {
    const vs = s.additionalProperties;
    for (const [key, v] of Object.entries(value)) evaluateRules(vs, v, isPlainObject(old) ? old[key] : undefined, `${path}[${key}]`, errs);
  }
}
