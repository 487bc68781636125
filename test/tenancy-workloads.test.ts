// What Skiff runs keeps working with tenancy on: a Profile's owner runs a pipeline through kfp.Client
// with her token, a Job whose Pod calls the API with its service-account token, and a Katib
// Experiment whose trials push metrics over the DBManager gRPC API; another tenant is refused her
// runs (KFP's multi-user authorization), and the inference gateway answers only signed-in users.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { TestServer, clientsPython, repoRoot, runProgram } from './harness.js';

const kfpPython = join(repoRoot, '.venv', 'bin', 'python');
const fixtures = join(repoRoot, 'test', 'fixtures', 'serving');
const skip = !existsSync(clientsPython) || !existsSync(kfpPython) ? 'the Python environments (.venv, .venv-clients) are not set up'
  // a Pod finds katib-db-manager.kubeflow and its service-account files through bubblewrap's mounts
  : !bwrapAvailable() ? 'bubblewrap cannot run here' : false;

const PIPELINE = `
import json, sys, warnings
warnings.filterwarnings('ignore')
import kfp
from kfp import dsl
from kfp_server_api.exceptions import ApiException

@dsl.component
def add(a: int, b: int) -> int:
    return a + b

@dsl.pipeline(name='sum')
def total(x: int = 2):
    add(a=x, b=add(a=x, b=3).output)

host, mine, theirs = sys.argv[1], sys.argv[2], sys.argv[3]
alice = kfp.Client(host=host, existing_token=mine)
run = alice.create_run_from_pipeline_func(total, arguments={'x': 4}, namespace='team-a', experiment_name='sums')
done = alice.wait_for_run_completion(run.run_id, timeout=120)
out = {'state': str(done.state), 'listed': len(alice.list_runs(namespace='team-a').runs or [])}
bob = kfp.Client(host=host, existing_token=theirs)
for what, fn in [('list', lambda: bob.list_runs(namespace='team-a')), ('get', lambda: bob.get_run(run.run_id))]:
    try:
        fn()
        out[what] = 'allowed'
    except ApiException as e:
        out[what] = e.status
print(json.dumps(out))
`;

// the Pod lists its namespace's ConfigMaps as default-editor, through the in-cluster contract
const IN_CLUSTER = `
from kubernetes import client, config
config.load_incluster_config()
names = [c.metadata.name for c in client.CoreV1Api().list_namespaced_config_map("team-a").items]
print("configmaps:", ",".join(sorted(names)))
print("token:", open("/var/run/secrets/kubernetes.io/serviceaccount/token").read().strip())
`;

