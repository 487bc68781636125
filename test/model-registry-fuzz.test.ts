// Fuzzing of the Model Registry API from upstream's own OpenAPI document (test/fixtures/model-registry/):
// for every POST and PATCH operation, bodies made from its request schema (each variant of a oneOf,
// every property filled in) and bodies broken from those (each property of a wrong type or null, a
// required one left out, an unknown one added, custom properties mis-tagged, not an object, not
// JSON), against real and made-up ids; and every GET with list parameters, good and garbled. No
// answer may be a 5xx, and every error must be upstream's `{code, message}`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { repoRoot, TestServer } from './harness.js';

type Schema = Record<string, any>;
interface Flat { type?: string; properties: Record<string, Schema>; required: string[]; enum?: unknown[]; variants?: Schema[]; items?: Schema; additionalProperties?: Schema | boolean; pattern?: string; format?: string }

const doc = YAML.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'model-registry', 'openapi.yaml'), 'utf8')) as Schema;
const resolve = (s: Schema): Schema => (s.$ref ? resolve(s.$ref.replace('#/', '').split('/').reduce((o: Schema, k: string) => o[k], doc)) : s);

/** a schema with its allOf merged and its refs followed; a oneOf becomes its variants */
function flatten(input: Schema): Flat {
  const s = resolve(input);
  const out: Flat = { properties: {}, required: [...(s.required ?? [])] };
  for (const k of ['type', 'enum', 'items', 'additionalProperties', 'pattern', 'format'] as const) if (s[k] !== undefined) (out as any)[k] = s[k];
  Object.assign(out.properties, s.properties ?? {});
  for (const part of s.allOf ?? []) {
    const f = flatten(part);
    Object.assign(out.properties, f.properties);
    out.required.push(...f.required);
    out.type ??= f.type;
  }
  if (s.oneOf) out.variants = s.oneOf as Schema[];
  return out;
}

/** ids of real entities, by the field or path parameter that names one */
const ids: Record<string, string> = {};
let counter = 0;

function sample(name: string, schema: Schema): unknown {
  const f = flatten(schema);
  if (f.enum) return f.enum[0];
  if (f.variants) return sample(name, f.variants[0] as Schema);
  if (name === 'customProperties') {
    return { s: { metadataType: 'MetadataStringValue', string_value: 'x' }, i: { metadataType: 'MetadataIntValue', int_value: '7' }, d: { metadataType: 'MetadataDoubleValue', double_value: 0.5 }, b: { metadataType: 'MetadataBoolValue', bool_value: false } };
  }
  switch (f.type) {
    case 'string':
      if (ids[name]) return ids[name];
      if (f.format === 'int64') return /Id$/.test(name) ? '1' : String(Date.now());
      return `fuzz-${name}-${++counter}`;
    case 'number': return 1.5;
    case 'integer': return 3;
    case 'boolean': return true;
    case 'array': return [sample(`${name}[]`, f.items ?? { type: 'string' })];
    default: {
      const o: Record<string, unknown> = {};
      for (const [k, p] of Object.entries(f.properties)) {
        if (resolve(p).readOnly || k === 'id' || k === 'createTimeSinceEpoch' || k === 'lastUpdateTimeSinceEpoch') continue;
        o[k] = sample(k, p);
      }
      return o;
    }
  }
}

/** valid bodies: one per oneOf variant, each with every property */
function validBodies(schema: Schema): Record<string, unknown>[] {
  const f = flatten(schema);
  if (f.variants) return f.variants.flatMap((v) => validBodies(v));
  const body = sample('', schema) as Record<string, unknown>;
  // a discriminated variant says which it is
  const at = f.properties.artifactType ? resolve(f.properties.artifactType).default : undefined;
  if (at) body.artifactType = at;
  return [body];
}

function wrongFor(v: unknown): unknown[] {
  const wrong: unknown[] = [null, {}, [], typeof v === 'string' ? 12345 : 'not-a-value', typeof v === 'boolean' ? 'yes' : false];
  if (typeof v === 'string') wrong.push('', 'x'.repeat(5000), '-1', '0', '99999999999999999999', "'; DROP TABLE --", '\u0000\ud800');
  return wrong;
}

/** broken bodies from a valid one */
function brokenBodies(valid: Record<string, unknown>, required: string[]): unknown[] {
  const out: unknown[] = [];
  for (const [k, v] of Object.entries(valid)) for (const w of wrongFor(v)) out.push({ ...valid, [k]: w });
  for (const r of required) {
    const { [r]: _gone, ...rest } = valid;
    out.push(rest);
  }
  out.push({ ...valid, unknownField: 1 }, { ...valid, artifactType: 'spaceship' }, [], 'text', 42, null);
  const bad = [
    { metadataType: 'MetadataIntValue', int_value: 'ten' }, { metadataType: 'MetadataIntValue', int_value: 1.5 }, { metadataType: 'MetadataIntValue', int_value: '99999999999' },
    { metadataType: 'MetadataDoubleValue', double_value: '1' }, { metadataType: 'MetadataBoolValue', bool_value: 'true' }, { metadataType: 'MetadataStringValue' },
    { metadataType: 'MetadataStructValue', struct_value: '***' }, { metadataType: 'MetadataProtoValue', proto_value: 'AA==' }, { metadataType: 'Nope' }, 'plain', 5, null,
  ];
  for (const b of bad) out.push({ ...valid, customProperties: { p: b } });
  out.push({ ...valid, customProperties: [] }, { ...valid, customProperties: 'x' });
  return out;
}

