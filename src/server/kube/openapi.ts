// The OpenAPI documents, as kube-apiserver serves them: `/openapi/v3` is an index of group-versions,
// each with its own document at `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}` (what
// kubectl explains and validates with, and reads to learn whether a kind takes strategic merge patches
// and `fieldValidation`); `/openapi/v2` is one Swagger 2.0 document (JSON only: kubectl asks for
// protobuf, is answered 406, and falls back as it does for a server without it); `/openapi.json` is
// every group-version in one OpenAPI 3 document, for people who read it.
//
// Schemas come from the catalogue (src/api/openapi-schemas.ts): built-in kinds under their Kubernetes
// component names; CRD kinds (Kubeflow's) under the name kube-apiserver gives them
// (`org.kubeflow.v1.PyTorchJob`), with their metadata an ObjectMeta and a List kind; Skiff's own kinds as
// objects that keep unknown fields. Paths and operations come from the discovery table, so every
// document names exactly what the server answers.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { OpenApiParameter, SchemaCatalog, SchemaNode } from '../../api/openapi-schemas.js';
import { crdComponentName, schemaCatalog } from '../../api/openapi-schemas.js';
import type { Discovery, GroupVersionKind, ResourceInfo, SubresourceInfo } from './discovery.js';
import { parseAccept } from './discovery.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const ref = (name: string): SchemaNode => ({ $ref: `#/components/schemas/${name}` });
const described = (name: string, description: string): SchemaNode => ({ allOf: [ref(name)], description });

interface Built {
  /** `api/v1`, `apis/batch/v1` */
  key: string;
  doc: Record<string, unknown>;
  body: string;
  etag: string;
}

function etagOf(text: string): string {
  return createHash('sha512').update(text).digest('hex').toUpperCase();
}

/** `KubeflowOrg` for kubeflow.org, `Core` for the core group, as operation ids spell a group */
function groupId(group: string): string {
  if (!group) return 'Core';
  return group.replace(/\.k8s\.io$/, '').split(/[.-]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** every component a set of schemas reaches through `$ref` */
function closure(catalog: SchemaCatalog, roots: string[], into: Record<string, SchemaNode>): void {
  const todo = [...roots];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) todo.push(v.slice('#/components/schemas/'.length));
        else walk(v);
      }
    }
  };
  while (todo.length) {
    const name = todo.pop() as string;
    if (into[name]) continue;
    const s = catalog.components[name];
    if (!s) continue;
    into[name] = s;
    walk(s);
  }
}

