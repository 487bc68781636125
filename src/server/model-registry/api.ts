// Kubeflow Model Registry's REST API, /api/model_registry/v1alpha3 and /api/model_registry/v1 (what
// the `model-registry` Python client speaks), over Skiff's modelregistry.skiff.dev objects: registered models, model versions,
// model artifacts and the generic artifacts, serving environments, inference services and their
// serves, experiments and experiment runs with their metric history. Collections answer GET (list)
// and POST (create), items GET and PATCH (no DELETE: an entity is archived through its state), the
// singular paths find one by name, externalId and parentResourceId.
//
// One namespace is one registry. A request's namespace is, first to last: the path prefix
// `/model-registry/<namespace>` (the Python client takes it as part of its server address), the
// `namespace` query parameter, a ServiceAccount caller's own namespace, the one Profile a signed-in
// user owns, and `default` when tenancy is off. With tenancy on, each request is authorized in that
// namespace as the REST verb on the entity's kind (`get`/`list`/`create`/`update` on
// `registeredmodels.modelregistry.skiff.dev`), as Kubeflow's roles grant them.
//
// Beside upstream's operations, Skiff's aliases on a model's versions and their history (aliases.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProfileKind, type ProfileObject } from '../../api/profiles.js';
import { modelRegistryGroup, RegistryLabels } from '../../api/model-registry.js';
import { Kinds } from '../../api/index.js';
import type { Client } from '../../store/client.js';
import { forbidden } from '../auth/messages.js';
import { requestUser, type Authorizer } from '../auth/types.js';
import { isPlainObject } from '../../util/objects.js';
import { readBody as readRequestBody } from '../body.js';
import type { Route } from '../kfp/router.js';
import { Router } from '../kfp/router.js';
import {
  artifactTypes, DataSet, DocArtifact, Experiment, ExperimentRun, filterableOf, InferenceService, isId, Metric, ModelArtifact, ModelVersion,
  Parameter, readBody, RegisteredModel, ServeModel, ServingEnvironment, shape, type Entity,
} from './entities.js';
import { aliasHistory, deleteAlias, listAliases, putAlias } from './aliases.js';
import { badRequest, notFound, RegistryError, sendJson, sendRegistryError } from './errors.js';
import { pipelineSource, SOURCE_FIELDS } from './lineage.js';
import { listPage, type ListBody, type Shaped } from './list.js';
import { RegistryStore, words, type Obj } from './store.js';

const PREFIX_DEPTH = 3;
/**
 * The API's paths, under either version prefix: the OpenAPI document names v1alpha3, and the
 * `model-registry` client on PyPI (0.3.x) calls the same operations under /api/model_registry/v1.
 */
const PLAIN = /^\/api\/model_registry\/(v1alpha3|v1)(\/.*)?$/;
const NAMESPACED = /^\/model-registry\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\/api\/model_registry\/(v1alpha3|v1)(\/.*)?)$/;

export interface ModelRegistryDeps {
  client: Client;
  /** tenancy on: every request is authorized in its namespace; without it, nothing is asked */
  authorizer?: Authorizer;
}

/** whether a path is the registry's, and the namespace its prefix names */
export function matchRegistryPath(path: string): { namespace?: string; path: string } | undefined {
  if (PLAIN.test(path)) return { path };
  const m = NAMESPACED.exec(path);
  return m ? { namespace: m[1] as string, path: m[3] as string } : undefined;
}

/** one request: the store, and the namespace (registry) it works in */
interface Scope {
  store: RegistryStore;
  ns: string;
  authorize: (e: Entity, verb: 'get' | 'list' | 'create' | 'update' | 'delete') => void;
  /** whether the caller may list the namespace's pipeline runs: lineage names a run only to one who may see it */
  mayReadRuns: () => boolean;
}

/** where a find's candidates carry their parent's id while they are compared (not a field of any entity) */
const PARENT = '\u0000parent';

const ARTIFACT_ENTITIES = [ModelArtifact, DocArtifact, DataSet, Metric, Parameter];

