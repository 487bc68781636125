// Katib's `sobol` (goptuna's Sobol sampler there): a Sobol low-discrepancy sequence over the unit
// cube, decoded onto the parameters. Skiff applies a random digital shift (each coordinate's bits
// XORed with a per-dimension mask drawn once from the seed and kept in the state), so the first point
// is not every parameter's minimum, and skips points whose assignment was already handed out (ints
// and lists map many points onto one assignment).
import type { Algorithm, SuggestRequest, SuggestResult } from './types.js';
import { Rng } from './rng.js';
import { assignmentKey, checkParameters, decode, parseSpace } from './space.js';
import { takenKeys, validateSettings } from './settings.js';
import { SOBOL_DIRECTIONS } from './sobol-directions.js';
import { drawUnique } from './random.js';

const BITS = 32;
export const SOBOL_MAX_DIMENSIONS = SOBOL_DIRECTIONS.length + 1;

/** The 32 direction numbers v_1..v_32 (as integers scaled by 2^32) of each dimension. */
export function directionNumbers(dim: number): Uint32Array[] {
  if (dim > SOBOL_MAX_DIMENSIONS) throw new Error(`sobol: at most ${SOBOL_MAX_DIMENSIONS} parameters, got ${dim}`);
  const out: Uint32Array[] = [];
  for (let d = 0; d < dim; d++) {
    const v = new Uint32Array(BITS);
    if (d === 0) {
      for (let k = 0; k < BITS; k++) v[k] = (1 << (BITS - 1 - k)) >>> 0;
    } else {
      const row = SOBOL_DIRECTIONS[d - 1] as readonly number[];
      const poly = row[0] as number;
      const s = row.length - 1;
      const m: number[] = row.slice(1);
      for (let k = s; k < BITS; k++) {
        // m_k = 2·a1·m_(k-1) ⊕ 4·a2·m_(k-2) ⊕ … ⊕ 2^s·m_(k-s) ⊕ m_(k-s)
        let x = (m[k - s] as number) ^ ((m[k - s] as number) * 2 ** s);
        for (let i = 1; i < s; i++) {
          const ai = (poly >> (s - i)) & 1;
          if (ai) x ^= (m[k - i] as number) * 2 ** i;
        }
        m.push(x);
      }
      for (let k = 0; k < BITS; k++) v[k] = (m[k] as number) * 2 ** (BITS - 1 - k) >>> 0;
    }
    out.push(v);
  }
  return out;
}

/** The n-th point (Gray-code order, n ≥ 0) of the plain Sobol sequence, XORed with `shift`. */
export function sobolPoint(dirs: readonly Uint32Array[], n: number, shift?: readonly number[]): number[] {
  const gray = n ^ Math.floor(n / 2);
  return dirs.map((v, d) => {
    let x = 0;
    let g = gray;
    for (let k = 0; g > 0 && k < BITS; k++, g = Math.floor(g / 2)) if (g & 1) x ^= v[k] as number;
    if (shift) x ^= shift[d] as number;
    return (x >>> 0) / 4294967296;
  });
}

/** Draws to skip past before giving up on new assignments for this call. */
const MAX_SKIP = 4096;

export const sobolAlgorithm: Algorithm = {
  name: 'sobol',
  validate({ parameters, settings }) {
    const errors = [...validateSettings(settings, [], 'sobol'), ...checkParameters(parameters)];
    if ((parameters?.length ?? 0) > SOBOL_MAX_DIMENSIONS) errors.push({ field: 'spec.parameters', message: `sobol supports at most ${SOBOL_MAX_DIMENSIONS} parameters, got ${parameters.length}` });
    return errors;
  },
  suggest(req: SuggestRequest): SuggestResult {
    const space = parseSpace(req.parameters);
    const dirs = directionNumbers(space.dim);
    let shift = (req.state.shift ?? '').split(',').filter((x) => x !== '').map(Number);
    if (shift.length !== space.dim || shift.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffffffff)) {
      const rng = new Rng(req.seed);
      shift = space.params.map(() => rng.nextU32());
    }
    let index = Number(req.state.index ?? 0);
    if (!Number.isSafeInteger(index) || index < 0) index = 0;
    const taken = takenKeys(space, req.trials);
    const out: Record<string, string>[] = [];
    let skipped = 0;
    while (out.length < req.count && skipped < MAX_SKIP && index < 2 ** BITS) {
      const a = decode(space, sobolPoint(dirs, index, shift));
      index++;
      const key = assignmentKey(space, a);
      if (taken.has(key)) {
        skipped++;
        continue;
      }
      taken.add(key);
      out.push(a);
    }
    let done = false;
    if (out.length < req.count) {
      // a coarse discrete space: the sequence keeps landing on used points; finish with what is left
      const rest = drawUnique(space, new Rng(req.seed ^ index), taken, req.count - out.length);
      out.push(...rest.assignments);
      done = rest.exhausted;
    }
    const result: SuggestResult = { assignments: out.map((x) => ({ assignments: x })), state: { shift: shift.join(','), index: String(index) } };
    if (done) result.done = true;
    return result;
  },
};
