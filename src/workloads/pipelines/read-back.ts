/**
 * Reads a finished task's outputs back the way the KFP launcher does
 * (`getExecutorOutputFile`, `collectOutputParameters`, `uploadOutputArtifacts`).
 *
 * Pure module: the caller reads the files and passes their text (or `undefined` when
 * the file does not exist).
 */
import {
  artifactLocalPath,
  type ArtifactList,
  type JsonObject,
  type JsonValue,
  type ParameterType,
  type RuntimeArtifact,
} from './executor-input.js';
import { isPlainObject } from '../../util/objects.js';

export class ReadBackError extends Error {
  override name = 'ReadBackError';
}

export interface ExecutorOutput {
  parameterValues: Record<string, JsonValue>;
  artifacts: Record<string, ArtifactList>;
}

export interface ReadBackArgs {
  /** Text of `outputs.outputFile`; `undefined`/`null` when the file does not exist (not an error). */
  executorOutputText?: string | null;
  /** Output parameter name → text of its output file; `undefined` when the file does not exist. */
  outputParameterFiles?: Record<string, string | undefined>;
  /** Declared output parameters (`outputDefinitions.parameters[x].parameterType`). */
  outputParameters?: Record<string, ParameterType>;
  /** Provisioned output artifacts (`executorInput.outputs.artifacts`); the declared artifact names are its keys. */
  outputArtifacts?: Record<string, ArtifactList>;
}

export interface OutputArtifactResult extends RuntimeArtifact {
  /** Where the container wrote it (customPath, else derived from the uri). */
  localPath: string;
}

export interface ReadBackResult {
  parameters: Record<string, JsonValue>;
  artifacts: Record<string, OutputArtifactResult[]>;
}

function checkKeys(o: Record<string, unknown>, allowed: string[], where: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw new ReadBackError(`failed to unmarshal ExecutorOutput: unknown field ${JSON.stringify(k)} in ${where}`);
  }
}

function pick(o: Record<string, unknown>, camel: string, snake: string): unknown {
  return o[camel] !== undefined ? o[camel] : o[snake];
}

/**
 * protojson-style strict parse of an ExecutorOutput: unknown fields are errors,
 * camelCase and snake_case field names are both accepted, the deprecated v1
 * `parameters` map is accepted and ignored.
 */
export function parseExecutorOutput(text: string): ExecutorOutput {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ReadBackError(`failed to unmarshal ExecutorOutput: ${(e as Error).message}`);
  }
  if (!isPlainObject(raw)) throw new ReadBackError('failed to unmarshal ExecutorOutput: not a JSON object');
  checkKeys(raw, ['parameterValues', 'parameter_values', 'artifacts', 'parameters'], 'ExecutorOutput');
  const pv = pick(raw, 'parameterValues', 'parameter_values') ?? {};
  if (!isPlainObject(pv)) throw new ReadBackError('failed to unmarshal ExecutorOutput: parameterValues must be an object');
  const arts = raw['artifacts'] ?? {};
  if (!isPlainObject(arts)) throw new ReadBackError('failed to unmarshal ExecutorOutput: artifacts must be an object');
  const artifacts: Record<string, ArtifactList> = {};
  for (const [name, list] of Object.entries(arts)) {
    if (!isPlainObject(list)) throw new ReadBackError(`failed to unmarshal ExecutorOutput: artifacts[${JSON.stringify(name)}] must be an object`);
    checkKeys(list, ['artifacts'], `artifacts[${JSON.stringify(name)}]`);
    const items = list['artifacts'] ?? [];
    if (!Array.isArray(items)) throw new ReadBackError(`failed to unmarshal ExecutorOutput: artifacts[${JSON.stringify(name)}].artifacts must be a list`);
    artifacts[name] = {
      artifacts: items.map((a: unknown, i) => {
        const where = `artifacts[${JSON.stringify(name)}].artifacts[${i}]`;
        if (!isPlainObject(a)) throw new ReadBackError(`failed to unmarshal ExecutorOutput: ${where} must be an object`);
        checkKeys(a, ['name', 'type', 'uri', 'properties', 'customProperties', 'custom_properties', 'metadata', 'customPath', 'custom_path'], where);
        const md = a['metadata'];
        if (md !== undefined && md !== null && !isPlainObject(md)) throw new ReadBackError(`failed to unmarshal ExecutorOutput: ${where}.metadata must be an object`);
        const out: RuntimeArtifact = {
          name: typeof a['name'] === 'string' ? a['name'] : '',
          type: isPlainObject(a['type']) ? (a['type'] as RuntimeArtifact['type']) : {},
          uri: typeof a['uri'] === 'string' ? a['uri'] : '',
          metadata: (md ?? undefined) as JsonObject,
        };
        const cp = pick(a, 'customPath', 'custom_path');
        if (typeof cp === 'string') out.customPath = cp;
        return out;
      }),
    };
  }
  return { parameterValues: pv as Record<string, JsonValue>, artifacts };
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * Launcher `TextToPbValue`: STRING raw (no trimming); NUMBER_INTEGER `ParseInt(TrimSpace, 10)`;
 * NUMBER_DOUBLE `ParseFloat(TrimSpace)`; BOOLEAN `ParseBool(TrimSpace)` (1/t/T/TRUE/true/True and
 * the false forms); LIST/STRUCT parsed as any JSON value (the launcher unmarshals into a
 * `structpb.Value`, so the JSON kind is not checked).
 */
