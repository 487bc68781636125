/**
 * Resolves KFP v2 command/args placeholders for one container task.
 *
 * Pure module. Semantics follow the KFP driver (`resolveContainerArgs`: IfPresent) and
 * launcher (`compileCmdAndArgs`/`getPlaceholders`), with the backend's gaps filled the way
 * the SDK/kfp.local/Vertex define them (Concat, `.metadata`, `{{$.outputs.output_file}}`,
 * bare `{{$.inputs.artifacts['x']}}`). See the comments on each rule.
 */
import { isPlainObject } from '../../util/objects.js';
import {
  artifactLocalPath,
  parameterValueToText,
  type ExecutorInput,
  type JsonValue,
  type RuntimeArtifact,
} from './executor-input.js';

/** Minimal structural view of a component's `inputDefinitions` (IR). */
export interface InputDefinitionsLike {
  parameters?: Record<string, { parameterType?: string; defaultValue?: JsonValue; isOptional?: boolean }>;
  artifacts?: Record<string, { isOptional?: boolean; isArtifactList?: boolean }>;
}

/**
 * What a plain `{{$.inputs...}}` placeholder of a declared input with no value and no
 * default renders as. The KFP backend leaves the placeholder text untouched ('verbatim',
 * the default); kfp.local renders 'null'.
 */
export type AbsentInputPolicy = 'verbatim' | 'null' | 'empty';

export interface PlaceholderContext {
  executorInput: ExecutorInput;
  /** Used for default values (launcher `addDefaultParams`) and to tell absent optional inputs from unknown ones. */
  inputDefinitions?: InputDefinitionsLike;
  pipelineJobName?: string;
  pipelineJobResourceName?: string;
  pipelineJobUuid?: string;
  pipelineTaskName?: string;
  pipelineTaskUuid?: string;
  pipelineRoot?: string;
  workspacePath?: string;
  absentInput?: AbsentInputPolicy;
}

export class PlaceholderError extends Error {
  override name = 'PlaceholderError';
}

const PLACEHOLDER_RE = /\{\{\$(?:\.[^{}]*?)?\}\}/g;
const KEY = String.raw`\[(?:'([^']*)'|"([^"]*)")\]`;
const RE_IN_PARAM = new RegExp(String.raw`^\.inputs\.parameters${KEY}$`);
const RE_IN_ART = new RegExp(String.raw`^\.inputs\.artifacts${KEY}(?:\.(uri|path|metadata))?$`);
const RE_OUT_PARAM = new RegExp(String.raw`^\.outputs\.parameters${KEY}\.output_file$`);
const RE_OUT_ART = new RegExp(String.raw`^\.outputs\.artifacts${KEY}(?:\.(uri|path|metadata))?$`);

