// Server-side field validation (`?fieldValidation=Strict|Warn|Ignore` on create, update and patch), as
// kube-apiserver does it: the fields of a written object that its kind's schema does not declare, and
// the fields a JSON body repeats, are refused under Strict (400 BadRequest, "strict decoding error:
// unknown field \"spec.foo\""), answered with one `Warning` per field under Warn (the default since
// Kubernetes 1.27), ignored under Ignore; in every case the unknown fields are dropped from what is
// stored, as the API server prunes them for built-in kinds and structural CRDs.
//
// Every kind goes through here, built-in or from a CRD, with the schemas of the one catalogue
// (openapi-schemas.ts): built-in kinds as Go's strict JSON decoder finds them (document order, an
// object schema without properties takes anything, as RawExtension and FieldsV1 do), CRD kinds as the
// structural pruning of apiextensions-apiserver finds them (sorted; an object without properties and
// without x-kubernetes-preserve-unknown-fields keeps nothing; apiVersion/kind/metadata of an embedded
// resource are left alone, the root's metadata is checked against ObjectMeta). Kinds with no schema in
// the catalogue (Skiff's own) keep every field but their metadata's unknown ones.
import YAML from 'yaml';
import { ApiError, StatusReason } from './errors.js';
import type { FieldError } from './errors.js';
import type { SchemaCatalog, SchemaNode } from './openapi-schemas.js';
import { isPlainObject } from '../util/objects.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** the directive of a request: absent or empty is Warn; anything else not listed is refused as kube-apiserver refuses it */
export function parseFieldValidation(raw: string | null | undefined, options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): FieldValidation {
  if (raw === null || raw === undefined || raw === '') return 'Warn';
  if (raw === 'Strict' || raw === 'Warn' || raw === 'Ignore') return raw;
  throw ApiError.invalid(options, 'meta.k8s.io', '', [
    { field: 'fieldValidation', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(raw)}: supported values: "", "Ignore", "Strict", "Warn"` },
  ]);
}

interface Walk {
  catalog: SchemaCatalog;
  /** CRD semantics (structural pruning) rather than a built-in kind's Go decoding */
  structural: boolean;
  found: string[];
}

function key(path: string, k: string): string {
  return path ? `${path}.${k}` : k;
}

function record(w: Walk, path: string): void {
  if (w.found.length < 100 && !w.found.includes(path)) w.found.push(path);
}

/** what a schema node allows once its references are followed */
function resolved(w: Walk, node: SchemaNode | undefined): SchemaNode | undefined {
  return w.catalog.deref(node);
}

function prune(w: Walk, value: unknown, schema: SchemaNode | undefined, path: string, embedded = false): void {
  const s = resolved(w, schema);
  if (!s) return;
  if (s['x-kubernetes-int-or-string']) return;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (Array.isArray(value)) {
    if (s.items) value.forEach((el, i) => prune(w, el, s.items, `${path}[${i}]`));
    return;
  }
  if (!isPlainObject(value)) return;
  const isEmbedded = embedded || s['x-kubernetes-embedded-resource'] === true;
  const props = s.properties;
  const addl = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  if (!props && !addl && (!w.structural || preserve || s.additionalProperties === true)) {
    // a built-in kind's RawExtension or FieldsV1, a CRD's preserved subtree without declared fields
    return;
  }
  for (const k of Object.keys(value)) {
    if (isEmbedded && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const p = props?.[k];
    if (p) prune(w, value[k], p, key(path, k));
    else if (addl) prune(w, value[k], addl, key(path, k));
    else if (!preserve && s.additionalProperties !== true) {
      record(w, key(path, k));
      delete value[k];
    }
  }
}

/** the schema of a kind as field validation reads it, or undefined for a kind without one */
export function kindSchemaFor(catalog: SchemaCatalog, group: string, version: string, kind: string): { schema: SchemaNode; structural: boolean } | undefined {
  const name = catalog.componentOf(group, version, kind);
  if (name) return { schema: { $ref: `#/components/schemas/${name}` }, structural: false };
  const crd = catalog.crd(group, version, kind);
  if (crd) return { schema: crd.schema, structural: true };
  return undefined;
}

/**
 * Drops from `obj` (in place) every field its kind's schema does not declare and returns their paths
 * (`spec.containers[0].foo`), in the order kube-apiserver reports them.
 */
export function pruneUnknownFields(catalog: SchemaCatalog, group: string, version: string, kind: string, obj: Record<string, unknown>): string[] {
  const found = kindSchemaFor(catalog, group, version, kind);
  const meta = { $ref: `#/components/schemas/${OBJECT_META}` };
  if (!found) {
    const w: Walk = { catalog, structural: false, found: [] };
    if (isPlainObject(obj.metadata)) prune(w, obj.metadata, meta, 'metadata');
    return w.found;
  }
  const w: Walk = { catalog, structural: found.structural, found: [] };
  if (!found.structural) {
    prune(w, obj, found.schema, '');
    return w.found;
  }
  // a custom resource: the root is an embedded resource whose metadata is an ObjectMeta
  const metaWalk: Walk = { catalog, structural: false, found: [] };
  if (isPlainObject(obj.metadata)) prune(metaWalk, obj.metadata, meta, 'metadata');
  prune(w, obj, found.schema, '', true);
  return [...metaWalk.found, ...w.found.sort()];
}

/**
 * The unknown fields of an object as validation errors (`spec.explainer.alibi`: `unknown field
 * "alibi"`), for a kind's own validation of objects that reach the store without passing the server's
 * field validation (a controller's writes); `skip` leaves top-level fields out (a status written
 * through its own endpoint). The object is not changed.
 */
export function unknownFieldErrors(catalog: SchemaCatalog, group: string, version: string, kind: string, obj: Record<string, unknown>, skip: string[] = []): FieldError[] {
  const copy = JSON.parse(JSON.stringify(obj)) as Record<string, unknown>;
  for (const k of skip) delete copy[k];
  return pruneUnknownFields(catalog, group, version, kind, copy).map((path) => ({
    field: path,
    type: 'FieldValueInvalid',
    message: `unknown field ${JSON.stringify(path.slice(path.lastIndexOf('.') + 1))}`,
  }));
}

/** where each field of a JSON text first appears, and the fields it repeats (by the key's index in the text) */
export interface JsonFieldScan {
  firstAt: Map<string, number>;
  duplicates: { path: string; at: number }[];
}

/**
 * The fields a JSON text repeats within one object (`spec.replicas`), as Go's strict decoder reports
 * them; [] for text that is not JSON (a YAML body: see duplicateYamlKeys).
 */
export function duplicateJsonFields(text: string): string[] {
  return scanJsonFields(text)?.duplicates.map((d) => d.path) ?? [];
}

/** the keys of a JSON text in the order they appear; undefined for text that is not JSON */
export function scanJsonFields(text: string): JsonFieldScan | undefined {
  const out: JsonFieldScan = { firstAt: new Map(), duplicates: [] };
  let n = 0;
  let i = 0;
  const ws = (): void => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const k = str();
        const p = key(path, k);
        const at = n++;
        if (seen.has(k)) {
          if (!out.duplicates.some((d) => d.path === p)) out.duplicates.push({ path: p, at });
        } else if (!out.firstAt.has(p)) {
          out.firstAt.set(p, at);
        }
        seen.add(k);
        ws();
        i++; // ':'
        value(p);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++; // '}'
        return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++; // ']'
        return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    while (i < text.length && !/[,}\]\s]/.test(text[i] as string)) i++;
  };
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  value('');
  return out;
}

