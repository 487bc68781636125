// Checking and reading Katib's algorithmSettings: every setting an algorithm knows, its type and
// range, so each algorithm's validate names the bad entry (`spec.algorithm.algorithmSettings[i]`)
// and its suggest reads typed values with the same defaults.
import type { SettingError, TrialRecord } from './types.js';
import type { Space } from './space.js';
import { assignmentKey } from './space.js';

export interface SettingRule {
  name: string;
  type: 'int' | 'float' | 'string';
  /** lower bound, inclusive unless minExclusive */
  min?: number;
  minExclusive?: boolean;
  max?: number;
  maxExclusive?: boolean;
  required?: boolean;
  /** for strings: the values allowed */
  oneOf?: readonly string[];
}

function describeRange(r: SettingRule): string {
  const parts: string[] = [];
  if (r.min !== undefined) parts.push(`${r.minExclusive ? '>' : '≥'} ${r.min}`);
  if (r.max !== undefined) parts.push(`${r.maxExclusive ? '<' : '≤'} ${r.max}`);
  return parts.join(' and ');
}

/** Checks one value against its rule; a message, or undefined when it is fine. */
export function checkSettingValue(rule: SettingRule, value: string): string | undefined {
  const v = String(value ?? '').trim();
  if (rule.type === 'string') {
    if (rule.required && v === '') return 'must not be empty';
    if (rule.oneOf && !rule.oneOf.includes(v)) return `must be one of ${rule.oneOf.join(', ')}, got ${JSON.stringify(value)}`;
    return undefined;
  }
  const n = Number(v);
  if (v === '' || !Number.isFinite(n)) return `${rule.name} must be a number, got ${JSON.stringify(value)}`;
  if (rule.type === 'int' && !/^[+-]?\d+$/.test(v)) return `${rule.name} must be an integer, got ${JSON.stringify(value)}`;
  const tooLow = rule.min !== undefined && (rule.minExclusive ? !(n > rule.min) : !(n >= rule.min));
  const tooHigh = rule.max !== undefined && (rule.maxExclusive ? !(n < rule.max) : !(n <= rule.max));
  if (tooLow || tooHigh) return `${rule.name} must be ${describeRange(rule)}, got ${JSON.stringify(value)}`;
  return undefined;
}

/** Unknown names, bad values, duplicates and missing required settings, each naming its field. */
export function validateSettings(settings: { name: string; value: string }[] | undefined, rules: readonly SettingRule[], algorithm: string): SettingError[] {
  const errors: SettingError[] = [];
  const seen = new Set<string>();
  (settings ?? []).forEach((s, i) => {
    const rule = rules.find((r) => r.name === s.name);
    if (!rule) {
      const known = rules.map((r) => r.name).join(', ');
      errors.push({ field: `spec.algorithm.algorithmSettings[${i}].name`, message: `unknown setting ${JSON.stringify(s.name)} for ${algorithm}${known ? ` (known: ${known})` : ' (it takes none)'}` });
      return;
    }
    if (seen.has(s.name)) {
      errors.push({ field: `spec.algorithm.algorithmSettings[${i}].name`, message: `setting ${JSON.stringify(s.name)} is given twice` });
      return;
    }
    seen.add(s.name);
    const msg = checkSettingValue(rule, s.value);
    if (msg) errors.push({ field: `spec.algorithm.algorithmSettings[${i}].value`, message: msg });
  });
  for (const r of rules) {
    if (r.required && !seen.has(r.name)) errors.push({ field: 'spec.algorithm.algorithmSettings', message: `${algorithm} needs the setting ${JSON.stringify(r.name)}` });
  }
  return errors;
}

/** The index of a named setting in the spec's list, for errors found after the per-setting checks. */
export function settingField(settings: { name: string; value: string }[] | undefined, name: string, part: 'name' | 'value' = 'value'): string {
  const i = (settings ?? []).findIndex((s) => s.name === name);
  return i >= 0 ? `spec.algorithm.algorithmSettings[${i}].${part}` : 'spec.algorithm.algorithmSettings';
}

/** A numeric setting, or its default when absent or empty. */
export function numberSetting(settings: Record<string, string>, name: string, fallback: number): number {
  const raw = settings[name];
  if (raw === undefined || String(raw).trim() === '') return fallback;
  const n = Number(raw);
  return Number.isFinite(n) ? n : fallback;
}

/** The keys of every assignment handed out so far (pending and finished), for duplicate avoidance. */
export function takenKeys(space: Space, trials: readonly TrialRecord[]): Set<string> {
  const keys = new Set<string>();
  for (const t of trials) keys.add(assignmentKey(space, t.assignments));
  return keys;
}
