// Katib's `random` (hyperopt's rand.suggest there): each parameter drawn by its distribution, with
// no assignment handed out twice. When every parameter is discrete and few points remain unused,
// Skiff picks among the remaining ones instead of redrawing blindly, and says `done` once none is
// left (hyperopt would go on repeating points).
import type { Algorithm, Assignment, SuggestRequest, SuggestResult } from './types.js';
import { Rng } from './rng.js';
import type { Space } from './space.js';
import { assignmentKey, checkParameters, finiteSize, gridAssignment, gridValues, parseSpace, sample } from './space.js';
import type { SettingRule } from './settings.js';
import { takenKeys, validateSettings } from './settings.js';

export const RANDOM_STATE_RULE: SettingRule = { name: 'random_state', type: 'int', min: 0, max: 4294967295 };
const RULES: readonly SettingRule[] = [RANDOM_STATE_RULE];

/** Draws per assignment before falling back to listing what is left of a finite space. */
const MAX_DRAWS = 64;
/** A finite space at most this large may be listed to find its unused points. */
const MAX_LISTED = 250_000;

/**
 * Up to `count` assignments drawn by `draw`, none of whose keys is in `taken` (which is updated).
 * Shared by the algorithms that fall back to random draws (TPE's startup, exhausted candidates).
 */
export function drawUnique(space: Space, rng: Rng, taken: Set<string>, count: number, draw: () => Record<string, string> = () => sample(space, rng)): { assignments: Record<string, string>[]; exhausted: boolean } {
  const out: Record<string, string>[] = [];
  const size = finiteSize(space);
  while (out.length < count) {
    let got: Record<string, string> | undefined;
    for (let i = 0; i < MAX_DRAWS && !got; i++) {
      const a = draw();
      if (!taken.has(assignmentKey(space, a))) got = a;
    }
    if (!got && size !== undefined && size <= MAX_LISTED) {
      const values = space.params.map((p) => gridValues(p) as string[]);
      const free: number[] = [];
      for (let k = 0; k < size; k++) if (!taken.has(assignmentKey(space, gridAssignment(space, values, k)))) free.push(k);
      if (free.length === 0) return { assignments: out, exhausted: true };
      got = gridAssignment(space, values, rng.choice(free));
    }
    if (!got) break;
    taken.add(assignmentKey(space, got));
    out.push(got);
  }
  const exhausted = size !== undefined && taken.size >= size;
  return { assignments: out, exhausted };
}

export const randomAlgorithm: Algorithm = {
  name: 'random',
  validate({ parameters, settings }) {
    return [...validateSettings(settings, RULES, 'random'), ...checkParameters(parameters)];
  },
  suggest(req: SuggestRequest): SuggestResult {
    const space = parseSpace(req.parameters);
    const rng = new Rng(req.seed);
    const taken = takenKeys(space, req.trials);
    const { assignments, exhausted } = drawUnique(space, rng, taken, req.count);
    const result: SuggestResult = { assignments: assignments.map((a): Assignment => ({ assignments: a })) };
    if (exhausted) result.done = true;
    return result;
  },
};