/**
 * The keys a YAML text repeats within one mapping, as the YAML decoder kube-apiserver uses words them
 * (`line 7: key "image" already set in map`); [] for a text that does not parse.
 */
export function duplicateYamlKeys(text: string): string[] {
  const lines = new YAML.LineCounter();
  const out: { line: number; text: string }[] = [];
  let docs: YAML.Document.Parsed[];
  try {
    docs = YAML.parseAllDocuments(text, { lineCounter: lines, uniqueKeys: false }) as YAML.Document.Parsed[];
  } catch {
    return [];
  }
  if (!Array.isArray(docs)) return [];
  for (const doc of docs) {
    YAML.visit(doc, {
      Map(_, map) {
        const seen = new Set<string>();
        for (const pair of map.items) {
          const k = YAML.isScalar(pair.key) ? pair.key.value : pair.key;
          const id = JSON.stringify(k);
          if (seen.has(id)) {
            const offset = YAML.isNode(pair.key) ? pair.key.range?.[0] : undefined;
            const line = offset === undefined ? 0 : lines.linePos(offset).line;
            out.push({ line, text: `line ${line}: key ${typeof k === 'string' ? JSON.stringify(k) : String(k)} already set in map` });
          }
          seen.add(id);
        }
      },
    });
  }
  // the decoder meets them depth first, that is in the order of the text
  return out.sort((a, b) => a.line - b.line).map((d) => d.text);
}