/** the request body: a JSON object, as every operation's request schema is */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const buf = await readRequestBody(req);
  if (buf.length === 0) throw badRequest('the request body is empty: expected a JSON object');
  let v: unknown;
  try {
    v = JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw badRequest(`the request body is not valid JSON: ${(e as Error).message}`);
  }
  if (!isPlainObject(v)) throw badRequest(`the request body must be a JSON object, not ${Array.isArray(v) ? 'an array' : JSON.stringify(v)}`);
  return v;
}

const q = (url: URL, name: string): string | undefined => {
  const v = url.searchParams.get(name);
  return v === null || v === '' ? undefined : v;
};

function pathId(params: Record<string, string>, name: string): string {
  const id = params[name] ?? '';
  if (!isId(id)) throw badRequest(`${name}: ${JSON.stringify(id)} is not an id (a decimal number)`);
  return id;
}

const artifactShape = (e: Entity, o: Obj): Shaped => ({ ...shape(o), artifactType: e.artifactType });
/** a mixed list's filter reads each artifact's own properties by its type */
const artifactFilterable = (i: Shaped): Set<string> => filterableOf(artifactTypes[String(i.artifactType)] ?? ModelArtifact);

/** the parent an entity names by id must exist in the same registry */
async function checkParent(s: Scope, e: Entity, fields: Record<string, unknown>): Promise<Record<string, string>> {
  if (!e.parent) return {};
  const id = fields[e.parent.field];
  if (typeof id !== 'string') return {};
  const parent = await s.store.find(e.parent.of(), s.ns, id);
  if (!parent) throw notFound(`${e.type}.${e.parent.field}: no ${words(e.parent.of())} found for id ${id}`);
  return { [RegistryLabels.parent]: id };
}

/** an inference service's model and version references must name existing entities */
async function checkReferences(s: Scope, e: Entity, fields: Record<string, unknown>): Promise<void> {
  const refs: [string, Entity][] = e === InferenceService ? [['registeredModelId', RegisteredModel], ['modelVersionId', ModelVersion]]
    : e === ServeModel ? [['modelVersionId', ModelVersion]]
      : ARTIFACT_ENTITIES.includes(e) ? [['experimentId', Experiment], ['experimentRunId', ExperimentRun]] : [];
  for (const [field, of] of refs) {
    const id = fields[field];
    if (typeof id === 'string' && !(await s.store.find(of, s.ns, id))) throw notFound(`${e.type}.${field}: no ${words(of)} found for id ${id}`);
  }
}

/**
 * A model artifact whose `uri` a request sets gets its modelSource* fields from the URI's lineage when
 * the URI is a pipeline artifact's (see lineage.ts), unless the caller gives any of them (values equal
 * to the stored ones, which the Python client sends back on every update, are not the caller's). The
 * label says who wrote them: the caller's stay whatever the URI becomes; Skiff's follow the URI, and
 * go when it stops being a pipeline artifact's. Returns the label to set, `fields` gets the values.
 */
async function fillSource(s: Scope, e: Entity, fields: Record<string, unknown>, current?: Obj): Promise<Record<string, string>> {
  if (e !== ModelArtifact) return {};
  if (SOURCE_FIELDS.some((f) => fields[f] !== undefined && fields[f] !== current?.spec[f])) return { [RegistryLabels.modelSource]: 'given' };
  const uri = fields.uri;
  if (typeof uri !== 'string') return {};
  const byPipeline = current?.metadata.labels?.[RegistryLabels.modelSource] === 'pipeline';
  if (current && !byPipeline && SOURCE_FIELDS.some((f) => current.spec[f] !== undefined)) return {};
  if (byPipeline && current?.spec.uri === uri) return {};
  // a caller who may not see the runs learns nothing of them from the fields Skiff fills
  const source = s.mayReadRuns() ? await pipelineSource(s.store.client, s.ns, uri) : undefined;
  if (!source) {
    if (byPipeline) for (const f of SOURCE_FIELDS) fields[f] = undefined;
    return {};
  }
  for (const f of SOURCE_FIELDS) fields[f] = source[f];
  return { [RegistryLabels.modelSource]: 'pipeline' };
}

