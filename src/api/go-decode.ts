// What kube-apiserver's decoder says about a built-in kind's body whose JSON types do not fit the Go
// structs it is decoded into (`data: {a: 1}` in a ConfigMap, `containerPort: "80"`): encoding/json's
// UnmarshalTypeError, which kube-apiserver answers 400 BadRequest with,
//
//   ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into
//   Go struct field ConfigMap.data of type string
//
// The error names the JSON value's kind (`string`, `number`, `bool`, `object`, `array`; `number 1.5`
// for a number an integer field cannot hold), the innermost Go struct around the value, the path of
// JSON field names from the object's root (map keys and list indexes are not part of it), and the Go
// type the value was decoded into, as reflect prints it (`int32`, `v1.PullPolicy`, `[]v1.Container`;
// a pointer field by the type it points to). Go reports the first such value in the document.
//
// The shapes come from the OpenAPI schemas Skiff serves (src/api/openapi-schemas.ts); the Go types
// from src/api/schemas/gotypes.json (scripts/gen-gotypes.mjs, read from k8s.io/api's sources).
// Types that decode themselves (Quantity, IntOrString, RawExtension, FieldsV1, Duration) word their
// own errors and are not checked here.
import { readFileSync } from 'node:fs';
import { schemaCatalog } from './openapi-schemas.js';
import type { SchemaCatalog, SchemaNode } from './openapi-schemas.js';
import { schemaFilePath } from './structural-schema.js';
import { isPlainObject } from '../util/objects.js';

interface GoTypes {
  /** by OpenAPI component name: each JSON field's Go type */
  structs: Record<string, Record<string, string>>;
  /** named types that are not structs, and their underlying types (`v1.PullPolicy`: `string`) */
  named: Record<string, string>;
}

/** types with their own UnmarshalJSON that take more than one JSON kind or word their own errors */
const selfDecoding = new Set(['resource.Quantity', 'intstr.IntOrString', 'runtime.RawExtension', 'v1.FieldsV1', 'v1.Duration', 'interface {}']);
/** types whose UnmarshalJSON decodes a Go string, so that anything else fails as a string would */
const viaString = new Set(['v1.Time', 'v1.MicroTime']);
const intRanges: Record<string, [number, number]> = {
  int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647], int64: [-Number.MAX_VALUE, Number.MAX_VALUE], int: [-Number.MAX_VALUE, Number.MAX_VALUE],
  uint8: [0, 255], uint16: [0, 65535], uint32: [0, 4294967295], uint64: [0, Number.MAX_VALUE], uint: [0, Number.MAX_VALUE],
};

let goTypes: GoTypes | undefined;
function types(): GoTypes {
  goTypes ??= JSON.parse(readFileSync(schemaFilePath('gotypes.json'), 'utf8')) as GoTypes;
  return goTypes;
}

/** a JSON value's kind as encoding/json names it */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (isPlainObject(v)) return 'object';
  return typeof v;
}

/** the element type of `map[K]V` */
function mapValue(t: string): string {
  let depth = 0;
  for (let i = 4; i < t.length; i++) {
    if (t[i] === '[') depth++;
    else if (t[i] === ']' && depth-- === 0) return t.slice(i + 1);
  }
  return 'interface {}';
}

/** the OpenAPI component a (possibly wrapped) reference names */
function componentName(node: SchemaNode | undefined): string | undefined {
  let n = node;
  for (let i = 0; n && i < 4; i++) {
    if (typeof n.$ref === 'string') return n.$ref.slice(n.$ref.lastIndexOf('/') + 1);
    n = n.allOf?.length === 1 ? n.allOf[0] : undefined;
  }
  return undefined;
}

class Decoder {
  constructor(private readonly catalog: SchemaCatalog, private readonly go: GoTypes) {}

