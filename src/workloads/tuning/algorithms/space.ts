// The search space of an Experiment, from Katib's ParameterSpec[]: each parameter parsed and
// checked once, a map between assignments (strings, as trials receive them) and points of the unit
// cube [0,1]^d that the model-based algorithms work in, sampling by the parameter's distribution, and
// a canonical key so that no algorithm hands out the same assignment twice.
//
// Choices where Skiff differs from Katib's backends, and why:
// - Every decoded value lies in [min, max]. hyperopt's `normal` / `logNormal` can leave the range
//   (research B.2); a trial given a learning rate outside the range its author wrote is a surprise,
//   so Skiff samples the same bell (mu = centre, sigma = range / 6, in log space for logNormal) and
//   clamps it to the bounds.
// - `step` snaps relative to `min` (min + k·step, as Optuna and the grid do), not to multiples of
//   step (hyperopt's q-distributions), so `min` itself is always reachable; the largest value is the
//   last grid point not above `max`.
// - Categorical and discrete parameters take one dimension each: the list index i is the cell
//   [i/n, (i+1)/n) of the unit interval. Model-based algorithms read `kind === 'categorical'` and
//   model the index directly rather than the coordinate.
// - logUniform / logNormal need min > 0 (Optuna silently raises min to 1e-10; a clear error is
//   kinder than a search over a range the user did not write).
import type { ParameterSpec } from '../../../api/tuning-types.js';
import type { SettingError } from './types.js';
import type { Rng } from './rng.js';

export type ParamDistribution = 'uniform' | 'logUniform' | 'normal' | 'logNormal';

export interface NumericParam {
  kind: 'numeric';
  name: string;
  /** Katib's parameterType */
  type: 'int' | 'double';
  distribution: ParamDistribution;
  min: number;
  /** the largest value reachable: max, or the last step point not above it */
  max: number;
  /** grid spacing from min; ints default to 1 */
  step?: number;
  /** decimals to print a stepped double with (from min and step as written) */
  decimals?: number;
  /** log scale (logUniform, logNormal) */
  log: boolean;
  /** the encoded interval, in the (log) scale: a value v maps to (t(v) - lo) / (hi - lo) */
  lo: number;
  hi: number;
}

export interface CategoricalParam {
  kind: 'categorical';
  name: string;
  /** Katib's parameterType: both take their values from `list`, verbatim */
  type: 'categorical' | 'discrete';
  choices: string[];
}

export type SpaceParam = NumericParam | CategoricalParam;

export interface Space {
  params: SpaceParam[];
  /** dimensions of the unit cube: one per parameter */
  dim: number;
}

