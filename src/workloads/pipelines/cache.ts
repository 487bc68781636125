// Task caching as the KFP backend keys it: a fingerprint of what determines a container task's
// outputs (input artifacts, input parameter values, output specs, image, unresolved command and
// args, PVC names), or of the component name and the task's `cacheKey` when one is set. Env vars,
// resources and other platform settings are not part of it, as upstream.
import { createHash } from 'node:crypto';
import type { RunOutputs } from '../../api/pipelines.js';
import type { ComponentSpec, PipelineContainerSpec, PipelineTaskSpec } from '../../api/kfp/ir.js';

/** JSON with object keys sorted at every level: one text per value. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export interface FingerprintArgs {
  task: PipelineTaskSpec;
  component: ComponentSpec;
  container: PipelineContainerSpec;
  /** the task's resolved inputs: artifacts are identified by URI (a new execution writes a new one) */
  inputs: RunOutputs;
  pvcNames?: string[];
}

export function cacheFingerprint(a: FingerprintArgs): string {
  const key = a.task.cachingOptions?.cacheKey;
  if (typeof key === 'string' && key !== '') return sha256(`${a.task.componentRef.name}\0${key}`);
  const outputArtifacts: Record<string, unknown> = {};
  for (const [n, d] of Object.entries(a.component.outputDefinitions?.artifacts ?? {})) {
    outputArtifacts[n] = { type: d.artifactType, metadata: d.metadata ?? {}, isArtifactList: d.isArtifactList ?? false };
  }
  const outputParameters: Record<string, unknown> = {};
  for (const [n, d] of Object.entries(a.component.outputDefinitions?.parameters ?? {})) outputParameters[n] = d.parameterType;
  const inputArtifacts: Record<string, string[]> = {};
  for (const [n, list] of Object.entries(a.inputs.artifacts)) inputArtifacts[n] = list.map((x) => x.uri);
  return sha256(canonicalJson({
    inputArtifactNames: inputArtifacts,
    inputParameterValues: a.inputs.parameters,
    outputArtifactsSpec: outputArtifacts,
    outputParametersSpec: outputParameters,
    containerSpec: { image: a.container.image, cmdArgs: [...(a.container.command ?? []), ...(a.container.args ?? [])], pvcNames: [...(a.pvcNames ?? [])].sort() },
  }));
}

/** The TaskCache object's name: scoped to the pipeline, as the backend scopes its lookups. */
export function cacheEntryName(pipelineName: string, fingerprint: string): string {
  return `c-${sha256(`${pipelineName}\0${fingerprint}`)}`;
}

/** Whether a task is cached: the SDK writes `enableCache: true` by default; `{}` means off. */
export function cachingEnabled(task: PipelineTaskSpec, runEnableCaching: boolean | undefined): boolean {
  return runEnableCaching !== false && task.cachingOptions?.enableCache === true;
}
