// Runs: one execution of a pipeline (a spec sent inline, or a stored version) in an experiment,
// and the verbs on it: archive, unarchive, terminate, retry. Also what a recurring run is made of
// (pipelineSource, runtimeConfig), since it starts runs the same way.
import { randomUUID } from 'node:crypto';
import { Kinds } from '../../api/index.js';
import type { PipelineVersionObj } from '../../api/kfp-objects.js';
import { KfpAnnotations, KfpLabels } from '../../api/kfp-objects.js';
import type { StoredObject } from '../../api/meta.js';
import type { Run } from '../../api/pipelines.js';
import type { PipelineSpec, PlatformSpec } from '../../api/kfp/ir.js';
import { isPlainObject } from '../../util/objects.js';
import { badRequest, KfpError, precondition } from './errors.js';
import { experimentFor, experimentNamespace } from './experiments.js';
import type { Shape } from './list.js';
import type { KfpCall, KfpContext } from './request.js';
import { fields, jsonBody, listBody, q, str, unwrapSpec } from './request.js';
import type { Route } from './router.js';
import { isFinished, runShape } from './shapes.js';

const RUN_FIELDS = ['experiment_id', 'run_id', 'display_name', 'storage_state', 'description', 'pipeline_version_id', 'pipeline_spec', 'pipeline_version_reference', 'runtime_config', 'service_account', 'created_at', 'scheduled_at', 'finished_at', 'state', 'error', 'run_details', 'recurring_run_id', 'state_history', 'plugins_input', 'plugins_output'];
const LIST_KEYS = ['run_id', 'display_name', 'description', 'created_at', 'scheduled_at', 'finished_at', 'state', 'experiment_id', 'storage_state', 'recurring_run_id', 'service_account'] as const;

export interface PipelineSource {
  spec: PipelineSpec;
  platform?: PlatformSpec;
  pipelineId?: string;
  versionId?: string;
}

/** the pipeline to run: a spec in the request, or a stored pipeline version */
export async function pipelineSource(k: KfpContext, body: Record<string, any>, where: string): Promise<PipelineSource> {
  const ref = fields(body.pipeline_version_reference, `${where}.pipeline_version_reference`, ['pipeline_id', 'pipeline_version_id']);
  const vid = str(ref.pipeline_version_id, `${where}.pipeline_version_reference.pipeline_version_id`) ?? str(body.pipeline_version_id, `${where}.pipeline_version_id`);
  if (body.pipeline_spec !== undefined && vid) throw badRequest(`${where}: set one of pipeline_spec or pipeline_version_reference, not both`);
  if (body.pipeline_spec !== undefined) return unwrapSpec(body.pipeline_spec, `${where}.pipeline_spec`);
  if (!vid) {
    if (ref.pipeline_id) throw badRequest(`${where}.pipeline_version_reference.pipeline_version_id: required`);
    throw badRequest(`${where}.pipeline_spec: required: one of pipeline_spec or pipeline_version_reference`);
  }
  let v: PipelineVersionObj & StoredObject;
  try {
    v = await k.get<PipelineVersionObj>(Kinds.PipelineVersion, vid, 'pipeline version');
  } catch (e) {
    if (e instanceof KfpError && e.http === 404) throw badRequest(`${where}.pipeline_version_reference.pipeline_version_id: pipeline version ${JSON.stringify(vid)} not found`);
    throw e;
  }
  const pid = str(ref.pipeline_id, `${where}.pipeline_version_reference.pipeline_id`);
  if (pid && pid !== v.spec.pipelineName) throw badRequest(`${where}.pipeline_version_reference: version ${vid} belongs to pipeline ${v.spec.pipelineName}, not ${pid}`);
  return { spec: v.spec.pipelineSpec, ...(v.spec.platformSpec ? { platform: v.spec.platformSpec as PlatformSpec } : {}), pipelineId: v.spec.pipelineName, versionId: vid };
}

export function runtimeConfig(v: unknown, where: string): { parameters: Record<string, unknown>; pipelineRoot?: string } {
  const rc = fields(v, `${where}.runtime_config`, ['parameters', 'pipeline_root']);
  if (rc.parameters !== undefined && !isPlainObject(rc.parameters)) throw badRequest(`${where}.runtime_config.parameters: expected an object`);
  const root = str(rc.pipeline_root, `${where}.runtime_config.pipeline_root`);
  return { parameters: (rc.parameters ?? {}) as Record<string, unknown>, ...(root ? { pipelineRoot: root } : {}) };
}