/** Thrown by parseSpace; `errors` name each bad field. */
export class SpaceError extends Error {
  constructor(readonly errors: SettingError[]) {
    super(errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.name = 'SpaceError';
  }
}

const DISTRIBUTIONS: readonly string[] = ['uniform', 'logUniform', 'normal', 'logNormal'];

function parseNumber(raw: string | undefined, field: string, errors: SettingError[], mustBeInt: boolean): number | undefined {
  if (raw === undefined || raw === null || String(raw).trim() === '') {
    errors.push({ field, message: 'is required' });
    return undefined;
  }
  const s = String(raw).trim();
  const n = Number(s);
  if (!Number.isFinite(n)) {
    errors.push({ field, message: `must be a number, got ${JSON.stringify(raw)}` });
    return undefined;
  }
  if (mustBeInt && (!/^[+-]?\d+$/.test(s) || !Number.isSafeInteger(n))) {
    errors.push({ field, message: `must be an integer, got ${JSON.stringify(raw)}` });
    return undefined;
  }
  return n;
}

/** Digits after the decimal point a number is written with ("0.010" → 3, "1e-3" → 3). */
function decimalsOf(s: string): number {
  const t = s.trim().toLowerCase();
  const m = /^[+-]?(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/.exec(t);
  if (!m) return 0;
  const frac = (m[2] ?? '').length;
  const exp = m[3] ? Number(m[3]) : 0;
  return Math.max(0, frac - exp);
}

/** Checks the parameters; an empty list means parseSpace will succeed. */
export function checkParameters(parameters: ParameterSpec[] | undefined): SettingError[] {
  try {
    parseSpace(parameters);
    return [];
  } catch (e) {
    if (e instanceof SpaceError) return e.errors;
    throw e;
  }
}

/** Parses Katib's parameters into a Space, or throws a SpaceError naming every bad field. */
export function parseSpace(parameters: ParameterSpec[] | undefined): Space {
  const errors: SettingError[] = [];
  const params: SpaceParam[] = [];
  if (!Array.isArray(parameters) || parameters.length === 0) {
    throw new SpaceError([{ field: 'spec.parameters', message: 'at least one parameter is required' }]);
  }
  const seen = new Set<string>();
  parameters.forEach((p, i) => {
    const base = `spec.parameters[${i}]`;
    if (!p || typeof p.name !== 'string' || p.name === '') {
      errors.push({ field: `${base}.name`, message: 'is required' });
      return;
    }
    if (seen.has(p.name)) errors.push({ field: `${base}.name`, message: `duplicate parameter name ${JSON.stringify(p.name)}` });
    seen.add(p.name);
    const fs = p.feasibleSpace;
    if (!fs || typeof fs !== 'object') {
      errors.push({ field: `${base}.feasibleSpace`, message: 'is required' });
      return;
    }
    const before = errors.length;
    if (p.parameterType === 'categorical' || p.parameterType === 'discrete') {
      for (const f of ['min', 'max', 'step'] as const) {
        if (fs[f] !== undefined && fs[f] !== '') errors.push({ field: `${base}.feasibleSpace.${f}`, message: `is not allowed for a ${p.parameterType} parameter` });
      }
      if (!Array.isArray(fs.list) || fs.list.length === 0) {
        errors.push({ field: `${base}.feasibleSpace.list`, message: `a ${p.parameterType} parameter needs a non-empty list` });
        return;
      }
      const choices = fs.list.map((v) => String(v));
      const dup = new Set<string>();
      choices.forEach((c, j) => {
        if (dup.has(c)) errors.push({ field: `${base}.feasibleSpace.list[${j}]`, message: `duplicate value ${JSON.stringify(c)}` });
        dup.add(c);
        if (p.parameterType === 'discrete' && !Number.isFinite(Number(c.trim() === '' ? 'x' : c))) {
          errors.push({ field: `${base}.feasibleSpace.list[${j}]`, message: `a discrete value must be a number, got ${JSON.stringify(c)}` });
        }
      });
      if (errors.length === before) params.push({ kind: 'categorical', name: p.name, type: p.parameterType, choices });
      return;
    }
    if (p.parameterType !== 'int' && p.parameterType !== 'double') {
      errors.push({ field: `${base}.parameterType`, message: `must be int, double, categorical or discrete, got ${JSON.stringify(p.parameterType)}` });
      return;
    }
    const isInt = p.parameterType === 'int';
    if (Array.isArray(fs.list) && fs.list.length > 0) errors.push({ field: `${base}.feasibleSpace.list`, message: `is not allowed for a ${p.parameterType} parameter` });
    const distribution = (fs.distribution === undefined || (fs.distribution as string) === '' ? 'uniform' : fs.distribution) as string;
    if (!DISTRIBUTIONS.includes(distribution)) {
      errors.push({ field: `${base}.feasibleSpace.distribution`, message: `must be uniform, logUniform, normal or logNormal, got ${JSON.stringify(fs.distribution)}` });
    }
    const min = parseNumber(fs.min, `${base}.feasibleSpace.min`, errors, isInt);
    const max = parseNumber(fs.max, `${base}.feasibleSpace.max`, errors, isInt);
    let step: number | undefined;
    if (fs.step !== undefined && String(fs.step).trim() !== '') {
      step = parseNumber(fs.step, `${base}.feasibleSpace.step`, errors, isInt);
      if (step !== undefined && !(step > 0)) {
        errors.push({ field: `${base}.feasibleSpace.step`, message: `must be greater than 0, got ${JSON.stringify(fs.step)}` });
        step = undefined;
      }
    } else if (isInt) {
      step = 1;
    }
    if (min === undefined || max === undefined) return;
    if (min > max) {
      errors.push({ field: `${base}.feasibleSpace.max`, message: `must not be less than min (${fs.min}), got ${JSON.stringify(fs.max)}` });
      return;
    }
    const log = distribution === 'logUniform' || distribution === 'logNormal';
    if (log && !(min > 0)) {
      errors.push({ field: `${base}.feasibleSpace.min`, message: `a ${distribution} parameter needs min > 0, got ${JSON.stringify(fs.min)}` });
      return;
    }
    if (errors.length !== before) return;
    let top = max;
    let decimals: number | undefined;
    if (step !== undefined) {
      const k = Math.floor((max - min) / step + 1e-9);
      top = isInt ? min + k * step : roundTo(min + k * step, decimalsOf(String(fs.min)), decimalsOf(String(fs.step)));
      if (top > max) top = max;
      if (!isInt) decimals = Math.max(decimalsOf(String(fs.min)), decimalsOf(String(fs.step)));
    }
    // A stepped (or int) parameter's encoded interval reaches half a step past each end point, so
    // that every grid value owns an equal share of the unit interval.
    const half = step !== undefined ? step / 2 : 0;
    const t = log ? Math.log : (x: number) => x;
    const lower = log && min - half <= 0 ? min : min - half;
    const lo = t(lower);
    let hi = t(top + half);
    if (hi === lo) {
      // min == max: a single value; any coordinate decodes to it
      hi = lo + 1;
    }
    const param: NumericParam = { kind: 'numeric', name: p.name, type: p.parameterType, distribution: distribution as ParamDistribution, min, max: top, log, lo, hi };
    if (step !== undefined) param.step = step;
    if (decimals !== undefined) param.decimals = decimals;
    params.push(param);
  });
  if (errors.length > 0) throw new SpaceError(errors);
  return { params, dim: params.length };
}

function roundTo(x: number, d1: number, d2: number): number {
  const d = Math.min(15, Math.max(d1, d2));
  return Number(x.toFixed(d));
}

/** A number as Skiff writes it in an assignment: no float noise, no trailing zeros. */
export function formatNumber(x: number): string {
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(15)));
}

