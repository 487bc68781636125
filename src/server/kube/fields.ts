// `?fieldValidation=` on the write paths of the Kubernetes API (src/api/field-validation.ts does the
// checking): a create or update body is checked and pruned before the object client sees it; a patch
// is checked on the object it produces, as kube-apiserver decodes the patched object strictly.
import type { ServerResponse } from 'node:http';
import { duplicateJsonFields, duplicateYamlKeys, fieldValidationOutcome, kindSchemaFor, parseFieldValidation, pruneUnknownFields, scanJsonFields } from '../../api/field-validation.js';
import type { KObject } from '../../api/meta.js';
import { schemaCatalog } from '../../api/openapi-schemas.js';
import type { KindDef } from '../../api/registry.js';

/** kube-apiserver's `Warning` header value: code 299, no agent, the text quoted */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** adds warnings to a response not yet written, one `Warning` header each, without repeats */
export function addWarnings(res: ServerResponse, warnings: string[]): void {
  if (warnings.length === 0 || res.headersSent) return;
  const prev = res.getHeader('warning');
  const have = prev === undefined ? [] : Array.isArray(prev) ? prev.map(String) : [String(prev)];
  for (const w of warnings) {
    const h = warningHeader(w);
    if (!have.includes(h)) have.push(h);
  }
  res.setHeader('Warning', have);
}

/**
 * A create or update body: its unknown fields (and, under Strict or Warn, the fields its JSON text
 * repeats) are refused, warned about or ignored by the request's directive, then dropped from `obj`.
 */
export function validateBodyFields(res: ServerResponse, url: URL, def: KindDef, obj: KObject, raw: Buffer | undefined, options: 'CreateOptions' | 'UpdateOptions', contentType?: string): void {
  const directive = parseFieldValidation(url.searchParams.get('fieldValidation'), options);
  const unknown = pruneUnknownFields(schemaCatalog(), def.group, def.version, def.kind, obj as Record<string, unknown>);
  const text = directive !== 'Ignore' && raw ? raw.toString('utf8') : '';
  // a body sent as YAML, or one that is not JSON, was read as YAML (src/server/body.ts)
  const scan = text !== '' && !(contentType ?? '').includes('yaml') ? scanJsonFields(text) : undefined;
  const duplicates = scan ? scan.duplicates.map((d) => d.path) : [];
  const yamlDuplicates = text && !scan ? duplicateYamlKeys(text) : [];
  const builtin = kindSchemaFor(schemaCatalog(), def.group, def.version, def.kind)?.structural === false;
  addWarnings(res, fieldValidationOutcome(directive, def.kind, def.version, { unknown, duplicates, yamlDuplicates, ...(scan && builtin ? { documentOrder: scan } : {}) }));
}

/**
 * The check a patch gets, on what it produces: hand the result to `check` before it is written
 * (it prunes in place and throws under Strict). The patch's own text is checked for repeated fields.
 */
export function patchFieldCheck(res: ServerResponse, url: URL, def: KindDef, raw: Buffer | undefined): (patched: KObject) => void {
  const directive = parseFieldValidation(url.searchParams.get('fieldValidation'), 'PatchOptions');
  const duplicates = directive !== 'Ignore' && raw ? duplicateJsonFields(raw.toString('utf8')) : [];
  return (patched) => {
    const before = directive === 'Strict' ? JSON.parse(JSON.stringify(patched)) as unknown : undefined;
    const unknown = pruneUnknownFields(schemaCatalog(), def.group, def.version, def.kind, patched as Record<string, unknown>);
    addWarnings(res, fieldValidationOutcome(directive, def.kind, def.version, { unknown, duplicates, patched: before ?? patched }));
  };
}
