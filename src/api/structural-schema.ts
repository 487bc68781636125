// Kubernetes structural-schema validation and defaulting for kinds defined by a CRD's
// openAPIV3Schema (KServe's InferenceService, ServingRuntime, ClusterServingRuntime).
//
// What the API server does with such an object, Skiff does too: `null` in a field that is not
// `nullable` is dropped, `default`s fill absent
// fields, and every value is checked against its `type`, `enum`, `required`, bounds, `pattern`,
// `x-kubernetes-int-or-string` (an integer or a string: `cpu: 0.1` is refused, `cpu: "100m"` or
// `cpu: 1` pass), `x-kubernetes-preserve-unknown-fields`, `additionalProperties` (maps) and
// `x-kubernetes-list-type` (`set` and `map` lists may not repeat an item or key). `format` is not
// checked. Errors are FieldErrors with dotted paths (`spec.predictor.containers[0].ports[1].name`).
// Fields the schema does not declare are field validation's (src/api/field-validation.ts), one path
// for every kind: the server refuses, warns about or drops them by the request's `fieldValidation`.
//
// The schemas themselves are data generated from the CRDs by scripts/gen-kserve-schemas.mjs into
// src/api/schemas/kserve.json, with repeated subtrees stored once under `$defs`.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FieldError } from './errors.js';
import { Validator } from './validation.js';
import { isPlainObject } from '../util/objects.js';

export interface StructuralSchema {
  $ref?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  nullable?: boolean;
  default?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minProperties?: number;
  maxProperties?: number;
  anyOf?: StructuralSchema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

/** A generated schema file: named roots and the shared `$defs` their `$ref`s point into. */
export interface SchemaFile {
  roots: Record<string, StructuralSchema>;
  $defs: Record<string, StructuralSchema>;
}

export interface ValidateOptions {
  /** top-level fields not validated (an object's `status` is written by its controller through the status endpoint) */
  skip?: string[];
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export class SchemaSet {
  private readonly patterns = new Map<string, RegExp | null>();

  constructor(readonly roots: Record<string, StructuralSchema>, readonly defs: Record<string, StructuralSchema> = {}) {}

  static fromFile(file: SchemaFile): SchemaSet {
    return new SchemaSet(file.roots, file.$defs);
  }

  root(name: string): StructuralSchema {
    const s = this.roots[name];
    if (!s) throw new Error(`no schema named ${name}`);
    return s;
  }

  /** follows `$ref`s into `$defs` */
  resolve(s: StructuralSchema): StructuralSchema {
    let cur = s;
    for (let depth = 0; cur.$ref !== undefined; depth++) {
      const id = cur.$ref.startsWith('#/$defs/') ? cur.$ref.slice('#/$defs/'.length) : cur.$ref;
      const next = this.defs[id];
      if (!next || depth > 32) throw new Error(`unresolvable schema reference ${cur.$ref}`);
      cur = next;
    }
    return cur;
  }

  /** Validates `value` against the schema (a root's name or a schema); `path` prefixes every field. */
  validate(value: unknown, schema: string | StructuralSchema, path = '', opts: ValidateOptions = {}): FieldError[] {
    const v = new Validator();
    const s = typeof schema === 'string' ? this.root(schema) : schema;
    if (opts.skip?.length && isPlainObject(value)) {
      const rest = { ...value };
      for (const k of opts.skip) delete rest[k];
      this.check(v, rest, this.resolve(s), path);
    } else {
      this.check(v, value, this.resolve(s), path);
    }
    return v.errors;
  }

  /**
   * Drops `null`s from fields that are not `nullable` and fills `default`s into absent fields of
   * objects that are present, as the API server does before validation. Idempotent.
   */
  applyDefaults(value: unknown, schema: string | StructuralSchema): void {
    const s = typeof schema === 'string' ? this.root(schema) : schema;
    this.defaults(value, this.resolve(s));
  }

  private defaults(value: unknown, s: StructuralSchema): void {
    if (Array.isArray(value)) {
      if (s.items) {
        const item = this.resolve(s.items);
        for (const el of value) this.defaults(el, item);
      }
      return;
    }
    if (!isPlainObject(value)) return;
    if (s.properties) {
      for (const [key, raw] of Object.entries(s.properties)) {
        const ps = this.resolve(raw);
        if (value[key] === null && !ps.nullable) delete value[key];
        if (value[key] === undefined && ps.default !== undefined) value[key] = clone(ps.default);
        if (value[key] !== undefined) this.defaults(value[key], ps);
      }
    } else if (isPlainObject(s.additionalProperties)) {
      const vs = this.resolve(s.additionalProperties);
      for (const el of Object.values(value)) this.defaults(el, vs);
    }
  }

  private regexp(pattern: string): RegExp | null {
    let re = this.patterns.get(pattern);
    if (re === undefined) {
      try {
        re = new RegExp(pattern, 'u');
      } catch {
        try {
          re = new RegExp(pattern);
        } catch {
          re = null;
        }
      }
      this.patterns.set(pattern, re);
    }
    return re;
  }

  private check(v: Validator, value: unknown, s: StructuralSchema, path: string): void {
    if (value === null) {
      // a null in a field that is not nullable is dropped before validation (see applyDefaults)
      return;
    }
    if (s['x-kubernetes-int-or-string']) {
      if (typeof value === 'string') {
        this.checkString(v, value, s, path);
      } else if (typeof value === 'number' && Number.isInteger(value)) {
        this.checkNumber(v, value, s, path);
      } else {
        // a fractional quantity is written as a string ("100m" for 0.1)
        this.typeError(v, value, 'integer,string', path);
      }
      this.checkEnum(v, value, s, path);
      return;
    }
    switch (s.type) {
      case 'object':
        if (!isPlainObject(value)) return this.typeError(v, value, 'object', path);
        this.checkObject(v, value, s, path);
        break;
      case 'array':
        if (!Array.isArray(value)) return this.typeError(v, value, 'array', path);
        this.checkArray(v, value, s, path);
        break;
      case 'string':
        if (typeof value !== 'string') return this.typeError(v, value, 'string', path);
        this.checkString(v, value, s, path);
        break;
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value)) return this.typeError(v, value, 'integer', path);
        this.checkNumber(v, value, s, path);
        break;
      case 'number':
        if (typeof value !== 'number') return this.typeError(v, value, 'number', path);
        this.checkNumber(v, value, s, path);
        break;
      case 'boolean':
        if (typeof value !== 'boolean') return this.typeError(v, value, 'boolean', path);
        break;
      default:
        // no type: anything goes (only under x-kubernetes-preserve-unknown-fields in a structural schema)
        if (isPlainObject(value) && s.properties) this.checkObject(v, value, s, path);
        break;
    }
    this.checkEnum(v, value, s, path);
  }