/** The value of one parameter for a coordinate u in [0, 1], as the assignment string. */
export function decodeParam(p: SpaceParam, u: number): string {
  const c = Number.isFinite(u) ? Math.min(1, Math.max(0, u)) : 0.5;
  if (p.kind === 'categorical') {
    const i = Math.min(p.choices.length - 1, Math.floor(c * p.choices.length));
    return p.choices[i] as string;
  }
  const t = p.lo + c * (p.hi - p.lo);
  return snapValue(p, p.log ? Math.exp(t) : t);
}

/** Snaps a raw number onto the parameter: clamped to [min, max], onto the step grid, formatted. */
export function snapValue(p: NumericParam, raw: number): string {
  let v = Number.isFinite(raw) ? raw : (p.min + p.max) / 2;
  if (p.step !== undefined) {
    const k = Math.round((v - p.min) / p.step);
    v = p.min + k * p.step;
  }
  v = Math.min(p.max, Math.max(p.min, v));
  if (p.type === 'int') return String(Math.round(v));
  if (p.decimals !== undefined) return formatNumber(Number(v.toFixed(Math.min(15, p.decimals))));
  return formatNumber(v);
}

/** A point of the unit cube to an assignment. */
export function decode(space: Space, point: readonly number[]): Record<string, string> {
  if (point.length !== space.dim) throw new Error(`decode: point has ${point.length} coordinates, space has ${space.dim}`);
  const out: Record<string, string> = {};
  space.params.forEach((p, i) => {
    out[p.name] = decodeParam(p, point[i] as number);
  });
  return out;
}

/** The coordinate of one parameter's value (the centre of its cell for a categorical). */
export function encodeParam(p: SpaceParam, value: string): number {
  if (p.kind === 'categorical') {
    const i = p.choices.indexOf(value);
    const j = i >= 0 ? i : p.type === 'discrete' ? p.choices.findIndex((c) => Number(c) === Number(value)) : -1;
    if (j < 0) throw new Error(`parameter ${p.name}: ${JSON.stringify(value)} is not in its list`);
    return (j + 0.5) / p.choices.length;
  }
  const v = Number(value);
  if (!Number.isFinite(v) || String(value).trim() === '') throw new Error(`parameter ${p.name}: ${JSON.stringify(value)} is not a number`);
  const x = Math.min(p.max, Math.max(p.min, v));
  const t = p.log ? Math.log(x) : x;
  return Math.min(1, Math.max(0, (t - p.lo) / (p.hi - p.lo)));
}

