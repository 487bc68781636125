// The run form's fields, from the pipeline's input definitions, and the checks a value must pass
// before it is sent: the same types the kfp SDK compiles (STRING, NUMBER_INTEGER, NUMBER_DOUBLE,
// BOOLEAN, LIST, STRUCT), defaults filled, optional ones marked.
import type { PipelineSpec } from '../../api/types';

export interface Field {
  name: string;
  type: string;
  /** the text the input starts with: the default, as the user would type it */
  initial: string;
  optional: boolean;
  hasDefault: boolean;
  description?: string;
  literals?: unknown[];
}

export function fieldsOf(spec: PipelineSpec | undefined): Field[] {
  const defs = spec?.root?.inputDefinitions?.parameters ?? {};
  return Object.entries(defs).map(([name, d]) => {
    const hasDefault = d.defaultValue !== undefined && d.defaultValue !== null;
    return {
      name,
      type: d.parameterType,
      initial: hasDefault ? toText(d.parameterType, d.defaultValue) : '',
      optional: Boolean(d.isOptional) || hasDefault,
      hasDefault,
      ...(d.description ? { description: d.description } : {}),
      ...(d.literals ? { literals: d.literals } : {}),
    };
  });
}

export function toText(type: string, v: unknown): string {
  if (type === 'LIST' || type === 'STRUCT') return JSON.stringify(v);
  return String(v);
}

export type Parsed = { value: unknown } | { error: string } | { omit: true };

export function parseField(f: Field, text: string): Parsed {
  const t = text.trim();
  if (t === '') {
    if (f.optional) return { omit: true };
    return { error: 'required' };
  }
  let value: unknown;
  switch (f.type) {
    case 'NUMBER_INTEGER':
      if (!/^[-+]?\d+$/.test(t)) return { error: 'must be a whole number' };
      value = Number(t);
      break;
    case 'NUMBER_DOUBLE':
      value = Number(t);
      if (!Number.isFinite(value)) return { error: 'must be a number' };
      break;
    case 'BOOLEAN':
      if (t !== 'true' && t !== 'false') return { error: 'must be true or false' };
      value = t === 'true';
      break;
    case 'LIST':
    case 'STRUCT':
      try {
        value = JSON.parse(t);
      } catch {
        return { error: `must be JSON (${f.type === 'LIST' ? 'a list, e.g. [1, 2]' : 'an object, e.g. {"a": 1}'})` };
      }
      if (f.type === 'LIST' && !Array.isArray(value)) return { error: 'must be a JSON list' };
      if (f.type === 'STRUCT' && (typeof value !== 'object' || value === null || Array.isArray(value))) return { error: 'must be a JSON object' };
      break;
    default:
      value = text;
  }
  if (f.literals && !f.literals.some((l) => JSON.stringify(l) === JSON.stringify(value))) return { error: `must be one of ${f.literals.map((l) => JSON.stringify(l)).join(', ')}` };
  return { value };
}

/** all fields at once: the parameters to send, or the error of each field that is wrong */
export function collect(fields: Field[], texts: Record<string, string>): { parameters: Record<string, unknown>; errors: Record<string, string> } {
  const parameters: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const p = parseField(f, texts[f.name] ?? f.initial);
    if ('error' in p) errors[f.name] = p.error;
    else if ('value' in p) parameters[f.name] = p.value;
  }
  return { parameters, errors };
}

export interface Placed {
  /** parameter name → the server's words about it */
  fields: Record<string, string>;
  /** what names no parameter: shown above the submit button */
  general: string[];
}

const PARAM_FIELD = /^(?:[a-z_]+\.)?(?:spec\.parameters|spec\.runtimeConfig\.parameters|runtime_config\.parameters)\.([^.\s:[\]]+)/;

/**
 * The server's refusal put on the parameters it names, each with its own words: a Kubernetes Status
 * names fields in its causes (`spec.parameters.x`); the KFP API lists them in its message
 * (`Invalid input error: runtime_config.parameters.x: …; runtime_config.parameters.y: …`). Only a
 * field path names a parameter: a parameter's name appearing in prose does not.
 */
export function placeServerError(fields: Field[], message: string, causes: { field?: string; message?: string; reason?: string }[] = []): Placed {
  const out: Placed = { fields: {}, general: [] };
  const known = new Set(fields.map((f) => f.name));
  const put = (field: string | undefined, msg: string): void => {
    const name = field ? PARAM_FIELD.exec(field)?.[1] : undefined;
    if (name && known.has(name)) out.fields[name] = out.fields[name] ? `${out.fields[name]}; ${msg}` : msg;
    else out.general.push(field ? `${field}: ${msg}` : msg);
  };
  if (causes.length) {
    for (const c of causes) put(c.field, c.message ?? c.reason ?? 'invalid');
    return out;
  }
  const parts = message.replace(/^Invalid input error:\s*/, '').split(/;\s+(?=[\w.-]+:\s)/);
  if (parts.length && parts.every((p) => PARAM_FIELD.test(p))) {
    for (const p of parts) {
      const i = p.indexOf(': ');
      put(p.slice(0, i), p.slice(i + 2));
    }
  } else out.general.push(message);
  return out;
}