  /** worded as kube-openapi's InvalidType, which kube-apiserver reports for a CRD: the value shown is its JSON type's name */
  private typeError(v: Validator, value: unknown, expected: string, path: string): void {
    const actual = JSON.stringify(jsonType(value));
    v.add(path, 'FieldValueTypeInvalid', `Invalid value: ${actual}: ${path} in body must be of type ${expected}: ${actual}`);
  }

  private checkEnum(v: Validator, value: unknown, s: StructuralSchema, path: string): void {
    if (!s.enum) return;
    if (!s.enum.some((e) => e === value)) {
      v.add(path, 'FieldValueNotSupported', `Unsupported value: ${shown(value)}: supported values: ${s.enum.map((e) => shown(e)).join(', ')}`);
    }
  }

  private checkString(v: Validator, value: string, s: StructuralSchema, path: string): void {
    const len = [...value].length;
    if (s.maxLength !== undefined && len > s.maxLength) v.add(path, 'FieldValueTooLong', `Too long: may not be longer than ${s.maxLength} (maxLength)`);
    if (s.minLength !== undefined && len < s.minLength) v.add(path, 'FieldValueInvalid', `Invalid value: ${shown(value)}: should be at least ${s.minLength} chars long (minLength)`);
    if (s.pattern !== undefined) {
      const re = this.regexp(s.pattern);
      if (re && !re.test(value)) v.add(path, 'FieldValueInvalid', `Invalid value: ${shown(value)}: should match '${s.pattern}' (pattern)`);
    }
  }

