// Discovery documents (what kubectl-style clients read to resolve kinds) and the OpenAPI document.
import type { KindDef, KindRegistry } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';

const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function apiVersions(): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
}

/** A group served by code of its own rather than from the store (metrics.k8s.io), for discovery to list. */
export interface ServedGroup {
  group: string;
  version: string;
  resources: { name: string; singularName: string; namespaced: boolean; kind: string; verbs: string[] }[];
}

export function apiGroupList(registry: KindRegistry, served: ServedGroup[] = []): unknown {
  const groups = [...registry.groups(), ...served.map((s): [string, string[]] => [s.group, [s.version]])].filter(([g]) => g !== '').sort(([a], [b]) => a.localeCompare(b));
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map(([name, versions]) => ({
      name,
      versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
    })),
  };
}

export function apiResourceList(registry: KindRegistry, group: string, version: string): unknown | undefined {
  const defs = registry.all().filter((d) => d.group === group && d.version === version);
  if (defs.length === 0) return undefined;
  const resources: unknown[] = [];
  for (const d of defs.sort((a, b) => a.plural.localeCompare(b.plural))) {
    resources.push({ name: d.plural, singularName: d.singular, namespaced: d.namespaced, kind: d.kind, verbs, shortNames: d.shortNames ?? [] });
    if (d.hasStatus) resources.push({ name: `${d.plural}/status`, singularName: '', namespaced: d.namespaced, kind: d.kind, verbs: ['get', 'patch', 'update'] });
    if (d.kind === 'Pod') resources.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}

function basePath(d: KindDef): string {
  return d.group ? `/apis/${d.group}/${d.version}` : `/api/${d.version}`;
}

const statusRef = { $ref: '#/components/schemas/Status' };
const errors = {
  '400': { description: 'bad request', content: { 'application/json': { schema: statusRef } } },
  '404': { description: 'not found', content: { 'application/json': { schema: statusRef } } },
  '409': { description: 'conflict or already exists', content: { 'application/json': { schema: statusRef } } },
  '422': { description: 'invalid: details.causes name each field', content: { 'application/json': { schema: statusRef } } },
};

function listParams(): unknown[] {
  return ['labelSelector', 'fieldSelector', 'limit', 'continue', 'watch', 'resourceVersion', 'timeoutSeconds', 'allowWatchBookmarks'].map((name) => ({
    name, in: 'query', required: false, schema: { type: ['limit', 'timeoutSeconds'].includes(name) ? 'integer' : name === 'watch' || name === 'allowWatchBookmarks' ? 'boolean' : 'string' },
  }));
}

/** OpenAPI 3.0 document covering every route the server answers. */
export function openApi(registry: KindRegistry, version: string): unknown {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    Status: { type: 'object', properties: { kind: { type: 'string' }, status: { type: 'string' }, message: { type: 'string' }, reason: { type: 'string' }, code: { type: 'integer' }, details: { type: 'object' } } },
    Object: { type: 'object', required: ['apiVersion', 'kind', 'metadata'], properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec: { type: 'object' }, status: { type: 'object' } } },
  };
  const obj = { $ref: '#/components/schemas/Object' };
  const body = { required: true, content: { 'application/json': { schema: obj }, 'application/yaml': { schema: obj } } };
  const ok = (d: string): unknown => ({ description: d, content: { 'application/json': { schema: obj } } });
  for (const d of registry.all()) {
    const tag = apiVersionOf(d);
    const ns = d.namespaced ? '/namespaces/{namespace}' : '';
    const params = [...(d.namespaced ? [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string' } }] : [])];
    const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
    const coll = `${basePath(d)}${ns}/${d.plural}`;
    paths[coll] = {
      parameters: params,
      get: { tags: [tag], summary: `list or watch ${d.kind} objects`, parameters: listParams(), responses: { '200': ok(`${d.kind}List, or a stream of watch events`), ...errors } },
      post: { tags: [tag], summary: `create a ${d.kind}`, requestBody: body, responses: { '201': ok('created'), ...errors } },
      delete: { tags: [tag], summary: `delete a collection of ${d.kind} objects`, parameters: listParams().slice(0, 2), responses: { '200': ok('deleted'), ...errors } },
    };
    if (d.namespaced) paths[`${basePath(d)}/${d.plural}`] = { get: { tags: [tag], summary: `list or watch ${d.kind} objects in all namespaces`, parameters: listParams(), responses: { '200': ok('list'), ...errors } } };
    const item = `${coll}/{name}`;
    paths[item] = {
      parameters: [...params, nameParam],
      get: { tags: [tag], summary: `read a ${d.kind}`, responses: { '200': ok('the object'), ...errors } },
      put: { tags: [tag], summary: `replace a ${d.kind} (compare-and-swap on metadata.resourceVersion)`, requestBody: body, responses: { '200': ok('updated'), ...errors } },
      patch: { tags: [tag], summary: `patch a ${d.kind} (merge-patch, JSON patch)`, requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object' } }, 'application/json-patch+json': { schema: { type: 'array' } } } }, responses: { '200': ok('patched'), ...errors } },
      delete: { tags: [tag], summary: `delete a ${d.kind}`, responses: { '200': ok('deleted or marked for deletion'), ...errors } },
    };
    if (d.hasStatus) {
      paths[`${item}/status`] = {
        parameters: [...params, nameParam],
        get: { tags: [tag], summary: `read the status of a ${d.kind}`, responses: { '200': ok('the object'), ...errors } },
        put: { tags: [tag], summary: `replace the status of a ${d.kind}`, requestBody: body, responses: { '200': ok('updated'), ...errors } },
        patch: { tags: [tag], summary: `patch the status of a ${d.kind}`, requestBody: body, responses: { '200': ok('patched'), ...errors } },
      };
    }
    if (d.kind === 'Pod') {
      paths[`${item}/log`] = {
        parameters: [...params, nameParam, ...['container', 'follow', 'previous', 'tailLines', 'timestamps', 'sinceSeconds', 'limitBytes'].map((n) => ({ name: n, in: 'query', required: false, schema: { type: 'string' } }))],
        get: { tags: [tag], summary: 'read the log of a container', responses: { '200': { description: 'log text', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errors } },
      };
    }
  }
  const plain = (summary: string): unknown => ({ get: { summary, responses: { '200': { description: 'ok' } } } });
  paths['/healthz'] = plain('liveness');
  paths['/readyz'] = plain('readiness: the store is open and controllers started');
  paths['/version'] = plain('server version');
  paths['/api'] = plain('core API versions');
  paths['/apis'] = plain('API groups');
  paths['/openapi/v3'] = plain('this document');
  return { openapi: '3.0.3', info: { title: 'Skiff', version }, paths, components: { schemas } };
}
