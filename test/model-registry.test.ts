// Kubeflow Model Registry's REST API end to end: the upstream `model-registry` Python client, unchanged,
// against `skiff up` (register, read back, list, update, archive), the REST API's lists, filters and
// errors in upstream's shape, a registry per namespace, and tenancy: each user's registry is their
// Profile's namespace, and another team's is refused.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startSkiff, type Skiff } from '../src/server/main.js';
import { MinioServer, minioSkip } from '../src/testing/minio.js';
import { clientsPython, kubectlBin, pollUntil, runProgram, TestServer } from './harness.js';

const skip = !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up' : false;
const API = '/api/model_registry/v1alpha3';

const PRELUDE = `
import json, sys, warnings, logging
warnings.filterwarnings('ignore')
logging.disable(logging.WARNING)
from model_registry import ModelRegistry
from model_registry.exceptions import StoreError
out = {}
`;

/** runs a script with the upstream client; it fills `out`, which comes back as JSON */
async function py(dir: string, body: string, args: string[]): Promise<any> {
  const file = join(dir, `mr-${Date.now()}-${Math.random().toString(36).slice(2)}.py`);
  writeFileSync(file, `${PRELUDE}\n${body}\nprint('RESULT ' + json.dumps(out, default=str))\n`);
  const r = await runProgram(clientsPython, [file, ...args], { PYTHONWARNINGS: 'ignore' });
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (r.code !== 0 || !line) throw new Error(`python exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(line.slice('RESULT '.length));
}

describe('the Model Registry API with the upstream Python client', { skip, timeout: 180_000 }, () => {
  let s: TestServer;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-mr-'));
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers a model, reads it back, lists, updates and archives it', async () => {
    const out = await py(dir, `
r = ModelRegistry(sys.argv[1], author="ada", is_secure=False)
rm = r.register_model("mnist", "s3://models/mnist/1", model_format_name="onnx", model_format_version="1", version="v1",
    storage_key="aws-connection", storage_path="mnist/1", version_description="first cut",
    metadata={"accuracy": 0.97, "epochs": 10, "framework": "pytorch", "tuned": True})
out["rm"] = {"id": rm.id, "name": rm.name, "owner": rm.owner, "state": rm.state.value}
got = r.get_registered_model("mnist")
out["got"] = got.id
r.register_model("mnist", "s3://models/mnist/2", model_format_name="onnx", model_format_version="1", version="v2", metadata={"epochs": 20})
r.register_model("fraud", "s3://models/fraud/1", model_format_name="sklearn", model_format_version="1", version="v1")
out["models"] = sorted(m.name for m in r.get_registered_models())
out["versions"] = [v.name for v in r.get_model_versions("mnist")]
mv = r.get_model_version("mnist", "v1")
out["mv"] = {"name": mv.name, "author": mv.author, "description": mv.description, "props": mv.custom_properties, "model": mv.registered_model_id}
ma = r.get_model_artifact("mnist", "v1")
out["ma"] = {"uri": ma.uri, "format": ma.model_format_name, "formatVersion": ma.model_format_version, "key": ma.storage_key, "path": ma.storage_path}
try:
    r.register_model("mnist", "s3://x", model_format_name="onnx", model_format_version="1", version="v1")
except StoreError as e:
    out["dup"] = str(e)
mv.description = "better"
mv = r.update(mv)
out["updated"] = mv.description
from model_registry.types import ModelVersionState, RegisteredModelState
mv.state = ModelVersionState.ARCHIVED
out["archived"] = r.update(mv).state.value
got.state = RegisteredModelState.ARCHIVED
got.description = "retired"
out["rmArchived"] = [r.update(got).state.value, r.get_registered_model("mnist").description]
`, [s.url]);
    assert.deepEqual(out.rm, { id: out.got, name: 'mnist', owner: 'ada', state: 'LIVE' });
    assert.deepEqual(out.models, ['fraud', 'mnist']);
    assert.deepEqual(out.versions, ['v1', 'v2']);
    assert.deepEqual(out.mv, { name: 'v1', author: 'ada', description: 'first cut', props: { accuracy: 0.97, epochs: 10, framework: 'pytorch', tuned: true }, model: out.got });
    assert.deepEqual(out.ma, { uri: 's3://models/mnist/1', format: 'onnx', formatVersion: '1', key: 'aws-connection', path: 'mnist/1' });
    assert.match(out.dup, /already exists/);
    assert.equal(out.updated, 'better');
    assert.equal(out.archived, 'ARCHIVED');
    assert.deepEqual(out.rmArchived, ['ARCHIVED', 'retired']);

    // on the wire: ids and times are strings, custom properties tagged with upstream's encoding
    const v = await s.get(`${API}/model_version?name=v1&parentResourceId=${out.got}`);
    assert.equal(typeof v.id, 'string');
    assert.match(v.createTimeSinceEpoch, /^\d+$/);
    assert.ok(Number(v.lastUpdateTimeSinceEpoch) > Number(v.createTimeSinceEpoch));
    assert.deepEqual(v.customProperties.epochs, { metadataType: 'MetadataIntValue', int_value: '10' });
    assert.deepEqual(v.customProperties.accuracy, { metadataType: 'MetadataDoubleValue', double_value: 0.97 });
    assert.deepEqual(v.customProperties.tuned, { metadataType: 'MetadataBoolValue', bool_value: true });
    assert.equal(v.state, 'ARCHIVED');
    const arts = await s.get(`${API}/model_versions/${v.id}/artifacts`);
    assert.deepEqual(arts.items.map((a: any) => [a.artifactType, a.uri]), [['model-artifact', 's3://models/mnist/1']]);

    // the objects are Skiff's: `skiff get` shows them
    const cli = await s.cli(['get', 'registeredmodels']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /mnist\s+ARCHIVED\s+ada/);
    assert.match(cli.stdout, /fraud\s+LIVE/);
    const versions = await s.cli(['get', 'modelversions']);
    assert.match(versions.stdout, /v2\s+\d+\s+LIVE\s+ada/);
  });

  it('lists with filterQuery, order and pages', async () => {
    const q = (query: string, more = ''): Promise<any> => s.get(`${API}/model_versions?filterQuery=${encodeURIComponent(query)}${more}`);
    assert.deepEqual((await q('epochs.int_value >= 10 AND state = "LIVE"')).items.map((x: any) => x.name), ['v2']);
    assert.deepEqual((await q("framework = 'pytorch' OR epochs > 15")).items.map((x: any) => x.name), ['v1', 'v2']);
    assert.deepEqual((await q("name IN ('v1', 'v9') AND author ILIKE 'AD%'")).items.map((x: any) => x.name), ['v1', 'v1']);
    const models = await s.get(`${API}/registered_models?filterQuery=${encodeURIComponent("name LIKE '%nis%'")}`);
    assert.deepEqual(models.items.map((m: any) => m.name), ['mnist']);
    const p1 = await s.get(`${API}/model_versions?pageSize=2&orderBy=CREATE_TIME&sortOrder=DESC`);
    assert.deepEqual([p1.size, p1.pageSize], [2, 2]);
    assert.ok(p1.nextPageToken);
    const p2 = await s.get(`${API}/model_versions?pageSize=2&orderBy=CREATE_TIME&sortOrder=DESC&nextPageToken=${p1.nextPageToken}`);
    assert.equal(p2.nextPageToken, '');
    const seen = [...p1.items, ...p2.items].map((x: any) => Number(x.createTimeSinceEpoch));
    assert.deepEqual(seen, [...seen].sort((a, b) => b - a));
    assert.equal(seen.length, 3);
  });

  it('answers bad input with 4xx in upstream\'s error shape, naming the field', async () => {
    const dup = await s.req('POST', `${API}/registered_models`, { name: 'mnist' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'Conflict');
    assert.match(dup.body.message, /registered model with name mnist already exists/);

    // requests racing with one name: one wins, the others are told it exists
    const racing = await Promise.all(Array.from({ length: 8 }, () => s.req('POST', `${API}/registered_models`, { name: 'raced' })));
    assert.deepEqual(racing.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    const patches = await Promise.all(['a', 'b', 'c', 'd'].map((d) => s.req('PATCH', `${API}/registered_models/${racing.find((r) => r.status === 201)?.body.id}`, { description: d })));
    assert.deepEqual(patches.map((r) => r.status), [200, 200, 200, 200]);

    const orphan = await s.req('POST', `${API}/model_versions`, { name: 'v1', registeredModelId: '999999' });
    assert.equal(orphan.status, 404);
    assert.equal(orphan.body.code, 'Not Found');
    assert.match(orphan.body.message, /registeredModelId: no registered model found for id 999999/);

    const filter = await s.req('GET', `${API}/registered_models?filterQuery=${encodeURIComponent("name = 'x' AND (")}`);
    assert.equal(filter.status, 400);
    assert.equal(filter.body.code, 'Bad Request');
    assert.match(filter.body.message, /^filterQuery: invalid filter query: /);

    const wrongType = await s.req('POST', `${API}/registered_models`, { name: 'typed', customProperties: { epochs: { metadataType: 'MetadataIntValue', int_value: 'ten' } } });
    assert.equal(wrongType.status, 400);
    assert.match(wrongType.body.message, /customProperties\.epochs: int_value must be an int32/);
    const untagged = await s.req('POST', `${API}/registered_models`, { name: 'typed', customProperties: { epochs: 10 } });
    assert.equal(untagged.status, 400);
    assert.match(untagged.body.message, /customProperties\.epochs: expected a MetadataValue/);

    const state = await s.req('PATCH', `${API}/registered_models/${(await s.get(`${API}/registered_model?name=fraud`)).id}`, { state: 'DELETED' });
    assert.equal(state.status, 400);
    assert.match(state.body.message, /RegisteredModel\.state: must be one of LIVE, ARCHIVED/);

    const missing = await s.req('GET', `${API}/registered_models/424242`);
    assert.deepEqual([missing.status, missing.body.code], [404, 'Not Found']);
    const noDelete = await s.req('DELETE', `${API}/registered_models/1`);
    assert.equal(noDelete.status, 404);
    assert.equal(noDelete.body.code, 'Not Found');
    const badJson = await s.req('POST', `${API}/registered_models`, '{"name":');
    assert.equal(badJson.status, 400);
  });

  it('records experiments, runs with their metric history, and what an inference service serves', async () => {
    const x = await s.create(`${API}/experiments`, { name: 'tuning', owner: 'ada' });
    const run = await s.create(`${API}/experiments/${x.id}/experiment_runs`, { name: 'run-1', startTimeSinceEpoch: '1700000000000' });
    assert.deepEqual([run.experimentId, run.status, run.state], [x.id, 'RUNNING', 'LIVE']);
    for (const [step, value] of [[1, 0.5], [2, 0.8]] as const) {
      const r = await s.req('POST', `${API}/experiment_runs/${run.id}/artifacts`, { artifactType: 'metric', name: 'accuracy', value, step });
      assert.equal(r.status, step === 1 ? 201 : 200, r.text);
    }
    await s.create(`${API}/experiment_runs/${run.id}/artifacts`, { artifactType: 'parameter', name: 'lr', value: '0.01', parameterType: 'number' });
    const arts = await s.get(`${API}/experiment_runs/${run.id}/artifacts`);
    assert.deepEqual(arts.items.map((a: any) => [a.artifactType, a.name, a.value]).sort(), [['metric', 'accuracy', 0.8], ['parameter', 'lr', '0.01']]);
    const history = await s.get(`${API}/experiment_runs/${run.id}/metric_history?name=accuracy`);
    assert.deepEqual(history.items.map((m: any) => [m.step, m.value]), [[1, 0.5], [2, 0.8]]);
    // another run logs a metric of the same name: names are per run
    const run2 = await s.create(`${API}/experiment_runs`, { name: 'run-2', experimentId: x.id });
    const other = await s.create(`${API}/experiment_runs/${run2.id}/artifacts`, { artifactType: 'metric', name: 'accuracy', value: 0.6, step: 1 });
    assert.deepEqual([other.experimentRunId, other.experimentId], [run2.id, x.id]);
    const metrics = await s.get(`${API}/artifacts?artifactType=metric`);
    assert.deepEqual(metrics.items.map((m: any) => m.value), [0.8, 0.6]);
    assert.deepEqual((await s.get(`${API}/experiment_runs/metric_history?stepIds=1`)).items.map((m: any) => m.value), [0.5, 0.6]);
    const finished = await s.req('PATCH', `${API}/experiment_runs/${run.id}`, { status: 'FINISHED', endTimeSinceEpoch: '1700000100000' });
    assert.deepEqual([finished.status, finished.body.status, finished.body.endTimeSinceEpoch], [200, 'FINISHED', '1700000100000']);

    const model = await s.get(`${API}/registered_model?name=fraud`);
    const env = await s.create(`${API}/serving_environments`, { name: 'default' });
    const isvc = await s.create(`${API}/serving_environments/${env.id}/inference_services`, { name: 'fraud-svc', registeredModelId: model.id, runtime: 'sklearn' });
    assert.deepEqual([isvc.servingEnvironmentId, isvc.desiredState], [env.id, 'DEPLOYED']);
    assert.equal((await s.get(`${API}/inference_services/${isvc.id}/model`)).name, 'fraud');
    assert.equal((await s.get(`${API}/inference_services/${isvc.id}/version`)).name, 'v1');
    const serve = await s.create(`${API}/inference_services/${isvc.id}/serves`, { modelVersionId: (await s.get(`${API}/inference_services/${isvc.id}/version`)).id });
    assert.equal(serve.lastKnownState, 'UNKNOWN');
    assert.equal((await s.get(`${API}/inference_services/${isvc.id}/serves`)).size, 1);
    const wrongModel = await s.req('POST', `${API}/inference_services`, { registeredModelId: '999999', servingEnvironmentId: env.id });
    assert.equal(wrongModel.status, 404);
    assert.match(wrongModel.body.message, /InferenceService\.registeredModelId: no registered model found/);
  });

  it('keeps a registry per namespace, chosen by the client\'s server address', async () => {
    const ns = await s.req('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    assert.equal(ns.status, 201, ns.text);
    const out = await py(dir, `
r = ModelRegistry(sys.argv[1] + "/model-registry/team-a", author="bea", is_secure=False)
r.register_model("churn", "s3://models/churn/1", model_format_name="xgboost", model_format_version="2", version="1")
out["models"] = [m.name for m in r.get_registered_models()]
`, [s.url]);
    assert.deepEqual(out.models, ['churn']);
    const inDefault = await s.get(`${API}/registered_models`);
    assert.ok(!inDefault.items.some((m: any) => m.name === 'churn'));
    const byQuery = await s.get(`${API}/registered_models?namespace=team-a`);
    assert.deepEqual(byQuery.items.map((m: any) => m.name), ['churn']);
    // an id from another namespace's registry is not found in this one
    const churn = byQuery.items[0];
    assert.equal((await s.req('GET', `${API}/registered_models/${churn.id}`)).status, 404);
  });
});

describe('the Model Registry client uploading a model to S3 (MinIO) and registering it', { skip: skip || minioSkip(), timeout: 180_000 }, () => {
  let s: TestServer;
  let minio: MinioServer;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-mr-s3-'));
    minio = await MinioServer.start({ buckets: ['models'] });
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    await minio?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('upload_artifact_and_register_model puts the files in the bucket and registers their URI', async () => {
    const model = join(dir, 'model');
    mkdirSync(model);
    writeFileSync(join(model, 'model.onnx'), 'not really onnx');
    writeFileSync(join(model, 'config.json'), '{}');
    const out = await py(dir, `
from model_registry.utils import S3Params
r = ModelRegistry(sys.argv[1], author="ada", is_secure=False)
rm = r.upload_artifact_and_register_model("uploaded", sys.argv[2], version="1", model_format_name="onnx", model_format_version="1",
    upload_params=S3Params(bucket_name="models", s3_prefix="uploaded/1", endpoint_url=sys.argv[3], access_key_id=sys.argv[4], secret_access_key=sys.argv[5], region="us-east-1"))
ma = r.get_model_artifact("uploaded", "1")
out["rm"] = rm.name
out["uri"] = ma.uri
`, [s.url, model, minio.endpoint, minio.accessKey, minio.secretKey]);
    assert.equal(out.rm, 'uploaded');
    assert.match(out.uri, /^s3:\/\/models\/uploaded\/1\?endpoint=/);
    const s3 = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'models', Prefix: 'uploaded/1/' }));
    assert.deepEqual((listed.Contents ?? []).map((o) => o.Key).sort(), ['uploaded/1/config.json', 'uploaded/1/model.onnx']);
  });
});

describe('the Model Registry with tenancy on', { skip: skip || (!existsSync(kubectlBin) && 'no kubectl'), timeout: 180_000 }, () => {
  let skiff: Skiff;
  let dir: string;
  const kubectl = (args: string[], stdin?: string): ReturnType<typeof runProgram> => runProgram(kubectlBin, args, { KUBECONFIG: join(dir, 'data', 'kubeconfig'), HOME: dir }, stdin);
  const profile = (name: string, owner: string): string => YAML.stringify({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: owner } } });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-mr-tenancy-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'alice-token,alice@example.com,1001\nbob-token,bob@example.com,1002\n');
    skiff = await startSkiff({ dataDir: join(dir, 'data'), port: 0, tokenAuthFile: tokens, pythonZygote: false });
    for (const [name, owner] of [['team-a', 'alice@example.com'], ['team-b', 'bob@example.com']] as const) {
      const r = await kubectl(['apply', '-f', '-'], profile(name, owner));
      assert.equal(r.code, 0, r.stderr);
    }
    await pollUntil('the owners\' bindings', async () => {
      const r = await kubectl(['get', 'rolebindings', '-A', '-o', 'name']);
      return (r.stdout.match(/namespaceadmin/gi) ?? []).length === 2 || undefined;
    });
  });
  after(async () => {
    await skiff?.stop({ containers: 'stop' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts each user\'s models in their Profile\'s namespace and refuses another team\'s', async () => {
    const out = await py(dir, `
r = ModelRegistry(sys.argv[1], author="alice", is_secure=False, user_token="alice-token")
r.register_model("credit", "s3://models/credit/1", model_format_name="onnx", model_format_version="1", version="1")
out["alice"] = [m.name for m in r.get_registered_models()]
b = ModelRegistry(sys.argv[1], author="bob", is_secure=False, user_token="bob-token")
out["bob"] = [m.name for m in b.get_registered_models()]
`, [skiff.url]);
    assert.deepEqual(out.alice, ['credit']);
    assert.deepEqual(out.bob, []);
    const stored = await kubectl(['get', 'registeredmodels', '-n', 'team-a', '-o', 'jsonpath={.items[*].spec.name}']);
    assert.equal(stored.stdout, 'credit');

    const as = (token: string, path: string, init: RequestInit = {}): Promise<Response> => fetch(`${skiff.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    const refused = await as('bob-token', `/model-registry/team-a${API}/registered_models`);
    assert.equal(refused.status, 403);
    const body = (await refused.json()) as { code: string; message: string };
    assert.equal(body.code, 'Forbidden');
    assert.match(body.message, /registeredmodels.modelregistry.skiff.dev is forbidden: User "bob@example.com" cannot list/);
    const write = await as('bob-token', `${API}/registered_models?namespace=team-a`, { method: 'POST', body: JSON.stringify({ name: 'sneaky' }) });
    assert.equal(write.status, 403);
    const none = await fetch(`${skiff.url}${API}/registered_models`);
    assert.equal(none.status, 401);

    // aliases: set by the namespace's editor, who is named as having moved it; another team is refused
    const model = (await (await as('alice-token', `${API}/registered_model?name=credit`)).json()) as { id: string };
    const version = (await (await as('alice-token', `${API}/model_version?name=1&parentResourceId=${model.id}`)).json()) as { id: string };
    const set = await as('alice-token', `${API}/registered_models/${model.id}/aliases/production`, { method: 'PUT', body: JSON.stringify({ modelVersionId: version.id }) });
    assert.equal(set.status, 200);
    assert.equal(((await set.json()) as { movedBy: string }).movedBy, 'alice@example.com');
    const history = (await (await as('alice-token', `${API}/registered_models/${model.id}/alias_history`)).json()) as { items: { movedBy: string }[] };
    assert.deepEqual(history.items.map((m) => m.movedBy), ['alice@example.com']);
    for (const [method, path] of [['GET', 'aliases'], ['PUT', 'aliases/production'], ['DELETE', 'aliases/production'], ['GET', 'alias_history']] as const) {
      const r = await as('bob-token', `/model-registry/team-a${API}/registered_models/${model.id}/${path}`, { method, ...(method === 'PUT' ? { body: JSON.stringify({ modelVersionId: version.id }) } : {}) });
      assert.equal(r.status, 403, `${method} ${path}`);
    }
  });
});
