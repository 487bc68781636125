// The Kubeflow SDKs, unchanged, against `skiff up`: kubeflow-training's TrainingClient and kserve's
// KServeClient from the clients' Python environment, with the kubeconfig the test server writes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, clientsPython, repoRoot, runProgram } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const skip = !existsSync(clientsPython) || !existsSync(python) ? 'the Python environments (.venv, .venv-clients) are not set up' : false;

/** the last line a script printed, as JSON */
function result(r: { code: number; stdout: string; stderr: string }): any {
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}

describe('Kubeflow SDKs', { skip, timeout: 600_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  /** runs a script from a file (the SDK reads a train_func's source with inspect) with the kubeconfig
   *  `skiff up` wrote, bearer token included */
  const py = (name: string, script: string, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> => {
    const file = join(s.dataDir, `${name.replace(/-/g, '_')}.py`);
    writeFileSync(file, script);
    return runProgram(clientsPython, [file, ...args], { KUBECONFIG: join(s.dataDir, 'kubeconfig'), PYTHONWARNINGS: 'ignore' });
  };

  it('TrainingClient: create_job, wait_for_job_conditions, get_job_logs(follow=True), get, list, pods, delete', async () => {
    const script = `
import json
from kubernetes import client as k8s
from kubeflow.training import TrainingClient, models
tc = TrainingClient(namespace='default')
# the replicas meet in torch.distributed's rendezvous, as a real job's do, so both run at once
train = "import time, torch.distributed as dist\\ndist.init_process_group('gloo')\\nfor i in range(6):\\n    print('step', i, 'rank', dist.get_rank(), 'of', dist.get_world_size(), flush=True)\\n    time.sleep(0.4)\\ndist.barrier()\\n"
def replica(n):
    container = k8s.V1Container(name='pytorch', image='docker.io/pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime', command=['python', '-c', train])
    return models.KubeflowOrgV1ReplicaSpec(replicas=n, restart_policy='OnFailure', template=k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(containers=[container])))
job = models.KubeflowOrgV1PyTorchJob(api_version='kubeflow.org/v1', kind='PyTorchJob', metadata=k8s.V1ObjectMeta(name='sdk-pytorch'),
    spec=models.KubeflowOrgV1PyTorchJobSpec(run_policy=models.KubeflowOrgV1RunPolicy(clean_pod_policy='None'), pytorch_replica_specs={'Master': replica(1), 'Worker': replica(1)}))
tc.create_job(job)
tc.wait_for_job_conditions('sdk-pytorch', expected_conditions={'Running'}, wait_timeout=120, polling_interval=1)
# while the job runs: the master's whole log, followed to its end
followed, _ = tc.get_job_logs('sdk-pytorch', follow=True)
done = tc.wait_for_job_conditions('sdk-pytorch', wait_timeout=120, polling_interval=1)
out = {'followed': followed, 'conditions': {c.type: c.status for c in done.status.conditions}}
out['get'] = tc.get_job('sdk-pytorch').metadata.name
out['succeeded'] = tc.is_job_succeeded('sdk-pytorch')
out['list'] = [j.metadata.name for j in tc.list_jobs()]
out['pods'] = sorted(p.metadata.name for p in tc.get_job_pods('sdk-pytorch', is_master=False))
out['master'] = tc.get_job_pod_names('sdk-pytorch', is_master=True)
tc.wait_for_job_conditions('sdk-pytorch', wait_timeout=60, polling_interval=1)
logs, events = tc.get_job_logs('sdk-pytorch', is_master=False, replica_type='worker', verbose=True)
out['worker_logs'] = logs
out['events'] = sorted(events)
tc.delete_job('sdk-pytorch')
try:
    tc.get_job('sdk-pytorch')
    out['after_delete'] = 'still there'
except RuntimeError as e:
    out['after_delete'] = 'gone'
print(json.dumps(out))
`;
    const out = result(await py('sdk-training', script));
    const masterLog = out.followed['sdk-pytorch-master-0'] as string;
    assert.ok(masterLog, JSON.stringify(out.followed));
    for (let i = 0; i < 6; i++) assert.match(masterLog, new RegExp(`step ${i} rank 0 of 2`), 'follow=True reads the log to its end');
    assert.equal(out.conditions.Succeeded, 'True');
    assert.equal(out.conditions.Created, 'True');
    assert.equal(out.get, 'sdk-pytorch');
    assert.equal(out.succeeded, true);
    assert.deepEqual(out.list, ['sdk-pytorch']);
    assert.deepEqual(out.pods, ['sdk-pytorch-master-0', 'sdk-pytorch-worker-0']);
    assert.deepEqual(out.master, ['sdk-pytorch-master-0']);
    assert.deepEqual(Object.keys(out.worker_logs), ['sdk-pytorch-worker-0']);
    assert.match(out.worker_logs['sdk-pytorch-worker-0'], /step 5 rank 1 of 2/);
    assert.ok(out.events.includes('pytorchjob/sdk-pytorch'), out.events.join(','));
    assert.equal(out.after_delete, 'gone');
  });

  it('TrainingClient: create_job with a train_func runs it on every worker with its parameters', async () => {
    const script = `
import json
from kubeflow.training import TrainingClient
tc = TrainingClient(namespace='default')
def train(params):
    import os
    print('trained rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'], 'lr', params['lr'], flush=True)
tc.create_job(name='sdk-func', train_func=train, parameters={'lr': 0.25}, num_workers=2, num_procs_per_worker=1)
job = tc.wait_for_job_conditions('sdk-func', wait_timeout=180, polling_interval=1)
logs, _ = tc.get_job_logs('sdk-func', is_master=False)
print(json.dumps({'succeeded': tc.is_job_succeeded('sdk-func'), 'logs': logs}))
tc.delete_job('sdk-func')
`;
    const out = result(await py('sdk-train-func', script));
    assert.equal(out.succeeded, true);
    const all = Object.values(out.logs as Record<string, string>).join('\n');
    assert.match(all, /trained rank 0 of 2 lr 0\.25/);
    assert.match(all, /trained rank 1 of 2 lr 0\.25/);
  });

  it('KServeClient: create (watched), wait_isvc_ready, get, patch, replace, delete; set_credentials makes the Secret and ServiceAccount', async () => {
    const model = join(s.dataDir, 'iris-model');
    mkdirSync(model, { recursive: true });
    const train = spawnSync(python, ['-c', [
      'import joblib, sys',
      'from sklearn.datasets import load_iris',
      'from sklearn.linear_model import LogisticRegression',
      'X, y = load_iris(return_X_y=True)',
      "joblib.dump(LogisticRegression(max_iter=500).fit(X, y), sys.argv[1] + '/model.joblib')",
    ].join('\n'), model], { encoding: 'utf8' });
    assert.equal(train.status, 0, train.stderr);
    const creds = join(s.dataDir, 'aws-credentials');
    writeFileSync(creds, '[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY00\n');
    const script = `
import json, sys
from kubernetes import client as k8s
from kserve import KServeClient, V1beta1InferenceService, V1beta1InferenceServiceSpec, V1beta1PredictorSpec, V1beta1SKLearnSpec, constants
model, creds = sys.argv[1], sys.argv[2]
kc = KServeClient()
def isvc(annotations=None, min_replicas=None):
    return V1beta1InferenceService(api_version=constants.KSERVE_V1BETA1, kind=constants.KSERVE_KIND_INFERENCESERVICE,
        metadata=k8s.V1ObjectMeta(name='sdk-iris', namespace='default', annotations=annotations),
        spec=V1beta1InferenceServiceSpec(predictor=V1beta1PredictorSpec(min_replicas=min_replicas, sklearn=V1beta1SKLearnSpec(storage_uri='file://' + model))))
out = {}
kc.create(isvc(), watch=True, timeout_seconds=120)
kc.wait_isvc_ready('sdk-iris', namespace='default', timeout_seconds=120, polling_interval=1)
got = kc.get('sdk-iris', namespace='default')
out['url'] = got['status']['url']
out['ready'] = kc.is_isvc_ready('sdk-iris', namespace='default')
# a spec change bumps the generation; the annotation alone would not
patched = kc.patch('sdk-iris', isvc({'team': 'a'}, min_replicas=1), namespace='default')
out['patched'] = [patched['metadata']['annotations'].get('team'), patched['metadata']['generation']]
kc.wait_isvc_ready('sdk-iris', namespace='default', timeout_seconds=120, polling_interval=1, expected_generation=patched['metadata']['generation'])
replaced = kc.replace('sdk-iris', isvc({'team': 'b'}), namespace='default')
out['replaced'] = [replaced['metadata']['annotations'], replaced['metadata']['generation']]
kc.wait_isvc_ready('sdk-iris', namespace='default', watch=True, timeout_seconds=120, expected_generation=replaced['metadata']['generation'])
out['listed'] = [i['metadata']['name'] for i in kc.get(namespace='default')['items']]
kc.delete('sdk-iris', namespace='default')
try:
    kc.get('sdk-iris', namespace='default')
    out['after_delete'] = 'still there'
except RuntimeError:
    out['after_delete'] = 'gone'
kc.set_credentials(storage_type='s3', namespace='default', credentials_file=creds, service_account='models-sa', s3_endpoint='minio.default:9000', s3_use_https='0')
sa = k8s.CoreV1Api().read_namespaced_service_account('models-sa', 'default')
secret = k8s.CoreV1Api().read_namespaced_secret(sa.secrets[0].name, 'default')
out['secret'] = [sorted(secret.data), secret.metadata.annotations]
print(json.dumps(out))
`;
    const out = result(await py('sdk-kserve', script, [model, creds]));
    assert.equal(out.url, 'http://sdk-iris.default.example.com');
    assert.equal(out.ready, true);
    assert.deepEqual(out.patched, ['a', 2]);
    assert.deepEqual(out.replaced, [{ team: 'b' }, 3]);
    assert.deepEqual(out.listed, ['sdk-iris']);
    assert.equal(out.after_delete, 'gone');
    assert.deepEqual(out.secret, [['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'], { 'serving.kserve.io/s3-endpoint': 'minio.default:9000', 'serving.kserve.io/s3-usehttps': '0' }]);
  });
});
