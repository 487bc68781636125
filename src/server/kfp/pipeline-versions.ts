// Pipeline versions: a compiled PipelineSpec (and its PlatformSpec) under a Pipeline, from a JSON
// body, a package URL, or an uploaded file (`upload_version`). Every package is parsed and checked
// before anything is stored; a 400 says what is wrong with it.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { isAbsolute } from 'node:path';
import { Kinds } from '../../api/index.js';
import type { PipelineObj, PipelineVersionObj } from '../../api/kfp-objects.js';
import { KfpLabels } from '../../api/kfp-objects.js';
import type { StoredObject } from '../../api/meta.js';
import { ownerRefTo } from '../../api/meta.js';
import type { PipelineSpec, PlatformSpec } from '../../api/kfp/ir.js';
import { parsePipelineFile, PipelineSpecError } from '../../api/kfp/ir.js';
import { validatePipelineSpec } from '../../api/kfp/ir-validate.js';
import { isPlainObject } from '../../util/objects.js';
import { readBody } from '../body.js';
import { badRequest, conflict, notFound } from './errors.js';
import type { Shape } from './list.js';
import { parseMultipart, packageText } from './multipart.js';
import type { KfpCall, KfpContext } from './request.js';
import { fields, jsonBody, listBody, q, str, tagsOf, unwrapSpec } from './request.js';
import type { Route } from './router.js';
import { versionShape } from './shapes.js';

export const VERSION_FIELDS = ['pipeline_id', 'pipeline_version_id', 'display_name', 'name', 'description', 'created_at', 'package_url', 'code_source_url', 'pipeline_spec', 'error', 'tags'];
const LIST_KEYS = ['pipeline_version_id', 'pipeline_id', 'display_name', 'name', 'description', 'created_at'] as const;

type Parsed = { spec: PipelineSpec; platform?: PlatformSpec };

/** parses and checks an uploaded pipeline; a 400 says what is wrong with it */
export function parsePackage(text: string, fileName: string): Parsed {
  let parsed: Parsed;
  try {
    parsed = parsePipelineFile(text, fileName);
  } catch (e) {
    if (e instanceof PipelineSpecError) throw badRequest(`invalid pipeline spec${fileName ? ` in ${fileName}` : ''}: ${e.errors.map((x) => (x.field ? `${x.field}: ${x.message}` : x.message)).join('; ')}`);
    throw e;
  }
  const errs = validatePipelineSpec(parsed.spec);
  if (errs.length) throw badRequest(`invalid pipeline spec${fileName ? ` in ${fileName}` : ''}: ${errs.map((x) => (x.field ? `${x.field}: ${x.message}` : x.message)).join('; ')}`);
  return parsed;
}