export function textToParameterValue(name: string, text: string, type: ParameterType): JsonValue {
  const fail = (why: string): never => {
    throw new ReadBackError(`output parameter ${JSON.stringify(name)}: cannot parse ${JSON.stringify(text)} as ${type}: ${why}`);
  };
  const t = text.trim();
  switch (type) {
    case 'STRING':
      return text;
    case 'NUMBER_INTEGER': {
      if (!/^[+-]?\d+$/.test(t)) return fail('invalid syntax');
      const big = BigInt(t);
      if (big > 9223372036854775807n || big < -9223372036854775808n) return fail('value out of range');
      return Number(big);
    }
    case 'NUMBER_DOUBLE': {
      // Go ParseFloat decimal syntax (underscores and hex floats are not accepted here).
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) {
        if (/^[+-]?(inf|infinity|nan)$/i.test(t)) return fail('NaN and Infinity are not representable as protobuf Values');
        return fail('invalid syntax');
      }
      const n = Number(t);
      if (!Number.isFinite(n)) return fail('value out of range');
      return n;
    }
    case 'BOOLEAN':
      if (GO_TRUE.has(t)) return true;
      if (GO_FALSE.has(t)) return false;
      return fail('invalid syntax');
    case 'LIST':
    case 'STRUCT':
      try {
        return JSON.parse(text) as JsonValue;
      } catch (e) {
        return fail((e as Error).message);
      }
    default:
      return fail('unsupported output parameter type');
  }
}

/** Launcher `mergeRuntimeArtifacts(src, dst)`: non-empty uri wins, metadata keys overlay, customPath wins. */
function mergeArtifact(src: RuntimeArtifact, dst: RuntimeArtifact): RuntimeArtifact {
  const out: RuntimeArtifact = { ...dst, metadata: { ...(dst.metadata ?? {}) } };
  if (src.uri !== '') out.uri = src.uri;
  if (src.metadata !== undefined && src.metadata !== null) Object.assign(out.metadata, src.metadata);
  if (src.customPath !== undefined) out.customPath = src.customPath;
  return out;
}

export function readBackOutputs(args: ReadBackArgs): ReadBackResult {
  const text = args.executorOutputText;
  const eo: ExecutorOutput =
    text === undefined || text === null ? { parameterValues: {}, artifacts: {} } : parseExecutorOutput(text);

  const parameters: Record<string, JsonValue> = {};
  const missing: string[] = [];
  for (const [name, type] of Object.entries(args.outputParameters ?? {})) {
    const fromExecutor = eo.parameterValues[name];
    if (fromExecutor !== undefined) {
      parameters[name] = fromExecutor;
      continue;
    }
    const fileText = args.outputParameterFiles?.[name];
    if (fileText === undefined) {
      missing.push(name);
      continue;
    }
    parameters[name] = textToParameterValue(name, fileText, type);
  }
  if (missing.length > 0) {
    throw new ReadBackError(
      `declared output parameter${missing.length > 1 ? 's' : ''} ${missing.map((n) => JSON.stringify(n)).join(', ')} not produced: ` +
        'absent from the executor output and no output file was written',
    );
  }

  const artifacts: Record<string, OutputArtifactResult[]> = {};
  for (const [name, provisioned] of Object.entries(args.outputArtifacts ?? {})) {
    const first = provisioned.artifacts[0];
    if (first === undefined) continue;
    const produced = eo.artifacts[name]?.artifacts ?? [];
    const merged: RuntimeArtifact[] = [produced[0] ? mergeArtifact(produced[0], first) : { ...first, metadata: { ...(first.metadata ?? {}) } }];
    // Pythonic `-> List[Artifact]` returns several artifacts; the backend keeps only the first,
    // Skiff keeps them all (each with the declared type).
    for (const extra of produced.slice(1)) {
      merged.push(mergeArtifact(extra, { name: extra.name !== '' ? extra.name : name, type: first.type, uri: first.uri, metadata: {} }));
    }
    artifacts[name] = merged.map((a) => ({ ...a, localPath: artifactLocalPath(a) }));
  }
  return { parameters, artifacts };
}