const PIPELINE_FIELDS: Record<string, keyof PlaceholderContext> = {
  '.pipeline_job_name': 'pipelineJobName',
  '.pipeline_job_resource_name': 'pipelineJobResourceName',
  '.pipeline_job_uuid': 'pipelineJobUuid',
  '.pipeline_task_name': 'pipelineTaskName',
  '.pipeline_task_uuid': 'pipelineTaskUuid',
  '.pipeline_root': 'pipelineRoot',
  '.workspace_path': 'workspacePath',
};

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function pipelineValue(expr: string, ctx: PlaceholderContext): string | undefined {
  const field = PIPELINE_FIELDS[expr];
  if (field === undefined) return undefined;
  const v = ctx[field];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The ExecutorInput the container sees through `{{$}}`: a copy with
 * (1) component defaults added for parameters with no value (launcher `addDefaultParams`), and
 * (2) placeholders embedded in string parameter values (SDK f-strings, `{{$.pipeline_*}}`
 *     constants) substituted — the backend gets this by textual replacement; unknown or
 *     unavailable ones are left as they are, since values are data.
 */
export function effectiveExecutorInput(ctx: PlaceholderContext): ExecutorInput {
  const ei = clone(ctx.executorInput);
  const values = ei.inputs.parameterValues;
  for (const [name, def] of Object.entries(ctx.inputDefinitions?.parameters ?? {})) {
    if (values[name] === undefined && def.defaultValue !== undefined) values[name] = clone(def.defaultValue);
  }
  const snapshot = { ...values };
  for (const [name, v] of Object.entries(values)) {
    if (typeof v !== 'string' || !v.includes('{{$')) continue;
    values[name] = v.replace(PLACEHOLDER_RE, (whole) => {
      const expr = whole.slice(3, -2);
      const m = RE_IN_PARAM.exec(expr);
      if (m) {
        const ref = snapshot[m[1] ?? m[2] ?? ''];
        return ref === undefined ? whole : parameterValueToText(ref);
      }
      return pipelineValue(expr, ctx) ?? whole;
    });
  }
  return ei;
}

/**
 * An SDK f-string task input: kfp compiles `f"side-{coin.output}-{seed}"` to a `runtimeValue.constant`
 * string of `{{$.inputs.parameters['pipelinechannel--…']}}` placeholders, and feeds each channel as
 * an extra input of the same task, one the component does not declare. So the driver substitutes them
 * from the task's own resolved inputs, before the component sees the value. A placeholder naming no
 * resolved input stays as it is.
 */
export function resolveFString(text: string, taskInputs: Record<string, unknown>): string {
  if (!text.includes('{{$')) return text;
  return text.replace(PLACEHOLDER_RE, (whole) => {
    const m = RE_IN_PARAM.exec(whole.slice(3, -2));
    const name = m ? m[1] ?? m[2] ?? '' : undefined;
    if (name === undefined) return whole;
    const v = taskInputs[name];
    return v === undefined ? whole : parameterValueToText(v as JsonValue);
  });
}

/** IfPresent presence as the driver sees it: a non-null parameter value (defaults do not count) or ≥1 artifact. */
function isPresent(ctx: PlaceholderContext, name: string): boolean {
  const v = ctx.executorInput.inputs.parameterValues[name];
  if (v !== undefined && v !== null) return true;
  const a = ctx.executorInput.inputs.artifacts[name];
  return a !== undefined && a.artifacts.length > 0;
}

interface Resolver {
  ctx: PlaceholderContext;
  ei: ExecutorInput;
  eiJson: string | undefined;
}

function absent(r: Resolver, whole: string): string {
  switch (r.ctx.absentInput ?? 'verbatim') {
    case 'null':
      return 'null';
    case 'empty':
      return '';
    default:
      return whole;
  }
}

function artifactField(r: Resolver, whole: string, a: RuntimeArtifact, field: string): string {
  switch (field) {
    case 'uri':
      return a.uri;
    case 'path':
      try {
        return artifactLocalPath(a);
      } catch (e) {
        throw new PlaceholderError(`${whole}: ${(e as Error).message}`);
      }
    default:
      return JSON.stringify(a.metadata ?? {});
  }
}

function substituteOne(r: Resolver, whole: string): string {
  const expr = whole.slice(3, -2);
  if (expr === '') {
    r.eiJson ??= JSON.stringify(r.ei);
    return r.eiJson;
  }
  let m = RE_IN_PARAM.exec(expr);
  if (m) {
    const name = m[1] ?? m[2] ?? '';
    const v = r.ei.inputs.parameterValues[name];
    if (v !== undefined) return parameterValueToText(v);
    if (r.ctx.inputDefinitions?.parameters?.[name] !== undefined) return absent(r, whole);
    throw new PlaceholderError(`unknown placeholder ${whole}: no input parameter ${JSON.stringify(name)}`);
  }
  m = RE_IN_ART.exec(expr);
  if (m) {
    const name = m[1] ?? m[2] ?? '';
    const list = r.ei.inputs.artifacts[name]?.artifacts ?? [];
    const first = list[0];
    if (first === undefined) {
      if (r.ctx.inputDefinitions?.artifacts?.[name] !== undefined) return absent(r, whole);
      throw new PlaceholderError(`unknown placeholder ${whole}: no input artifact ${JSON.stringify(name)}`);
    }
    // Bare `{{$.inputs.artifacts['x']}}` (used with artifact lists): JSON list of the runtime artifacts.
    if (m[3] === undefined) return JSON.stringify(list);
    return artifactField(r, whole, first, m[3]);
  }
  m = RE_OUT_PARAM.exec(expr);
  if (m) {
    const name = m[1] ?? m[2] ?? '';
    const p = r.ei.outputs.parameters[name];
    if (p === undefined) throw new PlaceholderError(`unknown placeholder ${whole}: no output parameter ${JSON.stringify(name)}`);
    return p.outputFile;
  }
  m = RE_OUT_ART.exec(expr);
  if (m) {
    const name = m[1] ?? m[2] ?? '';
    const list = r.ei.outputs.artifacts[name]?.artifacts ?? [];
    const first = list[0];
    if (first === undefined) throw new PlaceholderError(`unknown placeholder ${whole}: no output artifact ${JSON.stringify(name)}`);
    if (m[3] === undefined) return JSON.stringify(list);
    return artifactField(r, whole, first, m[3]);
  }
  if (expr === '.outputs.output_file') return r.ei.outputs.outputFile;
  if (PIPELINE_FIELDS[expr] !== undefined) {
    const v = pipelineValue(expr, r.ctx);
    if (v === undefined) throw new PlaceholderError(`no value for placeholder ${whole} in this context`);
    return v;
  }
  throw new PlaceholderError(`unknown placeholder ${whole}`);
}

/** Substitutes every `{{$...}}` in one string, in a single pass (substituted text is not re-scanned). */
function substitute(r: Resolver, s: string): string {
  return s.replace(PLACEHOLDER_RE, (whole) => substituteOne(r, whole));
}

function isStructuredString(s: string): boolean {
  const t = s.trimStart();
  return /^\{\s*"(IfPresent|Concat)"\s*:/.test(t);
}

/** Expands one element (string or structured placeholder) into zero or more strings. */
function expand(r: Resolver, el: unknown, where: string): string[] {
  if (typeof el === 'string') {
    if (!isStructuredString(el)) return [substitute(r, el)];
    let parsed: unknown;
    try {
      parsed = JSON.parse(el);
    } catch (e) {
      throw new PlaceholderError(`${where}: invalid structured placeholder ${JSON.stringify(el)}: ${(e as Error).message}`);
    }
    return expandStruct(r, parsed, where);
  }
  if (isPlainObject(el)) return expandStruct(r, el, where);
  throw new PlaceholderError(`${where}: expected a string or a structured placeholder, got ${JSON.stringify(el)}`);
}

function expandList(r: Resolver, v: unknown, where: string): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.flatMap((item, i) => expand(r, item, `${where}[${i}]`));
  return expand(r, v, where);
}

function expandStruct(r: Resolver, obj: unknown, where: string): string[] {
  const o = obj as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === 'IfPresent') {
    const body = o['IfPresent'] as Record<string, unknown> | null;
    if (typeof body !== 'object' || body === null || typeof body['InputName'] !== 'string') {
      throw new PlaceholderError(`${where}: IfPresent needs an InputName string`);
    }
    const name = body['InputName'];
    const branch = isPresent(r.ctx, name) ? 'Then' : 'Else';
    return expandList(r, body[branch], `${where}.IfPresent.${branch}`);
  }
  if (keys.length === 1 && keys[0] === 'Concat') {
    const items = o['Concat'];
    if (!Array.isArray(items)) throw new PlaceholderError(`${where}: Concat needs a list`);
    return [items.map((item, i) => expand(r, item, `${where}.Concat[${i}]`).join('')).join('')];
  }
  throw new PlaceholderError(`${where}: unknown structured placeholder ${JSON.stringify(obj)}`);
}

/**
 * Resolves a container's `command` or `args` list into argv strings.
 * Top-level IfPresent expands into zero or more elements; Concat yields one element.
 */
export function resolvePlaceholders(commandOrArgs: unknown[], ctx: PlaceholderContext): string[] {
  const r: Resolver = { ctx, ei: effectiveExecutorInput(ctx), eiJson: undefined };
  return commandOrArgs.flatMap((el, i) => expand(r, el, `element ${i}`));
}
