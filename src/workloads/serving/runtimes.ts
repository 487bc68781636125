// Which ServingRuntime or ClusterServingRuntime serves an InferenceService's predictor, chosen as
// KServe's controller chooses it.
//
// An explicit `model.runtime` is looked up by name, namespaced runtimes first; it must exist
// (RuntimeNotRecognized), not be disabled (RuntimeDisabled), speak the ISVC's protocol when one is
// set, and list the model's format (NoSupportingRuntime) — with an explicit runtime every listed
// format counts, `autoSelect` or not.
//
// Otherwise a runtime is auto-selected. A model's format label is `mt:<name>` or
// `mt:<name>:<version>`; a runtime offers `mt:<name>` and `mt:<name>:<version>` for each format with
// `autoSelect: true`, and matches by exact string (model version "1.2" does not match runtime
// version "1"; a model without a version matches any). Candidates are neither disabled nor
// multi-model, have a workerSpec exactly when the predictor has one, and list the ISVC's protocol
// (none set means v1; a runtime listing no protocols takes any). Each list (namespaced, cluster) is
// sorted by the runtime's lowest protocol (v1 < v2 < grpc-v1 < grpc-v2 < none listed), newest
// creationTimestamp, then name, and then stably by the format's priority, highest first, runtimes
// without one last. Namespaced runtimes come before cluster ones whatever their priority; the first
// wins. When the ISVC sets no protocol, it is the chosen runtime's lowest.
import type { ObjectMeta } from '../../api/meta.js';
import type { ClusterServingRuntime, InferenceService, ModelFormat, ModelSpec, ServingProtocol, ServingRuntime, ServingRuntimeSpec } from '../../api/serving.js';

export type RuntimeKind = 'ServingRuntime' | 'ClusterServingRuntime';
export type RuntimeFailureReason = 'RuntimeNotRecognized' | 'RuntimeDisabled' | 'NoSupportingRuntime' | 'InvalidPredictorSpec';

export type RuntimeSelection =
  | { ok: true; runtime: ServingRuntime | ClusterServingRuntime; kind: RuntimeKind; protocol: ServingProtocol; modelFormat: ModelFormat }
  | { ok: false; reason: RuntimeFailureReason; message: string };

const protocolRank: Record<ServingProtocol, number> = { v1: 0, v2: 1, 'grpc-v1': 2, 'grpc-v2': 3 };
const unknownProtocolRank = 4;

function isProtocol(p: unknown): p is ServingProtocol {
  return typeof p === 'string' && p in protocolRank;
}

/** The runtime's lowest protocol, or undefined when it lists none it knows. */
export function lowestProtocol(spec: ServingRuntimeSpec): ServingProtocol | undefined {
  const ps = (spec.protocolVersions ?? []).filter(isProtocol);
  if (ps.length === 0) return undefined;
  return ps.reduce((a, b) => (protocolRank[b] < protocolRank[a] ? b : a));
}

function protocolSortKey(spec: ServingRuntimeSpec): number {
  const p = lowestProtocol(spec);
  return p === undefined ? unknownProtocolRank : protocolRank[p];
}

/** A runtime listing no protocols accepts any. */
export function runtimeSupportsProtocol(spec: ServingRuntimeSpec, protocol: ServingProtocol): boolean {
  const ps = spec.protocolVersions;
  return !ps || ps.length === 0 || ps.includes(protocol);
}

function modelLabel(f: ModelFormat): string {
  return f.version !== undefined && f.version !== null ? `mt:${f.name}:${f.version}` : `mt:${f.name}`;
}

/** Whether the runtime lists the model's format; `explicit` counts formats without autoSelect too. */
export function runtimeSupportsModel(spec: ServingRuntimeSpec, format: ModelFormat, explicit: boolean): boolean {
  const labels = new Set<string>();
  for (const f of spec.supportedModelFormats ?? []) {
    if (!explicit && f.autoSelect !== true) continue;
    labels.add(`mt:${f.name}`);
    if (f.version !== undefined && f.version !== null) labels.add(`mt:${f.name}:${f.version}`);
  }
  return labels.has(modelLabel(format));
}

/** The priority of the first listed format with the model's name. */
function priorityOf(spec: ServingRuntimeSpec, name: string): number | undefined {
  const f = (spec.supportedModelFormats ?? []).find((s) => s.name === name);
  return typeof f?.priority === 'number' ? f.priority : undefined;
}