async function create(s: Scope, e: Entity, body: unknown, extraLabels: Record<string, string> = {}): Promise<Obj> {
  s.authorize(e, 'create');
  const fields = readBody(e, body, 'create');
  const labels = { ...(await checkParent(s, e, fields)), ...extraLabels, ...(await fillSource(s, e, fields)) };
  await checkReferences(s, e, fields);
  // the scope a name is unique in: the parent, or the experiment run an artifact was logged in
  const siblings = Object.fromEntries([RegistryLabels.parent, RegistryLabels.experimentRun].flatMap((k) => (labels[k] ? [[k, labels[k] as string]] : [])));
  return s.store.exclusive(s.ns, async () => {
    await s.store.checkUnique(e, s.ns, fields, siblings);
    return s.store.create(e, s.ns, fields, labels);
  });
}

async function update(s: Scope, e: Entity, o: Obj, body: unknown): Promise<Obj> {
  s.authorize(e, 'update');
  readBody(e, body, 'update', o.spec);
  // read again in turn: a PATCH racing another applies to what the other wrote, not to a stale copy
  return s.store.exclusive(s.ns, async () => {
    const fresh = await s.store.get(e, s.ns, o.metadata.name);
    const fields = readBody(e, body, 'update', fresh.spec);
    await checkReferences(s, e, fields);
    const parent = fresh.metadata.labels?.[RegistryLabels.parent];
    await s.store.checkUnique(e, s.ns, { ...fields, name: undefined }, parent ? { [RegistryLabels.parent]: parent } : {}, fresh.metadata.name);
    return s.store.update(fresh, fields, await fillSource(s, e, fields, fresh));
  });
}

/** the find endpoints: one entity by name (with parentResourceId where names repeat across parents) or by externalId */
function findOne(url: URL, items: Shaped[], e: Entity, parentField?: string): Shaped {
  // the parent is compared through its label, which artifacts (attached, not naming a parent) have too
  const name = q(url, 'name');
  const externalId = q(url, 'externalId');
  const parent = q(url, 'parentResourceId');
  if (name === undefined && externalId === undefined) throw badRequest(`invalid parameters call, supply either name${parentField ? ' (and parentResourceId)' : ''} or externalId`);
  if (parent !== undefined && !isId(parent)) throw badRequest(`parentResourceId: ${JSON.stringify(parent)} is not an id`);
  const found = items.filter((i) => (name === undefined || i.name === name) && (externalId === undefined || i.externalId === externalId) && (parent === undefined || i[PARENT] === parent));
  for (const i of found) delete i[PARENT];
  const desc = `name=${name ?? ''}, externalId=${externalId ?? ''}${parentField ? `, parentResourceId=${parent ?? ''}` : ''}`;
  if (found.length === 0) throw notFound(`no ${words(e)} found for ${desc}`);
  if (found.length > 1) throw notFound(`multiple ${words(e)}s found for ${desc}: name the parent (parentResourceId)`);
  return found[0] as Shaped;
}

/** the routes of an entity with its own collection: list, create, get, update, find */
function entityRoutes(e: Entity, collection: string, single: string, idParam: string): Route<Scope>[] {
  const parentField = e.parent?.field;
  return [
    {
      method: 'GET', pattern: `/${collection}`, handle: async ({ ctx: s, url }) => {
        s.authorize(e, 'list');
        return listPage((await s.store.list(e, s.ns)).map(shape), url, undefined, () => filterableOf(e));
      },
    },
    { method: 'POST', pattern: `/${collection}`, handle: async ({ ctx: s, req, res }) => created(res, shape(await create(s, e, await jsonBody(req)))) },
    {
      method: 'GET', pattern: `/${collection}/{${idParam}}`, handle: async ({ ctx: s, params }) => {
        s.authorize(e, 'get');
        return shape(await s.store.get(e, s.ns, pathId(params, idParam)));
      },
    },
    {
      method: 'PATCH', pattern: `/${collection}/{${idParam}}`, handle: async ({ ctx: s, req, params }) => {
        const o = await s.store.get(e, s.ns, pathId(params, idParam));
        return shape(await update(s, e, o, await jsonBody(req)));
      },
    },
    {
      method: 'GET', pattern: `/${single}`, handle: async ({ ctx: s, url }) => {
        s.authorize(e, 'get');
        return findOne(url, (await s.store.list(e, s.ns)).map((o) => ({ ...shape(o), [PARENT]: o.metadata.labels?.[RegistryLabels.parent] })), e, parentField ?? (e.artifactType ? 'modelVersionId' : undefined));
      },
    },
  ];
}