/** the spec of a version body: `pipeline_spec` as sent, or the package at `package_url.pipeline_url` */
export async function specFromVersionBody(body: Record<string, any>): Promise<Parsed> {
  if (body.pipeline_spec !== undefined) return unwrapSpec(body.pipeline_spec, 'pipeline_version.pipeline_spec');
  const pkg = body.package_url;
  const url = isPlainObject(pkg) ? str(pkg.pipeline_url ?? pkg.pipelineUrl, 'pipeline_version.package_url.pipeline_url') : undefined;
  if (!url) throw badRequest('pipeline_version.pipeline_spec: required (or package_url.pipeline_url)');
  let text: string;
  try {
    if (url.startsWith('file://') || isAbsolute(url)) text = (await packageText(await readFile(url.replace(/^file:\/\//, '')), url)).text;
    else {
      const r = await fetch(url, { signal: AbortSignal.timeout(15_000) });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      text = (await packageText(Buffer.from(await r.arrayBuffer()), url)).text;
    }
  } catch (e) {
    throw badRequest(`pipeline_version.package_url.pipeline_url: cannot read ${url}: ${(e as Error).message}`);
  }
  return parsePackage(text, url);
}

/** the pipeline package of a multipart upload (field `uploadfile`), parsed and checked */
export async function uploadedFile(req: IncomingMessage): Promise<Parsed & { fileName: string }> {
  const body = await readBody(req);
  let parts;
  try {
    parts = parseMultipart(body, req.headers['content-type']);
  } catch (e) {
    throw badRequest(`uploadfile: ${(e as Error).message}`);
  }
  const file = parts.find((p) => p.name === 'uploadfile') ?? parts.find((p) => p.filename !== undefined);
  if (!file) throw badRequest('uploadfile: required: a multipart field "uploadfile" with the pipeline package');
  let pkg;
  try {
    pkg = await packageText(file.data, file.filename ?? '');
  } catch (e) {
    throw badRequest(`uploadfile: ${(e as Error).message}`);
  }
  return { ...parsePackage(pkg.text, file.filename ?? pkg.name), fileName: file.filename ?? pkg.name };
}

/** the fields of an upload's version, from its query and the uploaded file's name */
export function uploadVersionBody(url: URL, fileName: string, spec: PipelineSpec): Record<string, unknown> & { name: string } {
  const base = fileName.replace(/^.*\//, '').replace(/\.(ya?ml|json|zip|tar\.gz|tgz)$/i, '');
  const name = q(url, 'name') ?? q(url, 'display_name') ?? (base || spec.pipelineInfo.name);
  return { name, display_name: q(url, 'display_name') ?? name, description: q(url, 'description'), code_source_url: q(url, 'code_source_url'), tags: q(url, 'tags') };
}

export async function createVersion(k: KfpContext, pipeline: PipelineObj & StoredObject, raw: unknown, given?: Parsed): Promise<PipelineVersionObj & StoredObject> {
  const body = fields(raw, 'pipeline_version', VERSION_FIELDS);
  const pid = str(body.pipeline_id, 'pipeline_version.pipeline_id');
  if (pid !== undefined && pid !== pipeline.metadata.name) throw badRequest(`pipeline_version.pipeline_id: ${JSON.stringify(pid)} is not the pipeline of the path (${pipeline.metadata.name})`);
  const { spec, platform } = given ?? await specFromVersionBody(body);
  const name = str(body.name, 'pipeline_version.name') ?? str(body.display_name, 'pipeline_version.display_name') ?? spec.pipelineInfo?.name;
  if (!name) throw badRequest('pipeline_version.display_name: required');
  const siblings = await k.all<PipelineVersionObj>(Kinds.PipelineVersion, pipeline.metadata.namespace, `${KfpLabels.pipelineId}=${pipeline.metadata.name}`);
  if (siblings.some((v) => (v.spec.name ?? v.spec.displayName) === name)) throw conflict(`pipeline ${pipeline.metadata.name} already has a version named ${JSON.stringify(name)}`);
  const pkg = isPlainObject(body.package_url) ? str(body.package_url.pipeline_url ?? body.package_url.pipelineUrl, 'pipeline_version.package_url.pipeline_url') : undefined;
  return k.client.create<PipelineVersionObj>({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'PipelineVersion',
    metadata: { name: randomUUID(), namespace: pipeline.metadata.namespace, labels: { [KfpLabels.pipelineId]: pipeline.metadata.name }, ownerReferences: [ownerRefTo(pipeline)] },
    spec: {
      pipelineName: pipeline.metadata.name, name, displayName: str(body.display_name, 'pipeline_version.display_name') ?? name,
      description: str(body.description, 'pipeline_version.description'), pipelineSpec: spec, ...(platform ? { platformSpec: platform } : {}),
      codeSourceUrl: str(body.code_source_url, 'pipeline_version.code_source_url'), packageUrl: pkg, tags: tagsOf(body.tags, 'pipeline_version.tags'),
    },
  });
}

/** a version of a pipeline, once the request's user may `verb` it (a version is checked as its pipeline, as KFP does) */
async function getVersion(k: KfpContext, req: IncomingMessage, verb: string, pid: string, vid: string): Promise<PipelineVersionObj & StoredObject> {
  const v = await k.get<PipelineVersionObj>(Kinds.PipelineVersion, vid, 'pipeline version');
  k.authorize(req, { resource: 'pipelines', verb, namespace: v.metadata.namespace, name: v.spec.pipelineName });
  if (v.spec.pipelineName !== pid) throw notFound(`pipeline version of pipeline ${pid}`, vid);
  return v;
}

async function uploadVersion({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  const pid = q(url, 'pipelineid') ?? q(url, 'pipeline_id');
  if (!pid) throw badRequest('pipelineid: required: the id of the pipeline this version belongs to');
  const pipeline = k.authorized(req, 'pipelines', 'create', await k.get<PipelineObj>(Kinds.Pipeline, pid, 'pipeline'));
  const { spec, platform, fileName } = await uploadedFile(req);
  return versionShape(await createVersion(k, pipeline, uploadVersionBody(url, fileName, spec), { spec, ...(platform ? { platform } : {}) }));
}

async function listVersions({ ctx: k, req, url, params }: KfpCall): Promise<Shape> {
  const pid = params.pipeline_id as string;
  const p = k.authorized(req, 'pipelines', 'list', await k.get<PipelineObj>(Kinds.Pipeline, pid, 'pipeline'));
  const items = (await k.all<PipelineVersionObj>(Kinds.PipelineVersion, p.metadata.namespace, `${KfpLabels.pipelineId}=${pid}`)).map(versionShape);
  return listBody('pipeline_versions', k.page(items, url, LIST_KEYS, 'pipeline_version_id'));
}

async function patchVersion({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const vid = params.pipeline_version_id as string;
  const v = await getVersion(k, req, 'update', params.pipeline_id as string, vid);
  const body = fields(await jsonBody(req), 'pipeline_version', VERSION_FIELDS);
  if (body.pipeline_spec !== undefined) throw badRequest('pipeline_version.pipeline_spec: a version\'s spec cannot be changed; upload a new version');
  const spec: Record<string, unknown> = {};
  if (body.display_name !== undefined) spec.displayName = str(body.display_name, 'pipeline_version.display_name');
  if (body.description !== undefined) spec.description = str(body.description, 'pipeline_version.description');
  if (body.tags !== undefined) spec.tags = tagsOf(body.tags, 'pipeline_version.tags');
  return versionShape(await k.client.patch(Kinds.PipelineVersion, { namespace: v.metadata.namespace, name: vid }, { spec }, 'merge') as PipelineVersionObj & StoredObject);
}

async function deleteVersion({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const v = await getVersion(k, req, 'delete', params.pipeline_id as string, params.pipeline_version_id as string);
  await k.client.delete(Kinds.PipelineVersion, { namespace: v.metadata.namespace, name: v.metadata.name });
  return {};
}

export const pipelineVersionRoutes: Route<KfpContext>[] = [
  { method: 'POST', pattern: '/pipelines/upload_version', handle: uploadVersion },
  { method: 'GET', pattern: '/pipelines/{pipeline_id}/versions', handle: listVersions },
  {
    method: 'POST', pattern: '/pipelines/{pipeline_id}/versions',
    handle: async ({ ctx: k, req, params }) => versionShape(await createVersion(k, k.authorized(req, 'pipelines', 'create', await k.get<PipelineObj>(Kinds.Pipeline, params.pipeline_id as string, 'pipeline')), await jsonBody(req))),
  },
  { method: 'GET', pattern: '/pipelines/{pipeline_id}/versions/{pipeline_version_id}', handle: async ({ ctx: k, req, params }) => versionShape(await getVersion(k, req, 'get', params.pipeline_id as string, params.pipeline_version_id as string)) },
  { method: 'PATCH', pattern: '/pipelines/{pipeline_id}/versions/{pipeline_version_id}', handle: patchVersion },
  { method: 'DELETE', pattern: '/pipelines/{pipeline_id}/versions/{pipeline_version_id}', handle: deleteVersion },
];
