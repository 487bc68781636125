// Katib's `hyperband`: brackets of successive halving over a resource parameter (epochs, steps).
// s_max = floor(log(r_l)/log(eta)); bracket s (from s_max down to 0) starts n = ceil((s_max+1)/(s+1)·eta^s)
// random configurations at resource r = r_l·eta^(-s); each later rung keeps the best
// ceil(n_(i-1)/eta) of the one before at eta times the resource, until the bracket's last rung runs
// at r_l. Every rung waits for the whole previous rung to finish, as Katib's does.
//
// Where Skiff differs from Katib's service, and why:
// - The first rung of a bracket has n configurations as Hyperband defines, not "as many as the
//   controller asked for this call" (Katib overwrites n with the request size).
// - Trials carry labels hyperband.suggestion.katib.kubeflow.org/{bracket,rung} and, for a promoted
//   trial, /parent naming the trial it continues (Katib sets none), so a trial can resume from its
//   parent's checkpoint and the algorithm can rebuild each rung from the trials alone; the state
//   (current bracket and rung) is a cursor over them. The controller names the trials.
// - A failed trial is not promoted (Katib raises an error and stalls); when no trial of a rung has
//   a value, the bracket ends early.
// - The resource is written as an integer for an int parameter (never below 1) and as the exact
//   value for a double (Katib truncates to an integer always). It is not clamped to the parameter's
//   feasible space, which Hyperband's plan overrides, as in Katib.
// - After the last bracket the result says `done` (Katib returns nothing and the Experiment never
//   ends unless maxTrialCount is reached).
import type { Algorithm, Assignment, SettingError, SuggestRequest, SuggestResult, TrialRecord } from './types.js';
import { Rng } from './rng.js';
import type { Space } from './space.js';
import { assignmentKey, formatNumber, parseSpace, SpaceError } from './space.js';
import type { SettingRule } from './settings.js';
import { numberSetting, settingField, validateSettings } from './settings.js';
import { drawUnique } from './random.js';

export const HYPERBAND_LABELS = {
  bracket: 'hyperband.suggestion.katib.kubeflow.org/bracket',
  rung: 'hyperband.suggestion.katib.kubeflow.org/rung',
  parent: 'hyperband.suggestion.katib.kubeflow.org/parent',
} as const;

const RULES: readonly SettingRule[] = [
  { name: 'resource_name', type: 'string', required: true },
  { name: 'r_l', type: 'float', min: 0, minExclusive: true, required: true },
  { name: 'eta', type: 'float', min: 1, minExclusive: true },
];

const EPS = 1e-9;

export interface Rung {
  /** configurations in this rung */
  n: number;
  /** the resource each runs with */
  r: number;
}

/** s_max for r_l and eta (a hair of tolerance so that log(243)/log(3) counts as 5). */
export function sMaxOf(rl: number, eta: number): number {
  return Math.max(0, Math.floor(Math.log(rl) / Math.log(eta) + EPS));
}

/** Every bracket's rungs, from s_max down to 0, in Katib's arithmetic. */
export function hyperbandBrackets(rl: number, eta: number): Rung[][] {
  const sMax = sMaxOf(rl, eta);
  const out: Rung[][] = [];
  for (let s = sMax; s >= 0; s--) out.push(bracketRungs(sMax, s, rl, eta));
  return out;
}

function bracketRungs(sMax: number, s: number, rl: number, eta: number): Rung[] {
  const n = Math.ceil(((sMax + 1) / (s + 1)) * eta ** s - EPS);
  const rungs: Rung[] = [{ n, r: rl * eta ** -s }];
  let prev = n;
  for (let i = 1; i <= s; i++) {
    const k = Math.ceil(prev / eta - EPS);
    rungs.push({ n: k, r: rl * eta ** (i - s) });
    prev = Math.ceil(n * eta ** -i - EPS);
  }
  return rungs;
}

interface Plan {
  resource: string;
  rl: number;
  eta: number;
  sMax: number;
}

function planOf(settings: Record<string, string>): Plan {
  const resource = settings.resource_name ?? '';
  const rl = numberSetting(settings, 'r_l', NaN);
  const eta = numberSetting(settings, 'eta', 3);
  if (!resource || !(rl > 0) || !(eta > 1)) throw new Error('hyperband: resource_name, r_l > 0 and eta > 1 are required');
  return { resource, rl, eta, sMax: sMaxOf(rl, eta) };
}

function resourceValue(space: Space, plan: Plan, r: number): string {
  const p = space.params.find((x) => x.name === plan.resource);
  if (p && p.kind === 'numeric' && p.type === 'int') return String(Math.max(1, Math.floor(r + EPS)));
  return formatNumber(r);
}

function label(t: TrialRecord, key: string): string | undefined {
  return t.labels?.[key];
}

