/**
 * A small pflag-like command-line parser: `--flag value`, `--flag=value`, `-f value`, `-fvalue`,
 * `-f=value`, grouped short booleans (`-Aw`), `--bool=false`, repeated list flags and `--`.
 */
import { UsageError } from './errors.js';

export type FlagType = 'boolean' | 'string' | 'strings';
export type FlagValue = string | boolean | string[];

export interface FlagSpec {
  /** Long name, without dashes. */
  name: string;
  /** One-letter shorthand, without the dash. */
  short?: string;
  type: FlagType;
  default?: FlagValue;
  description: string;
  /** Shown in help after the flag, e.g. `NS` in `-n, --namespace NS`. */
  valueName?: string;
}

export class ParsedArgs {
  constructor(
    readonly positionals: string[],
    private readonly values: Map<string, FlagValue>,
    private readonly explicit: Set<string>,
  ) {}

  /** Whether the flag was given on the command line (not just defaulted). */
  isSet(name: string): boolean {
    return this.explicit.has(name);
  }

  string(name: string): string | undefined {
    const v = this.values.get(name);
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v[v.length - 1];
    return undefined;
  }

  boolean(name: string): boolean {
    return this.values.get(name) === true;
  }

  strings(name: string): string[] {
    const v = this.values.get(name);
    if (Array.isArray(v)) return v;
    if (typeof v === 'string') return [v];
    return [];
  }
}

export function parseBool(flag: string, value: string): boolean {
  switch (value) {
    case '1': case 't': case 'T': case 'true': case 'TRUE': case 'True':
      return true;
    case '0': case 'f': case 'F': case 'false': case 'FALSE': case 'False':
      return false;
    default:
      throw new UsageError(`invalid argument "${value}" for "${flag}" flag: expected true or false`);
  }
}

/** Parses `argv` against `specs`; throws UsageError on an unknown flag or a missing value. */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byLong = new Map<string, FlagSpec>();
  const byShort = new Map<string, FlagSpec>();
  for (const s of specs) {
    byLong.set(s.name, s);
    if (s.short) byShort.set(s.short, s);
  }
  const values = new Map<string, FlagValue>();
  const explicit = new Set<string>();
  for (const s of specs) {
    if (s.default !== undefined) values.set(s.name, Array.isArray(s.default) ? [...s.default] : s.default);
    else if (s.type === 'boolean') values.set(s.name, false);
  }
  const positionals: string[] = [];

  const set = (spec: FlagSpec, shown: string, value: string | undefined): void => {
    if (spec.type === 'boolean') {
      values.set(spec.name, value === undefined ? true : parseBool(shown, value));
    } else if (value === undefined) {
      throw new UsageError(`flag needs an argument: ${shown}`);
    } else if (spec.type === 'strings') {
      const prev = explicit.has(spec.name) ? (values.get(spec.name) as string[]) : [];
      values.set(spec.name, [...prev, value]);
    } else {
      values.set(spec.name, value);
    }
    explicit.add(spec.name);
  };

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
      const spec = byLong.get(name);
      if (!spec) throw new UsageError(`unknown flag: --${name}`);
      let value: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
      if (value === undefined && spec.type !== 'boolean') {
        if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: --${name}`);
        value = argv[++i];
      }
      set(spec, `--${name}`, value);
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // Shorthand group: -Aw, -n ns, -nns, -n=ns
      let j = 1;
      while (j < arg.length) {
        const c = arg[j] as string;
        const spec = byShort.get(c);
        if (!spec) throw new UsageError(`unknown shorthand flag: '${c}' in ${arg}`);
        const rest = arg.slice(j + 1);
        if (spec.type === 'boolean') {
          if (rest.startsWith('=')) {
            set(spec, `-${c}`, rest.slice(1));
            break;
          }
          set(spec, `-${c}`, undefined);
          j++;
          continue;
        }
        let value: string | undefined;
        if (rest.length > 0) value = rest.startsWith('=') ? rest.slice(1) : rest;
        else {
          if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: '${c}' in -${c}`);
          value = argv[++i];
        }
        set(spec, `-${c}`, value);
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return new ParsedArgs(positionals, values, explicit);
}

/**
 * Finds the sub-command in argv: the first positional, skipping flags of `globalSpecs`
 * (and their values). Returns its index or -1.
 */
export function findCommandIndex(argv: readonly string[], globalSpecs: readonly FlagSpec[]): number {
  const needsValue = new Set<string>();
  for (const s of globalSpecs) {
    if (s.type === 'boolean') continue;
    needsValue.add(`--${s.name}`);
    if (s.short) needsValue.add(`-${s.short}`);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return i + 1 < argv.length ? i + 1 : -1;
    if (arg.startsWith('-') && arg.length > 1) {
      if (needsValue.has(arg)) i++;
      continue;
    }
    return i;
  }
  return -1;
}

/** Help lines for flags, aligned. */
export function formatFlags(specs: readonly FlagSpec[]): string {
  const rows = specs.map((s) => {
    const names = `${s.short ? `-${s.short}, ` : '    '}--${s.name}`;
    const value = s.type === 'boolean' ? '' : ` ${s.valueName ?? (s.type === 'strings' ? 'VALUE' : 'VALUE')}`;
    let desc = s.description;
    if (s.default !== undefined && s.default !== false && !(Array.isArray(s.default) && s.default.length === 0)) {
      desc += ` (default ${Array.isArray(s.default) ? s.default.join(',') : String(s.default)})`;
    }
    return [`  ${names}${value}`, desc] as const;
  });
  const width = Math.max(0, ...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${a.padEnd(width)}   ${b}`).join('\n');
}