const metaDescription = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const listMetaDescription = 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const apiVersionProp: SchemaNode = { description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources', type: 'string' };
const kindProp: SchemaNode = { description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds', type: 'string' };

/** the component names of a resource's kind and list kind, adding their schemas to `schemas` */
function kindComponents(catalog: SchemaCatalog, r: ResourceInfo, schemas: Record<string, SchemaNode>): { kind: string; list: string } {
  const builtin = catalog.componentOf(r.group, r.version, r.kind);
  if (builtin) {
    const list = catalog.componentOf(r.group, r.version, `${r.kind}List`) ?? builtin;
    closure(catalog, [builtin, list], schemas);
    return { kind: builtin, list };
  }
  const name = crdComponentName(r.group, r.version, r.kind);
  const crd = catalog.crd(r.group, r.version, r.kind);
  const gvk = (kind: string): unknown => [{ group: r.group, kind, version: r.version }];
  const base: SchemaNode = crd
    ? crd.schema
    : {
        description: `${r.kind} is one of Skiff's own kinds; its fields are Skiff's and are kept as written.`,
        type: 'object',
        properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        'x-kubernetes-preserve-unknown-fields': true,
      };
  schemas[name] = {
    ...base,
    type: 'object',
    properties: { ...base.properties, apiVersion: apiVersionProp, kind: kindProp, metadata: described(`${META}ObjectMeta`, metaDescription) },
    'x-kubernetes-group-version-kind': gvk(r.kind),
  } as SchemaNode;
  schemas[`${name}List`] = {
    description: `${r.kind}List is a list of ${r.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: apiVersionProp,
      items: { description: `List of ${r.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: ref(name) },
      kind: kindProp,
      metadata: described(`${META}ListMeta`, listMetaDescription),
    },
    'x-kubernetes-group-version-kind': gvk(`${r.kind}List`),
  } as SchemaNode;
  closure(catalog, [`${META}ObjectMeta`, `${META}ListMeta`], schemas);
  return { kind: name, list: `${name}List` };
}

class DocBuilder {
  readonly paths: Record<string, Record<string, unknown>> = {};
  readonly schemas: Record<string, SchemaNode> = {};
  private readonly G: string;
  private readonly V: string;
  private readonly tag: string;

  constructor(private readonly catalog: SchemaCatalog, private readonly group: string, private readonly version: string) {
    this.G = groupId(group);
    this.V = cap(version);
    this.tag = `${group ? group.split('.').map((p, i) => (i ? cap(p) : p)).join('') : 'core'}_${version}`;
    closure(catalog, [`${META}Status`, `${META}DeleteOptions`, `${META}Patch`], this.schemas);
  }

  private param(name: string): OpenApiParameter {
    return this.catalog.parameters[name] ?? { name, in: 'query', schema: { type: 'string', uniqueItems: true } };
  }

  private params(names: string[]): OpenApiParameter[] {
    return names.map((n) => this.param(n));
  }

  private content(schema: SchemaNode, extra: string[] = []): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const t of ['application/json', 'application/yaml', ...extra]) out[t] = { schema };
    return out;
  }

  private op(action: string, operationId: string, gvk: GroupVersionKind, description: string, more: Record<string, unknown>): Record<string, unknown> {
    return { description, operationId, ...more, tags: [this.tag], 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': { group: gvk.group, kind: gvk.kind, version: gvk.version } };
  }

  private responses(codes: string[], schema: SchemaNode, extraTypes: string[] = []): Record<string, unknown> {
    const names: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };
    const out: Record<string, unknown> = {};
    for (const c of codes) out[c] = { content: this.content(schema, extraTypes), description: names[c] };
    out['401'] = { description: 'Unauthorized' };
    return out;
  }

  private pathParams(r: ResourceInfo, named: boolean): OpenApiParameter[] {
    const out: OpenApiParameter[] = [];
    if (named) out.push({ description: `name of the ${r.kind}`, in: 'path', name: 'name', required: true, schema: { type: 'string', uniqueItems: true } });
    if (r.namespaced) out.push({ description: 'object name and auth scope, such as for teams and projects', in: 'path', name: 'namespace', required: true, schema: { type: 'string', uniqueItems: true } });
    out.push(this.param('pretty'));
    return out;
  }

  /** the patch media types a kind takes: strategic merge only for built-in kinds, as kube-apiserver */
  private patchTypes(builtin: boolean): string[] {
    return ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', ...(builtin ? ['application/strategic-merge-patch+json'] : [])];
  }

  private writeOps(kindRef: SchemaNode, gvk: GroupVersionKind, what: string, idPart: string, builtin: boolean, verbs: string[]): Record<string, unknown> {
    const item: Record<string, unknown> = {};
    const writeParams = this.params(['dryRun', 'fieldManager', 'fieldValidation']);
    if (verbs.includes('get')) item.get = this.op('get', `read${this.G}${this.V}${idPart}`, gvk, `read ${what}`, { responses: this.responses(['200'], kindRef) });
    if (verbs.includes('update')) {
      item.put = this.op('put', `replace${this.G}${this.V}${idPart}`, gvk, `replace ${what}`, { parameters: writeParams, requestBody: { content: { '*/*': { schema: kindRef } }, required: true }, responses: this.responses(['200', '201'], kindRef) });
    }
    if (verbs.includes('patch')) {
      const content: Record<string, unknown> = {};
      for (const t of this.patchTypes(builtin)) content[t] = { schema: ref(`${META}Patch`) };
      item.patch = this.op('patch', `patch${this.G}${this.V}${idPart}`, gvk, `partially update ${what}`, { parameters: [...writeParams, this.param('force')], requestBody: { content, required: true }, responses: this.responses(['200', '201'], kindRef) });
    }
    return item;
  }

  add(r: ResourceInfo): void {
    const { kind, list } = kindComponents(this.catalog, r, this.schemas);
    const builtin = this.catalog.componentOf(r.group, r.version, r.kind) !== undefined;
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    const ns = r.namespaced ? 'Namespaced' : '';
    const coll = `${base}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
    const listParams = ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'];
    const streams = ['application/json;stream=watch', 'application/yaml;stream=watch'];
    const status = ref(`${META}Status`);
    const collection: Record<string, unknown> = { parameters: this.pathParams(r, false) };
    if (r.verbs.includes('list')) collection.get = this.op('list', `list${this.G}${this.V}${ns}${r.kind}`, gvk, `list or watch objects of kind ${r.kind}`, { parameters: this.params(listParams), responses: this.responses(['200'], ref(list), streams) });
    if (r.verbs.includes('create')) {
      collection.post = this.op('post', `create${this.G}${this.V}${ns}${r.kind}`, gvk, `create ${article(r.kind)}`, { parameters: this.params(['dryRun', 'fieldManager', 'fieldValidation']), requestBody: { content: { '*/*': { schema: ref(kind) } }, required: true }, responses: this.responses(['200', '201', '202'], ref(kind)) });
    }
    if (r.verbs.includes('deletecollection')) {
      collection.delete = this.op('deletecollection', `delete${this.G}${this.V}Collection${ns}${r.kind}`, gvk, `delete collection of ${r.kind}`, {
        parameters: this.params(['continue', 'dryRun', 'fieldSelector', 'gracePeriodSeconds', 'ignoreStoreReadErrorWithClusterBreakingPotential', 'labelSelector', 'limit', 'orphanDependents', 'propagationPolicy', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds']),
        requestBody: { content: { '*/*': { schema: ref(`${META}DeleteOptions`) } } },
        responses: this.responses(['200'], status),
      });
    }
    this.paths[coll] = collection;
    if (r.namespaced && r.verbs.includes('list')) {
      this.paths[`${base}/${r.resource}`] = {
        get: this.op('list', `list${this.G}${this.V}${r.kind}ForAllNamespaces`, gvk, `list or watch objects of kind ${r.kind}`, { responses: this.responses(['200'], ref(list), streams) }),
        parameters: [...this.params(listParams.slice(0, 4)), this.param('pretty'), ...this.params(listParams.slice(4))],
      };
    }
    const item: Record<string, unknown> = { parameters: this.pathParams(r, true), ...this.writeOps(ref(kind), gvk, `the specified ${r.kind}`, `${ns}${r.kind}`, builtin, r.verbs) };
    if (r.verbs.includes('delete')) {
      item.delete = this.op('delete', `delete${this.G}${this.V}${ns}${r.kind}`, gvk, `delete ${article(r.kind)}`, {
        parameters: this.params(['dryRun', 'gracePeriodSeconds', 'ignoreStoreReadErrorWithClusterBreakingPotential', 'orphanDependents', 'propagationPolicy']),
        requestBody: { content: { '*/*': { schema: ref(`${META}DeleteOptions`) } } },
        responses: this.responses(['200', '202'], builtin ? status : ref(kind)),
      });
    }
    this.paths[`${coll}/{name}`] = item;
    for (const s of r.subresources ?? []) this.addSubresource(r, s, `${coll}/{name}/${s.name}`, ns, builtin);
  }

  private addSubresource(r: ResourceInfo, s: SubresourceInfo, path: string, ns: string, builtin: boolean): void {
    const id = `${ns}${r.kind}${cap(s.name)}`;
    const gvk = s.responseKind;
    const params = this.pathParams(r, true);
    if (s.name === 'log') {
      this.paths[path] = {
        get: this.op('get', `read${this.G}${this.V}${id}`, gvk, `read log of the specified ${r.kind}`, {
          parameters: this.params(['container', 'follow', 'insecureSkipTLSVerifyBackend', 'limitBytes', 'previous', 'sinceSeconds', 'stream', 'tailLines', 'timestamps']),
          responses: { '200': { content: { 'text/plain': { schema: { type: 'string' } } }, description: 'OK' }, '401': { description: 'Unauthorized' } },
        }),
        parameters: params,
      };
      return;
    }
    if (['exec', 'attach', 'portforward', 'proxy'].includes(s.name)) {
      const q: Record<string, string[]> = { exec: ['command', 'container', 'stderr', 'stdin', 'stdout', 'tty'], attach: ['container', 'stderr', 'stdin', 'stdout', 'tty'], portforward: ['ports'], proxy: ['path'] };
      const connect = (method: string): unknown => this.op('connect', `connect${this.G}${this.V}${method}${id}`, gvk, `connect ${method} requests to ${s.name} of ${r.kind}`, {
        parameters: this.params(q[s.name] ?? []),
        responses: { '200': { content: { '*/*': { schema: { type: 'string' } } }, description: 'OK' }, '401': { description: 'Unauthorized' } },
      });
      const item: Record<string, unknown> = {};
      // a proxy takes every method; its verbs name them as RBAC does (update: PUT)
      const methods: [string, string, string][] = [['get', 'get', 'Get'], ['create', 'post', 'Post'], ['update', 'put', 'Put'], ['patch', 'patch', 'Patch'], ['delete', 'delete', 'Delete']];
      for (const [verb, method, name] of methods) if (s.verbs.includes(verb)) item[method] = connect(name);
      item.parameters = params.filter((p) => p.name !== 'pretty');
      this.paths[path] = item;
      if (s.name === 'proxy') {
        // `.../proxy/{path}`: the path on the server behind, as kube-apiserver documents it
        const withPath: Record<string, unknown> = {};
        const pathConnect = (m: string): unknown => this.op('connect', `connect${this.G}${this.V}${m}${id}WithPath`, gvk, `connect ${m} requests to ${s.name} of ${r.kind}`, {
          parameters: this.params(['path']),
          responses: { '200': { content: { '*/*': { schema: { type: 'string' } } }, description: 'OK' }, '401': { description: 'Unauthorized' } },
        });
        for (const [verb, method, name] of methods) if (s.verbs.includes(verb)) withPath[method] = pathConnect(name);
        withPath.parameters = [...params.filter((p) => p.name !== 'pretty'), { name: 'path', in: 'path', required: true, description: 'path to the resource', schema: { type: 'string', uniqueItems: true } }];
        this.paths[`${path}/{path}`] = withPath;
      }
      return;
    }
    const builtinResponse = this.catalog.componentOf(gvk.group, gvk.version, gvk.kind);
    let kindRef: SchemaNode;
    if (builtinResponse) {
      closure(this.catalog, [builtinResponse], this.schemas);
      kindRef = ref(builtinResponse);
    } else {
      kindRef = ref(crdComponentName(gvk.group, gvk.version, gvk.kind));
    }
    const item: Record<string, unknown> = { parameters: params, ...this.writeOps(kindRef, gvk, `${s.name} of the specified ${r.kind}`, id, builtin, s.verbs) };
    if (s.verbs.includes('create')) {
      item.post = this.op('post', `create${this.G}${this.V}${id}`, gvk, `create ${s.name} of ${article(r.kind)}`, { parameters: this.params(['dryRun', 'fieldManager', 'fieldValidation']), requestBody: { content: { '*/*': { schema: kindRef } }, required: true }, responses: this.responses(['200', '201', '202'], kindRef) });
    }
    this.paths[path] = item;
  }

  document(): Record<string, unknown> {
    const sortedPaths = Object.fromEntries(Object.entries(this.paths).sort(([a], [b]) => a.localeCompare(b)));
    const sortedSchemas = Object.fromEntries(Object.entries(this.schemas).sort(([a], [b]) => a.localeCompare(b)));
    return { openapi: '3.0.0', info: { title: 'Kubernetes', version: this.catalog.kubernetesVersion }, paths: sortedPaths, components: { schemas: sortedSchemas } };
  }
}

function article(kind: string): string {
  return `${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** a v3 document as Swagger 2.0: definitions for components, parameters with their type inline, body parameters */
export function toSwagger2(doc: Record<string, unknown>, title: string, version: string): Record<string, unknown> {
  const fixRefs = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(fixRefs);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out[k] = v.replace('#/components/schemas/', '#/definitions/');
      else if (k === 'nullable' || k === 'anyOf' || k === 'oneOf' || k === 'not') continue;
      else out[k] = fixRefs(v);
    }
    return out;
  };
  const param = (p: OpenApiParameter): Record<string, unknown> => {
    const { schema, ...rest } = p;
    return { ...rest, ...(fixRefs(schema) as object) };
  };
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, any>>)) {
    const outItem: Record<string, unknown> = {};
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') {
        outItem.parameters = (op as OpenApiParameter[]).map(param);
        continue;
      }
      const { requestBody, responses, parameters, ...rest } = op as Record<string, any>;
      const params = ((parameters ?? []) as OpenApiParameter[]).map(param);
      const consumes = requestBody ? Object.keys(requestBody.content ?? {}) : undefined;
      if (requestBody) {
        const first = Object.values(requestBody.content ?? {})[0] as { schema?: unknown } | undefined;
        params.unshift({ in: 'body', name: 'body', required: requestBody.required === true, schema: fixRefs(first?.schema) });
      }
      const outResponses: Record<string, unknown> = {};
      let produces: string[] | undefined;
      for (const [code, resp] of Object.entries((responses ?? {}) as Record<string, any>)) {
        const content = resp.content as Record<string, { schema?: unknown }> | undefined;
        if (content) produces ??= Object.keys(content);
        const schema = content ? Object.values(content)[0]?.schema : undefined;
        outResponses[code] = { description: resp.description, ...(schema ? { schema: fixRefs(schema) } : {}) };
      }
      outItem[method] = { ...rest, ...(consumes ? { consumes } : {}), ...(produces ? { produces } : {}), schemes: ['https'], parameters: params, responses: outResponses };
    }
    paths[path] = outItem;
  }
  const schemas = ((doc.components as { schemas?: Record<string, unknown> })?.schemas ?? {}) as Record<string, unknown>;
  return { swagger: '2.0', info: { title, version }, paths, definitions: fixRefs(schemas) };
}