export interface FieldFindings {
  unknown: string[];
  duplicates?: string[];
  /** the YAML decoder's messages for keys a YAML body repeats (duplicateYamlKeys) */
  yamlDuplicates?: string[];
  /**
   * a built-in kind's JSON body, scanned: Go's decoder reports unknown and repeated fields as it meets
   * them, so they are told in the order of the text (a CRD kind's repeated fields come first, then its
   * unknown ones, sorted)
   */
  documentOrder?: JsonFieldScan;
  /** set for a patch: the patched object, which kube-apiserver quotes in its error */
  patched?: unknown;
}

/**
 * What the server does with the unknown and repeated fields of a write: the warnings to send (Warn),
 * none (Ignore), or the error kube-apiserver answers (Strict: 400 for a create or update body, 422
 * naming the field `patch` for a patch).
 */
export function fieldValidationOutcome(directive: FieldValidation, kind: string, version: string, f: FieldFindings): string[] {
  if (directive === 'Ignore') return [];
  const found = [
    ...(f.duplicates ?? []).map((p, i) => ({ text: `duplicate field ${JSON.stringify(p)}`, at: f.documentOrder?.duplicates.find((d) => d.path === p)?.at ?? -1, i })),
    ...f.unknown.map((p, i) => ({ text: `unknown field ${JSON.stringify(p)}`, at: f.documentOrder?.firstAt.get(p) ?? Number.MAX_SAFE_INTEGER, i: i + 1e6 })),
  ];
  if (f.documentOrder) found.sort((a, b) => a.at - b.at || a.i - b.i);
  const jsonErrors = found.map((e) => e.text);
  const yaml = f.yamlDuplicates ?? [];
  if (directive === 'Warn') return [...yaml, ...jsonErrors];
  // the YAML decoder's complaints are one error, a line each, before those of the JSON decoder
  const errors = [...(yaml.length ? [`yaml: unmarshal errors:\n  ${yaml.join('\n  ')}`] : []), ...jsonErrors];
  if (errors.length === 0) return [];
  if (f.patched !== undefined) throw patchStrictError(f.patched, errors);
  throw new ApiError(StatusReason.BadRequest, `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${strictDecodingError(errors)}`);
}

/** runtime.NewStrictDecodingError's text */
export function strictDecodingError(errors: string[]): string {
  return `strict decoding error: ${errors.join(', ')}`;
}

/**
 * A patch whose result has unknown fields, under Strict: kube-apiserver answers 422 with the patched
 * object and the strict decoding errors in one cause on the field `patch`.
 */
export function patchStrictError(patched: unknown, errors: string[]): ApiError {
  const message = `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${strictDecodingError(errors)}`;
  return new ApiError(StatusReason.Invalid, ` "" is invalid: patch: ${message}`, { causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }] });
}