function created(res: ServerResponse, body: Shaped): undefined {
  sendJson(res, body, 201);
  return undefined;
}

/** the children of a parent, found by the parent label, with the nested lists' own name and externalId filters */
async function children(s: Scope, e: Entity, parentId: string, url: URL): Promise<ListBody> {
  s.authorize(e, 'list');
  const name = q(url, 'name');
  const externalId = q(url, 'externalId');
  const items = (await s.store.list(e, s.ns, { [RegistryLabels.parent]: parentId })).map(shape);
  return listPage(items, url, (i) => (name === undefined || i.name === name) && (externalId === undefined || i.externalId === externalId), () => filterableOf(e));
}

/** which artifact type a body is: its artifactType, model-artifact when it names none */
function artifactEntity(body: unknown): Entity {
  const t = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).artifactType : undefined;
  if (t === undefined || t === null) return ModelArtifact;
  const e = typeof t === 'string' ? artifactTypes[t] : undefined;
  if (!e) throw badRequest(`artifactType: must be one of ${Object.keys(artifactTypes).join(', ')}, not ${JSON.stringify(t)}`);
  return e;
}

function artifactTypeParam(url: URL): string | undefined {
  const t = q(url, 'artifactType');
  if (t !== undefined && !artifactTypes[t]) throw badRequest(`artifactType: must be one of ${Object.keys(artifactTypes).join(', ')}, not ${JSON.stringify(t)}`);
  return t;
}

/** the artifacts of a model version or an experiment run (by label), of one type or all, as a page */
async function artifactsOf(s: Scope, labels: Record<string, string>, url: URL): Promise<ListBody> {
  for (const e of ARTIFACT_ENTITIES) s.authorize(e, 'list');
  const name = q(url, 'name');
  const externalId = q(url, 'externalId');
  const items = (await s.store.listArtifacts(s.ns, labels, artifactTypeParam(url))).filter(({ o }) => o.metadata.labels?.[RegistryLabels.history] === undefined).map(({ e, o }) => artifactShape(e, o));
  return listPage(items, url, (i) => (name === undefined || i.name === name) && (externalId === undefined || i.externalId === externalId), artifactFilterable);
}

/**
 * Upsert an artifact into a model version or an experiment run: one naming an existing artifact's id
 * is updated and attached, one whose name an artifact of the same type there already has updates it,
 * another is created there. A metric logged to a run also lands in the run's metric history.
 */
async function upsertArtifact(s: Scope, res: ServerResponse, given: Record<string, unknown>, attach: Record<string, string>, run?: Obj): Promise<undefined> {
  const e = artifactEntity(given);
  // an artifact logged in a run says which run and experiment it came from, as upstream's do
  const body: Record<string, unknown> = run ? { experimentRunId: run.metadata.name, experimentId: run.spec.experimentId, ...given } : given;
  const b = body;
  let existing: Obj | undefined;
  if (typeof b.id === 'string') {
    const found = await s.store.findArtifact(s.ns, b.id);
    if (!found) throw notFound(`no artifact found for id ${b.id}`);
    if (found.e !== e) throw badRequest(`artifactType: artifact ${b.id} is a ${found.e.artifactType}, not a ${e.artifactType}`);
    existing = found.o;
  } else if (typeof b.name === 'string') {
    existing = (await s.store.list(e, s.ns, attach)).find((o) => o.spec.name === b.name && o.metadata.labels?.[RegistryLabels.history] === undefined);
  }
  let o: Obj;
  if (existing) {
    s.authorize(e, 'update');
    const fields = readBody(e, body, 'update', existing.spec);
    await checkReferences(s, e, fields);
    o = await s.store.update(existing, fields, { ...attach, ...(await fillSource(s, e, fields, existing)) });
  } else {
    o = await create(s, e, body, attach);
  }
  if (run && e === Metric) await recordHistory(s, run, o);
  sendJson(res, artifactShape(e, o), existing ? 200 : 201);
  return undefined;
}

