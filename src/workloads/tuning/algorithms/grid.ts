// Katib's `grid` (Optuna's GridSampler there): every combination of the parameters' values, ints as
// range(min, max+1, step), stepped doubles from min by step up to max, lists verbatim. A double
// without step cannot be gridded; a maxTrialCount larger than the grid is refused at creation, as
// Katib does. The grid is walked in a seeded order (a random affine permutation of the grid's
// indices, drawn once and kept in the state so that later calls continue the same walk), skipping
// every point already handed out, and the search is done when no point is left.
import type { Algorithm, SettingError, SuggestRequest, SuggestResult } from './types.js';
import { Rng } from './rng.js';
import type { Space } from './space.js';
import { assignmentKey, gridAssignment, gridSize, gridValues, parseSpace, SpaceError } from './space.js';
import type { SettingRule } from './settings.js';
import { takenKeys, validateSettings } from './settings.js';
import { RANDOM_STATE_RULE } from './random.js';

const RULES: readonly SettingRule[] = [RANDOM_STATE_RULE];
/** values one parameter may have on a grid: each parameter's values are listed in memory */
const MAX_VALUES = 100_000;

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** The grid's size, or errors naming each double without step. */
export function gridPlan(space: Space): { size: number; values: string[][] } | { errors: SettingError[] } {
  const errors: SettingError[] = [];
  let size = 1;
  space.params.forEach((p, i) => {
    const k = gridSize(p);
    if (k === undefined) errors.push({ field: `spec.parameters[${i}].feasibleSpace.step`, message: `grid needs a step for double parameter ${JSON.stringify(p.name)}` });
    else if (k > MAX_VALUES) errors.push({ field: `spec.parameters[${i}].feasibleSpace.step`, message: `parameter ${JSON.stringify(p.name)} has ${k} grid values, more than ${MAX_VALUES}; use a larger step` });
    else size *= k;
  });
  if (errors.length > 0) return { errors };
  if (!Number.isSafeInteger(size)) return { errors: [{ field: 'spec.parameters', message: `the grid has more than 2^53 points (${size})` }] };
  return { size, values: space.params.map((p) => gridValues(p) as string[]) };
}

function allTaken(space: Space, plan: { size: number; values: string[][] }, taken: Set<string>): boolean {
  for (let k = 0; k < plan.size; k++) if (!taken.has(assignmentKey(space, gridAssignment(space, plan.values, k)))) return false;
  return true;
}

export const gridAlgorithm: Algorithm = {
  name: 'grid',
  validate({ parameters, settings, maxTrialCount }) {
    const errors = validateSettings(settings, RULES, 'grid');
    let space: Space;
    try {
      space = parseSpace(parameters);
    } catch (e) {
      if (e instanceof SpaceError) return [...errors, ...e.errors];
      throw e;
    }
    const plan = gridPlan(space);
    if ('errors' in plan) return [...errors, ...plan.errors];
    if (maxTrialCount !== undefined && maxTrialCount > plan.size) {
      errors.push({ field: 'spec.maxTrialCount', message: `the grid has ${plan.size} points, fewer than maxTrialCount (${maxTrialCount}); lower maxTrialCount to at most ${plan.size}` });
    }
    return errors;
  },
  suggest(req: SuggestRequest): SuggestResult {
    const space = parseSpace(req.parameters);
    const plan = gridPlan(space);
    if ('errors' in plan) throw new SpaceError(plan.errors);
    const n = BigInt(plan.size);
    let a = req.state.multiplier !== undefined ? BigInt(req.state.multiplier) : 0n;
    let b = req.state.offset !== undefined ? BigInt(req.state.offset) : 0n;
    if (req.state.multiplier === undefined || a <= 0n || gcd(a, n) !== 1n || b < 0n || b >= n) {
      // index(k) = (a·k + b) mod n visits every point once when a is coprime with n
      const rng = new Rng(req.seed);
      b = BigInt(Math.floor(rng.uniform() * plan.size));
      a = 1n;
      for (let tries = 0; tries < 64; tries++) {
        const c = BigInt(1 + Math.floor(rng.uniform() * Math.max(1, plan.size - 1)));
        if (gcd(c, n) === 1n) {
          a = c;
          break;
        }
      }
    }
    const taken = takenKeys(space, req.trials);
    let cursor = req.state.cursor !== undefined ? Number(req.state.cursor) : 0;
    if (!Number.isSafeInteger(cursor) || cursor < 0) cursor = 0;
    const out: Record<string, string>[] = [];
    // the cursor only skips points already handed out, so a lost or stale cursor costs time, never a point
    let scanned = 0;
    while (out.length < req.count && scanned < plan.size) {
      const k = BigInt((cursor + scanned) % plan.size);
      const idx = Number((a * k + b) % n);
      const assignment = gridAssignment(space, plan.values, idx);
      const key = assignmentKey(space, assignment);
      scanned++;
      if (taken.has(key)) continue;
      taken.add(key);
      out.push(assignment);
    }
    cursor = (cursor + scanned) % plan.size;
    const result: SuggestResult = {
      assignments: out.map((x) => ({ assignments: x })),
      state: { multiplier: String(a), offset: String(b), cursor: String(cursor) },
    };
    if (out.length < req.count || (taken.size >= plan.size && allTaken(space, plan, taken))) result.done = true;
    return result;
  },
};