export class OpenApi {
  private built?: Map<string, Built>;
  private union?: { body: string; etag: string };
  private v2?: { body: string; etag: string };
  private index?: { body: string; etag: string };
  private readonly lastModified = new Date().toUTCString();

  constructor(private readonly discovery: Discovery, private readonly catalog: SchemaCatalog = schemaCatalog()) {
    discovery.onChange(() => {
      this.built = undefined;
      this.union = this.v2 = this.index = undefined;
    });
  }

  /** the document of every served group-version of stored kinds, by `api/v1` / `apis/{g}/{v}` */
  documents(): Map<string, Built> {
    if (this.built) return this.built;
    const out = new Map<string, Built>();
    for (const g of this.discovery.groups()) {
      for (const v of g.versions) {
        const stored = v.resources.filter((r) => r.def);
        if (stored.length === 0) continue;
        const b = new DocBuilder(this.catalog, g.name, v.version);
        for (const r of stored) b.add(r);
        const doc = b.document();
        const body = JSON.stringify(doc);
        const key = g.name ? `apis/${g.name}/${v.version}` : `api/${v.version}`;
        out.set(key, { key, doc, body, etag: etagOf(body) });
      }
    }
    this.built = out;
    return out;
  }

  /** `/openapi/v3`: the index kubectl and the client libraries read first */
  indexDocument(): { body: string; etag: string } {
    if (!this.index) {
      const paths: Record<string, unknown> = {};
      for (const b of this.documents().values()) paths[b.key] = { serverRelativeURL: `/openapi/v3/${b.key}?hash=${b.etag}` };
      const body = JSON.stringify({ paths });
      this.index = { body, etag: etagOf(body) };
    }
    return this.index;
  }

