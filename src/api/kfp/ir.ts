// PipelineSpec IR (kfp api/v2alpha1/pipeline_spec.proto, schemaVersion 2.1.0) as the kfp SDK
// emits it: the protojson (camelCase) form, in YAML or JSON, optionally followed by a second YAML
// document holding the PlatformSpec (`platforms: {kubernetes: ...}`).
// Types are deliberately open (index signatures): the SDK adds fields over time and we keep them.
import type { Document } from 'yaml';
import { quickYamlDocuments, yamlLibrary } from '../../util/yaml.js';
import { ApiError, StatusReason, type FieldError } from '../errors.js';
import { isPlainObject } from '../../util/objects.js';

export const PARAMETER_TYPES = [
  'NUMBER_DOUBLE',
  'NUMBER_INTEGER',
  'STRING',
  'BOOLEAN',
  'LIST',
  'STRUCT',
  'TASK_FINAL_STATUS',
  'TASK_CONFIG',
] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export interface ParameterSpec {
  parameterType: ParameterType | string;
  defaultValue?: unknown;
  isOptional?: boolean;
  description?: string;
  /** allowed values */
  literals?: unknown[];
  [k: string]: unknown;
}

export interface ArtifactTypeSchema {
  schemaTitle?: string;
  schemaVersion?: string;
  instanceSchema?: string;
  schemaUri?: string;
  [k: string]: unknown;
}

