// The KFP v2beta1 REST API (what `kfp.Client` speaks) over Skiff's objects: Pipelines and their
// versions, Experiments, Runs and RecurringRuns under /apis/v2beta1/, plus Skiff's lineage and
// artifact read-back endpoints. Requests and answers use KFP's JSON: snake_case, enums as names.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAbsolute, relative, sep } from 'node:path';
import { Kinds } from '../../api/index.js';
import type { ExperimentObj, PipelineObj, PipelineVersionObj, RecurringRunObj, RecurringRunSpec } from '../../api/kfp-objects.js';
import { KfpAnnotations, KfpLabels } from '../../api/kfp-objects.js';
import { isConflict, isNotFound } from '../../api/errors.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { now, ownerRefTo } from '../../api/meta.js';
import type { Run, RunTask, TaskStatus } from '../../api/pipelines.js';
import { RunLabels } from '../../api/pipelines.js';
import type { KindDef } from '../../api/registry.js';
import { isDns1123Subdomain } from '../../api/validation.js';
import type { Client } from '../../store/client.js';
import type { PipelineSpec, PlatformSpec } from '../../api/kfp/ir.js';
import { isPlainObject, parsePipelineFile, PipelineSpecError } from '../../api/kfp/ir.js';
import { validatePipelineSpec } from '../../api/kfp/ir-validate.js';
import { readBody } from '../body.js';
import { badRequest, conflict, KfpError, notFound, precondition, sendJson, sendKfpError, snake } from './errors.js';
import type { Shape } from './list.js';
import { listPage } from './list.js';
import { parseMultipart, packageText } from './multipart.js';
import { experimentShape, isFinished, pipelineShape, recurringRunShape, runArtifacts, runShape, versionShape } from './shapes.js';

export interface KfpApiDeps {
  client: Client;
  version: string;
  /** the run controller's default pipeline root: artifacts are read back only from under a run's root */
  pipelineRoot?: string;
}

const DEFAULT_NS = 'default';
const DEFAULT_EXPERIMENT = 'Default';

const KEYS = {
  pipelines: ['pipeline_id', 'display_name', 'name', 'description', 'created_at', 'namespace'],
  versions: ['pipeline_version_id', 'pipeline_id', 'display_name', 'name', 'description', 'created_at'],
  experiments: ['experiment_id', 'display_name', 'description', 'created_at', 'namespace', 'storage_state', 'last_run_created_at'],
  runs: ['run_id', 'display_name', 'description', 'created_at', 'scheduled_at', 'finished_at', 'state', 'experiment_id', 'storage_state', 'recurring_run_id', 'service_account'],
  recurringRuns: ['recurring_run_id', 'display_name', 'description', 'created_at', 'updated_at', 'mode', 'status', 'experiment_id', 'namespace', 'no_catchup'],
} as const;

const RUN_FIELDS = ['experiment_id', 'run_id', 'display_name', 'storage_state', 'description', 'pipeline_version_id', 'pipeline_spec', 'pipeline_version_reference', 'runtime_config', 'service_account', 'created_at', 'scheduled_at', 'finished_at', 'state', 'error', 'run_details', 'recurring_run_id', 'state_history', 'plugins_input', 'plugins_output'];
const RECURRING_FIELDS = ['recurring_run_id', 'display_name', 'description', 'pipeline_version_id', 'pipeline_spec', 'pipeline_version_reference', 'runtime_config', 'service_account', 'max_concurrency', 'trigger', 'mode', 'created_at', 'updated_at', 'status', 'error', 'no_catchup', 'namespace', 'experiment_id'];
const PIPELINE_FIELDS = ['pipeline_id', 'display_name', 'name', 'description', 'created_at', 'namespace', 'error', 'tags'];
const VERSION_FIELDS = ['pipeline_id', 'pipeline_version_id', 'display_name', 'name', 'description', 'created_at', 'package_url', 'code_source_url', 'pipeline_spec', 'error', 'tags'];
const EXPERIMENT_FIELDS = ['experiment_id', 'display_name', 'description', 'created_at', 'namespace', 'storage_state', 'last_run_created_at'];

const METRICS_TYPES = new Set(['system.Metrics', 'system.ClassificationMetrics', 'system.SlicedClassificationMetrics']);
const CONTENT_TYPES: Record<string, string> = { 'system.HTML': 'text/html; charset=utf-8', 'system.Markdown': 'text/markdown; charset=utf-8' };

/** A request object with its keys in snake_case (protojson accepts both), checked against the known fields. */
function fields(v: unknown, where: string, known: readonly string[]): Record<string, any> {
  if (v === undefined || v === null) return {};
  if (!isPlainObject(v)) throw badRequest(`${where}: expected a JSON object`);
  const out: Record<string, any> = {};
  for (const [k, val] of Object.entries(v)) {
    const s = snake(k);
    if (!known.includes(s)) throw badRequest(`${where ? where + ': ' : ''}unknown field "${k}"`);
    if (val !== null && val !== undefined) out[s] = val;
  }
  return out;
}