  /** the first value that does not fit, worded as encoding/json words it; undefined when all fit */
  value(v: unknown, goType: string, schema: SchemaNode | undefined, struct: string, path: string[]): string | undefined {
    if (v === null || v === undefined) return undefined; // null leaves any Go value as it is
    const t = goType.replace(/^\*+/, '');
    if (selfDecoding.has(t)) return undefined;
    const fail = (kind: string, as: string = t): string => `json: cannot unmarshal ${kind} into Go struct field ${struct}.${path.join('.')} of type ${as}`;
    if (viaString.has(t)) return typeof v === 'string' ? undefined : fail(jsonKind(v), 'string');
    let u = t;
    for (let i = 0; i < 8 && this.go.named[u]; i++) u = this.go.named[u] ?? u;
    if (u === 'string') return typeof v === 'string' ? undefined : fail(jsonKind(v));
    if (u === 'bool') return typeof v === 'boolean' ? undefined : fail(jsonKind(v));
    if (u === 'float64' || u === 'float32') return typeof v === 'number' ? undefined : fail(jsonKind(v));
    const range = intRanges[u];
    if (range) {
      if (typeof v !== 'number') return fail(jsonKind(v));
      return Number.isInteger(v) && v >= range[0] && v <= range[1] ? undefined : fail(`number ${String(v)}`);
    }
    if (u === '[]uint8') {
      // base64 text, or a list of bytes
      if (typeof v === 'string') return undefined;
      if (!Array.isArray(v)) return fail(jsonKind(v));
      for (const el of v) {
        const e = this.value(el, 'uint8', undefined, struct, path);
        if (e) return e;
      }
      return undefined;
    }
    if (u.startsWith('[]')) {
      if (!Array.isArray(v)) return fail(jsonKind(v));
      const items = this.catalog.items(schema);
      for (const el of v) {
        const e = this.value(el, u.slice(2), items, struct, path);
        if (e) return e;
      }
      return undefined;
    }
    if (u.startsWith('map[')) {
      if (!isPlainObject(v)) return fail(jsonKind(v));
      const n = this.catalog.deref(schema);
      const values = n && typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined;
      for (const el of Object.values(v)) {
        const e = this.value(el, mapValue(u), values, struct, path);
        if (e) return e;
      }
      return undefined;
    }
    const name = componentName(schema);
    if (name) {
      // a struct
      if (!isPlainObject(v)) return fail(jsonKind(v));
      return this.struct(v, name, path);
    }
    // a named type of a package the Go types were not read from (types.UID): its kind from the schema
    const basic = this.catalog.deref(schema)?.type;
    const fits = basic === 'string' ? typeof v === 'string'
      : basic === 'boolean' ? typeof v === 'boolean'
        : basic === 'integer' ? typeof v === 'number' && Number.isInteger(v)
          : basic === 'number' ? typeof v === 'number'
            : basic === 'array' ? Array.isArray(v)
              : basic === 'object' ? isPlainObject(v) : true;
    return fits ? undefined : fail(jsonKind(v));
  }

  struct(v: Record<string, unknown>, component: string, path: string[]): string | undefined {
    const fields = this.go.structs[component];
    const node = this.catalog.components[component];
    if (!fields || !node) return undefined;
    const struct = component.slice(component.lastIndexOf('.') + 1);
    for (const [k, el] of Object.entries(v)) {
      const goType = fields[k];
      // a field the struct does not have is field validation's (src/api/field-validation.ts)
      if (goType === undefined) continue;
      const e = this.value(el, goType, this.catalog.field(node, k), struct, [...path, k]);
      if (e) return e;
    }
    return undefined;
  }
}

/**
 * The decode error kube-apiserver gives a body of a built-in kind (`json: cannot unmarshal …`), or
 * undefined when every value fits its Go type (or the kind is not built in).
 */
export function goDecodeError(group: string, version: string, kind: string, obj: Record<string, unknown>, catalog: SchemaCatalog = schemaCatalog()): string | undefined {
  const component = catalog.componentOf(group, version, kind);
  if (!component) return undefined;
  return new Decoder(catalog, types()).struct(obj, component, []);
}
