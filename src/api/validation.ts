// Field validation shared by every kind: each check appends a FieldError naming the path and the rule.
import type { FieldError } from './errors.js';
import { parseQuantity } from './quantity.js';

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const envVarName = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && dns1123Label.test(s);
}
export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && dns1123Subdomain.test(s);
}
export function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1] ?? '';
  if (name.length === 0 || name.length > 63 || !labelName.test(name)) return false;
  return parts.length === 1 || isDns1123Subdomain(parts[0] ?? '');
}
export { envVarName };

const qualifiedNameRegex = "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'";
const qualifiedNameRule = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', " + qualifiedNameRegex + ')';

/** kube's IsQualifiedName: why `s` is not `[prefix/]name`, one message a rule broken (none when it is) */
export function qualifiedNameErrors(s: string): string[] {
  const parts = s.split('/');
  if (parts.length > 2) return [`a qualified name ${qualifiedNameRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const errs: string[] = [];
  const name = parts[parts.length - 1] ?? '';
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (!prefix) errs.push('prefix part must be non-empty');
    else if (!isDns1123Subdomain(prefix)) errs.push("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  if (!name) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!labelName.test(name)) errs.push(`name part ${qualifiedNameRule}`);
  return errs;
}

/** kube's IsValidLabelValue */
export function labelValueErrors(s: string): string[] {
  const errs: string[] = [];
  if (s.length > 63) errs.push('must be no more than 63 characters');
  if (!labelValue.test(s)) errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  return errs;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Collects field errors; paths are built with `at`. */
export class Validator {
  readonly errors: FieldError[] = [];

  add(field: string, type: string, message: string): void {
    this.errors.push({ field, type, message });
  }
  required(field: string, what = 'Required value'): void {
    this.add(field, 'FieldValueRequired', what);
  }
  invalid(field: string, value: unknown, message: string): void {
    const shown = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
    this.add(field, 'FieldValueInvalid', `Invalid value: ${shown}: ${message}`);
  }
  notSupported(field: string, value: unknown, allowed: readonly string[]): void {
    this.add(field, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  wrongType(field: string, value: unknown, expected: string): void {
    this.add(field, 'FieldValueTypeInvalid', `Invalid value: ${typeName(value)}: expected ${expected}`);
  }

  /** Returns true when v is a plain object (reports otherwise unless absent and optional). */
  object(field: string, v: unknown, required = false): v is Record<string, any> {
    if (v === undefined || v === null) {
      if (required) this.required(field);
      return false;
    }
    if (typeof v !== 'object' || Array.isArray(v)) {
      this.wrongType(field, v, 'object');
      return false;
    }
    return true;
  }
  array(field: string, v: unknown, required = false): v is any[] {
    if (v === undefined || v === null) {
      if (required) this.required(field);
      return false;
    }
    if (!Array.isArray(v)) {
      this.wrongType(field, v, 'array');
      return false;
    }
    return true;
  }
  string(field: string, v: unknown, required = false): v is string {
    if (v === undefined || v === null || (required && v === '')) {
      if (required) this.required(field);
      return false;
    }
    if (typeof v !== 'string') {
      this.wrongType(field, v, 'string');
      return false;
    }
    return true;
  }
  bool(field: string, v: unknown): v is boolean {
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') {
      this.wrongType(field, v, 'boolean');
      return false;
    }
    return true;
  }
  /** integer with an optional lower bound */
  int(field: string, v: unknown, min?: number, required = false): v is number {
    if (v === undefined || v === null) {
      if (required) this.required(field);
      return false;
    }
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.wrongType(field, v, 'integer');
      return false;
    }
    if (min !== undefined && v < min) {
      this.invalid(field, v, min === 0 ? 'must be greater than or equal to 0' : `must be greater than or equal to ${min}`);
      return false;
    }
    return true;
  }
  stringArray(field: string, v: unknown): v is string[] {
    if (!this.array(field, v)) return false;
    let ok = true;
    v.forEach((s, i) => {
      if (typeof s !== 'string') {
        this.wrongType(`${field}[${i}]`, s, 'string');
        ok = false;
      }
    });
    return ok;
  }
  stringMap(field: string, v: unknown): v is Record<string, string> {
    if (!this.object(field, v)) return false;
    let ok = true;
    for (const [k, s] of Object.entries(v)) {
      if (typeof s !== 'string') {
        this.wrongType(`${field}.${k}`, s, 'string');
        ok = false;
      }
    }
    return ok;
  }
  oneOf<T extends string>(field: string, v: unknown, allowed: readonly T[]): v is T {
    if (v === undefined || v === null) return false;
    if (typeof v !== 'string' || !allowed.includes(v as T)) {
      this.notSupported(field, v, allowed);
      return false;
    }
    return true;
  }
  dnsLabel(field: string, v: unknown, required = true): void {
    if (!this.string(field, v, required)) return;
    if (!isDns1123Label(v)) {
      this.invalid(field, v, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc'), at most 63 characters");
    }
  }
  dnsSubdomain(field: string, v: unknown, required = true): void {
    if (!this.string(field, v, required)) return;
    if (!isDns1123Subdomain(v)) {
      this.invalid(field, v, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com'), at most 253 characters");
    }
  }
  quantity(field: string, v: unknown): void {
    if (v === undefined) return;
    const q = parseQuantity(v);
    if (q === undefined) this.invalid(field, v, "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    else if (q < 0) this.invalid(field, v, 'must be greater than or equal to 0');
  }
  /**
   * A metav1.LabelSelector, as apimachinery's ValidateLabelSelector words it: matchLabels' keys and
   * values, each expression's key, operator and values.
   */
  labelSelector(field: string, v: unknown): void {
    if (!this.object(field, v)) return;
    if (this.stringMap(`${field}.matchLabels`, v.matchLabels)) {
      for (const [k, val] of Object.entries(v.matchLabels as Record<string, string>)) {
        for (const msg of qualifiedNameErrors(k)) this.invalid(`${field}.matchLabels`, k, msg);
        for (const msg of labelValueErrors(val)) this.invalid(`${field}.matchLabels`, val, msg);
      }
    }
    if (!this.array(`${field}.matchExpressions`, v.matchExpressions)) return;
    (v.matchExpressions as unknown[]).forEach((e, i) => {
      const at = `${field}.matchExpressions[${i}]`;
      if (!this.object(at, e, true)) return;
      const values = e.values as unknown;
      const count = Array.isArray(values) ? values.length : 0;
      if (e.operator === 'In' || e.operator === 'NotIn') {
        if (count === 0) this.required(`${at}.values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
      } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
        if (count > 0) this.add(`${at}.values`, 'FieldValueForbidden', "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      } else if (typeof e.operator === 'string' || e.operator === undefined) {
        this.invalid(`${at}.operator`, e.operator ?? '', 'not a valid selector operator');
      } else this.wrongType(`${at}.operator`, e.operator, 'string');
      if (this.string(`${at}.key`, e.key) || e.key === undefined) {
        for (const msg of qualifiedNameErrors((e.key as string | undefined) ?? '')) this.invalid(`${at}.key`, e.key ?? '', msg);
      }
      if (values !== undefined && values !== null && this.stringArray(`${at}.values`, values)) {
        values.forEach((val, j) => {
          for (const msg of labelValueErrors(val)) this.invalid(`${at}.values[${j}]`, val, msg);
        });
      }
    });
  }
  labels(field: string, v: unknown): void {
    if (!this.stringMap(field, v)) return;
    for (const [k, val] of Object.entries(v)) {
      if (!isQualifiedName(k)) this.invalid(`${field}`, k, 'label key must be a qualified name: [prefix/]name, name at most 63 alphanumeric characters, "-", "_" or "."');
      if (val.length > 63 || !labelValue.test(val)) this.invalid(`${field}.${k}`, val, 'a valid label value must be an empty string or at most 63 alphanumeric characters, "-", "_" or "." starting and ending with an alphanumeric character');
    }
  }
}