function created(r: ServingRuntime | ClusterServingRuntime): number {
  const t = r.metadata.creationTimestamp ? Date.parse(r.metadata.creationTimestamp) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

function sortCandidates<T extends ServingRuntime | ClusterServingRuntime>(list: T[], formatName: string): T[] {
  const byAge = [...list].sort((a, b) => {
    const pa = protocolSortKey(a.spec);
    const pb = protocolSortKey(b.spec);
    if (pa !== pb) return pa - pb;
    const ca = created(a);
    const cb = created(b);
    if (ca !== cb) return cb - ca;
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
  // Array.prototype.sort is stable: equal priorities keep the order above
  return byAge.sort((a, b) => {
    const pa = priorityOf(a.spec, formatName);
    const pb = priorityOf(b.spec, formatName);
    if (pa === undefined && pb === undefined) return 0;
    if (pa === undefined) return 1;
    if (pb === undefined) return -1;
    return pb - pa;
  });
}

function hasWorkerSpec(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Picks the runtime for an InferenceService whose predictor is a `model` (after defaulting). */
export function selectRuntime(isvc: InferenceService, namespaceRuntimes: ServingRuntime[], clusterRuntimes: ClusterServingRuntime[]): RuntimeSelection {
  const predictor = isvc.spec?.predictor;
  const model: ModelSpec | undefined = predictor?.model;
  if (!model || typeof model.modelFormat?.name !== 'string' || model.modelFormat.name === '') {
    return { ok: false, reason: 'InvalidPredictorSpec', message: 'the predictor has no model with a modelFormat.name, so no runtime can be selected' };
  }
  const format: ModelFormat = model.modelFormat.version !== undefined && model.modelFormat.version !== null
    ? { name: model.modelFormat.name, version: model.modelFormat.version }
    : { name: model.modelFormat.name };
  const requested = model.protocolVersion;
  if (requested !== undefined && requested !== null && !isProtocol(requested)) {
    return { ok: false, reason: 'InvalidPredictorSpec', message: `protocolVersion "${String(requested)}" is not one of v1, v2, grpc-v1, grpc-v2` };
  }
  const wanted: ServingProtocol = requested ?? 'v1';
  const namespace = isvc.metadata.namespace;
  const local = namespaceRuntimes.filter((r) => !namespace || !r.metadata.namespace || r.metadata.namespace === namespace);
  const pick = (runtime: ServingRuntime | ClusterServingRuntime, kind: RuntimeKind): RuntimeSelection => ({
    ok: true,
    runtime,
    kind,
    protocol: requested ?? lowestProtocol(runtime.spec) ?? 'v1',
    modelFormat: format,
  });

  if (typeof model.runtime === 'string' && model.runtime !== '') {
    const name = model.runtime;
    let found: [ServingRuntime | ClusterServingRuntime, RuntimeKind] | undefined;
    const ns = local.find((r) => r.metadata.name === name);
    const cluster = clusterRuntimes.find((r) => r.metadata.name === name);
    if (ns) found = [ns, 'ServingRuntime'];
    else if (cluster) found = [cluster, 'ClusterServingRuntime'];
    if (!found) return { ok: false, reason: 'RuntimeNotRecognized', message: `Waiting for runtime to become available: no ServingRuntime or ClusterServingRuntime named "${name}"` };
    const [runtime, kind] = found;
    if (runtime.spec.disabled === true) return { ok: false, reason: 'RuntimeDisabled', message: `Specified runtime ${name} is disabled` };
    if (requested !== undefined && requested !== null && !runtimeSupportsProtocol(runtime.spec, requested)) {
      return { ok: false, reason: 'NoSupportingRuntime', message: `Specified runtime ${name} does not support specified protocol version ${requested}` };
    }
    if (!runtimeSupportsModel(runtime.spec, format, true)) {
      return { ok: false, reason: 'NoSupportingRuntime', message: `Specified runtime ${name} does not support specified framework/version ${format.name}${format.version ? `/${format.version}` : ''}` };
    }
    return pick(runtime, kind);
  }

  const multiNode = hasWorkerSpec(predictor?.workerSpec);
  const eligible = (spec: ServingRuntimeSpec): boolean =>
    spec.disabled !== true &&
    spec.multiModel !== true &&
    hasWorkerSpec(spec.workerSpec) === multiNode &&
    runtimeSupportsModel(spec, format, false) &&
    runtimeSupportsProtocol(spec, wanted);
  const first = sortCandidates(local.filter((r) => eligible(r.spec)), format.name)[0];
  if (first) return pick(first, 'ServingRuntime');
  const cluster = sortCandidates(clusterRuntimes.filter((r) => eligible(r.spec)), format.name)[0];
  if (cluster) return pick(cluster, 'ClusterServingRuntime');
  return {
    ok: false,
    reason: 'NoSupportingRuntime',
    message: `No runtime found to support specified framework/version: ${format.name}${format.version ? `/${format.version}` : ''} with protocol ${wanted}`,
  };
}

/**
 * Renders a runtime container's argument (or env value) as KServe does: a Go template over the
 * InferenceService's metadata. `{{.Name}}`, `{{.Namespace}}`, `{{.Labels.x}}`,
 * `{{.Annotations.x}}` and `{{index .Labels "x"}}` are understood; a missing label or annotation
 * renders as Go's `<no value>`. Anything else is left as written.
 */
export function renderRuntimeArgs(template: string, isvc: { metadata: ObjectMeta }): string {
  const meta = isvc.metadata;
  const mapLookup = (map: string, key: string): string | undefined => {
    const m = map === 'Labels' ? meta.labels : meta.annotations;
    const v = m?.[key];
    return v === undefined ? '<no value>' : v;
  };
  return template.replace(/\{\{-?\s*([^{}]*?)\s*-?\}\}/g, (whole, expr: string) => {
    if (expr === '.Name') return meta.name ?? '';
    if (expr === '.Namespace') return meta.namespace ?? '';
    let m = /^\.(Labels|Annotations)\.([A-Za-z0-9_]+)$/.exec(expr);
    if (m) return mapLookup(m[1] as string, m[2] as string) ?? whole;
    m = /^index\s+\.(Labels|Annotations)\s+"([^"]*)"$/.exec(expr);
    if (m) return mapLookup(m[1] as string, m[2] as string) ?? whole;
    return whole;
  });
}