export interface ArtifactSpec {
  artifactType: ArtifactTypeSchema;
  isArtifactList?: boolean;
  isOptional?: boolean;
  description?: string;
  /** output artifacts only */
  metadata?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface IODefinitions {
  parameters?: Record<string, ParameterSpec>;
  artifacts?: Record<string, ArtifactSpec>;
  [k: string]: unknown;
}

export interface TaskOutputParameterRef {
  producerTask: string;
  outputParameterKey: string;
}
export interface TaskOutputArtifactRef {
  producerTask: string;
  outputArtifactKey: string;
}

/** oneof componentInputParameter | taskOutputParameter | runtimeValue | taskFinalStatus, plus a selector */
export interface TaskInputParameter {
  componentInputParameter?: string;
  taskOutputParameter?: TaskOutputParameterRef;
  runtimeValue?: { constant?: unknown; [k: string]: unknown };
  taskFinalStatus?: { producerTask: string };
  /** CEL, e.g. `parseJson(string_value)["B_b"]` */
  parameterExpressionSelector?: string;
  [k: string]: unknown;
}

export interface TaskInputArtifact {
  componentInputArtifact?: string;
  taskOutputArtifact?: TaskOutputArtifactRef;
  [k: string]: unknown;
}

export interface TaskInputs {
  parameters?: Record<string, TaskInputParameter>;
  artifacts?: Record<string, TaskInputArtifact>;
  [k: string]: unknown;
}

export type TriggerStrategy = 'ALL_UPSTREAM_TASKS_SUCCEEDED' | 'ALL_UPSTREAM_TASKS_COMPLETED' | 'TRIGGER_STRATEGY_UNSPECIFIED';

export interface ParameterIterator {
  /** `raw` is a JSON *string*; `inputParameter` names one of the task's input parameters */
  items: { raw?: string; inputParameter?: string; [k: string]: unknown };
  itemInput: string;
  [k: string]: unknown;
}
export interface ArtifactIterator {
  items: { inputArtifact?: string; [k: string]: unknown };
  itemInput: string;
  [k: string]: unknown;
}

export interface RetryPolicy {
  maxRetryCount?: number;
  /** protojson durations, e.g. "0s", "3600s" */
  backoffDuration?: string;
  backoffFactor?: number;
  backoffMaxDuration?: string;
  [k: string]: unknown;
}

export interface PipelineTaskSpec {
  taskInfo?: { name?: string; [k: string]: unknown };
  componentRef: { name: string; [k: string]: unknown };
  dependentTasks?: string[];
  inputs?: TaskInputs;
  /** `{}` means caching off */
  cachingOptions?: { enableCache?: boolean; cacheKey?: string; [k: string]: unknown };
  triggerPolicy?: { condition?: string; strategy?: TriggerStrategy | string; [k: string]: unknown };
  parameterIterator?: ParameterIterator;
  artifactIterator?: ArtifactIterator;
  iteratorPolicy?: { parallelismLimit?: number; [k: string]: unknown };
  retryPolicy?: RetryPolicy;
  [k: string]: unknown;
}

export interface DagOutputParameterSpec {
  valueFromParameter?: { producerSubtask: string; outputParameterKey: string };
  valueFromOneof?: { parameterSelectors: { producerSubtask: string; outputParameterKey: string }[] };
  [k: string]: unknown;
}
export interface DagOutputArtifactSpec {
  /** one selector = plain output; several = take the branch that ran (dsl.OneOf) */
  artifactSelectors: { producerSubtask: string; outputArtifactKey: string }[];
  [k: string]: unknown;
}

export interface DagSpec {
  tasks?: Record<string, PipelineTaskSpec>;
  outputs?: {
    parameters?: Record<string, DagOutputParameterSpec>;
    artifacts?: Record<string, DagOutputArtifactSpec>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** oneof implementation: `dag` | `executorLabel` */
export interface ComponentSpec {
  inputDefinitions?: IODefinitions;
  outputDefinitions?: IODefinitions;
  dag?: DagSpec;
  executorLabel?: string;
  [k: string]: unknown;
}

export interface ContainerResources {
  /** deprecated doubles (cpu cores, memory in GB), still emitted */
  cpuLimit?: number;
  memoryLimit?: number;
  cpuRequest?: number;
  memoryRequest?: number;
  /** strings; may be placeholders */
  resourceCpuLimit?: string;
  resourceMemoryLimit?: string;
  resourceCpuRequest?: string;
  resourceMemoryRequest?: string;
  /** int64 → protojson string: `count: '1'` */
  accelerator?: { type?: string; count?: string | number; resourceType?: string; resourceCount?: string | number; [k: string]: unknown };
  [k: string]: unknown;
}

export interface PipelineContainerSpec {
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; [k: string]: unknown }[];
  resources?: ContainerResources;
  lifecycle?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface ImporterSpec {
  artifactUri?: { constant?: unknown; runtimeParameter?: string; [k: string]: unknown };
  typeSchema?: ArtifactTypeSchema;
  metadata?: Record<string, unknown>;
  reimport?: boolean;
  downloadToWorkspace?: boolean;
  [k: string]: unknown;
}

export interface ExecutorSpec {
  container?: PipelineContainerSpec;
  importer?: ImporterSpec;
  resolver?: Record<string, unknown>;
  customJob?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface PipelineSpec {
  pipelineInfo: { name: string; displayName?: string; description?: string; [k: string]: unknown };
  root: ComponentSpec;
  components?: Record<string, ComponentSpec>;
  deploymentSpec?: { executors?: Record<string, ExecutorSpec>; [k: string]: unknown };
  schemaVersion?: string;
  sdkVersion?: string;
  defaultPipelineRoot?: string;
}

/** kfp-kubernetes `KubernetesExecutorConfig`, keyed by executor label; kept open. */
export type KubernetesExecutorConfig = Record<string, unknown>;

export interface PlatformSpec {
  platforms: {
    kubernetes?: {
      deploymentSpec?: { executors?: Record<string, KubernetesExecutorConfig>; [k: string]: unknown };
      pipelineConfig?: Record<string, unknown>;
      [k: string]: unknown;
    };
    [k: string]: unknown;
  };
}

/** Top-level PipelineSpec fields (the backend's protojson unmarshal rejects any other). */
export const PIPELINE_SPEC_FIELDS = ['pipelineInfo', 'deploymentSpec', 'sdkVersion', 'schemaVersion', 'components', 'root', 'defaultPipelineRoot'] as const;

/** A rejected upload: an `Invalid` ApiError that also exposes its FieldErrors. */
export class PipelineSpecError extends ApiError {
  readonly errors: FieldError[];
  constructor(name: string, errors: FieldError[]) {
    const base = ApiError.invalid('Pipeline', 'pipelines.kubeflow.org', name, errors);
    super(StatusReason.Invalid, base.message, base.details);
    this.name = 'PipelineSpecError';
    this.errors = errors;
  }
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Some upstream golden files (hand-reindented, `  - ` sequence style) continue a multi-line quoted
 * scalar at the column of its `- `; PyYAML and go-yaml accept that, the `yaml` package does not.
 * Leading whitespace on a quoted scalar's continuation line is not content, so indenting those lines
 * further is meaning-preserving. Only used as a fallback when the strict parse fails.
 */
export function reindentQuotedContinuations(text: string): string {
  const lines = text.split('\n');
  let quote: '"' | "'" | null = null;
  let minIndent = 0;
  // returns true when the scalar is still open at the end of `s`
  const scan = (s: string, q: '"' | "'"): boolean => {
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (q === '"' && c === '\\') {
        i++;
        continue;
      }
      if (c === q) {
        if (q === "'" && s[i + 1] === "'") {
          i++;
          continue;
        }
        return false;
      }
    }
    return true;
  };
  const start = /^(\s*)(?:-\s+)*(?:[^\s'"#-][^#]*?:\s+)?(["'])(.*)$/;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (quote) {
      const indent = line.length - line.trimStart().length;
      if (line.trim() !== '' && indent < minIndent) lines[i] = ' '.repeat(minIndent) + line.trimStart();
      if (!scan(line.trimStart(), quote)) quote = null;
      continue;
    }
    const m = start.exec(line);
    if (!m) continue;
    const q = m[2] as '"' | "'";
    if (scan(m[3] ?? '', q)) {
      quote = q;
      minIndent = (m[1] ?? '').length + 2;
    }
  }
  return lines.join('\n');
}

function parseYamlDocs(text: string): { docs: unknown[] } | { error: FieldError } {
  const quick = quickYamlDocuments(text);
  if (quick) return { docs: quick.filter((d) => d !== null && d !== undefined) };
  const attempt = (t: string): { docs: Document.Parsed[]; firstError?: { message: string; line: number } } => {
    const docs = yamlLibrary().parseAllDocuments(t, { prettyErrors: false });
    if (!Array.isArray(docs)) return { docs: [] }; // EmptyStream
    for (const d of docs) {
      const e = d.errors[0];
      if (e) return { docs, firstError: { message: e.message.split('\n')[0] ?? e.message, line: lineOf(t, e.pos[0]) } };
    }
    return { docs };
  };
  let r = attempt(text);
  if (r.firstError) {
    const repaired = attempt(reindentQuotedContinuations(text));
    if (!repaired.firstError) r = repaired;
  }
  if (r.firstError) {
    return { error: { field: '', type: 'FieldValueInvalid', message: `invalid YAML at line ${r.firstError.line}: ${r.firstError.message}` } };
  }
  return { docs: r.docs.map((d) => d.toJS({ maxAliasCount: 1000 }) as unknown).filter((d) => d !== null && d !== undefined) };
}

/** Structural checks that make the value usable as a PipelineSpec; the rest is ir-validate.ts. */
export function checkPipelineSpecShape(v: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const add = (field: string, type: string, message: string): void => {
    errs.push({ field, type, message });
  };
  if (!isPlainObject(v)) {
    add('', 'FieldValueTypeInvalid', 'not a PipelineSpec: expected a mapping at the top level');
    return errs;
  }
  for (const k of Object.keys(v)) {
    if (!(PIPELINE_SPEC_FIELDS as readonly string[]).includes(k)) {
      add(k, 'FieldValueNotSupported', `unknown PipelineSpec field "${k}": supported fields: ${PIPELINE_SPEC_FIELDS.join(', ')}`);
    }
  }
  if (!isPlainObject(v.pipelineInfo)) add('pipelineInfo', 'FieldValueRequired', 'Required value');
  else if (typeof v.pipelineInfo.name !== 'string' || v.pipelineInfo.name === '') add('pipelineInfo.name', 'FieldValueRequired', 'Required value: pipeline name');
  if (!isPlainObject(v.root)) add('root', 'FieldValueRequired', 'Required value: root component');
  else if (!isPlainObject(v.root.dag)) add('root.dag', 'FieldValueRequired', 'Required value: the root component must be a dag');
  for (const k of ['components', 'deploymentSpec'] as const) {
    if (v[k] !== undefined && !isPlainObject(v[k])) add(k, 'FieldValueTypeInvalid', 'expected a mapping');
  }
  if (isPlainObject(v.deploymentSpec) && v.deploymentSpec.executors !== undefined && !isPlainObject(v.deploymentSpec.executors)) {
    add('deploymentSpec.executors', 'FieldValueTypeInvalid', 'expected a mapping');
  }
  if (v.schemaVersion !== undefined && typeof v.schemaVersion !== 'string') add('schemaVersion', 'FieldValueTypeInvalid', 'expected a string');
  return errs;
}

/**
 * Parses an uploaded pipeline file: YAML (PipelineSpec, optionally `---` PlatformSpec) or JSON
 * (a PipelineSpec, or `{pipeline_spec, platform_spec}` as the REST API wraps them).
 * Throws PipelineSpecError for an empty file, invalid YAML/JSON, or a value that is not a PipelineSpec.
 */
export function parsePipelineFile(text: string, fileName?: string): { spec: PipelineSpec; platform?: PlatformSpec } {
  const name = fileName ?? '';
  const fail = (errors: FieldError[]): never => {
    throw new PipelineSpecError(name, errors);
  };
  const body = text.replace(/^\uFEFF/, '');
  let docs: unknown[];
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      docs = [JSON.parse(body) as unknown];
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      const pos = /position (\d+)/.exec(msg);
      const where = pos ? ` at line ${lineOf(body, Number(pos[1]))}` : '';
      return fail([{ field: '', type: 'FieldValueInvalid', message: `invalid JSON${where}: ${msg}` }]);
    }
    const only = docs[0];
    if (isPlainObject(only) && isPlainObject(only.pipeline_spec)) {
      docs = [only.pipeline_spec, ...(isPlainObject(only.platform_spec) ? [only.platform_spec] : [])];
    }
  } else {
    const r = parseYamlDocs(body);
    if ('error' in r) return fail([r.error]);
    docs = r.docs;
  }
  if (docs.length === 0) return fail([{ field: '', type: 'FieldValueRequired', message: 'empty pipeline file: no PipelineSpec document' }]);
  if (docs.length > 2) return fail([{ field: '', type: 'FieldValueInvalid', message: `expected at most 2 YAML documents (PipelineSpec, PlatformSpec), found ${docs.length}` }]);
  const errs = checkPipelineSpecShape(docs[0]);
  let platform: PlatformSpec | undefined;
  if (docs.length === 2) {
    const p = docs[1];
    if (!isPlainObject(p) || !isPlainObject(p.platforms)) errs.push({ field: 'platforms', type: 'FieldValueRequired', message: 'second document must be a PlatformSpec with `platforms`' });
    else platform = p as PlatformSpec;
  }
  if (errs.length > 0) {
    const n = isPlainObject(docs[0]) && isPlainObject(docs[0].pipelineInfo) && typeof docs[0].pipelineInfo.name === 'string' ? docs[0].pipelineInfo.name : name;
    throw new PipelineSpecError(n, errs);
  }
  const spec = docs[0] as PipelineSpec;
  return platform ? { spec, platform } : { spec };
}
