/**
 * Builds the KFP v2 `ExecutorInput` JSON for one container task, the way the KFP
 * driver (`provisionOutputs`) and launcher (`LocalPathForURI`) do.
 *
 * Pure module: objects in, objects (or errors) out. The IR types are declared
 * locally (minimal structural interfaces) so this compiles on its own.
 *
 * Local pipeline root (Skiff decision): a pipeline root that is a local directory
 * is written as a plain absolute path (no `file://` scheme), and every artifact
 * URI under it is a plain absolute path too. Its local path is the URI itself.
 * This is exactly what kfp.local does, and what the Python SDK expects
 * (`Artifact._get_path`: an unknown scheme means `path == uri`), so unmodified
 * components need no `/gcs`, `/s3`, `/minio` mounts. A `file://` root is accepted
 * and normalised to the plain path before any URI is built.
 */
import { isPlainObject } from '../../util/objects.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type ParameterType =
  | 'STRING'
  | 'NUMBER_INTEGER'
  | 'NUMBER_DOUBLE'
  | 'BOOLEAN'
  | 'LIST'
  | 'STRUCT'
  | 'TASK_FINAL_STATUS';

export interface ArtifactTypeSchema {
  schemaTitle?: string;
  schemaVersion?: string;
  instanceSchema?: string;
}

/** `RuntimeArtifact` as protojson (camelCase) renders it. */
export interface RuntimeArtifact {
  name: string;
  type: ArtifactTypeSchema;
  uri: string;
  metadata: JsonObject;
  /** Overrides the local path derived from the uri (launcher `custom_path`). */
  customPath?: string;
}

export interface ArtifactList {
  artifacts: RuntimeArtifact[];
}

export interface ExecutorInput {
  inputs: {
    parameterValues: Record<string, JsonValue>;
    artifacts: Record<string, ArtifactList>;
  };
  outputs: {
    parameters: Record<string, { outputFile: string }>;
    artifacts: Record<string, ArtifactList>;
    outputFile: string;
  };
}

export interface InputParameterArg {
  /** `undefined` = no value (optional input): omitted from `parameterValues`, as the driver does. */
  value: JsonValue | undefined;
  parameterType: ParameterType;
}

export interface InputArtifactArg {
  name: string;
  uri: string;
  metadata?: JsonObject;
  schemaTitle?: string;
  schemaVersion?: string;
}

export interface OutputArtifactSpec {
  schemaTitle: string;
  schemaVersion?: string;
  /** Accepted for completeness; the launcher provisions one artifact either way. */
  isArtifactList?: boolean;
  /** `outputDefinitions.artifacts[x].metadata`, copied onto the provisioned artifact. */
  metadata?: JsonObject;
}

export interface BuildExecutorInputArgs {
  parameters?: Record<string, InputParameterArg>;
  inputArtifacts?: Record<string, InputArtifactArg[]>;
  outputArtifacts?: Record<string, OutputArtifactSpec>;
  /**
   * Where output artifacts live: either the task root URI (the output's uri is
   * `<taskRoot>/<outputName>`, see `taskRootUri`) or a function giving each uri.
   * Required only when there are output artifacts.
   */
  outputArtifactUri?: string | ((outputName: string) => string);
  /** Output parameter name → file the component writes (backend: `/tmp/kfp/outputs/<name>`). */
  outputParameterFiles?: Record<string, string>;
  /** Local path of the executor output JSON (backend: `<taskRoot local path>/output_metadata.json`). */
  executorOutputFile: string;
}

export class ExecutorInputError extends Error {
  override name = 'ExecutorInputError';
}

/** Strips `file://` from a local root; other roots are returned unchanged. */
export function normalizePipelineRoot(root: string): string {
  if (root.startsWith('file://')) {
    const rest = root.slice('file://'.length);
    // file:///abs/path → /abs/path ; file://host/path is not supported
    if (!rest.startsWith('/')) throw new ExecutorInputError(`unsupported file URI pipeline root ${JSON.stringify(root)}: expected file:///absolute/path`);
    return rest;
  }
  return root;
}

function posixJoin(parts: string[]): string {
  // path.Join semantics for the parts below the root: clean, no empty segments.
  const segs: string[] = [];
  for (const p of parts) {
    for (const s of p.split('/')) {
      if (s === '' || s === '.') continue;
      if (s === '..') segs.pop();
      else segs.push(s);
    }
  }
  return segs.join('/');
}

/**
 * `GenerateOutputURI`: `fmt.Sprintf("%s/%s", strings.TrimRight(root, "/"), path.Join(paths...))`;
 * the query string of the root (e.g. `minio://b/p?region=x`) is dropped for outputs.
 */
export function joinUri(root: string, ...paths: string[]): string {
  let base = normalizePipelineRoot(root);
  const q = base.indexOf('?');
  if (q >= 0) base = base.slice(0, q);
  base = base.replace(/\/+$/, '');
  return `${base}/${posixJoin(paths)}`;
}

export interface TaskRootArgs {
  pipelineRoot: string;
  pipelineName: string;
  runId: string;
  taskName: string;
  /** The backend uses a fresh uuid4 per execution; Skiff may use the execution id. */
  executionId: string;
}

/** `<root>/<pipeline>/<run>/<task>/<executionId>` */
export function taskRootUri(a: TaskRootArgs): string {
  return joinUri(a.pipelineRoot, a.pipelineName, a.runId, a.taskName, a.executionId);
}

/**
 * Launcher `LocalPathForURI` plus Skiff's local-root rule:
 * `gs://b/k` → `/gcs/b/k`, `s3://b/k` → `/s3/b/k`, `minio://b/k` → `/minio/b/k`,
 * `oci://reg/img:tag` → `/oci/reg_img:tag/models`, an absolute path → itself,
 * `file:///p` → `/p`. Anything else is an error.
 */