/** a metric's value at this step, kept as its own record under the run: what metric_history lists */
async function recordHistory(s: Scope, run: Obj, metric: Obj): Promise<void> {
  const { name, value, step, timestamp, description, customProperties } = metric.spec;
  const fields = { name, value, step, timestamp: timestamp ?? String(Date.now()), description, customProperties, experimentId: run.spec.experimentId, experimentRunId: run.metadata.name, state: 'LIVE' };
  await s.store.create(Metric, s.ns, Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)), { [RegistryLabels.experimentRun]: run.metadata.name, [RegistryLabels.history]: metric.metadata.name });
}

async function metricHistory(s: Scope, url: URL, runId?: string): Promise<ListBody> {
  s.authorize(Metric, 'list');
  const name = q(url, 'name');
  const steps = q(url, 'stepIds');
  if (steps !== undefined && !/^[0-9]{1,9}(,[0-9]{1,9})*$/.test(steps)) throw badRequest(`stepIds: expected comma-separated step numbers, not ${JSON.stringify(steps)}`);
  const stepSet = steps === undefined ? undefined : new Set(steps.split(',').map(Number));
  const labels: Record<string, string> = runId ? { [RegistryLabels.experimentRun]: runId } : {};
  const items = (await s.store.list(Metric, s.ns, labels)).filter((o) => o.metadata.labels?.[RegistryLabels.history] !== undefined).map((o) => artifactShape(Metric, o));
  return listPage(items, url, (i) => (name === undefined || i.name === name) && (stepSet === undefined || stepSet.has(Number(i.step))), () => filterableOf(Metric));
}