describe('Skiff\'s workloads with tenancy on', { skip, timeout: 240_000 }, () => {
  let s: TestServer;
  let adminKubeconfig = '';
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const kubectl = (args: string[], input?: string): ReturnType<TestServer['kubectl']> => s.kubectl(args, input, { KUBECONFIG: adminKubeconfig });
  const apply = async (obj: unknown): Promise<void> => {
    const r = await kubectl(['apply', '-f', '-'], YAML.stringify(obj));
    assert.equal(r.code, 0, r.stderr);
  };
  const phaseOf = async (path: string): Promise<any> => (await s.req('GET', path, undefined, as('alice-token'))).body;

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-tenancy-workloads-'));
    writeFileSync(join(dataDir, 'tokens.csv'), 'alice-token,alice@example.com,1001\nbob-token,bob@example.com,1002\n');
    // trial Pods run the clients' environment, where the Katib SDK imports
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: 'tokens.csv', environments: [{ image: 'katib-sdk', environment: { path: [join(repoRoot, '.venv-clients', 'bin')] } }] } });
    adminKubeconfig = join(s.dataDir, 'kubeconfig');
    await apply({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'team-a' }, spec: { owner: { kind: 'User', name: 'alice@example.com' } } });
    await s.until('alice may create Jobs in team-a', async () => (await kubectl(['auth', 'can-i', 'create', 'jobs', '-n', 'team-a', '--as', 'alice@example.com'])).stdout.trim() === 'yes', 30_000);
  });
  after(async () => {
    await s?.cleanup();
  });

  it('refuses anonymous callers at the API; the inference gateway answers the owner, its transformer reaching the predictor', async () => {
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/pods')).status, 401);
    assert.equal((await s.req('GET', '/apis/v2beta1/runs?namespace=team-a')).status, 401);
    const isvc = await s.req('POST', '/apis/serving.kserve.io/v1beta1/namespaces/team-a/inferenceservices', {
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'echo' },
      spec: {
        transformer: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(fixtures, 'transformer.py')] }] },
        predictor: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(fixtures, 'echo_server.py')] }] },
      },
    }, as('alice-token'));
    assert.equal(isvc.status, 201, isvc.text);
    await s.until('the InferenceService to be Ready', async () => (await phaseOf('/apis/serving.kserve.io/v1beta1/namespaces/team-a/inferenceservices/echo'))?.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True', 60_000);
    const path = '/serving/team-a/echo/v1/models/echo:predict';
    assert.equal((await s.req('POST', path, { instances: [[1]] })).status, 401);
    assert.equal((await s.req('POST', path, { instances: [[1]] }, as('bob-token'))).status, 403);
    const r = await s.req('POST', path, { instances: [[1]] }, as('alice-token'));
    assert.equal(r.status, 200, r.text + s.output.slice(-3000));
    assert.equal(r.body.transformed, true);
    assert.equal(r.body.path, '/v1/models/echo:predict');
    assert.equal(r.body.body, '{"instances": [[16.0]]}');
  });

  it('runs a pipeline through kfp.Client with the owner\'s token; another tenant may not see it', async () => {
    const file = join(s.dataDir, 'pipeline.py');
    writeFileSync(file, PIPELINE);
    const r = await runProgram(kfpPython, [file, s.url, 'alice-token', 'bob-token']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\n--- server ---\n${s.output.slice(-3000)}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
    assert.deepEqual(out, { state: 'SUCCEEDED', listed: 1, list: 403, get: 403 });
  });

  it('runs a Job whose Pod reaches the API with its service-account token', async () => {
    const cm = await s.req('POST', '/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'notes' }, data: { k: 'v' } }, as('alice-token'));
    assert.equal(cm.status, 201, cm.text);
    const job = await s.req('POST', '/apis/batch/v1/namespaces/team-a/jobs', {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'reader' },
      spec: { backoffLimit: 0, template: { spec: { serviceAccountName: 'default-editor', restartPolicy: 'Never', containers: [{ name: 'main', image: 'python:3.11', command: ['python', '-W', 'ignore', '-c', IN_CLUSTER] }] } } },
    }, as('alice-token'));
    assert.equal(job.status, 201, job.text);
    const done = await s.until('the Job to finish', async () => {
      const j = await phaseOf('/apis/batch/v1/namespaces/team-a/jobs/reader');
      return (j?.status?.succeeded ?? 0) + (j?.status?.failed ?? 0) > 0 ? j : undefined;
    }, 60_000);
    const pods = (await phaseOf('/api/v1/namespaces/team-a/pods?labelSelector=job-name%3Dreader')).items;
    const log = (await s.req('GET', `/api/v1/namespaces/team-a/pods/${pods[0].metadata.name}/log`, undefined, as('alice-token'))).text;
    assert.equal(done.status.succeeded, 1, log);
    assert.match(log, /configmaps: .*notes/);
    // the token is bound to its Pod, as kube-apiserver binds it: it works while the Pod exists, not after
    const token = /token: (\S+)/.exec(log)?.[1] ?? '';
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/configmaps', undefined, as(token))).status, 200);
    assert.equal((await s.req('DELETE', `/apis/batch/v1/namespaces/team-a/jobs/reader?propagationPolicy=Foreground`, undefined, as('alice-token'))).status, 200);
    await s.until('the Job\'s Pod to be gone', async () => ((await phaseOf('/api/v1/namespaces/team-a/pods?labelSelector=job-name%3Dreader')).items.length === 0 ? true : undefined), 30_000);
    const after = await s.until('the token to be refused', async () => {
      const r = await s.req('GET', '/api/v1/namespaces/team-a/configmaps', undefined, as(token));
      return r.status === 401 ? r : undefined;
    }, 10_000);
    assert.equal(after.body.reason, 'Unauthorized');
  });

  it('runs an MPIJob whose launcher execs into its workers as its own service account', { skip: existsSync('/usr/bin/mpirun') ? false : 'Open MPI is not installed' }, async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'mpijob-v2beta1.yaml'), 'utf8'));
    const r = await s.req('POST', '/apis/kubeflow.org/v2beta1/namespaces/team-a/mpijobs', job, as('alice-token'));
    assert.equal(r.status, 201, r.text);
    const done = await s.until('the MPIJob to finish', async () => {
      const j = await phaseOf('/apis/kubeflow.org/v2beta1/namespaces/team-a/mpijobs/mpi-allreduce');
      return j?.status?.conditions?.find((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
    }, 120_000);
    const log = (await s.req('GET', '/api/v1/namespaces/team-a/pods/mpi-allreduce-launcher/log', undefined, as('alice-token'))).text;
    assert.equal(done.type, 'Succeeded', `${done.message}\n${log}\n${s.output.slice(-3000)}`);
    // the launcher acted as mpi-operator's launcher account, which may exec into its workers
    const pod = (await phaseOf('/api/v1/namespaces/team-a/pods/mpi-allreduce-launcher'));
    assert.equal(pod.spec.serviceAccountName, 'mpi-allreduce-launcher');
  });

  it('runs a Katib Experiment whose trials push their metrics from their Pods', async () => {
    const experiment = {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'pushed' },
      spec: {
        objective: { type: 'minimize', objectiveMetricName: 'loss' },
        algorithm: { algorithmName: 'random' }, maxTrialCount: 2, parallelTrialCount: 2,
        metricsCollectorSpec: { collector: { kind: 'Push' } },
        parameters: [{ name: 'x', parameterType: 'double', feasibleSpace: { min: '0.1', max: '1.0' } }],
        trialTemplate: {
          primaryContainerName: 'train',
          trialParameters: [{ name: 'x', reference: 'x' }],
          trialSpec: {
            apiVersion: 'batch/v1', kind: 'Job',
            spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'train', image: 'katib-sdk', command: ['python', '-W', 'ignore', '-c', 'import sys\nimport kubeflow.katib as katib\nkatib.report_metrics({"loss": float(sys.argv[1]) ** 2})', '${trialParameters.x}'] }] } } },
          },
        },
      },
    };
    const made = await s.req('POST', '/apis/kubeflow.org/v1beta1/namespaces/team-a/experiments', experiment, as('alice-token'));
    assert.equal(made.status, 201, made.text);
    const e = await s.until('the Experiment to end', async () => {
      const x = await phaseOf('/apis/kubeflow.org/v1beta1/namespaces/team-a/experiments/pushed');
      const last = x?.status?.conditions?.at(-1);
      return last && ['Succeeded', 'Failed'].includes(last.type) && last.status === 'True' ? x : undefined;
    }, 120_000);
    const pods = (await phaseOf('/api/v1/namespaces/team-a/pods?labelSelector=katib.kubeflow.org%2Fexperiment%3Dpushed')).items;
    const logs = await Promise.all(pods.map(async (p: any) => `${p.metadata.name} ${p.status.podIP}: ${(await s.req('GET', `/api/v1/namespaces/team-a/pods/${p.metadata.name}/log`, undefined, as('alice-token'))).text}`));
    assert.equal(e.status.conditions.at(-1).type, 'Succeeded', JSON.stringify(e.status));
    assert.equal(e.status.trialsSucceeded, 2, `${JSON.stringify(e.status)}\n${logs.join('\n')}`);
    const loss = Number(e.status.currentOptimalTrial.observation.metrics[0].latest);
    const x = Number(e.status.currentOptimalTrial.parameterAssignments[0].value);
    assert.ok(Math.abs(loss - x * x) < 1e-9, JSON.stringify(e.status.currentOptimalTrial));
  });
});
