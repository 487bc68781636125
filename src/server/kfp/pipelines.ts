// Pipelines: a named (per namespace) home for versions. Created empty, with a first version
// (`pipelines/create`), or from an uploaded package (`pipelines/upload`); when the first version
// is refused, the pipeline made for it is deleted again so a retry does not meet a name conflict.
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Kinds } from '../../api/index.js';
import type { PipelineObj, PipelineVersionObj } from '../../api/kfp-objects.js';
import { KfpLabels } from '../../api/kfp-objects.js';
import { isNotFound } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import { badRequest, conflict, notFound, precondition } from './errors.js';
import type { Shape } from './list.js';
import { createVersion, specFromVersionBody, uploadedFile, uploadVersionBody, VERSION_FIELDS } from './pipeline-versions.js';
import type { KfpCall, KfpContext } from './request.js';
import { DEFAULT_NS, fields, jsonBody, listBody, q, str, tagsOf } from './request.js';
import type { Route } from './router.js';
import { pipelineShape } from './shapes.js';

const PIPELINE_FIELDS = ['pipeline_id', 'display_name', 'name', 'description', 'created_at', 'namespace', 'error', 'tags'];
const LIST_KEYS = ['pipeline_id', 'display_name', 'name', 'description', 'created_at', 'namespace'] as const;

async function pipelineNamed(k: KfpContext, namespace: string, name: string): Promise<(PipelineObj & StoredObject) | undefined> {
  return (await k.all<PipelineObj>(Kinds.Pipeline, namespace)).find((p) => (p.spec.name ?? p.spec.displayName) === name);
}

async function createPipeline(k: KfpContext, req: IncomingMessage, body: Record<string, any>): Promise<PipelineObj & StoredObject> {
  // no namespace: a shared pipeline, kept in `default` (sharedPipelineNamespace)
  const namespace = str(body.namespace, 'pipeline.namespace') ?? DEFAULT_NS;
  k.authorize(req, { resource: 'pipelines', verb: 'create', namespace });
  const name = str(body.name, 'pipeline.name') ?? str(body.display_name, 'pipeline.display_name');
  if (!name) throw badRequest('pipeline.display_name: required: a pipeline needs a name or display_name');
  if (await pipelineNamed(k, namespace, name)) throw conflict(`a pipeline named ${JSON.stringify(name)} already exists in namespace ${JSON.stringify(namespace)}`);
  return k.client.create<PipelineObj>({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Pipeline',
    metadata: { name: randomUUID(), namespace },
    spec: { name, displayName: str(body.display_name, 'pipeline.display_name') ?? name, description: str(body.description, 'pipeline.description'), tags: tagsOf(body.tags, 'pipeline.tags') },
  });
}

/** creates the pipeline's first version; a version that is refused takes the new pipeline with it */
async function withFirstVersion(k: KfpContext, p: PipelineObj & StoredObject, create: () => Promise<unknown>): Promise<Shape> {
  try {
    await create();
  } catch (e) {
    await k.client.delete(Kinds.Pipeline, { namespace: p.metadata.namespace, name: p.metadata.name }).catch(() => undefined);
    throw e;
  }
  return pipelineShape(p);
}

async function createPipelineAndVersion({ ctx: k, req }: KfpCall): Promise<Shape> {
  const body = fields(await jsonBody(req), '', ['pipeline', 'pipeline_version']);
  const pbody = fields(body.pipeline, 'pipeline', PIPELINE_FIELDS);
  if (body.pipeline_version === undefined) throw badRequest('pipeline_version: required');
  const vbody = fields(body.pipeline_version, 'pipeline_version', VERSION_FIELDS);
  const parsed = await specFromVersionBody(vbody);
  const p = await createPipeline(k, req, pbody);
  return withFirstVersion(k, p, () => createVersion(k, p, { ...vbody, name: vbody.name ?? p.spec.name }, parsed));
}