  /** every group-version's paths and schemas in one OpenAPI 3 document */
  unionDocument(version: string): Record<string, unknown> {
    const paths: Record<string, unknown> = {};
    const schemas: Record<string, unknown> = {};
    for (const b of this.documents().values()) {
      Object.assign(paths, b.doc.paths);
      Object.assign(schemas, (b.doc.components as { schemas: object }).schemas);
    }
    const plain = (description: string, type = 'application/json'): unknown => ({ get: { description, responses: { '200': { content: { [type]: { schema: { type: type === 'application/json' ? 'object' : 'string' } } }, description: 'OK' } } } });
    Object.assign(paths, {
      '/healthz': plain('liveness', 'text/plain'),
      '/livez': plain('liveness', 'text/plain'),
      '/readyz': plain('readiness: the store is open and the controllers started', 'text/plain'),
      '/version': plain('the server version'),
      '/api': plain('the core API versions (APIVersions, or APIGroupDiscoveryList when asked for by Accept)'),
      '/apis': plain('the API groups (APIGroupList, or APIGroupDiscoveryList when asked for by Accept)'),
      '/openapi/v3': plain('the index of the OpenAPI documents, one per group-version'),
      '/openapi/v2': plain('every group-version in one Swagger 2.0 document'),
    });
    return { openapi: '3.0.0', info: { title: 'Skiff', version }, paths, components: { schemas } };
  }