/** An assignment to a point of the unit cube; throws when a parameter is missing or off its list. */
export function encode(space: Space, assignment: Record<string, string>): number[] {
  return space.params.map((p) => {
    const v = assignment[p.name];
    if (v === undefined) throw new Error(`parameter ${p.name} is missing from the assignment`);
    return encodeParam(p, v);
  });
}

/** Like encode, but undefined when the assignment does not belong to this space (an old trial, a hand-made one). */
export function tryEncode(space: Space, assignment: Record<string, string>): number[] | undefined {
  try {
    return encode(space, assignment);
  } catch {
    return undefined;
  }
}

/** One parameter's value drawn by its distribution (uniform on the list for a categorical). */
export function sampleParam(p: SpaceParam, rng: Rng): string {
  if (p.kind === 'categorical') return rng.choice(p.choices);
  switch (p.distribution) {
    case 'normal': {
      const mu = (p.min + p.max) / 2;
      const sigma = (p.max - p.min) / 6;
      return snapValue(p, rng.normal(mu, sigma));
    }
    case 'logNormal': {
      const a = Math.log(p.min);
      const b = Math.log(p.max);
      return snapValue(p, Math.exp(rng.normal((a + b) / 2, (b - a) / 6)));
    }
    default:
      return decodeParam(p, rng.uniform());
  }
}

/** An assignment drawn by each parameter's distribution. */
export function sample(space: Space, rng: Rng): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of space.params) out[p.name] = sampleParam(p, rng);
  return out;
}

/** A point drawn uniformly from the unit cube. */
export function samplePoint(space: Space, rng: Rng): number[] {
  return space.params.map(() => rng.uniform());
}

/**
 * The canonical key of an assignment, for duplicate detection: the space's parameters in order,
 * numbers compared by value ("1.0" and "1" are the same), other parameters ignored.
 */
export function assignmentKey(space: Space, assignment: Record<string, string>): string {
  const parts = space.params.map((p) => {
    const v = assignment[p.name];
    if (v === undefined) return null;
    if (p.kind === 'numeric' || p.type === 'discrete') {
      const n = Number(v);
      if (Number.isFinite(n) && String(v).trim() !== '') return formatNumber(n);
    }
    return v;
  });
  return JSON.stringify(parts);
}

/** Every value a parameter can take on a grid, or undefined for a double without step. */
export function gridValues(p: SpaceParam): string[] | undefined {
  if (p.kind === 'categorical') return [...p.choices];
  if (p.step === undefined) return undefined;
  const n = Math.round((p.max - p.min) / p.step) + 1;
  const out: string[] = [];
  const seen = new Set<string>();
  for (let k = 0; k < n; k++) {
    const s = snapValue(p, p.min + k * p.step);
    if (!seen.has(s)) {
      seen.add(s);
      out.push(s);
    }
  }
  return out;
}

/** How many grid values a parameter has without listing them (undefined for a double without step). */
export function gridSize(p: SpaceParam): number | undefined {
  if (p.kind === 'categorical') return p.choices.length;
  if (p.step === undefined) return undefined;
  return Math.round((p.max - p.min) / p.step) + 1;
}

/**
 * The number of distinct assignments when every parameter is discrete (ints, stepped doubles,
 * lists), else undefined: the search then cannot run out.
 */
export function finiteSize(space: Space): number | undefined {
  let n = 1;
  for (const p of space.params) {
    const k = gridSize(p);
    if (k === undefined) return undefined;
    n *= k;
  }
  return n;
}

/** The index-th point of the grid, the last parameter varying fastest (mixed radix). */
export function gridAssignment(space: Space, values: readonly (readonly string[])[], index: number): Record<string, string> {
  const out: Record<string, string> = {};
  let rest = index;
  for (let i = space.params.length - 1; i >= 0; i--) {
    const vs = values[i] as readonly string[];
    const k = rest % vs.length;
    rest = Math.floor(rest / vs.length);
    out[(space.params[i] as SpaceParam).name] = vs[k] as string;
  }
  // keep the spec's parameter order in the object
  const ordered: Record<string, string> = {};
  for (const p of space.params) ordered[p.name] = out[p.name] as string;
  return ordered;
}