async function createRun({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  const body = fields(await jsonBody(req), 'run', RUN_FIELDS);
  const displayName = str(body.display_name, 'run.display_name');
  if (!displayName) throw badRequest('run.display_name: required');
  const experimentId = str(body.experiment_id, 'run.experiment_id') ?? q(url, 'experiment_id');
  // a run's namespace is its experiment's: without one, multi-user mode has no namespace to run in
  if (!experimentId) k.authorize(req, { resource: 'runs', verb: 'create' });
  const experiment = await experimentFor(k, experimentId);
  k.authorize(req, { resource: 'runs', verb: 'create', namespace: experiment.metadata.namespace });
  const src = await pipelineSource(k, body, 'run');
  const rc = runtimeConfig(body.runtime_config, 'run');
  const labels: Record<string, string> = { [KfpLabels.experimentId]: experiment.metadata.name, [KfpLabels.storageState]: 'AVAILABLE' };
  if (src.versionId) {
    labels[KfpLabels.pipelineVersionId] = src.versionId;
    if (src.pipelineId) labels[KfpLabels.pipelineId] = src.pipelineId;
  }
  const annotations: Record<string, string> = { [KfpAnnotations.displayName]: displayName };
  const description = str(body.description, 'run.description');
  if (description) annotations[KfpAnnotations.description] = description;
  const sa = str(body.service_account, 'run.service_account');
  if (sa) annotations[KfpAnnotations.serviceAccount] = sa;
  return runShape(await k.client.create<Run>({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run',
    metadata: { name: randomUUID(), namespace: experiment.metadata.namespace, labels, annotations },
    spec: { pipelineSpec: src.spec, ...(src.platform ? { platformSpec: src.platform } : {}), parameters: rc.parameters, ...(rc.pipelineRoot ? { pipelineRoot: rc.pipelineRoot } : {}) },
  }));
}

async function listRuns({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  const x = q(url, 'experiment_id');
  const namespace = x ? await experimentNamespace(k, x, q(url, 'namespace')) : q(url, 'namespace');
  k.authorize(req, { resource: 'runs', verb: 'list', namespace });
  const items = (await k.all<Run>(Kinds.Run, namespace, x ? `${KfpLabels.experimentId}=${x}` : undefined)).map((r) => runShape(r, { details: false }));
  return listBody('runs', k.page(items, url, LIST_KEYS, 'run_id'));
}

async function deleteRun({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const r = await k.get<Run>(Kinds.Run, params.run_id as string, 'run');
  k.authorize(req, { resource: 'runs', verb: 'delete', namespace: r.metadata.namespace, name: r.metadata.name });
  await k.client.delete(Kinds.Run, { namespace: r.metadata.namespace, name: r.metadata.name });
  return {};
}

async function runVerb({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const id = params.run_id as string;
  const verb = params.verb as string;
  const r = await k.get<Run>(Kinds.Run, id, 'run');
  if (['archive', 'unarchive', 'terminate', 'retry'].includes(verb)) k.authorize(req, { resource: 'runs', verb, namespace: r.metadata.namespace, name: id });
  const key = { namespace: r.metadata.namespace, name: r.metadata.name };
  const state = r.status?.state ?? 'PENDING';
  switch (verb) {
    case 'archive':
    case 'unarchive':
      await k.setLabel(Kinds.Run, r, KfpLabels.storageState, verb === 'archive' ? 'ARCHIVED' : 'AVAILABLE');
      return {};
    case 'terminate':
      if (isFinished(state)) throw precondition(`run ${id} has already finished (${state}); only unfinished runs can be terminated`);
      if (r.spec.terminate !== true) await k.client.patch(Kinds.Run, key, { spec: { terminate: true } }, 'merge');
      return {};
    case 'retry': {
      if (state !== 'FAILED' && state !== 'CANCELED') throw precondition(`run ${id} is ${state}; only FAILED or CANCELED runs can be retried`);
      const gen = r.spec.retryGeneration ?? 0;
      if (gen > (r.status?.retryGeneration ?? 0)) throw precondition(`run ${id} is already being retried`);
      await k.client.patch(Kinds.Run, key, { spec: { retryGeneration: gen + 1, ...(r.spec.terminate ? { terminate: false } : {}) } }, 'merge');
      return {};
    }
  }
  throw new KfpError(404, `no route for POST /apis/v2beta1/runs/${id}:${verb}`);
}

export const runRoutes: Route<KfpContext>[] = [
  { method: 'GET', pattern: '/runs', handle: listRuns },
  { method: 'POST', pattern: '/runs', handle: createRun },
  { method: 'GET', pattern: '/runs/{run_id}', handle: async ({ ctx: k, req, params }) => runShape(await k.authorized(req, 'runs', 'get', await k.get<Run>(Kinds.Run, params.run_id as string, 'run'))) },
  { method: 'DELETE', pattern: '/runs/{run_id}', handle: deleteRun },
  { method: 'POST', pattern: '/runs/{run_id}:{verb}', handle: runVerb },
];
