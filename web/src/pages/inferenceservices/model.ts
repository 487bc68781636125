// What the InferenceService pages show, computed from the object alone: components with their
// runtime and model, the traffic split in words, which canary actions KServe allows, the endpoints,
// and an example request shaped from the model's metadata.
import type { ComponentStatus, InferenceService, PredictorSpec, TrafficTarget } from '../../api/types';

export type ComponentName = 'predictor' | 'transformer' | 'explainer';
export const COMPONENTS: ComponentName[] = ['predictor', 'transformer', 'explainer'];

// the legacy predictor keys (sklearn:, onnx:, ...) and whether their runtimes speak only V2
const LEGACY: Record<string, boolean> = { sklearn: false, xgboost: false, tensorflow: false, pytorch: false, triton: true, onnx: true, huggingface: true, pmml: false, lightgbm: false, paddle: false };

interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface ComponentView {
  name: ComponentName;
  /** the model format (`sklearn`), absent for a custom container */
  format?: string;
  /** the ServingRuntime asked for, if any */
  runtime?: string;
  storageUri?: string;
  protocol: 'v1' | 'v2';
  image?: string;
  resources?: Resources;
  minReplicas?: number;
  maxReplicas?: number;
  canaryTrafficPercent?: number;
  status?: ComponentStatus;
}

type Spec = Record<string, unknown> & { containers?: { image?: string; resources?: Resources }[] };

function protocolOf(v: unknown, legacyKey?: string): 'v1' | 'v2' {
  if (typeof v === 'string') return v.endsWith('v2') ? 'v2' : 'v1';
  return legacyKey && LEGACY[legacyKey] ? 'v2' : 'v1';
}

/** The components an InferenceService declares, predictor first. */
export function componentsOf(isvc: InferenceService): ComponentView[] {
  const out: ComponentView[] = [];
  for (const name of COMPONENTS) {
    const spec = (isvc.spec as unknown as Record<string, Spec | undefined>)[name];
    if (!spec) continue;
    const view: ComponentView = { name, protocol: 'v1', status: isvc.status?.components?.[name] };
    const p = spec as PredictorSpec & Spec;
    const model = p.model as (Spec & { modelFormat?: { name?: string; version?: string }; runtime?: string; storageUri?: string; protocolVersion?: string; image?: string; resources?: Resources }) | undefined;
    const legacyKey = Object.keys(LEGACY).find((k) => spec[k] && typeof spec[k] === 'object');
    const impl = (model ?? (legacyKey ? (spec[legacyKey] as typeof model) : undefined)) ?? (name === 'explainer' ? (spec.art as typeof model) : undefined);
    if (model?.modelFormat?.name) view.format = model.modelFormat.version ? `${model.modelFormat.name} ${model.modelFormat.version}` : model.modelFormat.name;
    else if (legacyKey) view.format = legacyKey;
    if (model?.runtime) view.runtime = model.runtime;
    const container = spec.containers?.[0];
    view.storageUri = impl?.storageUri ?? (spec.storageUri as string | undefined);
    view.protocol = protocolOf(impl?.protocolVersion, model ? undefined : legacyKey);
    view.image = impl?.image ?? container?.image;
    view.resources = impl?.resources ?? container?.resources;
    if (typeof spec.minReplicas === 'number') view.minReplicas = spec.minReplicas;
    if (typeof spec.maxReplicas === 'number') view.maxReplicas = spec.maxReplicas;
    if (typeof spec.canaryTrafficPercent === 'number') view.canaryTrafficPercent = spec.canaryTrafficPercent;
    out.push(view);
  }
  return out;
}

/** The runtime actually serving the predictor: the one asked for, else the one the controller picked. */
export function runtimeOf(isvc: InferenceService): string | undefined {
  const asked = componentsOf(isvc).find((c) => c.name === 'predictor')?.runtime;
  return asked ?? isvc.status?.servingRuntimeName ?? isvc.status?.clusterServingRuntimeName;
}

/** `canary-predictor-00002` → `r2`; other names as they are. */
export function shortRevision(name: string | undefined): string {
  const m = /-(\d{5})$/.exec(name ?? '');
  return m ? `r${Number(m[1])}` : (name ?? '?');
}

/** "80% r1 · 20% r2", largest share first. */
export function trafficText(traffic: TrafficTarget[] | undefined): string {
  const t = [...(traffic ?? [])].filter((x) => (x.percent ?? 0) > 0 || (traffic ?? []).length === 1);
  if (!t.length) return '';
  t.sort((a, b) => (b.percent ?? 0) - (a.percent ?? 0) || (a.revisionName ?? '').localeCompare(b.revisionName ?? ''));
  return t.map((x) => `${x.percent ?? 0}% ${shortRevision(x.revisionName)}`).join(' · ');
}

export interface TrafficRow {
  revision: string;
  percent: number;
  tag?: string;
  latest: boolean;
  /** what the revision is to the rollout */
  roles: string[];
}

