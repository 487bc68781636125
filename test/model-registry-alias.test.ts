// Aliases in the Model Registry end to end: two versions of a scikit-learn model that answer
// differently are registered with the upstream `model-registry` Python client; `production` is set on
// v1 through Skiff's alias API (bad names and versions refused, naming the field); an InferenceService
// serves `model-registry://iris@production` with `canaryTrafficPercent: 30`, and moving the alias to v2
// rolls a second revision that takes about 30% of the requests until the percent goes to 100; the
// alias history says who moved it when; a Kubernetes watch (the Python `kubernetes` client) sees an
// alias move as it happens; an alias that names nothing leaves the service not ready, saying so.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { clientsPython, repoRoot, runProgram, TestServer } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const skip = !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up'
  : !existsSync(python) ? 'the Python environment (.venv) is not set up' : false;
const API = '/api/model_registry/v1alpha3';
const isvcPath = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';

/** v1 tells the classes apart, v2 answers 2 whatever it is asked: one setosa row says which answered */
const TRAIN = `
import json, sys, os, joblib
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.dummy import DummyClassifier
X, y = load_iris(return_X_y=True)
out = {"row": X[0].tolist()}
for name, model in [("v1", LogisticRegression(max_iter=500)), ("v2", DummyClassifier(strategy="constant", constant=2)), ("v3", LogisticRegression(max_iter=500))]:
    model.fit(X, y)
    d = os.path.join(sys.argv[1], name)
    os.makedirs(d, exist_ok=True)
    joblib.dump(model, os.path.join(d, "model.joblib"))
    out[name] = int(model.predict(X[:1])[0])
print(json.dumps(out))
`;

/** a watch on the alias kinds from before the move (its resourceVersion), the move itself, and what each watch saw */
const WATCH = `
import json, sys, threading, time, urllib.request
from kubernetes import client, config, watch
config.load_kube_config()
api = client.CustomObjectsApi()
G, V, NS = 'modelregistry.skiff.dev', 'v1alpha1', 'default'
base, model_id, version_id = sys.argv[1:4]
seen = {}
def follow(plural, rv, done):
    w = watch.Watch()
    for ev in w.stream(api.list_namespaced_custom_object, G, V, NS, plural, resource_version=rv, timeout_seconds=30):
        o = ev['object']
        if o['spec'].get('name') != 'staging':
            continue
        seen.setdefault(plural, []).append({'type': ev['type'], 'spec': o['spec']})
        if done(ev['type'], o['spec']):
            w.stop()
threads = []
for plural, done in [('modelaliasmoves', lambda t, s: t == 'ADDED' and s.get('toModelVersionId') == version_id),
                     ('modelaliases', lambda t, s: t == 'MODIFIED' and s.get('modelVersionId') == version_id)]:
    rv = api.list_namespaced_custom_object(G, V, NS, plural)['metadata']['resourceVersion']
    t = threading.Thread(target=follow, args=(plural, rv, done))
    t.start()
    threads.append(t)
time.sleep(1)
req = urllib.request.Request(f'{base}/api/model_registry/v1alpha3/registered_models/{model_id}/aliases/staging', method='PUT',
                             data=json.dumps({'modelVersionId': version_id}).encode(), headers={'content-type': 'application/json'})
urllib.request.urlopen(req).read()
for t in threads:
    t.join(40)
print(json.dumps(seen))
`;