export function localPathForUri(uri: string): string {
  if (uri.startsWith('gs://')) return '/gcs/' + uri.slice('gs://'.length);
  if (uri.startsWith('minio://')) return '/minio/' + uri.slice('minio://'.length);
  if (uri.startsWith('s3://')) return '/s3/' + uri.slice('s3://'.length);
  if (uri.startsWith('oci://')) return '/oci/' + uri.slice('oci://'.length).replaceAll('/', '_') + '/models';
  if (uri.startsWith('file://')) return normalizePipelineRoot(uri);
  if (uri.startsWith('/')) return uri;
  throw new ExecutorInputError(`failed to generate local path for URI ${JSON.stringify(uri)}: unsupported storage scheme`);
}

/** Local path of a runtime artifact: `customPath` wins, else derived from the uri. */
export function artifactLocalPath(a: Pick<RuntimeArtifact, 'uri' | 'customPath'>): string {
  if (a.customPath !== undefined && a.customPath !== '') return a.customPath;
  return localPathForUri(a.uri);
}

/** Go `strconv.FormatFloat(v, 'f', -1, 64)`: shortest round-trip digits, never an exponent. */
export function formatFloatF(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (Object.is(n, -0)) return '-0';
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const sign = m[1] ?? '';
  const digits = (m[2] ?? '') + (m[3] ?? '');
  const exp = Number(m[4]) - (m[3] ?? '').length; // value = digits * 10^exp
  if (exp >= 0) return sign + digits + '0'.repeat(exp);
  const point = digits.length + exp;
  if (point > 0) return sign + digits.slice(0, point) + '.' + digits.slice(point);
  return sign + '0.' + '0'.repeat(-point) + digits;
}

/**
 * Go `PbValueToText` (driver and launcher): string raw, number `FormatFloat('f', -1)`,
 * bool `true`/`false`, list/struct compact JSON, null → "".
 */
export function parameterValueToText(v: JsonValue): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatFloatF(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return JSON.stringify(v);
}

/**
 * Driver type check of a resolved input value against its declared type.
 * STRING inputs given non-strings are converted to text; other mismatches are errors.
 */
export function checkParameterValue(name: string, value: JsonValue, type: ParameterType): JsonValue {
  if (value === null) return null;
  const bad = (): never => {
    throw new ExecutorInputError(`input parameter ${JSON.stringify(name)}: value ${JSON.stringify(value)} does not match declared type ${type}`);
  };
  switch (type) {
    case 'STRING':
      return typeof value === 'string' ? value : parameterValueToText(value);
    case 'NUMBER_INTEGER':
      if (typeof value !== 'number' || !Number.isInteger(value)) return bad();
      return value;
    case 'NUMBER_DOUBLE':
      if (typeof value !== 'number' || !Number.isFinite(value)) return bad();
      return value;
    case 'BOOLEAN':
      if (typeof value !== 'boolean') return bad();
      return value;
    case 'LIST':
      if (!Array.isArray(value)) return bad();
      return value;
    case 'STRUCT':
    case 'TASK_FINAL_STATUS':
      if (!isPlainObject(value)) return bad();
      return value;
    default:
      throw new ExecutorInputError(`input parameter ${JSON.stringify(name)}: unknown parameter type ${String(type)}`);
  }
}

export function buildExecutorInput(args: BuildExecutorInputArgs): ExecutorInput {
  const parameterValues: Record<string, JsonValue> = {};
  for (const [name, p] of Object.entries(args.parameters ?? {})) {
    if (p.value === undefined) continue; // optional input without a value: omitted
    parameterValues[name] = checkParameterValue(name, p.value, p.parameterType);
  }

  const inArtifacts: Record<string, ArtifactList> = {};
  for (const [name, list] of Object.entries(args.inputArtifacts ?? {})) {
    inArtifacts[name] = {
      artifacts: list.map((a) => {
        if (typeof a.uri !== 'string' || a.uri === '') {
          throw new ExecutorInputError(`input artifact ${JSON.stringify(name)}: missing uri`);
        }
        const type: ArtifactTypeSchema = {};
        if (a.schemaTitle !== undefined) type.schemaTitle = a.schemaTitle;
        if (a.schemaVersion !== undefined) type.schemaVersion = a.schemaVersion;
        return { name: a.name, type, uri: a.uri, metadata: { ...(a.metadata ?? {}) } };
      }),
    };
  }

  const outArtifacts: Record<string, ArtifactList> = {};
  const outSpecs = Object.entries(args.outputArtifacts ?? {});
  if (outSpecs.length > 0 && args.outputArtifactUri === undefined) {
    throw new ExecutorInputError('outputArtifactUri is required when the task has output artifacts');
  }
  for (const [name, spec] of outSpecs) {
    const base = args.outputArtifactUri;
    const uri = typeof base === 'function' ? base(name) : joinUri(base ?? '', name);
    const type: ArtifactTypeSchema = { schemaTitle: spec.schemaTitle };
    if (spec.schemaVersion !== undefined) type.schemaVersion = spec.schemaVersion;
    outArtifacts[name] = { artifacts: [{ name, type, uri, metadata: { ...(spec.metadata ?? {}) } }] };
  }

  const outParams: Record<string, { outputFile: string }> = {};
  for (const [name, file] of Object.entries(args.outputParameterFiles ?? {})) {
    outParams[name] = { outputFile: file };
  }

  if (typeof args.executorOutputFile !== 'string' || args.executorOutputFile === '') {
    throw new ExecutorInputError('executorOutputFile is required');
  }

  return {
    inputs: { parameterValues, artifacts: inArtifacts },
    outputs: { parameters: outParams, artifacts: outArtifacts, outputFile: args.executorOutputFile },
  };
}
