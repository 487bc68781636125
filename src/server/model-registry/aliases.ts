// Aliases on a registered model's versions (`production`, `staging`, any name), Skiff's beside
// upstream's API (Kubeflow's registry has none; MLflow's has): one ModelAlias per (model, alias)
// naming a version, and an append-only ModelAliasMove for every change, with who made it.
//
//   GET    /registered_models/{id}/aliases            the model's aliases, by name
//   PUT    /registered_models/{id}/aliases/{alias}    {"modelVersionId": "<id>"}: set or move it
//   DELETE /registered_models/{id}/aliases/{alias}    remove it
//   GET    /registered_models/{id}/alias_history      the moves, newest first (`?alias=` for one)
//
// An alias names only a LIVE version of its own model when it is set; archiving the version it names
// later leaves it where it is (a serving canary does not move on its own: moving it is a PUT).
// `latest` is not an alias: in `model-registry://<model>@latest` it names the newest LIVE version.
import { aliasNameProblem, RegistryLabels } from '../../api/model-registry.js';
import { isPlainObject } from '../../util/objects.js';
import { isId, ModelAlias, ModelAliasMove, ModelVersion, RegisteredModel, type Entity } from './entities.js';
import { badRequest, notFound } from './errors.js';
import { listPage, type ListBody, type Shaped } from './list.js';
import type { Obj, RegistryStore } from './store.js';

export interface AliasScope {
  store: RegistryStore;
  ns: string;
  authorize: (e: Entity, verb: 'get' | 'list' | 'create' | 'update' | 'delete') => void;
}

const DEFAULT_PAGE_SIZE = 100;

/** the alias of the path, or a 400 naming `alias` */
export function aliasParam(name: string): string {
  const problem = aliasNameProblem(name);
  if (problem) throw badRequest(`alias: ${problem}`);
  return name;
}

export function aliasShape(o: Obj): Shaped {
  const { name, registeredModelId, modelVersionId, movedBy, createTimeSinceEpoch, lastUpdateTimeSinceEpoch } = o.spec;
  return { id: o.metadata.name, name, registeredModelId, modelVersionId, movedBy, createTimeSinceEpoch, lastUpdateTimeSinceEpoch };
}

export function moveShape(o: Obj): Shaped {
  const { name, registeredModelId, fromModelVersionId, toModelVersionId, movedBy, createTimeSinceEpoch } = o.spec;
  return {
    id: o.metadata.name, name, registeredModelId,
    ...(fromModelVersionId !== undefined ? { fromModelVersionId } : {}), ...(toModelVersionId !== undefined ? { toModelVersionId } : {}),
    movedBy, createTimeSinceEpoch,
  };
}

const labelsOf = (modelId: string, alias: string): Record<string, string> => ({ [RegistryLabels.parent]: modelId, [RegistryLabels.alias]: alias });

async function findAlias(s: AliasScope, modelId: string, alias: string): Promise<Obj | undefined> {
  return (await s.store.list(ModelAlias, s.ns, labelsOf(modelId, alias))).find((o) => o.spec.name === alias);
}

/** the registered model of the path: a 404 when there is none */
async function model(s: AliasScope, modelId: string): Promise<Obj> {
  s.authorize(RegisteredModel, 'get');
  return s.store.get(RegisteredModel, s.ns, modelId);
}

/** the model's aliases sorted by name, paged by `pageSize` and `nextPageToken` (the last name of the page before) */
export async function listAliases(s: AliasScope, modelId: string, url: URL): Promise<ListBody> {
  await model(s, modelId);
  s.authorize(ModelAlias, 'list');
  const sizeParam = url.searchParams.get('pageSize') || undefined;
  if (sizeParam !== undefined && !/^[1-9][0-9]{0,8}$/.test(sizeParam)) throw badRequest(`pageSize: must be a positive integer, not ${JSON.stringify(sizeParam)}`);
  const pageSize = sizeParam === undefined ? DEFAULT_PAGE_SIZE : Number(sizeParam);
  const token = url.searchParams.get('nextPageToken') || undefined;
  let after: string | undefined;
  if (token !== undefined) {
    after = Buffer.from(token, 'base64url').toString('utf8');
    if (aliasNameProblem(after) !== undefined) throw badRequest(`nextPageToken: ${JSON.stringify(token)} is not a token this server gave`);
  }
  const items = (await s.store.list(ModelAlias, s.ns, { [RegistryLabels.parent]: modelId }))
    // by code unit, as the page token compares: `-`, `.`, digits, `_`, letters
    .map(aliasShape).sort((a, b) => (String(a.name) < String(b.name) ? -1 : String(a.name) > String(b.name) ? 1 : 0))
    .filter((a) => after === undefined || String(a.name) > after);
  const page = items.slice(0, pageSize);
  const last = page[page.length - 1];
  const nextPageToken = items.length > pageSize && last ? Buffer.from(String(last.name)).toString('base64url') : '';
  return { items: page, size: page.length, pageSize, nextPageToken };
}