/** The component's split, one row per revision that takes traffic or matters to the rollout. */
export function trafficRows(status: ComponentStatus | undefined): TrafficRow[] {
  if (!status) return [];
  const rows = new Map<string, TrafficRow>();
  const row = (name: string): TrafficRow => {
    let r = rows.get(name);
    if (!r) rows.set(name, (r = { revision: name, percent: 0, latest: false, roles: [] }));
    return r;
  };
  for (const t of status.traffic ?? []) {
    if (!t.revisionName) continue;
    const r = row(t.revisionName);
    r.percent += t.percent ?? 0;
    if (t.tag) r.tag = t.tag;
    if (t.latestRevision) r.latest = true;
  }
  const role = (name: string | undefined, what: string): void => {
    if (name) row(name).roles.push(what);
  };
  role(status.latestCreatedRevision, 'latest created');
  role(status.latestReadyRevision, 'latest ready');
  role(status.latestRolledoutRevision, 'rolled out');
  role(status.previousRolledoutRevision, 'previous');
  return [...rows.values()].sort((a, b) => b.revision.localeCompare(a.revision));
}

export interface CanaryState {
  /** spec.predictor.canaryTrafficPercent; undefined: the latest revision takes everything */
  percent?: number;
  /** a canary split is set: promoting removes it */
  canPromote: boolean;
  /** there is a revision to go back to: canaryTrafficPercent 0 pins traffic on it */
  canRollback: boolean;
  /** the revision traffic goes back to on a roll back */
  rollbackTo?: string;
  /** the revision a canary percent applies to */
  latest?: string;
}

export function canaryState(isvc: InferenceService): CanaryState {
  const pct = isvc.spec?.predictor?.canaryTrafficPercent;
  const st = isvc.status?.components?.predictor;
  const latest = st?.latestReadyRevision ?? st?.latestCreatedRevision;
  // the revision that had all traffic before the latest: the previous rolled-out one, or while a
  // canary runs the rolled-out one that is not the latest
  const back = st?.latestRolledoutRevision && st.latestRolledoutRevision !== latest ? st.latestRolledoutRevision : st?.previousRolledoutRevision;
  const state: CanaryState = { canPromote: typeof pct === 'number' && pct !== 100, canRollback: !!back && back !== latest && pct !== 0 };
  if (typeof pct === 'number') state.percent = pct;
  if (back && back !== latest) state.rollbackTo = back;
  if (latest) state.latest = latest;
  return state;
}

/** A merge patch of the predictor's canary percent; null removes it (promotion). */
export function canaryPatch(percent: number | null): { spec: { predictor: { canaryTrafficPercent: number | null } } } {
  if (percent !== null && (!Number.isInteger(percent) || percent < 0 || percent > 100)) throw new Error(`the canary percent must be a whole number from 0 to 100, not ${percent}`);
  return { spec: { predictor: { canaryTrafficPercent: percent } } };
}

/** Where the service answers: the gateway's path form first (what works from this browser). */
export function endpoints(isvc: InferenceService, origin: string): { label: string; url: string }[] {
  const ns = isvc.metadata?.namespace ?? 'default';
  const name = isvc.metadata?.name ?? '';
  const out = [{ label: 'Path', url: `${origin}/serving/${ns}/${name}` }];
  if (isvc.status?.url) out.push({ label: 'URL (Host)', url: isvc.status.url });
  const addr = isvc.status?.address?.url;
  if (addr && addr !== out[0]?.url) out.push({ label: 'Address', url: addr });
  return out;
}

// ---- "try it" ----

export interface V2Tensor {
  name: string;
  datatype: string;
  shape: number[];
}

export interface ModelMetadata {
  name?: string;
  inputs?: V2Tensor[];
}

function zeros(n: number, datatype: string): unknown[] {
  const v: unknown = datatype === 'BOOL' ? false : datatype === 'BYTES' ? '' : 0;
  return Array.from({ length: n }, () => v);
}

/** The path and body of a first request, shaped from the model's V2 metadata when there is some. */
export function exampleRequest(protocol: 'v1' | 'v2', model: string, meta?: ModelMetadata): { path: string; body: string } {
  const inputs = meta?.inputs ?? [];
  if (protocol === 'v2') {
    const tensors = (inputs.length ? inputs : [{ name: 'input-0', datatype: 'FP32', shape: [1, 4] }]).map((t) => {
      // a variable dimension (-1) is the batch: one row
      const shape = t.shape.map((d) => (d < 0 ? 1 : d));
      return { name: t.name, shape, datatype: t.datatype, data: zeros(shape.reduce((a, b) => a * b, 1), t.datatype) };
    });
    // one line per tensor: a 64-wide input stays readable
    return { path: `/v2/models/${model}/infer`, body: `{\n  "inputs": [\n${tensors.map((t) => `    ${JSON.stringify(t)}`).join(',\n')}\n  ]\n}` };
  }
  const first = inputs[0];
  const row = first ? first.shape.slice(1).map((d) => (d < 0 ? 1 : d)) : [4];
  const build = (dims: number[]): unknown => (dims.length ? Array.from({ length: dims[0] as number }, () => build(dims.slice(1))) : first ? zeros(1, first.datatype)[0] : 0);
  return { path: `/v1/models/${model}:predict`, body: JSON.stringify({ instances: [build(row)] }) };
}