function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${field}: expected a string`);
  return v;
}

/** an int64 field: a JSON number or a decimal string */
function int64(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw badRequest(`${field}: ${JSON.stringify(v)} is not an integer`);
  return n;
}

function tagsOf(v: unknown, field: string): Record<string, string> | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  let t = v;
  if (typeof v === 'string') {
    try {
      t = JSON.parse(v);
    } catch {
      throw badRequest(`${field}: not a JSON object of strings`);
    }
  }
  if (!isPlainObject(t) || !Object.values(t).every((x) => typeof x === 'string')) throw badRequest(`${field}: expected an object of strings`);
  return t as Record<string, string>;
}

/** a pipeline_spec as sent: the PipelineSpec, or `{pipeline_spec, platform_spec}` */
function unwrapSpec(v: unknown, field: string): { spec: PipelineSpec; platform?: PlatformSpec } {
  if (!isPlainObject(v)) throw badRequest(`${field}: expected a PipelineSpec object`);
  if (isPlainObject(v.pipeline_spec) || isPlainObject(v.pipelineSpec)) {
    const spec = (v.pipeline_spec ?? v.pipelineSpec) as PipelineSpec;
    const platform = (v.platform_spec ?? v.platformSpec) as PlatformSpec | undefined;
    return isPlainObject(platform) ? { spec, platform } : { spec };
  }
  return { spec: v as PipelineSpec };
}

/** a deterministic UUID-shaped name, for objects that must exist once (the Default experiment) */
function stableId(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const q = (url: URL, name: string): string | undefined => {
  const v = url.searchParams.get(name);
  return v === null || v === '' ? undefined : v;
};

export class KfpApi {
  constructor(private readonly deps: KfpApiDeps) {}

  private get client(): Client {
    return this.deps.client;
  }

  /** serves one request under /apis/v2beta1 */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const upload = /^\/apis\/v2beta1\/pipelines\/upload(_version)?$/.test(path);
    try {
      await this.route(req, res, url, path);
    } catch (e) {
      sendKfpError(res, e, upload);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    const segs = path.split('/').filter(Boolean).slice(2).map((s) => decodeURIComponent(s));
    const last = segs[segs.length - 1] ?? '';
    const colon = last.lastIndexOf(':');
    const verb = colon >= 0 ? last.slice(colon + 1) : undefined;
    if (verb !== undefined) segs[segs.length - 1] = last.slice(0, colon);
    const [a = '', b, c, d, e, f, ...extra] = segs;
    const is = (m: string, n: number, v?: string): boolean => method === m && segs.length === n && verb === v && extra.length === 0;
    const ok = (body: unknown): void => sendJson(res, body);
    switch (a) {
      case 'healthz':
        if (is('GET', 1)) return ok({ commit_sha: 'unknown', tag_name: this.deps.version, multi_user: false, pipeline_store: 'database' });
        break;
      case 'auth':
        if (is('GET', 1)) return ok({});
        break;
      case 'pipelines':
        if (b === 'upload' && is('POST', 2)) return ok(await this.upload(req, url));
        if (b === 'upload_version' && is('POST', 2)) return ok(await this.uploadVersion(req, url));
        if (b === 'create' && is('POST', 2)) return ok(await this.createPipelineAndVersion(await this.json(req)));
        if (b === 'names' && c !== undefined && is('GET', 3)) return ok(await this.pipelineByName(c, q(url, 'namespace')));
        if (is('GET', 1)) return ok(await this.listPipelines(url));
        if (is('POST', 1)) return ok(pipelineShape(await this.createPipeline(fields(await this.json(req), 'pipeline', PIPELINE_FIELDS))));
        if (b !== undefined && segs.length === 2 && verb === undefined) {
          if (method === 'GET') return ok(pipelineShape(await this.get<PipelineObj>(Kinds.Pipeline, b, 'pipeline')));
          if (method === 'DELETE') return ok(await this.deletePipeline(b, url.searchParams.get('cascade') === 'true'));
          if (method === 'PATCH') return ok(await this.patchPipeline(b, await this.json(req)));
        }
        if (b !== undefined && c === 'versions') {
          if (is('GET', 3)) return ok(await this.listVersions(b, url));
          if (is('POST', 3)) return ok(versionShape(await this.createVersion(await this.get<PipelineObj>(Kinds.Pipeline, b, 'pipeline'), await this.json(req))));
          if (d !== undefined && is('GET', 4)) return ok(versionShape(await this.getVersion(b, d)));
          if (d !== undefined && is('PATCH', 4)) return ok(await this.patchVersion(b, d, await this.json(req)));
          if (d !== undefined && is('DELETE', 4)) {
            const v = await this.getVersion(b, d);
            await this.client.delete(Kinds.PipelineVersion, { namespace: v.metadata.namespace, name: v.metadata.name });
            return ok({});
          }
        }
        break;
      case 'experiments':
        if (is('GET', 1)) return ok(await this.listExperiments(url));
        if (is('POST', 1)) return ok(await this.createExperiment(await this.json(req)));
        if (b !== undefined && is('GET', 2)) return ok(await this.experimentWithLastRun(await this.get<ExperimentObj>(Kinds.Experiment, b, 'experiment')));
        if (b !== undefined && is('DELETE', 2)) {
          const x = await this.get<ExperimentObj>(Kinds.Experiment, b, 'experiment');
          await this.client.delete(Kinds.Experiment, { namespace: x.metadata.namespace, name: x.metadata.name });
          return ok({});
        }
        if (b !== undefined && is('POST', 2, 'archive')) return ok(await this.archiveExperiment(b, true));
        if (b !== undefined && is('POST', 2, 'unarchive')) return ok(await this.archiveExperiment(b, false));
        break;
      case 'runs':
        if (is('GET', 1)) return ok(await this.listRuns(url));
        if (is('POST', 1)) return ok(runShape(await this.createRun(await this.json(req), q(url, 'experiment_id'))));
        if (b !== undefined && is('GET', 2)) return ok(runShape(await this.get<Run>(Kinds.Run, b, 'run')));
        if (b !== undefined && is('DELETE', 2)) {
          const r = await this.get<Run>(Kinds.Run, b, 'run');
          await this.client.delete(Kinds.Run, { namespace: r.metadata.namespace, name: r.metadata.name });
          return ok({});
        }
        if (b !== undefined && segs.length === 2 && method === 'POST' && verb !== undefined) return ok(await this.runVerb(b, verb));
        if (b !== undefined && c === 'artifacts' && is('GET', 3)) return ok(await this.listArtifacts(b));
        if (b !== undefined && c === 'nodes' && d !== undefined && e === 'artifacts' && f !== undefined && is('GET', 6, 'read')) {
          return this.readArtifact(res, b, d, f, url);
        }
        break;
      case 'artifacts':
        if (b !== undefined && is('GET', 2)) return ok(await this.getArtifact(b, q(url, 'run_id')));
        break;
      case 'recurringruns':
        if (is('GET', 1)) return ok(await this.listRecurringRuns(url));
        if (is('POST', 1)) return ok(recurringRunShape(await this.createRecurringRun(await this.json(req))));
        if (b !== undefined && is('GET', 2)) return ok(recurringRunShape(await this.get<RecurringRunObj>(Kinds.RecurringRun, b, 'recurring run')));
        if (b !== undefined && is('DELETE', 2)) return ok(await this.deleteRecurringRun(b, q(url, 'propagation_policy')));
        if (b !== undefined && is('POST', 2, 'enable')) return ok(await this.setMode(b, 'ENABLE'));
        if (b !== undefined && is('POST', 2, 'disable')) return ok(await this.setMode(b, 'DISABLE'));
        break;
      case 'filters':
      case 'visualizations':
      case 'workflows':
      case 'scheduledworkflows':
        throw new KfpError(501, `${method} ${path} is not implemented by Skiff`);
    }
    throw new KfpError(404, `no route for ${method} ${path}`);
  }

  private async json(req: IncomingMessage): Promise<unknown> {
    const buf = await readBody(req);
    if (buf.length === 0) return {};
    try {
      return JSON.parse(buf.toString('utf8'));
    } catch (e) {
      throw badRequest(`the request body is not valid JSON: ${(e as Error).message}`);
    }
  }

  /** an object by its KFP id (its name) in whatever namespace it lives */
  private async get<T extends KObject>(def: KindDef, id: string, what: string): Promise<T & StoredObject> {
    if (!isDns1123Subdomain(id)) throw notFound(what, id);
    const page = await this.client.list<T>(def, { fieldSelector: `metadata.name=${id}` });
    const found = page.items[0];
    if (!found) throw notFound(what, id);
    return def === Kinds.Run ? ((await this.withTasks(found as unknown as Run & StoredObject)) as unknown as T & StoredObject) : found;
  }

  /** A running Run's task records are RunTask objects (an ended one carries them in status.tasks): join them in. */
  private async withTasks(run: Run & StoredObject): Promise<Run & StoredObject> {
    if (!run.status || run.status.tasks) return run;
    const records = await this.client.listAll<RunTask>(Kinds.RunTask, { namespace: run.metadata.namespace, labelSelector: `${RunLabels.run}=${run.metadata.name}` });
    const tasks: Record<string, TaskStatus> = {};
    for (const o of records) if (o.metadata.ownerReferences?.some((r) => r.uid === run.metadata.uid)) tasks[o.spec.path] = o.status;
    return { ...run, status: { ...run.status, tasks } };
  }

  private async all<T extends KObject>(def: KindDef, namespace?: string, labelSelector?: string): Promise<(T & StoredObject)[]> {
    return this.client.listAll<T>(def, { namespace, labelSelector });
  }

  private page(items: Shape[], url: URL, keys: readonly string[], idKey: string): { items: Shape[]; total_size: number; next_page_token?: string } {
    return listPage(items, { filter: q(url, 'filter'), sort_by: q(url, 'sort_by'), page_size: q(url, 'page_size'), page_token: q(url, 'page_token') }, { keys, idKey });
  }

  private static listBody(key: string, p: { items: Shape[]; total_size: number; next_page_token?: string }): Shape {
    const out: Shape = { [key]: p.items, total_size: p.total_size };
    if (p.next_page_token) out.next_page_token = p.next_page_token;
    return out;
  }

  // ---- pipelines ----

  private async pipelineNamed(namespace: string, name: string): Promise<(PipelineObj & StoredObject) | undefined> {
    return (await this.all<PipelineObj>(Kinds.Pipeline, namespace)).find((p) => (p.spec.name ?? p.spec.displayName) === name);
  }

  private async createPipeline(body: Record<string, any>): Promise<PipelineObj & StoredObject> {
    const namespace = str(body.namespace, 'pipeline.namespace') ?? DEFAULT_NS;
    const name = str(body.name, 'pipeline.name') ?? str(body.display_name, 'pipeline.display_name');
    if (!name) throw badRequest('pipeline.display_name: required: a pipeline needs a name or display_name');
    if (await this.pipelineNamed(namespace, name)) throw conflict(`a pipeline named ${JSON.stringify(name)} already exists in namespace ${JSON.stringify(namespace)}`);
    return this.client.create<PipelineObj>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Pipeline',
      metadata: { name: randomUUID(), namespace },
      spec: { name, displayName: str(body.display_name, 'pipeline.display_name') ?? name, description: str(body.description, 'pipeline.description'), tags: tagsOf(body.tags, 'pipeline.tags') },
    });
  }

  private async specFromVersionBody(body: Record<string, any>): Promise<{ spec: PipelineSpec; platform?: PlatformSpec }> {
    if (body.pipeline_spec !== undefined) return unwrapSpec(body.pipeline_spec, 'pipeline_version.pipeline_spec');
    const pkg = body.package_url;
    const url = isPlainObject(pkg) ? str(pkg.pipeline_url ?? pkg.pipelineUrl, 'pipeline_version.package_url.pipeline_url') : undefined;
    if (!url) throw badRequest('pipeline_version.pipeline_spec: required (or package_url.pipeline_url)');
    let text: string;
    try {
      if (url.startsWith('file://') || isAbsolute(url)) text = await readFile(url.replace(/^file:\/\//, ''), 'utf8');
      else {
        const r = await fetch(url, { signal: AbortSignal.timeout(15_000) });
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        text = packageText(Buffer.from(await r.arrayBuffer()), url).text;
      }
    } catch (e) {
      throw badRequest(`pipeline_version.package_url.pipeline_url: cannot read ${url}: ${(e as Error).message}`);
    }
    return this.parsePackage(text, url);
  }

  /** parses and checks an uploaded pipeline; a 400 says what is wrong with it */
  private parsePackage(text: string, fileName: string): { spec: PipelineSpec; platform?: PlatformSpec } {
    let parsed: { spec: PipelineSpec; platform?: PlatformSpec };
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

  private async createVersion(pipeline: PipelineObj & StoredObject, raw: unknown, given?: { spec: PipelineSpec; platform?: PlatformSpec }): Promise<PipelineVersionObj & StoredObject> {
    const body = fields(raw, 'pipeline_version', VERSION_FIELDS);
    const pid = str(body.pipeline_id, 'pipeline_version.pipeline_id');
    if (pid !== undefined && pid !== pipeline.metadata.name) throw badRequest(`pipeline_version.pipeline_id: ${JSON.stringify(pid)} is not the pipeline of the path (${pipeline.metadata.name})`);
    const { spec, platform } = given ?? await this.specFromVersionBody(body);
    const name = str(body.name, 'pipeline_version.name') ?? str(body.display_name, 'pipeline_version.display_name') ?? spec.pipelineInfo?.name;
    if (!name) throw badRequest('pipeline_version.display_name: required');
    const siblings = await this.all<PipelineVersionObj>(Kinds.PipelineVersion, pipeline.metadata.namespace, `${KfpLabels.pipelineId}=${pipeline.metadata.name}`);
    if (siblings.some((v) => (v.spec.name ?? v.spec.displayName) === name)) throw conflict(`pipeline ${pipeline.metadata.name} already has a version named ${JSON.stringify(name)}`);
    const pkg = isPlainObject(body.package_url) ? str(body.package_url.pipeline_url ?? body.package_url.pipelineUrl, 'pipeline_version.package_url.pipeline_url') : undefined;
    return this.client.create<PipelineVersionObj>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'PipelineVersion',
      metadata: { name: randomUUID(), namespace: pipeline.metadata.namespace, labels: { [KfpLabels.pipelineId]: pipeline.metadata.name }, ownerReferences: [ownerRefTo(pipeline)] },
      spec: {
        pipelineName: pipeline.metadata.name, name, displayName: str(body.display_name, 'pipeline_version.display_name') ?? name,
        description: str(body.description, 'pipeline_version.description'), pipelineSpec: spec, ...(platform ? { platformSpec: platform } : {}),
        codeSourceUrl: str(body.code_source_url, 'pipeline_version.code_source_url'), packageUrl: pkg, tags: tagsOf(body.tags, 'pipeline_version.tags'),
      },
    });
  }

  private async createPipelineAndVersion(raw: unknown): Promise<Shape> {
    const body = fields(raw, '', ['pipeline', 'pipeline_version']);
    const pbody = fields(body.pipeline, 'pipeline', PIPELINE_FIELDS);
    if (body.pipeline_version === undefined) throw badRequest('pipeline_version: required');
    const vbody = fields(body.pipeline_version, 'pipeline_version', VERSION_FIELDS);
    const parsed = await this.specFromVersionBody(vbody);
    const p = await this.createPipeline(pbody);
    try {
      await this.createVersion(p, { ...vbody, name: vbody.name ?? p.spec.name }, parsed);
    } catch (e) {
      await this.client.delete(Kinds.Pipeline, { namespace: p.metadata.namespace, name: p.metadata.name }).catch(() => undefined);
      throw e;
    }
    return pipelineShape(p);
  }

  private async uploadedFile(req: IncomingMessage): Promise<{ spec: PipelineSpec; platform?: PlatformSpec; fileName: string }> {
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
      pkg = packageText(file.data, file.filename ?? '');
    } catch (e) {
      throw badRequest(`uploadfile: ${(e as Error).message}`);
    }
    return { ...this.parsePackage(pkg.text, file.filename ?? pkg.name), fileName: file.filename ?? pkg.name };
  }

  private async upload(req: IncomingMessage, url: URL): Promise<Shape> {
    const { spec, platform, fileName } = await this.uploadedFile(req);
    const base = fileName.replace(/^.*\//, '').replace(/\.(ya?ml|json|zip|tar\.gz|tgz)$/i, '');
    const name = q(url, 'name') ?? q(url, 'display_name') ?? (base || spec.pipelineInfo.name);
    const p = await this.createPipeline({ name, display_name: q(url, 'display_name') ?? name, description: q(url, 'description'), namespace: q(url, 'namespace'), tags: q(url, 'tags') });
    try {
      await this.createVersion(p, { name, display_name: q(url, 'display_name') ?? name, description: q(url, 'description'), code_source_url: q(url, 'code_source_url'), tags: q(url, 'tags') }, { spec, ...(platform ? { platform } : {}) });
    } catch (e) {
      await this.client.delete(Kinds.Pipeline, { namespace: p.metadata.namespace, name: p.metadata.name }).catch(() => undefined);
      throw e;
    }
    return pipelineShape(p);
  }

  private async uploadVersion(req: IncomingMessage, url: URL): Promise<Shape> {
    const pid = q(url, 'pipelineid') ?? q(url, 'pipeline_id');
    if (!pid) throw badRequest('pipelineid: required: the id of the pipeline this version belongs to');
    const pipeline = await this.get<PipelineObj>(Kinds.Pipeline, pid, 'pipeline');
    const { spec, platform, fileName } = await this.uploadedFile(req);
    const base = fileName.replace(/^.*\//, '').replace(/\.(ya?ml|json|zip|tar\.gz|tgz)$/i, '');
    const name = q(url, 'name') ?? q(url, 'display_name') ?? (base || spec.pipelineInfo.name);
    return versionShape(await this.createVersion(pipeline, { name, display_name: q(url, 'display_name') ?? name, description: q(url, 'description'), code_source_url: q(url, 'code_source_url'), tags: q(url, 'tags') }, { spec, ...(platform ? { platform } : {}) }));
  }

  private async listPipelines(url: URL): Promise<Shape> {
    const items = (await this.all<PipelineObj>(Kinds.Pipeline, q(url, 'namespace'))).map(pipelineShape);
    return KfpApi.listBody('pipelines', this.page(items, url, KEYS.pipelines, 'pipeline_id'));
  }

  private async pipelineByName(name: string, namespace?: string): Promise<Shape> {
    const p = (await this.all<PipelineObj>(Kinds.Pipeline, namespace ?? DEFAULT_NS)).find((x) => (x.spec.name ?? x.spec.displayName) === name);
    if (!p) throw notFound('pipeline named', name);
    return pipelineShape(p);
  }

  private async patchPipeline(id: string, raw: unknown): Promise<Shape> {
    const p = await this.get<PipelineObj>(Kinds.Pipeline, id, 'pipeline');
    const body = fields(raw, 'pipeline', PIPELINE_FIELDS);
    const spec: Record<string, unknown> = {};
    if (body.display_name !== undefined) spec.displayName = str(body.display_name, 'pipeline.display_name');
    if (body.description !== undefined) spec.description = str(body.description, 'pipeline.description');
    if (body.tags !== undefined) spec.tags = tagsOf(body.tags, 'pipeline.tags');
    return pipelineShape(await this.client.patch(Kinds.Pipeline, { namespace: p.metadata.namespace, name: id }, { spec }, 'merge') as PipelineObj & StoredObject);
  }

  private async patchVersion(pid: string, vid: string, raw: unknown): Promise<Shape> {
    const v = await this.getVersion(pid, vid);
    const body = fields(raw, 'pipeline_version', VERSION_FIELDS);
    if (body.pipeline_spec !== undefined) throw badRequest('pipeline_version.pipeline_spec: a version\'s spec cannot be changed; upload a new version');
    const spec: Record<string, unknown> = {};
    if (body.display_name !== undefined) spec.displayName = str(body.display_name, 'pipeline_version.display_name');
    if (body.description !== undefined) spec.description = str(body.description, 'pipeline_version.description');
    if (body.tags !== undefined) spec.tags = tagsOf(body.tags, 'pipeline_version.tags');
    return versionShape(await this.client.patch(Kinds.PipelineVersion, { namespace: v.metadata.namespace, name: vid }, { spec }, 'merge') as PipelineVersionObj & StoredObject);
  }

  private async deletePipeline(id: string, cascade: boolean): Promise<Shape> {
    const p = await this.get<PipelineObj>(Kinds.Pipeline, id, 'pipeline');
    const versions = await this.all<PipelineVersionObj>(Kinds.PipelineVersion, p.metadata.namespace, `${KfpLabels.pipelineId}=${id}`);
    if (versions.length && !cascade) {
      throw precondition(`pipeline ${id} has ${versions.length} version(s); delete them first, or delete with cascade=true`);
    }
    for (const v of versions) {
      await this.client.delete(Kinds.PipelineVersion, { namespace: v.metadata.namespace, name: v.metadata.name }).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
    }
    await this.client.delete(Kinds.Pipeline, { namespace: p.metadata.namespace, name: id });
    return {};
  }

  private async listVersions(pid: string, url: URL): Promise<Shape> {
    const p = await this.get<PipelineObj>(Kinds.Pipeline, pid, 'pipeline');
    const items = (await this.all<PipelineVersionObj>(Kinds.PipelineVersion, p.metadata.namespace, `${KfpLabels.pipelineId}=${pid}`)).map(versionShape);
    return KfpApi.listBody('pipeline_versions', this.page(items, url, KEYS.versions, 'pipeline_version_id'));
  }

  private async getVersion(pid: string, vid: string): Promise<PipelineVersionObj & StoredObject> {
    const v = await this.get<PipelineVersionObj>(Kinds.PipelineVersion, vid, 'pipeline version');
    if (v.spec.pipelineName !== pid) throw notFound(`pipeline version of pipeline ${pid}`, vid);
    return v;
  }

  // ---- experiments ----

  /** the namespace's Default experiment, made on first use */
  private async defaultExperiment(namespace: string): Promise<ExperimentObj & StoredObject> {
    const name = stableId(`skiff-default-experiment/${namespace}`);
    const found = await this.client.find<ExperimentObj>(Kinds.Experiment, { namespace, name });
    if (found) return found;
    try {
      return await this.client.create<ExperimentObj>({
        apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Experiment',
        metadata: { name, namespace, labels: { [KfpLabels.storageState]: 'AVAILABLE' } },
        spec: { displayName: DEFAULT_EXPERIMENT, description: 'All runs created without specifying an experiment are grouped here.' },
      });
    } catch (e) {
      if (isConflict(e)) return this.client.get<ExperimentObj>(Kinds.Experiment, { namespace, name });
      throw e;
    }
  }

  private async createExperiment(raw: unknown): Promise<Shape> {
    const body = fields(raw, 'experiment', EXPERIMENT_FIELDS);
    const displayName = str(body.display_name, 'experiment.display_name');
    if (!displayName) throw badRequest('experiment.display_name: required');
    const namespace = str(body.namespace, 'experiment.namespace') ?? DEFAULT_NS;
    if (displayName === DEFAULT_EXPERIMENT) return experimentShape(await this.defaultExperiment(namespace));
    const existing = await this.all<ExperimentObj>(Kinds.Experiment, namespace);
    if (existing.some((x) => x.spec.displayName === displayName)) throw conflict(`an experiment named ${JSON.stringify(displayName)} already exists in namespace ${JSON.stringify(namespace)}`);
    const x = await this.client.create<ExperimentObj>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Experiment',
      metadata: { name: randomUUID(), namespace, labels: { [KfpLabels.storageState]: 'AVAILABLE' } },
      spec: { displayName, description: str(body.description, 'experiment.description') },
    });
    return experimentShape(x);
  }

  private async lastRuns(namespace?: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const r of await this.all<Run>(Kinds.Run, namespace)) {
      const x = r.metadata.labels?.[KfpLabels.experimentId];
      if (x && (out.get(x) ?? '') < r.metadata.creationTimestamp) out.set(x, r.metadata.creationTimestamp);
    }
    return out;
  }

  private async experimentWithLastRun(x: ExperimentObj & StoredObject): Promise<Shape> {
    return experimentShape(x, (await this.lastRuns(x.metadata.namespace)).get(x.metadata.name));
  }

  private async listExperiments(url: URL): Promise<Shape> {
    const namespace = q(url, 'namespace');
    await this.defaultExperiment(namespace ?? DEFAULT_NS);
    const last = await this.lastRuns(namespace);
    const items = (await this.all<ExperimentObj>(Kinds.Experiment, namespace)).map((x) => experimentShape(x, last.get(x.metadata.name)));
    return KfpApi.listBody('experiments', this.page(items, url, KEYS.experiments, 'experiment_id'));
  }

  private async setLabel(def: KindDef, o: StoredObject, key: string, value: string): Promise<void> {
    if (o.metadata.labels?.[key] === value) return;
    await this.client.patch(def, { namespace: o.metadata.namespace, name: o.metadata.name }, { metadata: { labels: { [key]: value } } }, 'merge');
  }

  /** archiving an experiment archives its runs and disables its recurring runs, as KFP does */
  private async archiveExperiment(id: string, archive: boolean): Promise<Shape> {
    const x = await this.get<ExperimentObj>(Kinds.Experiment, id, 'experiment');
    await this.setLabel(Kinds.Experiment, x, KfpLabels.storageState, archive ? 'ARCHIVED' : 'AVAILABLE');
    if (archive) {
      for (const r of await this.all<Run>(Kinds.Run, x.metadata.namespace, `${KfpLabels.experimentId}=${id}`)) await this.setLabel(Kinds.Run, r, KfpLabels.storageState, 'ARCHIVED');
      for (const rr of await this.all<RecurringRunObj>(Kinds.RecurringRun, x.metadata.namespace)) {
        if (rr.spec.experimentId === id && rr.spec.mode !== 'DISABLE') await this.setMode(rr.metadata.name, 'DISABLE');
      }
    }
    return {};
  }

  // ---- runs ----

  private async experimentFor(id: string | undefined, namespace?: string): Promise<ExperimentObj & StoredObject> {
    if (!id) return this.defaultExperiment(namespace ?? DEFAULT_NS);
    try {
      return await this.get<ExperimentObj>(Kinds.Experiment, id, 'experiment');
    } catch (e) {
      if (e instanceof KfpError && e.http === 404) throw badRequest(`experiment_id: experiment ${JSON.stringify(id)} not found`);
      throw e;
    }
  }

  /** the pipeline to run: a spec in the request, or a stored pipeline version */
  private async pipelineSource(body: Record<string, any>, where: string): Promise<{ spec: PipelineSpec; platform?: PlatformSpec; pipelineId?: string; versionId?: string }> {
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
      v = await this.get<PipelineVersionObj>(Kinds.PipelineVersion, vid, 'pipeline version');
    } catch (e) {
      if (e instanceof KfpError && e.http === 404) throw badRequest(`${where}.pipeline_version_reference.pipeline_version_id: pipeline version ${JSON.stringify(vid)} not found`);
      throw e;
    }
    const pid = str(ref.pipeline_id, `${where}.pipeline_version_reference.pipeline_id`);
    if (pid && pid !== v.spec.pipelineName) throw badRequest(`${where}.pipeline_version_reference: version ${vid} belongs to pipeline ${v.spec.pipelineName}, not ${pid}`);
    return { spec: v.spec.pipelineSpec, ...(v.spec.platformSpec ? { platform: v.spec.platformSpec as PlatformSpec } : {}), pipelineId: v.spec.pipelineName, versionId: vid };
  }

  private runtimeConfig(v: unknown, where: string): { parameters: Record<string, unknown>; pipelineRoot?: string } {
    const rc = fields(v, `${where}.runtime_config`, ['parameters', 'pipeline_root']);
    if (rc.parameters !== undefined && !isPlainObject(rc.parameters)) throw badRequest(`${where}.runtime_config.parameters: expected an object`);
    const root = str(rc.pipeline_root, `${where}.runtime_config.pipeline_root`);
    return { parameters: (rc.parameters ?? {}) as Record<string, unknown>, ...(root ? { pipelineRoot: root } : {}) };
  }

  private async createRun(raw: unknown, queryExperiment?: string): Promise<Run & StoredObject> {
    const body = fields(raw, 'run', RUN_FIELDS);
    const displayName = str(body.display_name, 'run.display_name');
    if (!displayName) throw badRequest('run.display_name: required');
    const experiment = await this.experimentFor(str(body.experiment_id, 'run.experiment_id') ?? queryExperiment);
    const src = await this.pipelineSource(body, 'run');
    const rc = this.runtimeConfig(body.runtime_config, 'run');
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
    return this.client.create<Run>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run',
      metadata: { name: randomUUID(), namespace: experiment.metadata.namespace, labels, annotations },
      spec: { pipelineSpec: src.spec, ...(src.platform ? { platformSpec: src.platform } : {}), parameters: rc.parameters, ...(rc.pipelineRoot ? { pipelineRoot: rc.pipelineRoot } : {}) },
    });
  }

  private async listRuns(url: URL): Promise<Shape> {
    const x = q(url, 'experiment_id');
    const items = (await this.all<Run>(Kinds.Run, q(url, 'namespace'), x ? `${KfpLabels.experimentId}=${x}` : undefined)).map((r) => runShape(r, { details: false }));
    return KfpApi.listBody('runs', this.page(items, url, KEYS.runs, 'run_id'));
  }

  private async runVerb(id: string, verb: string): Promise<Shape> {
    const r = await this.get<Run>(Kinds.Run, id, 'run');
    const key = { namespace: r.metadata.namespace, name: r.metadata.name };
    const state = r.status?.state ?? 'PENDING';
    switch (verb) {
      case 'archive':
      case 'unarchive':
        await this.setLabel(Kinds.Run, r, KfpLabels.storageState, verb === 'archive' ? 'ARCHIVED' : 'AVAILABLE');
        return {};
      case 'terminate':
        if (isFinished(state)) throw precondition(`run ${id} has already finished (${state}); only unfinished runs can be terminated`);
        if (r.spec.terminate !== true) await this.client.patch(Kinds.Run, key, { spec: { terminate: true } }, 'merge');
        return {};
      case 'retry': {
        if (state !== 'FAILED' && state !== 'CANCELED') throw precondition(`run ${id} is ${state}; only FAILED or CANCELED runs can be retried`);
        const gen = r.spec.retryGeneration ?? 0;
        if (gen > (r.status?.retryGeneration ?? 0)) throw precondition(`run ${id} is already being retried`);
        await this.client.patch(Kinds.Run, key, { spec: { retryGeneration: gen + 1, ...(r.spec.terminate ? { terminate: false } : {}) } }, 'merge');
        return {};
      }
    }
    throw new KfpError(404, `no route for POST /apis/v2beta1/runs/${id}:${verb}`);
  }

  // ---- artifacts (Skiff's lineage and read-back) ----

  private async listArtifacts(runId: string): Promise<Shape> {
    const r = await this.get<Run>(Kinds.Run, runId, 'run');
    const artifacts = runArtifacts(r).map((a) => ({ run_id: r.metadata.name, ...a }));
    return { artifacts, total_size: artifacts.length };
  }

  private async getArtifact(artifactId: string, runId?: string): Promise<Shape> {
    const runs = runId ? [await this.get<Run>(Kinds.Run, runId, 'run')] : await Promise.all((await this.all<Run>(Kinds.Run)).map((r) => this.withTasks(r)));
    for (const r of runs) {
      const a = runArtifacts(r).find((x) => x.artifact_id === artifactId);
      if (a) return { run_id: r.metadata.name, ...a };
    }
    throw notFound('artifact', artifactId);
  }

  private async readArtifact(res: ServerResponse, runId: string, nodeId: string, name: string, url: URL): Promise<void> {
    const r = await this.get<Run>(Kinds.Run, runId, 'run');
    const task = nodeId === 'root' ? { outputs: r.status?.outputs, inputs: undefined } : r.status?.tasks?.[nodeId];
    if (!task) throw notFound(`task of run ${runId}`, nodeId);
    const list = task.outputs?.artifacts?.[name] ?? task.inputs?.artifacts?.[name];
    if (!list || list.length === 0) throw notFound(`artifact of task ${nodeId}`, name);
    const index = Number(q(url, 'index') ?? 0);
    const a = list[index];
    if (!Number.isInteger(index) || !a) throw badRequest(`index: ${q(url, 'index')} is out of range (the artifact list has ${list.length})`);
    const schema = String(a.type?.schemaTitle ?? '');
    if (METRICS_TYPES.has(schema)) return sendJson(res, a.metadata ?? {});
    const rootUri = r.spec.pipelineRoot ?? this.deps.pipelineRoot;
    if (!rootUri) throw precondition('no pipeline root is known; artifacts cannot be read back');
    const local = (u: string): string => (u.startsWith('file://') ? u.slice('file://'.length) : u);
    const file = local(a.uri);
    if (!isAbsolute(file)) throw new KfpError(403, `artifact ${name}: ${a.uri} is not a local file under the pipeline root; Skiff reads back only local artifacts`);
    let real: string;
    let root: string;
    try {
      root = await realpath(local(rootUri));
      real = await realpath(file);
    } catch {
      throw notFound('artifact content', a.uri);
    }
    const rel = relative(root, real);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep)[0] === '..') throw new KfpError(403, `artifact ${name}: ${a.uri} is outside the pipeline root ${rootUri}`);
    const st = await stat(real);
    if (st.isDirectory()) throw badRequest(`artifact ${name}: ${a.uri} is a directory; read-back serves files`);
    res.writeHead(200, { 'content-type': CONTENT_TYPES[schema] ?? 'application/octet-stream', 'content-length': st.size });
    await new Promise<void>((resolve, reject) => {
      const s = createReadStream(real);
      s.on('error', reject);
      s.on('end', () => resolve());
      s.pipe(res);
    });
  }

  // ---- recurring runs ----

  private async createRecurringRun(raw: unknown): Promise<RecurringRunObj & StoredObject> {
    const body = fields(raw, 'recurring_run', RECURRING_FIELDS);
    const displayName = str(body.display_name, 'recurring_run.display_name');
    if (!displayName) throw badRequest('recurring_run.display_name: required');
    const namespace = str(body.namespace, 'recurring_run.namespace');
    const experiment = await this.experimentFor(str(body.experiment_id, 'recurring_run.experiment_id'), namespace);
    const src = await this.pipelineSource(body, 'recurring_run');
    const rc = this.runtimeConfig(body.runtime_config, 'recurring_run');
    const trig = fields(body.trigger, 'recurring_run.trigger', ['cron_schedule', 'periodic_schedule']);
    const trigger: RecurringRunSpec['trigger'] = {};
    const window = (w: Record<string, any>, where: string): { startTime?: string; endTime?: string } => {
      const startTime = str(w.start_time, `${where}.start_time`);
      const endTime = str(w.end_time, `${where}.end_time`);
      return { ...(startTime ? { startTime } : {}), ...(endTime ? { endTime } : {}) };
    };
    if (trig.cron_schedule !== undefined) {
      const where = 'recurring_run.trigger.cron_schedule';
      const w = fields(trig.cron_schedule, where, ['start_time', 'end_time', 'cron']);
      trigger.cronSchedule = { cron: str(w.cron, `${where}.cron`) ?? '', ...window(w, where) };
    }
    if (trig.periodic_schedule !== undefined) {
      const where = 'recurring_run.trigger.periodic_schedule';
      const w = fields(trig.periodic_schedule, where, ['start_time', 'end_time', 'interval_second']);
      trigger.periodicSchedule = { intervalSecond: int64(w.interval_second, `${where}.interval_second`) ?? 0, ...window(w, where) };
    }
    const mode = str(body.mode, 'recurring_run.mode');
    if (mode !== undefined && !['ENABLE', 'DISABLE', 'MODE_UNSPECIFIED'].includes(mode)) throw badRequest(`recurring_run.mode: ${JSON.stringify(mode)} is not one of ENABLE, DISABLE`);
    if (body.no_catchup !== undefined && typeof body.no_catchup !== 'boolean') throw badRequest('recurring_run.no_catchup: expected a boolean');
    const spec: RecurringRunSpec = {
      displayName,
      description: str(body.description, 'recurring_run.description'),
      pipelineSpec: src.spec,
      ...(src.platform ? { platformSpec: src.platform as unknown as Record<string, unknown> } : {}),
      ...(src.versionId ? { pipelineVersionReference: { pipelineId: src.pipelineId, pipelineVersionId: src.versionId } } : {}),
      runtimeConfig: rc,
      trigger,
      maxConcurrency: int64(body.max_concurrency, 'recurring_run.max_concurrency') ?? 1,
      noCatchup: body.no_catchup ?? false,
      mode: mode === 'DISABLE' ? 'DISABLE' : 'ENABLE',
      experimentId: experiment.metadata.name,
      serviceAccount: str(body.service_account, 'recurring_run.service_account'),
    };
    return this.client.create<RecurringRunObj>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'RecurringRun',
      metadata: { name: randomUUID(), namespace: experiment.metadata.namespace, labels: { [KfpLabels.experimentId]: experiment.metadata.name }, annotations: { [KfpAnnotations.updatedAt]: now() } },
      spec,
    });
  }

  private async listRecurringRuns(url: URL): Promise<Shape> {
    const x = q(url, 'experiment_id');
    const items = (await this.all<RecurringRunObj>(Kinds.RecurringRun, q(url, 'namespace'), x ? `${KfpLabels.experimentId}=${x}` : undefined)).map(recurringRunShape);
    // the proto field is `recurringRuns`, and kfp.Client reads it so
    return KfpApi.listBody('recurringRuns', this.page(items, url, KEYS.recurringRuns, 'recurring_run_id'));
  }

  private async deleteRecurringRun(id: string, policy?: string): Promise<Shape> {
    const rr = await this.get<RecurringRunObj>(Kinds.RecurringRun, id, 'recurring run');
    const p = (policy ?? '').toUpperCase();
    if (p && !['DELETE_PROPAGATION_POLICY_UNSPECIFIED', 'FOREGROUND', 'BACKGROUND', 'ORPHAN'].includes(p)) throw badRequest(`propagation_policy: ${JSON.stringify(policy)} is not one of FOREGROUND, BACKGROUND, ORPHAN`);
    const propagationPolicy = p === 'ORPHAN' ? 'Orphan' : p === 'FOREGROUND' ? 'Foreground' : 'Background';
    await this.client.delete(Kinds.RecurringRun, { namespace: rr.metadata.namespace, name: id }, { propagationPolicy });
    return {};
  }

  private async setMode(id: string, mode: 'ENABLE' | 'DISABLE'): Promise<Shape> {
    const rr = await this.get<RecurringRunObj>(Kinds.RecurringRun, id, 'recurring run');
    if (rr.spec.mode !== mode) {
      await this.client.patch(Kinds.RecurringRun, { namespace: rr.metadata.namespace, name: id }, { metadata: { annotations: { [KfpAnnotations.updatedAt]: now() } }, spec: { mode } }, 'merge');
    }
    return {};
  }
}