/**
 * Sets the alias on the version the body names, or moves it there: a move is recorded only when it
 * names another version than before. `movedBy` is the request's user.
 */
export async function putAlias(s: AliasScope, modelId: string, alias: string, readBody: () => Promise<unknown>, movedBy: string): Promise<Shaped> {
  const m = await model(s, modelId);
  aliasParam(alias);
  const body = await readBody();
  if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object: {"modelVersionId": "<id>"}');
  for (const k of Object.keys(body)) if (k !== 'modelVersionId') throw badRequest(`ModelAlias: unknown field "${k}" (the body is {"modelVersionId": "<id>"})`);
  const versionId = body.modelVersionId;
  if (versionId === undefined || versionId === null) throw badRequest('modelVersionId: required');
  if (typeof versionId !== 'string' || !isId(versionId)) throw badRequest(`modelVersionId: expected an id (a decimal string), not ${JSON.stringify(versionId)}`);
  s.authorize(ModelVersion, 'get');
  return s.store.exclusive(s.ns, async () => {
    const version = await s.store.find(ModelVersion, s.ns, versionId);
    if (!version || version.metadata.labels?.[RegistryLabels.parent] !== modelId) {
      throw badRequest(`modelVersionId: ${versionId} is not a version of registered model ${modelId} (${JSON.stringify(m.spec.name)})`);
    }
    if (version.spec.state === 'ARCHIVED') throw badRequest(`modelVersionId: version ${versionId} (${JSON.stringify(version.spec.name)}) is ARCHIVED: an alias is set only on a LIVE version`);
    const current = await findAlias(s, modelId, alias);
    if (current?.spec.modelVersionId === versionId) return aliasShape(current);
    s.authorize(ModelAlias, current ? 'update' : 'create');
    s.authorize(ModelAliasMove, 'create');
    const from = current?.spec.modelVersionId;
    // the move first: a history that has a move the alias does not show yet is one a retry completes
    await s.store.create(ModelAliasMove, s.ns, { name: alias, registeredModelId: modelId, ...(typeof from === 'string' ? { fromModelVersionId: from } : {}), toModelVersionId: versionId, movedBy }, labelsOf(modelId, alias));
    const o = current
      ? await s.store.update(current, { modelVersionId: versionId, movedBy })
      : await s.store.create(ModelAlias, s.ns, { name: alias, registeredModelId: modelId, modelVersionId: versionId, movedBy }, labelsOf(modelId, alias));
    return aliasShape(o);
  });
}

/** removes the alias, recording a move to nowhere; a 404 when the model has no such alias */
export async function deleteAlias(s: AliasScope, modelId: string, alias: string, movedBy: string): Promise<void> {
  await model(s, modelId);
  aliasParam(alias);
  await s.store.exclusive(s.ns, async () => {
    const current = await findAlias(s, modelId, alias);
    if (!current) throw notFound(`registered model ${modelId} has no alias ${JSON.stringify(alias)}`);
    s.authorize(ModelAlias, 'delete');
    s.authorize(ModelAliasMove, 'create');
    await s.store.create(ModelAliasMove, s.ns, { name: alias, registeredModelId: modelId, fromModelVersionId: current.spec.modelVersionId, movedBy }, labelsOf(modelId, alias));
    await s.store.remove(ModelAlias, current);
  });
}

/** the model's alias moves, newest first unless the list parameters say otherwise; `?alias=` for one alias's */
export async function aliasHistory(s: AliasScope, modelId: string, url: URL): Promise<ListBody> {
  await model(s, modelId);
  s.authorize(ModelAliasMove, 'list');
  const alias = url.searchParams.get('alias') || undefined;
  if (alias !== undefined) aliasParam(alias);
  const ordered = new URL(url.href);
  if (!ordered.searchParams.get('orderBy')) ordered.searchParams.set('orderBy', 'CREATE_TIME');
  if (!ordered.searchParams.get('sortOrder')) ordered.searchParams.set('sortOrder', 'DESC');
  const items = (await s.store.list(ModelAliasMove, s.ns, { [RegistryLabels.parent]: modelId })).filter((o) => alias === undefined || o.spec.name === alias).map(moveShape);
  return listPage(items, ordered, undefined, () => new Set(['id', 'name', 'registeredModelId', 'fromModelVersionId', 'toModelVersionId', 'movedBy', 'createTimeSinceEpoch']));
}