  /**
   * Answers `/openapi/v3[/…]`, `/openapi/v2` and `/openapi.json`; false for other paths. `version` is
   * Skiff's, for the info of the whole-API documents.
   */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string, version: string): boolean {
    if (path === '/openapi/v3') {
      const { body, etag } = this.indexDocument();
      this.write(req, res, body, etag, 'application/json');
      return true;
    }
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length);
      const b = this.documents().get(key);
      if (!b) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: no OpenAPI document for ${key}`);
      res.setHeader('Vary', 'Accept');
      if (!acceptsJson(req.headers.accept)) return this.notAcceptable(res);
      const hash = url.searchParams.get('hash');
      if (hash) {
        if (hash !== b.etag) {
          res.writeHead(301, { Location: `/openapi/v3/${key}?hash=${b.etag}` });
          res.end();
          return true;
        }
        res.setHeader('Cache-Control', 'public, immutable');
        res.setHeader('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
      }
      this.write(req, res, b.body, b.etag, 'application/json');
      return true;
    }
    if (path === '/openapi/v2') {
      if (!acceptsJson(req.headers.accept)) return this.notAcceptable(res);
      if (!this.v2) {
        const body = JSON.stringify(toSwagger2(this.unionDocument(version), 'Kubernetes', this.catalog.kubernetesVersion));
        this.v2 = { body, etag: etagOf(body) };
      }
      this.write(req, res, this.v2.body, this.v2.etag, 'application/json');
      return true;
    }
    if (path === '/openapi.json') {
      if (!this.union) {
        const body = JSON.stringify(this.unionDocument(version));
        this.union = { body, etag: etagOf(body) };
      }
      this.write(req, res, this.union.body, this.union.etag, 'application/json');
      return true;
    }
    return false;
  }

  private notAcceptable(res: ServerResponse): true {
    // Skiff writes its OpenAPI documents as JSON only; kube-openapi answers a type it cannot write so
    res.writeHead(406);
    res.end();
    return true;
  }

  private write(req: IncomingMessage, res: ServerResponse, body: string, etag: string, type: string): void {
    const quoted = `"${etag}"`;
    res.setHeader('Etag', quoted);
    res.setHeader('Last-Modified', this.lastModified);
    const inm = req.headers['if-none-match'];
    if (inm && inm.split(',').map((s) => s.trim()).includes(quoted)) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return parseAccept(accept).some((t) => t.type === 'application/json' || t.type === 'application/*' || t.type === '*/*');
}
