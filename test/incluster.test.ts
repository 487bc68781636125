// The kubeconfig `skiff up` writes and the in-cluster contract: code inside a Pod reaches Skiff as it
// reaches a cluster, with the Python client's load_incluster_config(), client-go's InClusterConfig
// (kubectl with no kubeconfig) and kfp.Client() with no arguments.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { ServiceAccountTokens } from '../src/server/kube/tokens.js';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { keyPairFromPem } from '../src/util/x509.js';
import { TestServer, clientsPython, kubectlBin, repoRoot, runCli, runProgram } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const skip = !existsSync(python) || !existsSync(kubectlBin) ? 'the Python environments (.venv, .venv-clients) are not set up' : false;
const sandboxSkip = !bwrapAvailable() ? 'bubblewrap cannot run here, so nothing can be mounted at /var/run/secrets' : false;

describe('kubeconfig and the in-cluster contract', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  /** applies a Pod, waits for it to end and returns its phase and log */
  async function runPod(pod: Record<string, any>): Promise<{ phase: string; log: string; obj: any }> {
    const ns = pod.metadata.namespace ?? 'default';
    const r = await s.kubectl(['apply', '--validate=false', '-f', '-'], YAML.stringify(pod));
    assert.equal(r.code, 0, r.stderr);
    const path = `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`;
    const obj = await s.until(`pod ${pod.metadata.name} to end`, async () => {
      const p = await s.get(path);
      return ['Succeeded', 'Failed'].includes(p.status?.phase) ? p : undefined;
    }, 120_000);
    const log = (await s.req('GET', `${path}/log`)).text;
    return { phase: obj.status.phase, log, obj };
  }

  const pod = (name: string, command: string[], extra: Record<string, unknown> = {}, namespace = 'default'): Record<string, any> => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command }], ...extra },
  });

  it('skiff kubeconfig prints the kubeconfig skiff up wrote, and kubectl uses it as is', async () => {
    const byFlag = await runCli(['kubeconfig', '--path', '--data-dir', s.dataDir]);
    assert.equal(byFlag.code, 0, byFlag.stderr);
    const file = byFlag.stdout.trim();
    assert.equal(file, join(s.dataDir, 'kubeconfig'));
    const byEnv = await runCli(['kubeconfig'], { SKIFF_DATA_DIR: s.dataDir });
    assert.equal(byEnv.code, 0, byEnv.stderr);
    assert.equal(byEnv.stdout, readFileSync(file, 'utf8'));
    const cfg = YAML.parse(byEnv.stdout) as any;
    assert.equal(cfg['current-context'], 'skiff');
    assert.equal(cfg.clusters[0].cluster.server, s.url);
    assert.equal(cfg.contexts[0].context.namespace, 'default');

    const env = { KUBECONFIG: file, HOME: s.dataDir };
    const plain = await runProgram(kubectlBin, ['get', 'namespaces', '-o', 'name'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /namespace\/default/);
    // the HTTPS endpoint Pods use, verified by Go's TLS stack against the CA in the kubeconfig
    const tls = await runProgram(kubectlBin, ['--context', 'skiff-https', 'get', 'namespaces', '-o', 'name'], env);
    assert.equal(tls.code, 0, tls.stderr);
    assert.match(tls.stdout, /namespace\/kube-system/);

    const missing = await runCli(['kubeconfig', '--data-dir', join(s.dataDir, 'nowhere')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no kubeconfig in .*nowhere: it is written by 'skiff up --data-dir/);
  });

  it('a Pod lists its namespace\'s Pods with the Python client\'s load_incluster_config()', { skip: sandboxSkip }, async () => {
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    const script = [
      'import json, os',
      'from kubernetes import client, config',
      'config.load_incluster_config()',
      "sa = '/var/run/secrets/kubernetes.io/serviceaccount'",
      "ns = open(sa + '/namespace').read()",
      'pods = client.CoreV1Api().list_namespaced_pod(ns).items',
      "print(json.dumps({'ns': ns, 'pods': [p.metadata.name for p in pods], 'files': sorted(os.listdir(sa)),",
      "  'token': open(sa + '/token').read(), 'env': {k: v for k, v in os.environ.items() if k.startswith('KUBERNETES_')}}))",
    ].join('\n');
    const r = await runPod(pod('lister', ['python', '-c', script], {}, 'team-a'));
    assert.equal(r.phase, 'Succeeded', r.log);
    const out = JSON.parse(r.log.trim().split('\n').pop() ?? '') as { ns: string; pods: string[]; files: string[]; token: string; env: Record<string, string> };
    assert.equal(out.ns, 'team-a');
    assert.deepEqual(out.pods, ['lister']);
    assert.deepEqual(out.files, ['ca.crt', 'namespace', 'token']);
    const endpoint = JSON.parse(readFileSync(join(s.dataDir, 'incluster.json'), 'utf8')) as { host: string; port: number };
    assert.equal(out.env.KUBERNETES_SERVICE_HOST, endpoint.host);
    assert.equal(out.env.KUBERNETES_SERVICE_PORT, String(endpoint.port));
    assert.equal(out.env.KUBERNETES_PORT, `tcp://${endpoint.host}:${endpoint.port}`);
    // the token names the Pod it was given to, signed with the server's key
    const tokens = new ServiceAccountTokens(keyPairFromPem(readFileSync(join(s.dataDir, 'pki', 'sa.key'), 'utf8')));
    const id = tokens.verify(out.token);
    assert.equal(id.user, 'system:serviceaccount:team-a:default');
    assert.deepEqual(id.pod, { name: 'lister', uid: r.obj.metadata.uid });
    // every namespace has its `default` ServiceAccount, and the token names it
    const sa = await s.get('/api/v1/namespaces/team-a/serviceaccounts/default');
    assert.equal(id.serviceAccount?.uid, sa.metadata.uid);
  });

  it('kubectl inside a Pod, with no kubeconfig, uses client-go\'s in-cluster configuration', { skip: sandboxSkip }, async () => {
    const r = await runPod(pod('kubectl-in-pod', [kubectlBin, 'get', 'pods', '-o', 'name', '-v=6'], {}));
    assert.equal(r.phase, 'Succeeded', r.log);
    assert.match(r.log, /Using in-cluster configuration/);
    assert.match(r.log, /url="https:\/\/127\.0\.0\.\d:\d+\/api\/v1\/namespaces\/default\/pods/);
    assert.match(r.log, /pod\/kubectl-in-pod/);
  });

  it('kfp.Client() with no arguments reaches the KFP API from a Pod', async () => {
    const script = [
      'import os, kfp',
      'c = kfp.Client()',
      "e = c.create_experiment('from-a-pod', namespace='default')",
      "print('EXPERIMENTS', sorted(x.display_name for x in c.list_experiments(namespace='default').experiments or []))",
      "print('HOST', c._existing_config.host, 'ENDPOINT', os.environ.get('KF_PIPELINES_ENDPOINT'))",
    ].join('\n');
    const r = await runPod(pod('kfp-client', ['python', '-c', script]));
    assert.equal(r.phase, 'Succeeded', r.log);
    assert.match(r.log, /EXPERIMENTS \[.*'from-a-pod'.*\]/);
    // in a sandbox, as on Kubeflow: the in-cluster Service name, found through the Pod's hosts file
    if (!sandboxSkip) assert.match(r.log, /HOST ml-pipeline\.kubeflow\.svc\.cluster\.local:8888 ENDPOINT None/);
  });

  it('TrainingClient() with no arguments, in a Pod, submits a PyTorchJob and waits for it as a notebook would', { skip: sandboxSkip }, async () => {
    const script = [
      'from kubernetes import client as k8s',
      'from kubeflow.training import TrainingClient, models',
      'tc = TrainingClient()',
      "c = k8s.V1Container(name='pytorch', image='python', command=['python', '-c', 'print(42)'])",
      "spec = models.KubeflowOrgV1ReplicaSpec(replicas=1, restart_policy='Never', template=k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(containers=[c])))",
      "job = models.KubeflowOrgV1PyTorchJob(api_version='kubeflow.org/v1', kind='PyTorchJob', metadata=k8s.V1ObjectMeta(name='from-notebook'), spec=models.KubeflowOrgV1PyTorchJobSpec(run_policy=models.KubeflowOrgV1RunPolicy(clean_pod_policy='None'), pytorch_replica_specs={'Master': spec}))",
      'tc.create_job(job)',
      "tc.wait_for_job_conditions('from-notebook', wait_timeout=120, polling_interval=1)",
      "print('NAMESPACE', tc.namespace, 'SUCCEEDED', tc.is_job_succeeded('from-notebook'), 'LOGS', tc.get_job_logs('from-notebook')[0])",
    ].join('\n');
    // the SDKs' environment stands in for a notebook image that has them
    const r = await runPod(pod('notebook', [clientsPython, '-c', script]));
    assert.equal(r.phase, 'Succeeded', r.log);
    // (the Python client parses a log that is valid JSON, so "42\n" comes back as 42, as from a cluster)
    assert.match(r.log, /NAMESPACE default SUCCEEDED True LOGS \{'from-notebook-master-0': '42'\}/);
  });

  it('automountServiceAccountToken: false, on the Pod or its ServiceAccount, leaves the token out, but not the Service variables', { skip: sandboxSkip }, async () => {
    const check = ['sh', '-c', 'ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; echo "host=$KUBERNETES_SERVICE_HOST"'];
    const r = await runPod(pod('no-token', check, { automountServiceAccountToken: false }));
    assert.equal(r.phase, 'Succeeded', r.log);
    assert.match(r.log, /No such file or directory/);
    assert.match(r.log, /host=127\.0\.0\.\d/);
    await s.create('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'quiet' }, automountServiceAccountToken: false });
    const bySa = await runPod(pod('no-token-by-sa', check, { serviceAccountName: 'quiet' }));
    assert.match(bySa.log, /No such file or directory/);
    const podWins = await runPod(pod('token-anyway', check, { serviceAccountName: 'quiet', automountServiceAccountToken: true }));
    assert.match(podWins.log, /ca\.crt\s+namespace\s+token/);
  });

  it('a projected volume of the Pod\'s own: a token for the audience and lifetime it asks, and downward API fields, under /var/run', { skip: sandboxSkip }, async () => {
    const script = [
      'import base64, json',
      'd = "/var/run/secrets/vault"',
      'c = json.loads(base64.urlsafe_b64decode(open(d + "/token").read().split(".")[1] + "=="))',
      'print(json.dumps({"aud": c["aud"], "ttl": c["exp"] - c["iat"], "pod": c["kubernetes.io"]["pod"]["name"], "labels": open(d + "/labels").read(), "name": open(d + "/meta/name").read()}))',
    ].join('\n');
    const p: Record<string, any> = {
      ...pod('projected', ['python3', '-c', script], {
        volumes: [{
          name: 'vault', projected: {
            sources: [
              { serviceAccountToken: { path: 'token', audience: 'vault', expirationSeconds: 600 } },
              { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'meta/name', fieldRef: { fieldPath: 'metadata.name' } }] } },
            ],
          },
        }],
      }),
      metadata: { name: 'projected', namespace: 'default', labels: { app: 'vault-client' } },
    };
    p.spec.containers[0].volumeMounts = [{ name: 'vault', mountPath: '/var/run/secrets/vault', readOnly: true }];
    const r = await runPod(p);
    assert.equal(r.phase, 'Succeeded', r.log);
    assert.deepEqual(JSON.parse(r.log.trim()), { aud: ['vault'], ttl: 600, pod: 'projected', labels: 'app="vault-client"', name: 'projected' });
  });
});