async function upload({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  const { spec, platform, fileName } = await uploadedFile(req);
  const version = uploadVersionBody(url, fileName, spec);
  const p = await createPipeline(k, req, { name: version.name, display_name: version.display_name, description: version.description, namespace: q(url, 'namespace'), tags: version.tags });
  return withFirstVersion(k, p, () => createVersion(k, p, version, { spec, ...(platform ? { platform } : {}) }));
}

async function listPipelines({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  // multi-user: a namespace's pipelines, or without one the shared pipelines, as KFP lists them
  const namespace = q(url, 'namespace') ?? (k.multiUser ? DEFAULT_NS : undefined);
  k.authorize(req, { resource: 'pipelines', verb: 'list', namespace });
  const items = (await k.all<PipelineObj>(Kinds.Pipeline, namespace)).map(pipelineShape);
  return listBody('pipelines', k.page(items, url, LIST_KEYS, 'pipeline_id'));
}

async function pipelineByName({ ctx: k, req, url, params }: KfpCall): Promise<Shape> {
  const name = params.name as string;
  const namespace = q(url, 'namespace') ?? DEFAULT_NS;
  k.authorize(req, { resource: 'pipelines', verb: 'get', namespace, name });
  const p = await pipelineNamed(k, namespace, name);
  if (!p) throw notFound('pipeline named', name);
  return pipelineShape(p);
}

async function patchPipeline({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const id = params.pipeline_id as string;
  const p = k.authorized(req, 'pipelines', 'update', await k.get<PipelineObj>(Kinds.Pipeline, id, 'pipeline'));
  const body = fields(await jsonBody(req), 'pipeline', PIPELINE_FIELDS);
  const spec: Record<string, unknown> = {};
  if (body.display_name !== undefined) spec.displayName = str(body.display_name, 'pipeline.display_name');
  if (body.description !== undefined) spec.description = str(body.description, 'pipeline.description');
  if (body.tags !== undefined) spec.tags = tagsOf(body.tags, 'pipeline.tags');
  return pipelineShape(await k.client.patch(Kinds.Pipeline, { namespace: p.metadata.namespace, name: id }, { spec }, 'merge') as PipelineObj & StoredObject);
}

/** a pipeline with versions is deleted only with cascade=true, which deletes the versions first */
async function deletePipeline({ ctx: k, req, url, params }: KfpCall): Promise<Shape> {
  const id = params.pipeline_id as string;
  const p = k.authorized(req, 'pipelines', 'delete', await k.get<PipelineObj>(Kinds.Pipeline, id, 'pipeline'));
  const versions = await k.all<PipelineVersionObj>(Kinds.PipelineVersion, p.metadata.namespace, `${KfpLabels.pipelineId}=${id}`);
  if (versions.length && url.searchParams.get('cascade') !== 'true') {
    throw precondition(`pipeline ${id} has ${versions.length} version(s); delete them first, or delete with cascade=true`);
  }
  for (const v of versions) {
    await k.client.delete(Kinds.PipelineVersion, { namespace: v.metadata.namespace, name: v.metadata.name }).catch((e) => {
      if (!isNotFound(e)) throw e;
    });
  }
  await k.client.delete(Kinds.Pipeline, { namespace: p.metadata.namespace, name: id });
  return {};
}

export const pipelineRoutes: Route<KfpContext>[] = [
  { method: 'POST', pattern: '/pipelines/upload', handle: upload },
  { method: 'POST', pattern: '/pipelines/create', handle: createPipelineAndVersion },
  { method: 'GET', pattern: '/pipelines/names/{name}', handle: pipelineByName },
  { method: 'GET', pattern: '/pipelines', handle: listPipelines },
  { method: 'POST', pattern: '/pipelines', handle: async ({ ctx: k, req }) => pipelineShape(await createPipeline(k, req, fields(await jsonBody(req), 'pipeline', PIPELINE_FIELDS))) },
  { method: 'GET', pattern: '/pipelines/{pipeline_id}', handle: async ({ ctx: k, req, params }) => pipelineShape(k.authorized(req, 'pipelines', 'get', await k.get<PipelineObj>(Kinds.Pipeline, params.pipeline_id as string, 'pipeline'))) },
  { method: 'DELETE', pattern: '/pipelines/{pipeline_id}', handle: deletePipeline },
  { method: 'PATCH', pattern: '/pipelines/{pipeline_id}', handle: patchPipeline },
];