const BASE = '/api/model_registry/v1alpha3';
/** path parameter → the field of the entity it names */
const paramField: Record<string, string> = {
  registeredmodelId: 'registeredModelId', modelversionId: 'modelVersionId', modelartifactId: 'modelArtifactId', id: 'artifactId',
  servingenvironmentId: 'servingEnvironmentId', inferenceserviceId: 'inferenceServiceId', experimentId: 'experimentId', experimentrunId: 'experimentRunId',
};

describe('fuzzing the Model Registry API from upstream\'s OpenAPI document', { timeout: 600_000 }, () => {
  let s: TestServer;
  let requests = 0;
  /** answers by status class: the valid bodies must have made something, or the fuzzing proves little */
  const answered: Record<string, number> = {};
  const failures: string[] = [];

  const send = async (method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; body: any }> => {
    requests++;
    const r = await s.req(method, path, raw ?? (body === undefined ? undefined : JSON.stringify(body)));
    answered[`${String(r.status)[0]}xx`] = (answered[`${String(r.status)[0]}xx`] ?? 0) + 1;
    if (r.status >= 500) failures.push(`${method} ${path} ${raw ?? JSON.stringify(body)?.slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`);
    else if (r.status >= 400 && (typeof r.body?.code !== 'string' || typeof r.body?.message !== 'string')) failures.push(`${method} ${path} → ${r.status} not in upstream's error shape: ${r.text.slice(0, 200)}`);
    return r;
  };

  before(async () => {
    s = await TestServer.start();
    const made = async (path: string, body: unknown): Promise<string> => {
      const r = await s.req('POST', `${BASE}${path}`, body);
      assert.equal(r.status, 201, `${path}: ${r.text}`);
      return r.body.id as string;
    };
    ids.registeredModelId = await made('/registered_models', { name: 'base-model' });
    ids.modelVersionId = await made('/model_versions', { name: 'base-version', registeredModelId: ids.registeredModelId });
    ids.modelArtifactId = await made('/model_artifacts', { name: 'base-artifact', uri: 's3://b/m' });
    ids.artifactId = ids.modelArtifactId;
    ids.servingEnvironmentId = await made('/serving_environments', { name: 'base-env' });
    ids.inferenceServiceId = await made('/inference_services', { name: 'base-isvc', registeredModelId: ids.registeredModelId, servingEnvironmentId: ids.servingEnvironmentId });
    ids.experimentId = await made('/experiments', { name: 'base-experiment' });
    ids.experimentRunId = await made('/experiment_runs', { name: 'base-run', experimentId: ids.experimentId });
  });
  after(async () => {
    await s?.cleanup();
  });

  const operations = (method: 'post' | 'patch' | 'get'): { path: string; op: Schema; params: string[] }[] =>
    Object.entries(doc.paths as Record<string, Schema>).flatMap(([path, item]) => (item[method] ? [{ path: path.replace(/^\/api\/model_registry\/v1alpha3/, ''), op: item[method] as Schema, params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string) }] : []));

  /** the path with its parameters set to real ids, and to ids that name nothing or are no ids */
  const paths = (path: string, params: string[]): string[] => {
    if (!params.length) return [path];
    const fill = (f: (p: string) => string): string => params.reduce((acc, p) => acc.replace(`{${p}}`, encodeURIComponent(f(p))), path);
    return [fill((p) => ids[paramField[p] ?? ''] ?? '1'), fill(() => '999999'), fill(() => 'abc'), fill(() => '0'), fill(() => '%zz')];
  };

  it('answers every POST and PATCH body without a 5xx, errors in upstream\'s shape', async () => {
    failures.length = 0;
    for (const method of ['post', 'patch'] as const) {
      for (const { path, op, params } of operations(method)) {
        const schema = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
        assert.ok(schema, `${method} ${path} has a request schema`);
        const required = flatten(schema).required;
        for (const url of paths(path, params)) {
          for (const valid of validBodies(schema)) {
            await send(method.toUpperCase(), `${BASE}${url}`, valid);
            for (const b of brokenBodies(valid, required)) await send(method.toUpperCase(), `${BASE}${url}`, b);
          }
          await send(method.toUpperCase(), `${BASE}${url}`, undefined, '{"name": ');
          await send(method.toUpperCase(), `${BASE}${url}`, undefined, '');
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(requests > 1000, `${requests} requests`);
    console.log(JSON.stringify({ requests, answered }));
    assert.ok((answered['2xx'] ?? 0) > 40, `answers: ${JSON.stringify(answered)}`);
  });

  it('answers every GET with good and garbled list parameters without a 5xx', async () => {
    failures.length = 0;
    const queries = [
      '', 'pageSize=1', 'pageSize=0', 'pageSize=-1', 'pageSize=abc', 'pageSize=99999999999', 'orderBy=CREATE_TIME&sortOrder=DESC', 'orderBy=NAME', 'sortOrder=sideways',
      'nextPageToken=abc', 'nextPageToken=WzEsMl0', 'nextPageToken=%E0%A4%A', 'name=base-model', 'externalId=x', 'parentResourceId=1', 'parentResourceId=x', 'artifactType=metric', 'artifactType=rocket',
      'stepIds=1,2', 'stepIds=a', 'namespace=Bad_NS', 'namespace=nowhere',
      ...["name = 'x'", 'name =', "(name = 'x'", "x.int_value > 'a'", '`unterminated', "name LIKE 5", 'a IN ()', "a IN ('x',", "id > 1 AND (state = 'LIVE' OR x.double_value <= 1e309)", ')))', "'", 'AND', '\\', 'a.b.c.d.bool_value = true']
        .map((f) => `filterQuery=${encodeURIComponent(f)}`),
    ];
    for (const { path, params } of operations('get')) {
      for (const url of paths(path, params)) for (const q of queries) await send('GET', `${BASE}${url}${q ? `?${q}` : ''}`);
    }
    assert.deepEqual(failures, []);
  });
});
