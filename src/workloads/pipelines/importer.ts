// dsl.importer: a task with no Pod that makes an artifact out of a URI (a constant or one of its
// input parameters), with metadata whose keys and values may hold `{{$.inputs.parameters['x']}}`.
import type { RunArtifact, RunOutputs } from '../../api/pipelines.js';
import type { ImporterSpec } from '../../api/kfp/ir.js';

const PARAM = /\{\{\$\.inputs\.parameters\[(?:'([^']*)'|"([^"]*)")\]\}\}/g;
const WHOLE = /^\{\{\$\.inputs\.parameters\[(?:'([^']*)'|"([^"]*)")\]\}\}$/;

function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A value as the backend renders importer metadata: a whole placeholder keeps the value's type. */
export function resolveImporterValue(v: unknown, params: Record<string, unknown>, where: string): unknown {
  const lookup = (name: string): unknown => {
    if (!(name in params)) throw new Error(`${where}: input parameter ${name} has no value`);
    return params[name];
  };
  if (typeof v === 'string') {
    const whole = WHOLE.exec(v);
    if (whole) return lookup(whole[1] ?? whole[2] ?? '');
    return v.replace(PARAM, (_m, a: string | undefined, b: string | undefined) => text(lookup(a ?? b ?? '')));
  }
  if (Array.isArray(v)) return v.map((x, i) => resolveImporterValue(x, params, `${where}[${i}]`));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[text(resolveImporterValue(k, params, `${where} key ${k}`))] = resolveImporterValue(x, params, `${where}.${k}`);
    return out;
  }
  return v;
}

/** The importer's one output, `artifact`. */
export function importArtifact(spec: ImporterSpec, inputs: RunOutputs): RunOutputs {
  let uri: unknown;
  if (spec.artifactUri?.runtimeParameter !== undefined) {
    uri = inputs.parameters[spec.artifactUri.runtimeParameter];
    if (uri === undefined) throw new Error(`importer: artifactUri.runtimeParameter ${spec.artifactUri.runtimeParameter} has no value`);
  } else uri = spec.artifactUri?.constant;
  if (typeof uri !== 'string' || uri === '') throw new Error(`importer: artifactUri must be a non-empty string, got ${JSON.stringify(uri)}`);
  const metadata = resolveImporterValue(spec.metadata ?? {}, inputs.parameters, 'importer metadata') as Record<string, unknown>;
  const art: RunArtifact = { name: 'artifact', uri, type: { ...(spec.typeSchema ?? { schemaTitle: 'system.Artifact' }) }, metadata };
  return { parameters: {}, artifacts: { artifact: [art] } };
}
