// Katib's `pbt`: Population Based Training. A population of n_population trials is trained a
// generation at a time; each member of the next generation continues from a member of the last
// (label pbt.suggestion.katib.kubeflow.org/parent, whose checkpoint the trial loads) either by
// exploit (a member in the worst truncation_threshold fraction takes the assignments of one in the
// best fraction) or by explore (a member perturbs its own assignments by ×0.8 / ×1.2, or with
// resample_probability set, redraws each parameter with that probability). Generations are
// labelled pbt.suggestion.katib.kubeflow.org/generation.
//
// Where Skiff differs from Katib's service, and why:
// - An exploiting member's parent is the better trial it copies (Katib labels the worse trial it
//   replaces, so the new trial loads the checkpoint of the weights it was meant to discard).
// - Generations are synchronous: generation g+1 is planned from generation g's finished members
//   once n_population of them have succeeded (or 2·n_population have been tried); the plan is a
//   pure function of those results and the seed kept in the state, so a plan handed out over
//   several calls is the same plan.
// - A failed member is replaced by a new member of the same generation (Katib re-queues the same
//   assignments, which fail the same way); a generation with no success starts over from random.
// - Perturbing an int always moves it (round, then at least one step) and keeps it inside
//   [min, max]; a categorical moves one place along its list, wrapping at both ends.
// - The controller names the trials (Katib's service names them <experiment>-<uuid>); the parent
//   label carries the parent trial's name either way.
// - suggestion_trial_dir is required, as Katib requires it; the Trial controller mounts each
//   trial's checkpoint directory there, seeded from its parent's (../checkpoints.ts).
import type { Algorithm, Assignment, SettingError, SuggestRequest, SuggestResult, TrialRecord } from './types.js';
import { Rng, hashString } from './rng.js';
import type { Space, SpaceParam } from './space.js';
import { checkParameters, parseSpace, sample, sampleParam, snapValue } from './space.js';
import type { SettingRule } from './settings.js';
import { numberSetting, validateSettings } from './settings.js';

export const PBT_LABELS = {
  generation: 'pbt.suggestion.katib.kubeflow.org/generation',
  parent: 'pbt.suggestion.katib.kubeflow.org/parent',
} as const;

const RULES: readonly SettingRule[] = [
  { name: 'suggestion_trial_dir', type: 'string', required: true },
  { name: 'n_population', type: 'int', min: 5, required: true },
  { name: 'truncation_threshold', type: 'float', min: 0, max: 1, required: true },
  { name: 'resample_probability', type: 'float', min: 0, max: 1 },
];

/** Explore: one parameter moved by ×0.8 / ×1.2 (or one place along its list). */
export function perturb(p: SpaceParam, value: string, rng: Rng): string {
  const up = rng.uniform() < 0.5;
  if (p.kind === 'categorical') {
    const n = p.choices.length;
    const i = Math.max(0, p.choices.indexOf(value));
    return p.choices[(i + (up ? 1 : n - 1)) % n] as string;
  }
  const v = Number(value);
  const scaled = v * (up ? 1.2 : 0.8);
  if (p.type === 'int') {
    let k = Math.round(scaled);
    const step = p.step ?? 1;
    if (k === v) k = v + (up === v >= 0 ? step : -step);
    return snapValue(p, k);
  }
  return snapValue(p, scaled);
}

interface Recipe {
  assignments: Record<string, string>;
  parent?: string;
}

function isSuccess(t: TrialRecord): boolean {
  return (t.state === 'succeeded' || t.state === 'early-stopped') && t.value !== undefined && Number.isFinite(t.value);
}

/** The j-th member of generation `gen`, planned from the last generation's successes (best first). */
function recipe(space: Space, settings: Record<string, string>, seed: number, gen: number, j: number, ranked: readonly TrialRecord[], nPop: number): Recipe {
  const rng = new Rng(hashString(`${seed}/${gen}/${j}`));
  const m = ranked.length;
  if (gen === 0 || m === 0) return { assignments: sample(space, rng) };
  const threshold = numberSetting(settings, 'truncation_threshold', 0.2);
  const nBottom = Math.min(m - 1, Math.floor(m * threshold));
  const nTop = Math.max(1, Math.min(m, Math.ceil(m * threshold)));
  // slots beyond the population replace failed members: continue a random member
  const pos = j < nPop ? j % m : rng.int(0, m - 1);
  const source = ranked[pos] as TrialRecord;
  if (pos >= m - nBottom) {
    const donor = ranked[rng.int(0, nTop - 1)] as TrialRecord;
    return { assignments: { ...donor.assignments }, parent: donor.name };
  }
  const resample = settings.resample_probability !== undefined && settings.resample_probability !== '' ? numberSetting(settings, 'resample_probability', 0) : undefined;
  const out: Record<string, string> = {};
  for (const p of space.params) {
    const v = source.assignments[p.name] ?? sampleParam(p, rng);
    if (resample === undefined) out[p.name] = perturb(p, v, rng);
    else out[p.name] = rng.uniform() < resample ? sampleParam(p, rng) : v;
  }
  return { assignments: out, parent: source.name };
}

export const pbtAlgorithm: Algorithm = {
  name: 'pbt',
  validate({ parameters, settings }) {
    const errors: SettingError[] = [...validateSettings(settings, RULES, 'pbt'), ...checkParameters(parameters)];
    return errors;
  },
  suggest(req: SuggestRequest): SuggestResult {
    const space = parseSpace(req.parameters);
    const nPop = Math.max(1, Math.floor(numberSetting(req.settings, 'n_population', 5)));
    const seed = req.state.seed !== undefined && Number.isFinite(Number(req.state.seed)) ? Number(req.state.seed) : req.seed;
    let gen = Number(req.state.generation ?? 0);
    if (!Number.isInteger(gen) || gen < 0) gen = 0;
    let handed = Number(req.state.handed ?? 0);
    if (!Number.isInteger(handed) || handed < 0) handed = 0;
    const genOf = (t: TrialRecord) => t.labels?.[PBT_LABELS.generation];
    const out: Assignment[] = [];
    const members = (g: number) => req.trials.filter((t) => genOf(t) === String(g));
    const ranked = (g: number) => members(g).filter(isSuccess).sort((a, b) => (a.value as number) - (b.value as number));
    for (let guard = 0; guard < 1000 && out.length < req.count; guard++) {
      const mine = members(gen);
      handed = Math.max(handed, mine.length);
      const successes = mine.filter(isSuccess).length;
      const pending = mine.filter((t) => t.state === 'pending').length + out.filter((a) => a.labels?.[PBT_LABELS.generation] === String(gen)).length;
      const cap = 2 * nPop;
      if (successes >= nPop || (handed >= cap && pending === 0)) {
        // this generation is complete: plan the next one
        gen += 1;
        handed = 0;
        continue;
      }
      if (successes + pending >= nPop || handed >= cap) break; // wait for running members
      const prev = gen > 0 ? ranked(gen - 1) : [];
      const r = recipe(space, req.settings, seed, gen, handed, prev, nPop);
      const labels: Record<string, string> = { [PBT_LABELS.generation]: String(gen) };
      if (r.parent !== undefined) labels[PBT_LABELS.parent] = r.parent;
      out.push({ assignments: r.assignments, labels });
      handed += 1;
    }
    return { assignments: out, state: { seed: String(seed), generation: String(gen), handed: String(handed) } };
  },
};