const routes: Route<Scope>[] = [
  ...entityRoutes(RegisteredModel, 'registered_models', 'registered_model', 'registeredmodelId'),
  ...entityRoutes(ModelVersion, 'model_versions', 'model_version', 'modelversionId'),
  ...entityRoutes(ModelArtifact, 'model_artifacts', 'model_artifact', 'modelartifactId'),
  ...entityRoutes(ServingEnvironment, 'serving_environments', 'serving_environment', 'servingenvironmentId'),
  ...entityRoutes(InferenceService, 'inference_services', 'inference_service', 'inferenceserviceId'),
  ...entityRoutes(Experiment, 'experiments', 'experiment', 'experimentId'),
  // metric_history before the item route, which would take it for an id
  { method: 'GET', pattern: '/experiment_runs/metric_history', handle: ({ ctx: s, url }) => metricHistory(s, url) },
  ...entityRoutes(ExperimentRun, 'experiment_runs', 'experiment_run', 'experimentrunId'),

  // the generic artifacts: every type, told apart by artifactType
  {
    method: 'GET', pattern: '/artifacts', handle: async ({ ctx: s, url }) => {
      for (const e of ARTIFACT_ENTITIES) s.authorize(e, 'list');
      const items = (await s.store.listArtifacts(s.ns, {}, artifactTypeParam(url))).filter(({ o }) => o.metadata.labels?.[RegistryLabels.history] === undefined);
      return listPage(items.map(({ e, o }) => artifactShape(e, o)), url, undefined, artifactFilterable);
    },
  },
  {
    method: 'POST', pattern: '/artifacts', handle: async ({ ctx: s, req, res }) => {
      const body = await jsonBody(req);
      const e = artifactEntity(body);
      return created(res, artifactShape(e, await create(s, e, body)));
    },
  },
  {
    method: 'GET', pattern: '/artifacts/{id}', handle: async ({ ctx: s, params }) => {
      const found = await s.store.findArtifact(s.ns, pathId(params, 'id'));
      if (!found) throw notFound(`no artifact found for id ${params.id}`);
      s.authorize(found.e, 'get');
      return artifactShape(found.e, found.o);
    },
  },
  {
    method: 'PATCH', pattern: '/artifacts/{id}', handle: async ({ ctx: s, req, params }) => {
      const found = await s.store.findArtifact(s.ns, pathId(params, 'id'));
      if (!found) throw notFound(`no artifact found for id ${params.id}`);
      const body = await jsonBody(req);
      if (body.artifactType !== undefined && body.artifactType !== null && artifactEntity(body) !== found.e) throw badRequest(`artifactType: artifact ${params.id} is a ${found.e.artifactType}`);
      return artifactShape(found.e, await update(s, found.e, found.o, body));
    },
  },
  {
    method: 'GET', pattern: '/artifact', handle: async ({ ctx: s, url }) => {
      for (const e of ARTIFACT_ENTITIES) s.authorize(e, 'get');
      const parent = q(url, 'parentResourceId');
      const items = (await s.store.listArtifacts(s.ns, parent && isId(parent) ? { [RegistryLabels.parent]: parent } : {}, artifactTypeParam(url)))
        .filter(({ o }) => o.metadata.labels?.[RegistryLabels.history] === undefined).map(({ e, o }) => ({ ...artifactShape(e, o), [PARENT]: o.metadata.labels?.[RegistryLabels.parent] }));
      return findOne(url, items, ModelArtifact, 'modelVersionId');
    },
  },

  // a registered model's versions
  {
    method: 'GET', pattern: '/registered_models/{registeredmodelId}/versions', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'registeredmodelId');
      s.authorize(RegisteredModel, 'get');
      await s.store.get(RegisteredModel, s.ns, id);
      return children(s, ModelVersion, id, url);
    },
  },
  {
    method: 'POST', pattern: '/registered_models/{registeredmodelId}/versions', handle: async ({ ctx: s, req, res, params }) => {
      const id = pathId(params, 'registeredmodelId');
      await s.store.get(RegisteredModel, s.ns, id);
      const body = await jsonBody(req);
      const given = body.registeredModelId;
      if (given !== undefined && given !== null && given !== id) throw badRequest(`ModelVersion.registeredModelId: ${JSON.stringify(given)} is not the registered model of the path (${id})`);
      return created(res, shape(await create(s, ModelVersion, { ...body, registeredModelId: id })));
    },
  },

  // Skiff's aliases on a model's versions, and their moves
  {
    method: 'GET', pattern: '/registered_models/{registeredmodelId}/aliases',
    handle: ({ ctx: s, url, params }) => listAliases(s, pathId(params, 'registeredmodelId'), url),
  },
  {
    method: 'PUT', pattern: '/registered_models/{registeredmodelId}/aliases/{alias}',
    handle: ({ ctx: s, req, params }) => putAlias(s, pathId(params, 'registeredmodelId'), params.alias ?? '', () => jsonBody(req), requestUser(req).username),
  },
  {
    method: 'DELETE', pattern: '/registered_models/{registeredmodelId}/aliases/{alias}', handle: async ({ ctx: s, req, res, params }) => {
      await deleteAlias(s, pathId(params, 'registeredmodelId'), params.alias ?? '', requestUser(req).username);
      res.writeHead(204);
      res.end();
      return undefined;
    },
  },
  {
    method: 'GET', pattern: '/registered_models/{registeredmodelId}/alias_history',
    handle: ({ ctx: s, url, params }) => aliasHistory(s, pathId(params, 'registeredmodelId'), url),
  },

  // a model version's artifacts
  {
    method: 'GET', pattern: '/model_versions/{modelversionId}/artifacts', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'modelversionId');
      s.authorize(ModelVersion, 'get');
      await s.store.get(ModelVersion, s.ns, id);
      return artifactsOf(s, { [RegistryLabels.parent]: id }, url);
    },
  },
  {
    method: 'POST', pattern: '/model_versions/{modelversionId}/artifacts', handle: async ({ ctx: s, req, res, params }) => {
      const id = pathId(params, 'modelversionId');
      s.authorize(ModelVersion, 'get');
      await s.store.get(ModelVersion, s.ns, id);
      return upsertArtifact(s, res, await jsonBody(req), { [RegistryLabels.parent]: id });
    },
  },

  // a serving environment's inference services, and what each serves
  {
    method: 'GET', pattern: '/serving_environments/{servingenvironmentId}/inference_services', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'servingenvironmentId');
      s.authorize(ServingEnvironment, 'get');
      await s.store.get(ServingEnvironment, s.ns, id);
      return children(s, InferenceService, id, url);
    },
  },
  {
    method: 'POST', pattern: '/serving_environments/{servingenvironmentId}/inference_services', handle: async ({ ctx: s, req, res, params }) => {
      const id = pathId(params, 'servingenvironmentId');
      await s.store.get(ServingEnvironment, s.ns, id);
      const body = await jsonBody(req);
      const given = body.servingEnvironmentId;
      if (given !== undefined && given !== null && given !== id) throw badRequest(`InferenceService.servingEnvironmentId: ${JSON.stringify(given)} is not the serving environment of the path (${id})`);
      return created(res, shape(await create(s, InferenceService, { ...body, servingEnvironmentId: id })));
    },
  },
  {
    method: 'GET', pattern: '/inference_services/{inferenceserviceId}/model', handle: async ({ ctx: s, params }) => {
      s.authorize(InferenceService, 'get');
      const isvc = await s.store.get(InferenceService, s.ns, pathId(params, 'inferenceserviceId'));
      s.authorize(RegisteredModel, 'get');
      return shape(await s.store.get(RegisteredModel, s.ns, String(isvc.spec.registeredModelId)));
    },
  },
  {
    method: 'GET', pattern: '/inference_services/{inferenceserviceId}/version', handle: async ({ ctx: s, params }) => {
      s.authorize(InferenceService, 'get');
      const isvc = await s.store.get(InferenceService, s.ns, pathId(params, 'inferenceserviceId'));
      s.authorize(ModelVersion, 'get');
      if (typeof isvc.spec.modelVersionId === 'string') return shape(await s.store.get(ModelVersion, s.ns, isvc.spec.modelVersionId));
      // no version named: the registered model's newest, as upstream serves it
      const versions = await s.store.list(ModelVersion, s.ns, { [RegistryLabels.parent]: String(isvc.spec.registeredModelId) });
      const newest = versions.sort((a, b) => Number(b.metadata.name) - Number(a.metadata.name))[0];
      if (!newest) throw notFound(`no model versions found for id ${isvc.metadata.name}`);
      return shape(newest);
    },
  },
  {
    method: 'GET', pattern: '/inference_services/{inferenceserviceId}/serves', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'inferenceserviceId');
      s.authorize(InferenceService, 'get');
      await s.store.get(InferenceService, s.ns, id);
      return children(s, ServeModel, id, url);
    },
  },
  {
    method: 'POST', pattern: '/inference_services/{inferenceserviceId}/serves', handle: async ({ ctx: s, req, res, params }) => {
      const id = pathId(params, 'inferenceserviceId');
      await s.store.get(InferenceService, s.ns, id);
      return created(res, shape(await create(s, ServeModel, await jsonBody(req), { [RegistryLabels.parent]: id })));
    },
  },

  // an experiment's runs, a run's artifacts and metric history
  {
    method: 'GET', pattern: '/experiments/{experimentId}/experiment_runs', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'experimentId');
      s.authorize(Experiment, 'get');
      await s.store.get(Experiment, s.ns, id);
      return children(s, ExperimentRun, id, url);
    },
  },
  {
    method: 'POST', pattern: '/experiments/{experimentId}/experiment_runs', handle: async ({ ctx: s, req, res, params }) => {
      const id = pathId(params, 'experimentId');
      await s.store.get(Experiment, s.ns, id);
      const body = await jsonBody(req);
      const given = body.experimentId;
      if (given !== undefined && given !== null && given !== id) throw badRequest(`ExperimentRun.experimentId: ${JSON.stringify(given)} is not the experiment of the path (${id})`);
      return created(res, shape(await create(s, ExperimentRun, { ...body, experimentId: id })));
    },
  },
  {
    method: 'GET', pattern: '/experiment_runs/{experimentrunId}/artifacts', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'experimentrunId');
      s.authorize(ExperimentRun, 'get');
      await s.store.get(ExperimentRun, s.ns, id);
      return artifactsOf(s, { [RegistryLabels.experimentRun]: id }, url);
    },
  },
  {
    method: 'POST', pattern: '/experiment_runs/{experimentrunId}/artifacts', handle: async ({ ctx: s, req, res, params }) => {
      const id = pathId(params, 'experimentrunId');
      s.authorize(ExperimentRun, 'get');
      const run = await s.store.get(ExperimentRun, s.ns, id);
      return upsertArtifact(s, res, await jsonBody(req), { [RegistryLabels.experimentRun]: id }, run);
    },
  },
  {
    method: 'GET', pattern: '/experiment_runs/{experimentrunId}/metric_history', handle: async ({ ctx: s, url, params }) => {
      const id = pathId(params, 'experimentrunId');
      s.authorize(ExperimentRun, 'get');
      await s.store.get(ExperimentRun, s.ns, id);
      return metricHistory(s, url, id);
    },
  },
];

