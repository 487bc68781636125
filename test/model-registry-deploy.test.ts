// Deploying from the Model Registry end to end: a scikit-learn model trained here is registered with
// the upstream `model-registry` Python client, an InferenceService serves it by
// `storageUri: model-registry://<model>/<version>` (and `model-registry://<model>`, the newest LIVE
// version), its V1 predictions are the model's own, a version the registry does not have leaves the
// service not ready saying so, and the registry's API records what is deployed and since when.
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

/** two versions of an iris classifier (different models: v2 predicts the same class everywhere), saved with joblib, and their predictions */
const TRAIN = `
import json, sys, os, joblib
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.dummy import DummyClassifier
X, y = load_iris(return_X_y=True)
rows = X[[0, 60, 120, 149]]
out = {"rows": rows.tolist()}
for name, model in [("v1", LogisticRegression(max_iter=500)), ("v2", DummyClassifier(strategy="constant", constant=2))]:
    model.fit(X, y)
    d = os.path.join(sys.argv[1], name)
    os.makedirs(d, exist_ok=True)
    joblib.dump(model, os.path.join(d, "model.joblib"))
    out[name] = model.predict(rows).tolist()
print(json.dumps(out))
`;

describe('deploying a model from the Model Registry', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let models: string;
  let exp: { rows: number[][]; v1: number[]; v2: number[] };

  const apply = async (name: string, storageUri: string): Promise<void> => {
    const obj = { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name }, spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri } } } };
    const r = await s.cli(['apply', '-f', '-'], YAML.stringify(obj));
    assert.equal(r.code, 0, r.stderr);
  };
  const ready = (name: string): Promise<any> => s.until(`InferenceService ${name} Ready`, async () => {
    const o = await s.get(`${isvcPath}/${name}`);
    return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
  }, 90_000);
  const predict = async (name: string): Promise<unknown[]> => {
    const r = await s.req('POST', `/serving/default/${name}/v1/models/${name}:predict`, JSON.stringify({ instances: exp.rows }), { 'content-type': 'application/json' });
    assert.equal(r.status, 200, r.text);
    return r.body.predictions as unknown[];
  };
  /** registers a version with the upstream client; its model artifact is the file:// URI of the model saved as `dir` */
  const register = async (version: string, dir = version): Promise<void> => {
    const file = join(models, `register-${version}.py`);
    writeFileSync(file, `
import sys, warnings, logging
warnings.filterwarnings('ignore')
logging.disable(logging.WARNING)
from model_registry import ModelRegistry
r = ModelRegistry(sys.argv[1], author="ada", is_secure=False)
r.register_model("iris", "file://${join(models, dir)}", model_format_name="sklearn", model_format_version="1", version="${version}")
print("registered")
`);
    const r = await runProgram(clientsPython, [file, s.url], { PYTHONWARNINGS: 'ignore' });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  };

  before(async () => {
    s = await TestServer.start();
    models = join(s.dataDir, 'models');
    mkdirSync(models, { recursive: true });
    const r = spawnSync(python, ['-c', TRAIN, models], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    exp = JSON.parse(r.stdout.trim().split('\n').pop() as string);
    assert.notDeepEqual(exp.v1, exp.v2);
  });
  after(async () => {
    await s?.cleanup();
  });

  it('serves a registered version by model-registry://<model>/<version>, and the registry records the deployment', async () => {
    await register('v1');
    await apply('iris', 'model-registry://iris/v1');
    const o = await ready('iris');
    assert.deepEqual(await predict('iris'), exp.v1);
    const version = await s.get(`${API}/model_version?name=v1&parentResourceId=${(await s.get(`${API}/registered_model?name=iris`)).id}`);
    const rev = await s.get(`/apis/serving.skiff.dev/v1alpha1/namespaces/default/revisions/${o.status.components.predictor.latestReadyRevision}`);
    assert.equal(rev.status.registryModel.modelVersionId, version.id);
    assert.equal(rev.status.registryModel.uri, `file://${join(models, 'v1')}`);

    // what serves version v1: the registry's own record, in the serving environment named after the namespace
    const recs = await s.until('the deployment recorded', async () => {
      const l = await s.get(`${API}/inference_services?filterQuery=${encodeURIComponent(`modelVersionId = '${version.id}'`)}`);
      return l.items.length > 0 ? l.items : undefined;
    });
    assert.equal(recs.length, 1);
    const rec = recs[0];
    assert.equal(rec.name, 'iris');
    assert.equal(rec.registeredModelId, version.registeredModelId);
    assert.equal(rec.desiredState, 'DEPLOYED');
    assert.equal(rec.runtime, 'kserve-sklearnserver');
    const env = await s.get(`${API}/serving_environments/${rec.servingEnvironmentId}`);
    assert.equal(env.name, 'default');
    const serves = await s.get(`${API}/inference_services/${rec.id}/serves`);
    assert.deepEqual(serves.items.map((x: any) => [x.modelVersionId, x.lastKnownState]), [[version.id, 'RUNNING']]);
    assert.equal((await s.get(`${API}/inference_services/${rec.id}/version`)).name, 'v1');
    const cli = await s.cli(['get', 'registryinferenceservices']);
    assert.match(cli.stdout, /iris\s+\d+\s+\d+\s+DEPLOYED/);
  });

  it('a version the registry does not have leaves the service not ready, saying which', async () => {
    await apply('iris-missing', 'model-registry://iris/v9');
    const o = await s.until('iris-missing fails', async () => {
      const x = await s.get(`${isvcPath}/iris-missing`);
      return x.status?.conditions?.find((c: any) => c.type === 'PredictorReady' && c.status === 'False') ? x : undefined;
    });
    const cond = o.status.conditions.find((c: any) => c.type === 'PredictorReady');
    assert.equal(cond.reason, 'ModelLoadFailed');
    assert.match(cond.message, /registered model "iris" has no version "v9"/);
    assert.equal(o.status.conditions.find((c: any) => c.type === 'Ready').status, 'False');
    assert.equal(o.status.modelStatus.states.targetModelState, 'FailedToLoad');
    await apply('nomodel', 'model-registry://nosuch');
    const n = await s.until('nomodel fails', async () => {
      const x = await s.get(`${isvcPath}/nomodel`);
      return x.status?.conditions?.find((c: any) => c.type === 'PredictorReady' && c.status === 'False') ? x : undefined;
    });
    assert.match(n.status.conditions.find((c: any) => c.type === 'PredictorReady').message, /registered model "nosuch" not found/);

    // registering the version it names lets it load, with nothing else changed
    await register('v9', 'v1');
    await ready('iris-missing');
    assert.deepEqual(await predict('iris-missing'), exp.v1);
  });

  it('model-registry://<model> serves the newest LIVE version; a rollout and a deletion are recorded', async () => {
    await register('v2');
    await apply('iris-latest', 'model-registry://iris');
    await ready('iris-latest');
    assert.deepEqual(await predict('iris-latest'), exp.v2);
    const model = await s.get(`${API}/registered_model?name=iris`);
    const v2 = await s.get(`${API}/model_version?name=v2&parentResourceId=${model.id}`);
    const rec = await s.until('iris-latest recorded', async () => (await s.get(`${API}/inference_service?name=iris-latest`)).modelVersionId === v2.id ? await s.get(`${API}/inference_service?name=iris-latest`) : undefined);
    assert.equal(rec.desiredState, 'DEPLOYED');

    // `iris` rolled from v1 to v2: its serves are its history, v1's stretch ended when v2's began
    await apply('iris', 'model-registry://iris/v2');
    await s.until('iris serves v2', async () => JSON.stringify(await predict('iris')) === JSON.stringify(exp.v2));
    const irisRec = await s.get(`${API}/inference_service?name=iris`);
    const history = await s.until('iris history', async () => {
      const l = (await s.get(`${API}/inference_services/${irisRec.id}/serves?orderBy=ID&sortOrder=ASC`)).items;
      return l.length === 2 && l[1].lastKnownState === 'RUNNING' && l[0].lastKnownState === 'COMPLETE' ? l : undefined;
    });
    const v1 = await s.get(`${API}/model_version?name=v1&parentResourceId=${model.id}`);
    assert.deepEqual(history.map((x: any) => x.modelVersionId), [v1.id, v2.id]);
    assert.ok(Number(history[0].lastUpdateTimeSinceEpoch) <= Number(history[1].createTimeSinceEpoch) + 1000);
    assert.equal((await s.get(`${API}/inference_services/${irisRec.id}`)).modelVersionId, v2.id);

    const del = await s.cli(['delete', 'isvc', 'iris-latest']);
    assert.equal(del.code, 0, del.stderr);
    const gone = await s.until('iris-latest undeployed', async () => {
      const r = await s.get(`${API}/inference_services/${rec.id}`);
      return r.desiredState === 'UNDEPLOYED' ? r : undefined;
    });
    assert.equal(gone.modelVersionId, v2.id);
    const serves = await s.get(`${API}/inference_services/${rec.id}/serves`);
    assert.deepEqual(serves.items.map((x: any) => [x.modelVersionId, x.lastKnownState]), [[v2.id, 'COMPLETE']]);
    assert.ok(Number(serves.items[0].lastUpdateTimeSinceEpoch) >= Number(serves.items[0].createTimeSinceEpoch));
  });
});