  private checkNumber(v: Validator, value: number, s: StructuralSchema, path: string): void {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum)) {
      v.add(path, 'FieldValueInvalid', `Invalid value: ${value}: should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum} (minimum)`);
    }
    if (s.maximum !== undefined && (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum)) {
      v.add(path, 'FieldValueInvalid', `Invalid value: ${value}: should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum} (maximum)`);
    }
  }

  private checkObject(v: Validator, value: Record<string, unknown>, s: StructuralSchema, path: string): void {
    for (const req of s.required ?? []) {
      if (value[req] === undefined || value[req] === null) v.add(join(path, req), 'FieldValueRequired', 'Required value');
    }
    if (s.minProperties !== undefined && Object.keys(value).length < s.minProperties) v.add(path, 'FieldValueInvalid', `Invalid value: should have at least ${s.minProperties} properties (minProperties)`);
    if (s.maxProperties !== undefined && Object.keys(value).length > s.maxProperties) v.add(path, 'FieldValueTooMany', `Too many: must have at most ${s.maxProperties} properties (maxProperties)`);
    if (s.properties) {
      for (const [key, el] of Object.entries(value)) {
        if (el === undefined) continue;
        const ps = s.properties[key];
        if (ps) this.check(v, el, this.resolve(ps), join(path, key));
      }
      return;
    }
    if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
      if (s.additionalProperties === false) return;
      const vs = this.resolve(s.additionalProperties);
      for (const [key, el] of Object.entries(value)) if (el !== undefined) this.check(v, el, vs, join(path, key));
    }
    // an object with neither properties nor additionalProperties takes any content (e.g. an embedded ObjectMeta)
  }

  private checkArray(v: Validator, value: unknown[], s: StructuralSchema, path: string): void {
    if (s.minItems !== undefined && value.length < s.minItems) v.add(path, 'FieldValueInvalid', `Invalid value: ${value.length}: should have at least ${s.minItems} items (minItems)`);
    if (s.maxItems !== undefined && value.length > s.maxItems) v.add(path, 'FieldValueTooMany', `Too many: ${value.length}: must have at most ${s.maxItems} items (maxItems)`);
    if (s.items) {
      const item = this.resolve(s.items);
      value.forEach((el, i) => this.check(v, el, item, `${path}[${i}]`));
    }
    const listType = s['x-kubernetes-list-type'];
    if (listType === 'set') {
      const seen = new Set<string>();
      value.forEach((el, i) => {
        const key = JSON.stringify(el);
        if (seen.has(key)) v.add(`${path}[${i}]`, 'FieldValueDuplicate', `Duplicate value: ${shown(el)}`);
        seen.add(key);
      });
    } else if (listType === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      const itemSchema = s.items ? this.resolve(s.items) : undefined;
      const seen = new Set<string>();
      value.forEach((el, i) => {
        if (!isPlainObject(el) || keys.length === 0) return;
        // a key field left out takes its default, as the API server compares them
        const id = keys.map((k) => el[k] ?? (itemSchema?.properties?.[k] ? this.resolve(itemSchema.properties[k]).default : undefined));
        const key = JSON.stringify(id);
        if (seen.has(key)) {
          const shownKey = keys.map((k, j) => `"${k}":${shown(id[j])}`).join(',');
          v.add(`${path}[${i}]`, 'FieldValueDuplicate', `Duplicate value: map[${shownKey}]`);
        }
        seen.add(key);
      });
    }
  }
}

let kserve: SchemaSet | undefined;

/**
 * The schema file is data next to this module's source. The compiler does not copy JSON into
 * dist/, so from dist/src/api/ it is read from the source tree (`../../../src/api/schemas`); from
 * the source tree itself (a TypeScript loader) it is `./schemas`.
 */
export function schemaFilePath(name: string): string {
  const candidates = [new URL(`./schemas/${name}`, import.meta.url), new URL(`../../../src/api/schemas/${name}`, import.meta.url)];
  for (const c of candidates) {
    const p = fileURLToPath(c);
    if (existsSync(p)) return p;
  }
  throw new Error(`schema file ${name} not found (looked in ${candidates.map((c) => fileURLToPath(c)).join(', ')})`);
}

/** KServe's CRD schemas: roots `InferenceService` (v1beta1), `ServingRuntime`, `ClusterServingRuntime` (v1alpha1). Loaded once. */
export function kserveSchemas(): SchemaSet {
  kserve ??= SchemaSet.fromFile(JSON.parse(readFileSync(schemaFilePath('kserve.json'), 'utf8')) as SchemaFile);
  return kserve;
}