export class ModelRegistryApi {
  private readonly router = new Router<Scope>(routes, PREFIX_DEPTH);
  private readonly store: RegistryStore;

  constructor(private readonly deps: ModelRegistryDeps) {
    this.store = new RegistryStore(deps.client);
  }

  /** serves one request; `match` is what matchRegistryPath found */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, match: { namespace?: string; path: string }): Promise<void> {
    try {
      const method = req.method ?? 'GET';
      let found;
      try {
        found = this.router.match(method, match.path);
      } catch {
        throw badRequest(`the path ${match.path} is not valid (a malformed %-escape)`);
      }
      if (!found) throw new RegistryError(404, `no route for ${method} ${match.path}`);
      const ns = await this.namespaceOf(req, url, match.namespace);
      const scope: Scope = { store: this.store, ns, authorize: (e, verb) => this.authorize(req, ns, e, verb), mayReadRuns: () => this.allowed(req, ns, Kinds.Run.group, Kinds.Run.plural, 'list') };
      const body = await found.route.handle({ ctx: scope, req, res, url, params: found.params });
      if (body !== undefined) sendJson(res, body);
    } catch (e) {
      sendRegistryError(res, e);
    }
  }

  /** which registry (namespace) a request works in: see the top of this file */
  private async namespaceOf(req: IncomingMessage, url: URL, fromPath: string | undefined): Promise<string> {
    const named = fromPath ?? q(url, 'namespace');
    if (named !== undefined) {
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(named)) throw badRequest(`namespace: ${JSON.stringify(named)} is not a namespace name`);
      return named;
    }
    const user = requestUser(req);
    const sa = /^system:serviceaccount:([^:]+):/.exec(user.username);
    if (sa) return sa[1] as string;
    if (!this.deps.authorizer) return 'default';
    const owned = (await this.deps.client.listAll<ProfileObject>(ProfileKind)).filter((p) => p.spec.owner?.name === user.username).map((p) => p.metadata.name);
    if (owned.length === 1) return owned[0] as string;
    throw badRequest(`the registry's namespace is not known: ${owned.length ? `you own the profiles ${owned.join(', ')}` : 'you own no profile'}; name one with the server address http(s)://<host>/model-registry/<namespace> or ?namespace=<namespace>`);
  }

  private allowed(req: IncomingMessage, ns: string, apiGroup: string, resource: string, verb: string): boolean {
    return !this.deps.authorizer || this.deps.authorizer.authorize({ user: requestUser(req), resource: { verb, apiGroup, resource, namespace: ns } }).allowed;
  }

  private authorize(req: IncomingMessage, ns: string, e: Entity, verb: string): void {
    const authorizer = this.deps.authorizer;
    if (!authorizer) return;
    const attrs = { user: requestUser(req), resource: { verb, apiGroup: modelRegistryGroup, resource: e.def.plural, namespace: ns } };
    const d = authorizer.authorize(attrs);
    if (!d.allowed) throw new RegistryError(403, forbidden(attrs, d.reason).message);
  }
}