describe('Model Registry aliases: history, @alias deploys rolled out as a canary, change events', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let models: string;
  let exp: { row: number[]; v1: number; v2: number };
  let modelId: string;
  const ids: Record<string, string> = {};

  const put = (alias: string, body: unknown, model = modelId): Promise<{ status: number; body: any; text: string }> =>
    s.req('PUT', `${API}/registered_models/${model}/aliases/${alias}`, body);
  const apply = async (name: string, storageUri: string, canaryTrafficPercent?: number): Promise<void> => {
    const predictor = { ...(canaryTrafficPercent !== undefined ? { canaryTrafficPercent } : {}), model: { modelFormat: { name: 'sklearn' }, storageUri } };
    const obj = { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name }, spec: { predictor } };
    const r = await s.cli(['apply', '-f', '-'], YAML.stringify(obj));
    assert.equal(r.code, 0, r.stderr);
  };
  const isvc = (name: string): Promise<any> => s.get(`${isvcPath}/${name}`);
  const ready = (name: string): Promise<any> => s.until(`InferenceService ${name} Ready`, async () => {
    const o = await isvc(name);
    return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
  }, 120_000);
  /** which version answered one request: v1 or v2 */
  const ask = async (name: string): Promise<'v1' | 'v2'> => {
    const r = await s.req('POST', `/serving/default/${name}/v1/models/${name}:predict`, JSON.stringify({ instances: [exp.row] }), { 'content-type': 'application/json' });
    assert.equal(r.status, 200, r.text);
    const p = (r.body.predictions as number[])[0];
    assert.ok(p === exp.v1 || p === exp.v2, `prediction ${p}`);
    return p === exp.v2 ? 'v2' : 'v1';
  };

  before(async () => {
    s = await TestServer.start();
    models = join(s.dataDir, 'models');
    mkdirSync(models, { recursive: true });
    const r = spawnSync(python, ['-c', TRAIN, models], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    exp = JSON.parse(r.stdout.trim().split('\n').pop() as string);
    assert.notEqual(exp.v1, exp.v2);
    const file = join(models, 'register.py');
    writeFileSync(file, `
import sys, warnings, logging
warnings.filterwarnings('ignore')
logging.disable(logging.WARNING)
from model_registry import ModelRegistry
r = ModelRegistry(sys.argv[1], author="ada", is_secure=False)
for v in ["v1", "v2", "v3"]:
    r.register_model("iris", "file://${models}/" + v, model_format_name="sklearn", model_format_version="1", version=v)
r.register_model("other", "file://${models}/v1", model_format_name="sklearn", model_format_version="1", version="o1")
print("registered")
`);
    const reg = await runProgram(clientsPython, [file, s.url], { PYTHONWARNINGS: 'ignore' });
    assert.equal(reg.code, 0, `${reg.stdout}\n${reg.stderr}`);
    modelId = (await s.get(`${API}/registered_model?name=iris`)).id;
    for (const v of ['v1', 'v2', 'v3']) ids[v] = (await s.get(`${API}/model_version?name=${v}&parentResourceId=${modelId}`)).id;
    ids.o1 = (await s.get(`${API}/model_version?name=o1&parentResourceId=${(await s.get(`${API}/registered_model?name=other`)).id}`)).id;
  });
  after(async () => {
    await s?.cleanup();
  });

  it('sets, lists and refuses aliases as the contract says', async () => {
    const r = await put('production', { modelVersionId: ids.v1 });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['createTimeSinceEpoch', 'id', 'lastUpdateTimeSinceEpoch', 'modelVersionId', 'movedBy', 'name', 'registeredModelId']);
    assert.equal(r.body.name, 'production');
    assert.equal(r.body.modelVersionId, ids.v1);
    assert.equal(r.body.registeredModelId, modelId);
    assert.equal(r.body.movedBy, 'skiff-admin');
    // the same again changes nothing and records no move
    const again = await put('production', { modelVersionId: ids.v1 });
    assert.equal(again.status, 200);
    assert.equal(again.body.lastUpdateTimeSinceEpoch, r.body.lastUpdateTimeSinceEpoch);
    assert.equal((await put('staging', { modelVersionId: ids.v1 })).status, 200);
    const list = await s.get(`/api/model_registry/v1/registered_models/${modelId}/aliases`);
    assert.deepEqual(list.items.map((a: any) => [a.name, a.modelVersionId]), [['production', ids.v1], ['staging', ids.v1]]);
    assert.equal(list.size, 2);
    const paged = await s.get(`${API}/registered_models/${modelId}/aliases?pageSize=1`);
    assert.deepEqual(paged.items.map((a: any) => a.name), ['production']);
    assert.deepEqual((await s.get(`${API}/registered_models/${modelId}/aliases?pageSize=1&nextPageToken=${paged.nextPageToken}`)).items.map((a: any) => a.name), ['staging']);

    const refused = async (alias: string, body: unknown, status: number, field: RegExp, model = modelId): Promise<void> => {
      const x = await put(alias, body, model);
      assert.equal(x.status, status, `${alias} ${JSON.stringify(body)}: ${x.text}`);
      assert.equal(x.body.code, status === 400 ? 'Bad Request' : 'Not Found');
      assert.match(x.body.message, field);
    };
    await refused('Prod', { modelVersionId: ids.v1 }, 400, /^alias: "Prod" must be lower-case/);
    await refused('latest', { modelVersionId: ids.v1 }, 400, /^alias: "latest" is reserved/);
    await refused('a'.repeat(64), { modelVersionId: ids.v1 }, 400, /^alias: .* 1 to 63/);
    await refused('canary', {}, 400, /^modelVersionId: required/);
    await refused('canary', { modelVersionId: ids.o1 }, 400, /^modelVersionId: \d+ is not a version of registered model/);
    await refused('canary', { modelVersionId: '999999' }, 400, /^modelVersionId: 999999 is not a version/);
    const archived = await s.req('PATCH', `${API}/model_versions/${ids.v3}`, { state: 'ARCHIVED' });
    assert.equal(archived.status, 200, archived.text);
    await refused('canary', { modelVersionId: ids.v3 }, 400, /^modelVersionId: .* is ARCHIVED/);
    await refused('canary', { modelVersionId: ids.v1 }, 404, /no registered model found for id 999999/, '999999');
    const gone = await s.req('DELETE', `${API}/registered_models/${modelId}/aliases/canary`);
    assert.equal(gone.status, 404, gone.text);
    assert.match(gone.body.message, /no alias "canary"/);
    const cli = await s.cli(['get', 'modelaliases']);
    assert.match(cli.stdout, /production\s+\d+\s+\d+\s+skiff-admin/);
  });

  it('a Kubernetes watch started before a move sees the ModelAliasMove ADDED and the ModelAlias MODIFIED', async () => {
    const r = await s.python(WATCH, [s.url, modelId, ids.v2 as string]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const seen = JSON.parse(r.stdout.trim().split('\n').pop() as string);
    assert.deepEqual(seen.modelaliasmoves.map((e: any) => [e.type, e.spec.fromModelVersionId, e.spec.toModelVersionId, e.spec.movedBy]), [['ADDED', ids.v1, ids.v2, 'skiff-admin']]);
    assert.deepEqual(seen.modelaliases.map((e: any) => [e.type, e.spec.modelVersionId]), [['MODIFIED', ids.v2]]);
    // removing it is a move to nowhere, and a DELETED event for the alias
    const del = await s.req('DELETE', `${API}/registered_models/${modelId}/aliases/staging`);
    assert.equal(del.status, 204, del.text);
    const history = await s.get(`${API}/registered_models/${modelId}/alias_history?alias=staging`);
    assert.deepEqual(history.items.map((m: any) => [m.fromModelVersionId, m.toModelVersionId]), [[ids.v2, undefined], [ids.v1, ids.v2], [undefined, ids.v1]]);
  });

  it('model-registry://iris@production rolls to the version the alias moves to as a canary; the history says who moved it', async (t) => {
    await apply('iris', 'model-registry://iris@production', 30);
    const first = await ready('iris');
    assert.deepEqual(first.status.components.predictor.traffic.map((t: any) => t.percent), [100]);
    for (let i = 0; i < 5; i++) assert.equal(await ask('iris'), 'v1');
    const rev1 = await s.get(`/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions/${first.status.components.predictor.latestReadyRevision}`);
    assert.equal(rev1.spec.registryVersionId, ids.v1);

    const moved = await put('production', { modelVersionId: ids.v2 });
    assert.equal(moved.status, 200, moved.text);
    const split = await s.until('the canary split', async () => {
      const o = await isvc('iris');
      const t = o.status?.components?.predictor?.traffic ?? [];
      return t.length === 2 && o.status.components.predictor.latestReadyRevision !== first.status.components.predictor.latestReadyRevision ? t : undefined;
    }, 120_000);
    assert.deepEqual(split.map((t: any) => t.percent).sort(), [30, 70]);
    const answers = { v1: 0, v2: 0 };
    for (let i = 0; i < 60; i++) answers[await ask('iris')]++;
    const share = answers.v2 / 60;
    t.diagnostic(`with canaryTrafficPercent 30, v2 answered ${answers.v2} of 60 requests (${Math.round(share * 100)}%)`);
    assert.ok(answers.v1 > 0 && answers.v2 > 0, JSON.stringify(answers));
    assert.ok(share >= 0.1 && share <= 0.55, `v2 answered ${answers.v2} of 60: ${JSON.stringify(answers)}`);

    // all traffic to the new version
    await apply('iris', 'model-registry://iris@production', 100);
    await s.until('all traffic on v2', async () => {
      const t = (await isvc('iris')).status?.components?.predictor?.traffic ?? [];
      return t.length === 1 && t[0].percent === 100 && t[0].revisionName !== first.status.components.predictor.latestReadyRevision;
    });
    for (let i = 0; i < 10; i++) assert.equal(await ask('iris'), 'v2');

    const history = await s.get(`${API}/registered_models/${modelId}/alias_history?alias=production`);
    assert.deepEqual(history.items.map((m: any) => [m.name, m.fromModelVersionId, m.toModelVersionId, m.movedBy]), [['production', ids.v1, ids.v2, 'skiff-admin'], ['production', undefined, ids.v1, 'skiff-admin']]);
    assert.ok(Number(history.items[0].createTimeSinceEpoch) >= Number(history.items[1].createTimeSinceEpoch));
    const all = await s.get(`/api/model_registry/v1/registered_models/${modelId}/alias_history`);
    assert.equal(all.size, 5);

    // the registry's deployment record: v1's stretch, then v2's
    const rec = await s.get(`${API}/inference_service?name=iris`);
    const serves = await s.until('both versions served', async () => {
      const l = (await s.get(`${API}/inference_services/${rec.id}/serves?orderBy=ID`)).items;
      return l.length === 2 ? l : undefined;
    });
    assert.deepEqual(serves.map((x: any) => [x.modelVersionId, x.lastKnownState]), [[ids.v1, 'COMPLETE'], [ids.v2, 'RUNNING']]);
  });

  it('an alias that names nothing leaves the service not ready, naming the alias and the model; setting it lets it load; @latest is the newest LIVE version', async () => {
    await apply('iris-nope', 'model-registry://iris@nosuch');
    const o = await s.until('iris-nope fails', async () => {
      const x = await isvc('iris-nope');
      return x.status?.conditions?.find((c: any) => c.type === 'PredictorReady' && c.status === 'False') ? x : undefined;
    });
    const cond = o.status.conditions.find((c: any) => c.type === 'PredictorReady');
    assert.equal(cond.reason, 'ModelLoadFailed');
    assert.match(cond.message, /registered model "iris" has no alias "nosuch"/);
    assert.equal(o.status.modelStatus.states.targetModelState, 'FailedToLoad');
    assert.equal((await put('nosuch', { modelVersionId: ids.v1 })).status, 200);
    await ready('iris-nope');
    assert.equal(await ask('iris-nope'), 'v1');
    // @latest: the newest LIVE version (v3 is archived)
    await apply('iris-latest', 'model-registry://iris@latest');
    const latest = await ready('iris-latest');
    assert.equal(await ask('iris-latest'), 'v2');
    const rev = await s.get(`/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions/${latest.status.components.predictor.latestReadyRevision}`);
    assert.equal(rev.spec.registryVersionId, ids.v2);
  });
});
