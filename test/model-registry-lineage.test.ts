// A pipeline that trains and registers: a kfp component trains a tiny model into its output Model
// artifact and registers it with the upstream `model-registry` client from inside its Pod, a second
// component registers the same artifact from its input, each with nothing but what Skiff gives a Pod
// (SKIFF_SERVER, the service-account token the client finds through KF_PIPELINES_SA_TOKEN_PATH).
// The registry fills each model artifact's modelSource* fields from the artifact's lineage: the run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, runProgram, TestServer } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const API = '/api/model_registry/v1alpha3';
const hasClient = existsSync(python) && spawnSync(python, ['-c', 'import kfp, model_registry, sklearn'], { stdio: 'ignore' }).status === 0;
const skip = hasClient ? false : 'the Pods\' environment (.venv) lacks kfp, model-registry or scikit-learn (python/requirements.txt)';

const PIPELINE = `
from kfp import dsl, compiler
from kfp.dsl import Input, Output, Model

@dsl.component
def train(model: Output[Model]) -> str:
    import os, pickle
    from sklearn.linear_model import LogisticRegression
    clf = LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    os.makedirs(model.path, exist_ok=True)
    with open(os.path.join(model.path, 'model.pkl'), 'wb') as f:
        pickle.dump(clf, f)
    model.metadata['framework'] = 'sklearn'
    # registered from the Pod that wrote it, while the task still runs
    from model_registry import ModelRegistry
    registry = ModelRegistry(os.environ['SKIFF_SERVER'], author='trainer')
    v = registry.register_model('tiny-from-train', model.uri, version='v1', model_format_name='sklearn', model_format_version='1')
    return v.id

@dsl.component
def register(model: Input[Model]) -> str:
    import os, pickle
    with open(os.path.join(model.path, 'model.pkl'), 'rb') as f:
        assert pickle.load(f).predict([[2.5]])[0] == 1
    from model_registry import ModelRegistry
    registry = ModelRegistry(os.environ['SKIFF_SERVER'], author='pipeline')
    v = registry.register_model('tiny', model.uri, version='v1', model_format_name='sklearn', model_format_version='1')
    return v.id

@dsl.pipeline(name='train-and-register')
def train_and_register():
    t = train()
    register(model=t.outputs['model'])

compiler.Compiler().compile(train_and_register, 'train-and-register.yaml')
`;

const SUBMIT = `
import json, sys, warnings
warnings.filterwarnings('ignore')
import kfp
c = kfp.Client(host=sys.argv[1])
run = c.create_run_from_pipeline_package(sys.argv[2], run_name='nightly tiny')
done = c.wait_for_run_completion(run.run_id, timeout=150, sleep_duration=0.5)
print('RESULT ' + json.dumps({'run_id': run.run_id, 'state': str(done.state)}))
`;

describe('a pipeline that trains and registers its model', { skip, timeout: 240_000 }, () => {
  let s: TestServer;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-mr-lineage-'));
    writeFileSync(join(dir, 'pipeline.py'), PIPELINE);
    writeFileSync(join(dir, 'submit.py'), SUBMIT);
    const c = spawnSync(python, ['pipeline.py'], { cwd: dir, encoding: 'utf8' });
    assert.equal(c.status, 0, c.stderr);
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers from inside its Pods, and each version\'s artifact names the run that produced it', async () => {
    const r = await runProgram(python, [join(dir, 'submit.py'), s.url, join(dir, 'train-and-register.yaml')], { PYTHONWARNINGS: 'ignore' });
    const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    assert.ok(r.code === 0 && line, `submit failed:\n${r.stdout}\n${r.stderr}\n--- server ---\n${s.output.slice(-4000)}`);
    const { run_id: runId, state } = JSON.parse(line.slice('RESULT '.length));
    if (state !== 'SUCCEEDED') {
      const run = await s.get(`/apis/v2beta1/runs/${runId}`);
      const failed = (run.run_details?.task_details ?? []).filter((t: any) => t.pod_name && t.state === 'FAILED');
      const logs = await Promise.all(failed.map(async (t: any) => (await s.cli(['logs', t.pod_name, '--tail', '30'])).stdout));
      assert.fail(`the run ended ${state}: ${JSON.stringify(run.error)}\n${logs.join('\n')}`);
    }
    // the run's lineage, as Skiff's KFP API records it: which task wrote which URI
    const { artifacts } = await s.get(`/apis/v2beta1/runs/${runId}/artifacts`);
    const taskUri = (task: string): string => artifacts.find((a: any) => a.producer_task === task && a.output_name === 'model').uri;

    for (const [model, producer] of [['tiny-from-train', 'train'], ['tiny', 'train']] as const) {
      const rm = await s.get(`${API}/registered_model?name=${model}`);
      const mv = await s.get(`${API}/model_version?name=v1&parentResourceId=${rm.id}`);
      const arts = await s.get(`${API}/model_versions/${mv.id}/artifacts`);
      assert.equal(arts.items.length, 1, JSON.stringify(arts));
      const a = arts.items[0];
      assert.equal(a.uri, taskUri(producer), model);
      assert.deepEqual(
        [a.modelSourceKind, a.modelSourceClass, a.modelSourceGroup, a.modelSourceId, a.modelSourceName],
        ['kfp', 'pipelinerun', 'default', runId, 'nightly tiny'], `${model}: ${JSON.stringify(a)}`,
      );
    }
  });
});