export const hyperbandAlgorithm: Algorithm = {
  name: 'hyperband',
  validate({ parameters, settings, parallelTrialCount }) {
    const errors: SettingError[] = validateSettings(settings, RULES, 'hyperband');
    let space: Space | undefined;
    try {
      space = parseSpace(parameters);
    } catch (e) {
      if (!(e instanceof SpaceError)) throw e;
      errors.push(...e.errors);
    }
    const get = (n: string) => settings.find((s) => s.name === n)?.value;
    const resource = get('resource_name');
    if (resource !== undefined && resource !== '' && space) {
      const i = parameters.findIndex((p) => p.name === resource);
      const p = space.params.find((x) => x.name === resource);
      if (i < 0) errors.push({ field: settingField(settings, 'resource_name'), message: `resource_name ${JSON.stringify(resource)} must name one of the parameters` });
      else if (!p || p.kind !== 'numeric') errors.push({ field: `spec.parameters[${i}].parameterType`, message: `hyperband's resource ${JSON.stringify(resource)} must be an int or double parameter` });
    }
    const rl = Number(get('r_l'));
    const etaRaw = get('eta');
    const eta = etaRaw === undefined ? 3 : Number(etaRaw);
    if (rl > 0 && eta > 1 && Number.isFinite(rl) && Number.isFinite(eta)) {
      const need = Math.ceil(eta ** sMaxOf(rl, eta) - EPS);
      if (parallelTrialCount < need) errors.push({ field: 'spec.parallelTrialCount', message: `hyperband with r_l=${rl} and eta=${eta} runs ${need} trials at once in its first bracket: parallelTrialCount must be at least ${need}, got ${parallelTrialCount}` });
    }
    return errors;
  },
  suggest(req: SuggestRequest): SuggestResult {
    const space = parseSpace(req.parameters);
    const plan = planOf(req.settings);
    const rng = new Rng(req.seed);
    let s = req.state.s !== undefined ? Number(req.state.s) : plan.sMax;
    let i = req.state.i !== undefined ? Number(req.state.i) : 0;
    if (!Number.isInteger(s) || s > plan.sMax) s = plan.sMax;
    if (!Number.isInteger(i) || i < 0) i = 0;
    const all: TrialRecord[] = [...req.trials];
    const out: Assignment[] = [];
    const inRung = (bs: number, ri: number) => all.filter((t) => label(t, HYPERBAND_LABELS.bracket) === String(bs) && label(t, HYPERBAND_LABELS.rung) === String(ri));
    const others = { ...space, params: space.params.filter((p) => p.name !== plan.resource) };
    others.dim = others.params.length;
    while (s >= 0) {
      const rungs = bracketRungs(plan.sMax, s, plan.rl, plan.eta);
      if (i > s) {
        s -= 1;
        i = 0;
        continue;
      }
      const rung = rungs[i] as Rung;
      const r = resourceValue(space, plan, rung.r);
      const members = inRung(s, i);
      let target = rung.n;
      let promote: TrialRecord[] = [];
      if (i > 0) {
        const promoted = new Set(members.map((t) => label(t, HYPERBAND_LABELS.parent)));
        const ranked = inRung(s, i - 1)
          .filter((t) => t.state !== 'pending' && t.state !== 'failed' && t.value !== undefined && Number.isFinite(t.value))
          .sort((a, b) => (a.value as number) - (b.value as number));
        const top = ranked.slice(0, rung.n);
        target = top.length;
        promote = top.filter((t) => !promoted.has(t.name));
      }
      if (members.length < target) {
        const room = req.count - out.length;
        if (room <= 0) break;
        const labels = { [HYPERBAND_LABELS.bracket]: String(s), [HYPERBAND_LABELS.rung]: String(i) };
        const fresh: Assignment[] = [];
        if (i === 0) {
          const taken = new Set(all.filter((t) => t.assignments[plan.resource] === r).map((t) => assignmentKey(others, t.assignments)));
          const got = drawUnique(others, rng, taken, Math.min(room, target - members.length)).assignments;
          for (const a of got) fresh.push({ assignments: orderLike(space, { ...a, [plan.resource]: r }), labels: { ...labels } });
        } else {
          for (const parent of promote.slice(0, room)) {
            fresh.push({ assignments: orderLike(space, { ...parent.assignments, [plan.resource]: r }), labels: { ...labels, [HYPERBAND_LABELS.parent]: parent.name } });
          }
        }
        for (const a of fresh) {
          out.push(a);
          all.push({ name: `(new ${out.length})`, assignments: a.assignments, state: 'pending', labels: a.labels ?? {} });
        }
        // handed out (now pending): this rung must finish before the next one can start; when
        // nothing could be drawn (a small discrete space is used up) the rung closes as it is
        if (fresh.length > 0) break;
      }
      if (members.some((t) => t.state === 'pending')) break;
      i += 1;
    }
    const result: SuggestResult = { assignments: out, state: { s: String(s), i: String(i) } };
    if (s < 0) result.done = true;
    return result;
  },
};

/** The assignment with the space's parameter order. */
function orderLike(space: Space, a: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of space.params) if (a[p.name] !== undefined) out[p.name] = a[p.name] as string;
  return out;
}
