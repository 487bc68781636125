// CEL (Common Expression Language) for what the KFP SDK emits in `triggerPolicy.condition` and
// `parameterExpressionSelector`, evaluated the way the KFP driver does (cel-go, with the custom function
// `parseJson`). The language itself is @bufbuild/cel's: it follows cel-go (heterogeneous equality,
// RE2 for `matches`, macros, timestamps and durations) and is checked against the cel-spec conformance
// suite, where a hand-written subset drifted from it. This file only binds KFP's variables and
// functions and names the expression in every error.
import { CelScalar, celEnv, celFunc, isCelError, isCelList, isCelMap, isCelUint, parse, plan } from '@bufbuild/cel';
import type { CelValue } from '@bufbuild/cel';

export class CelError extends Error {}

/** What evaluateCel returns: ints are bigints, doubles numbers, lists arrays, maps objects; timestamps and other messages stay as the library gives them. */
export type CelResult = null | boolean | bigint | number | string | Uint8Array | CelResult[] | { [k: string]: CelResult } | object;

/**
 * `parseJson(string)`: KFP's driver unmarshals into Go's `interface{}`, so every JSON number is a double,
 * as JSON.parse gives it.
 */
const parseJson = celFunc('parseJson', [CelScalar.STRING], CelScalar.DYN, (text: string) => {
  try {
    return JSON.parse(text) as never;
  } catch (e) {
    throw new Error(`parseJson: failed to unmarshal JSON: ${(e as Error).message}`);
  }
});

const env = celEnv({ funcs: [parseJson] });

type Program = ReturnType<typeof plan>;
// Conditions and selectors repeat across a loop's iterations and across Runs of one pipeline; planning
// once per text keeps a 1,000-item ParallelFor from re-parsing its selector for every item.
const programs = new Map<string, Program>();
const MAX_PROGRAMS = 1000;

/** Parses a CEL expression; a syntax error is a CelError naming the expression. */
export function parseCel(expr: string): ReturnType<typeof parse> {
  try {
    return parse(expr);
  } catch (e) {
    throw new CelError(`cannot parse CEL expression ${JSON.stringify(expr)}: ${(e as Error).message}`);
  }
}

function program(expr: string): Program {
  let p = programs.get(expr);
  if (!p) {
    p = plan(env, parseCel(expr));
    if (programs.size >= MAX_PROGRAMS) programs.delete(programs.keys().next().value as string);
    programs.set(expr, p);
  }
  return p;
}

/** A JSON value (e.g. a parameter value) as CEL sees a protobuf Value: every number is a double. */
function fromJson(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(fromJson);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).map(([k, x]) => [k, fromJson(x)]));
  return v;
}

function plain(v: CelValue): CelResult {
  if (isCelList(v)) return [...v].map(plain);
  if (isCelMap(v)) return Object.fromEntries([...v.entries()].map(([k, x]) => [String(isCelUint(k) ? k.value : k), plain(x)]));
  if (isCelUint(v)) return v.value;
  return v as CelResult;
}

/** Evaluates an expression with the given variables (JSON values; numbers are CEL doubles). */
export function evaluateCel(expr: string, vars: Record<string, unknown>): CelResult {
  const run = program(expr);
  let v: CelValue | Error;
  try {
    v = run(fromJson(vars) as Record<string, never>);
  } catch (e) {
    v = e as Error;
  }
  if (isCelError(v) || v instanceof Error) throw new CelError(`evaluating CEL expression ${JSON.stringify(expr)}: ${v.message}`);
  return plain(v);
}

/** A task's inputs as the KFP driver's condition sees them: `inputs.parameter_values[...]`, `inputs.artifacts[...]`. */
export interface ConditionInputs {
  parameters: Record<string, unknown>;
  artifacts?: Record<string, { name: string; uri: string; metadata?: Record<string, unknown> }[]>;
}

/** `triggerPolicy.condition`: true runs the task; a non-bool result is an error. */
export function evaluateCondition(expr: string, inputs: ConditionInputs): boolean {
  const artifacts: Record<string, unknown> = {};
  for (const [k, list] of Object.entries(inputs.artifacts ?? {})) artifacts[k] = { artifacts: list.map((a) => ({ name: a.name, uri: a.uri, metadata: a.metadata ?? {} })) };
  const v = evaluateCel(expr, { inputs: { parameter_values: inputs.parameters, parameters: inputs.parameters, artifacts } });
  if (typeof v !== 'boolean') throw new CelError(`CEL expression ${JSON.stringify(expr)} is a ${describe(v)}, not a bool`);
  return v;
}

function describe(v: CelResult): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Uint8Array) return 'bytes';
  return typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype ? 'map' : 'message';
}

/** A CEL result as the protobuf Value KFP's Select turns it into: ints become numbers; timestamps, durations and bytes have no JSON form there. */
function toJson(v: CelResult, expr: string): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x) => toJson(x, expr));
  if (v === null || typeof v !== 'object') return v;
  if (describe(v) !== 'map') throw new CelError(`CEL expression ${JSON.stringify(expr)} is a ${describe(v)}, not a JSON value`);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x as CelResult, expr)]));
}

/**
 * `parameterExpressionSelector`: evaluated over the value's protobuf Value fields, as KFP's driver does:
 * the one that is set (`number_value`, `bool_value`, `struct_value`, `list_value`), and `string_value`
 * always, holding the value itself when it is a string and its JSON text otherwise.
 */
export function selectParameter(expr: string, value: unknown): unknown {
  const vars: Record<string, unknown> = { string_value: typeof value === 'string' ? value : JSON.stringify(value) };
  if (typeof value === 'number') vars['number_value'] = value;
  else if (typeof value === 'boolean') vars['bool_value'] = value;
  else if (Array.isArray(value)) vars['list_value'] = value;
  else if (value !== null && typeof value === 'object') vars['struct_value'] = value;
  return toJson(evaluateCel(expr, vars), expr);
}
