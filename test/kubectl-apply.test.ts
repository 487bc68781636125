// Every patch type and server-side apply, driven by the real kubectl and the Python client against
// `skiff up`: client-side apply (kubectl's three-way strategic merge patch for built-in kinds, a merge
// patch for Kubeflow's), server-side apply with managedFields, conflicts and --force-conflicts, and
// `kubectl patch` of each type. kubectl validates as it does by default (on the server, with
// fieldValidation=Strict, as the OpenAPI documents say the server can).
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../src/conformance-path.js';
import { TestServer } from './harness.js';

const corpus = conformanceDir();

describe('kubectl apply and patch', () => {
  let s: TestServer;
  const kubectl = async (args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> => s.kubectl(args, input);
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await kubectl(args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const getJson = async (what: string[]): Promise<any> => JSON.parse(await ok(['get', ...what, '-o', 'json', '--show-managed-fields']));
  const managers = (obj: any): string[] => (obj.metadata.managedFields ?? []).map((m: any) => `${m.manager}/${m.operation}`).sort();

  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('client-side apply of a Pod: re-applied with a changed image and labels, its lists stay merged and the fields others set stay', async () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'csa-pod', labels: { app: 'web', tier: 'a' } },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'python', command: ['sleep', '600'], env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 8080 }, { containerPort: 9090, name: 'metrics' }] }],
      },
    };
    assert.match(await ok(['apply', '-f', '-'], JSON.stringify(pod)), /pod\/csa-pod created/);
    const live = await s.until('the Pod bound', async () => {
      const p = await getJson(['pod', 'csa-pod']);
      return p.spec.nodeName ? p : undefined;
    });
    assert.deepEqual(managers(live), ['kubectl-client-side-apply/Update']);
    const changed = structuredClone(pod);
    changed.spec.containers[0]!.image = 'python:3';
    changed.metadata.labels = { app: 'web', tier: 'b' } as any;
    const diff = await kubectl(['diff', '-f', '-'], JSON.stringify(changed));
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /-\s+image: python\n\+\s+image: python:3/);
    assert.match(await ok(['apply', '-f', '-'], JSON.stringify(changed)), /pod\/csa-pod configured/);
    const after = await getJson(['pod', 'csa-pod']);
    assert.equal(after.spec.containers.length, 1);
    const main = after.spec.containers[0];
    assert.equal(main.image, 'python:3');
    assert.deepEqual(main.env, [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
    assert.deepEqual(main.ports.map((p: any) => p.containerPort), [8080, 9090]);
    assert.deepEqual(after.metadata.labels, { app: 'web', tier: 'b' });
    assert.equal(after.spec.nodeName, live.spec.nodeName, 'the scheduler\'s field is kept');
    assert.equal(JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec.containers[0].image, 'python:3');
    // a Pod's spec is immutable but for images, on Skiff as on a cluster: the same three-way patch is refused
    const env = structuredClone(changed);
    env.spec.containers[0]!.env[1]!.value = '22';
    const refused = await kubectl(['apply', '-f', '-'], JSON.stringify(env));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Pod "csa-pod" is invalid/);
    await ok(['delete', 'pod', 'csa-pod', '--grace-period=0', '--wait=false']);
  });

  it('client-side apply of a Service: ports merged by port, one changed and one removed, a label kubectl label added kept', async () => {
    const svc = (metricsPort: number, metricsName: string, tier: string): string => YAML.stringify({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'csa-svc', labels: { app: 'web', tier } },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }, { name: metricsName, port: metricsPort }] },
    });
    await ok(['apply', '-f', '-'], svc(9090, 'metrics', 'a'));
    await ok(['label', 'service', 'csa-svc', 'owner=ops']);
    await ok(['apply', '-f', '-'], svc(9191, 'prom', 'b'));
    const live = await getJson(['service', 'csa-svc']);
    assert.deepEqual(live.spec.ports, [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'prom', port: 9191, protocol: 'TCP' }]);
    assert.deepEqual(live.metadata.labels, { app: 'web', tier: 'b', owner: 'ops' });
    assert.deepEqual(managers(live), ['kubectl-client-side-apply/Update', 'kubectl-label/Update']);
    // applying the same file again changes nothing
    const rv = live.metadata.resourceVersion;
    assert.match(await ok(['apply', '-f', '-'], svc(9191, 'prom', 'b')), /unchanged/);
    assert.equal((await getJson(['service', 'csa-svc'])).metadata.resourceVersion, rv);
  });

  it('client-side apply of a Job: labels changed on re-apply, the template kept whole', async () => {
    const job = (team: string): string => YAML.stringify({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'csa-job', labels: { team } },
      spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['true'], env: [{ name: 'X', value: '1' }], ports: [{ containerPort: 8000 }] }] } } },
    });
    await ok(['apply', '-f', '-'], job('a'));
    await ok(['apply', '-f', '-'], job('b'));
    const live = await getJson(['job', 'csa-job']);
    assert.equal(live.metadata.labels.team, 'b');
    const c = live.spec.template.spec.containers;
    assert.equal(c.length, 1);
    assert.deepEqual(c[0].env, [{ name: 'X', value: '1' }]);
    assert.deepEqual(c[0].ports.map((p: any) => p.containerPort), [8000]);
  });

  it('client-side apply of upstream Kubeflow examples (a PyTorchJob, an InferenceService): changed and re-applied as merge patches', async () => {
    await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubeflow\n');
    const file = readFileSync(join(corpus, 'training', 'pytorch', 'simple.yaml'), 'utf8');
    // suspended, so that the example's image (not on this machine) does not start a retry loop
    const job = YAML.parse(file);
    job.spec.runPolicy = { suspend: true };
    await ok(['apply', '-f', '-'], YAML.stringify(job));
    job.spec.pytorchReplicaSpecs.Worker.replicas = 2;
    await ok(['apply', '-f', '-'], YAML.stringify(job));
    const live = await getJson(['pytorchjob', 'pytorch-simple', '-n', 'kubeflow']);
    assert.equal(live.spec.pytorchReplicaSpecs.Worker.replicas, 2);
    assert.equal(live.spec.pytorchReplicaSpecs.Master.template.spec.containers.length, 1);
    assert.deepEqual(managers(live), ['kubectl-client-side-apply/Update']);

    const isvc = readFileSync(join(corpus, 'kserve', 'samples', 'v1beta1', 'sklearn', 'v1', 'sklearn.yaml'), 'utf8');
    await ok(['apply', '-f', '-'], isvc);
    await ok(['apply', '-f', '-'], isvc.replace('sklearn/1.0/model', 'sklearn/1.1/model'));
    const served = await getJson(['inferenceservice', 'sklearn-iris']);
    // Skiff's defaulting (as KServe's webhook) moves the sklearn predictor to `model` with its format
    const predictor = served.spec.predictor.model ?? served.spec.predictor.sklearn;
    assert.equal(predictor.storageUri, 'gs://kfserving-examples/models/sklearn/1.1/model');
    // custom kinds take no strategic merge patch, as on a cluster
    const smp = await kubectl(['patch', 'pytorchjob', 'pytorch-simple', '-n', 'kubeflow', '--type=strategic', '-p', '{"spec":{"runPolicy":{"suspend":true}}}']);
    assert.notEqual(smp.code, 0);
    assert.match(smp.stderr, /the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/);
    await ok(['delete', 'pytorchjob', 'pytorch-simple', '-n', 'kubeflow', '--wait=false']);
    await ok(['delete', 'inferenceservice', 'sklearn-iris', '--wait=false']);
  });

  it('client-side apply of the upstream Katib, Kueue and Notebook examples: changed and re-applied; the Experiment applied server-side, conflicting and forced', async () => {
    await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubeflow\n');
    // Kueue's single-ClusterQueue setup (a ResourceFlavor, a ClusterQueue, a LocalQueue), its CPU quota raised
    const setup = readFileSync(join(corpus, 'kueue', 'examples', 'admin', 'single-clusterqueue-setup.yaml'), 'utf8');
    assert.match(await ok(['apply', '-f', '-'], setup), /clusterqueue\.kueue\.x-k8s\.io\/cluster-queue created/);
    const raised = await ok(['apply', '-f', '-'], setup.replace('nominalQuota: 9', 'nominalQuota: 12'));
    assert.match(raised, /resourceflavor\.kueue\.x-k8s\.io\/default-flavor unchanged\nclusterqueue\.kueue\.x-k8s\.io\/cluster-queue configured\nlocalqueue\.kueue\.x-k8s\.io\/user-queue unchanged/);
    const cq = await getJson(['clusterqueue', 'cluster-queue']);
    assert.deepEqual(cq.spec.resourceGroups[0].flavors[0].resources, [{ name: 'cpu', nominalQuota: 12 }, { name: 'memory', nominalQuota: '36Gi' }]);
    // the v1 Notebook sample, stopped (its Jupyter server need not start), then its image changed
    const nb = YAML.parse(readFileSync(join(corpus, 'notebooks', 'samples', '_v1_notebook.yaml'), 'utf8'));
    nb.metadata.annotations = { 'kubeflow-resource-stopped': 'true' };
    assert.match(await ok(['apply', '-f', '-'], YAML.stringify(nb)), /notebook\.kubeflow\.org\/notebook-sample-v1 created/);
    nb.spec.template.spec.containers[0].image = 'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy:latest';
    assert.match(await ok(['apply', '-f', '-'], YAML.stringify(nb)), /notebook\.kubeflow\.org\/notebook-sample-v1 configured/);
    const live = await getJson(['notebook', 'notebook-sample-v1']);
    assert.equal(live.spec.template.spec.containers[0].image, 'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy:latest');
    assert.equal(live.metadata.annotations['kubeflow-resource-stopped'], 'true');
    // Katib's random-search Experiment, its trial budget cut
    const exp = readFileSync(join(corpus, 'katib', 'v1beta1', 'hp-tuning', 'random.yaml'), 'utf8');
    assert.match(await ok(['apply', '-f', '-'], exp), /experiment\.kubeflow\.org\/random created/);
    assert.match(await ok(['apply', '-f', '-'], exp.replace('maxTrialCount: 12', 'maxTrialCount: 6')), /experiment\.kubeflow\.org\/random configured/);
    assert.equal((await getJson(['experiment', 'random', '-n', 'kubeflow'])).spec.maxTrialCount, 6);
    // server-side now: the parameters Katib defaulted (each gets `distribution: uniform`) no longer
    // hold what the last-applied annotation says, so kubectl may not take them over from client-side
    // apply without --force-conflicts, as kube-apiserver's lastAppliedManager decides
    const taken = await kubectl(['apply', '--server-side', '-f', '-'], exp);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using kubeflow\.org\/v1beta1: \.spec\.parameters/);
    await ok(['delete', 'experiment', 'random', '-n', 'kubeflow', '--wait=false']);
    // server-side from the start, in a namespace of its own: another manager's change conflicts
    await ok(['create', 'namespace', 'ssa-katib']);
    const ssaExp = exp.replace('namespace: kubeflow', 'namespace: ssa-katib');
    assert.match(await ok(['apply', '--server-side', '-f', '-'], ssaExp), /experiment\.kubeflow\.org\/random serverside-applied/);
    await ok(['patch', 'experiment', 'random', '-n', 'ssa-katib', '--type=merge', '-p', '{"spec":{"parallelTrialCount":2}}']);
    const conflict = await kubectl(['apply', '--server-side', '-f', '-'], ssaExp);
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl-patch" using kubeflow\.org\/v1beta1: \.spec\.parallelTrialCount/);
    await ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], ssaExp);
    const forced = await getJson(['experiment', 'random', '-n', 'ssa-katib']);
    assert.equal(forced.spec.parallelTrialCount, 3);
    assert.deepEqual(managers(forced), ['kubectl/Apply']);
    await ok(['delete', 'experiment', 'random', '-n', 'ssa-katib', '--wait=false']);
    await ok(['delete', 'notebook', 'notebook-sample-v1', '--wait=false']);
  });

  it('server-side apply of the upstream PyTorchJob: its replica specs owned key by key, a patched replica count conflicts', async () => {
    await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ssa-training\n');
    const job = YAML.parse(readFileSync(join(corpus, 'training', 'pytorch', 'simple.yaml'), 'utf8'));
    job.metadata.namespace = 'ssa-training';
    job.spec.runPolicy = { suspend: true };
    await ok(['apply', '--server-side', '-f', '-'], YAML.stringify(job));
    let live = await getJson(['pytorchjob', 'pytorch-simple', '-n', 'ssa-training']);
    const owned = live.metadata.managedFields.find((m: any) => m.manager === 'kubectl').fieldsV1;
    assert.deepEqual(owned['f:spec']['f:pytorchReplicaSpecs']['f:Worker']['f:template']['f:spec']['f:containers']['k:{"name":"pytorch"}']['f:image'], {});
    await ok(['patch', 'pytorchjob', 'pytorch-simple', '-n', 'ssa-training', '--type=merge', '-p', '{"spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":3}}}}']);
    const conflict = await kubectl(['apply', '--server-side', '-f', '-'], YAML.stringify(job));
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl-patch" using kubeflow\.org\/v1: \.spec\.pytorchReplicaSpecs\.Worker\.replicas/);
    await ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], YAML.stringify(job));
    live = await getJson(['pytorchjob', 'pytorch-simple', '-n', 'ssa-training']);
    assert.equal(live.spec.pytorchReplicaSpecs.Worker.replicas, 1);
    assert.deepEqual(managers(live), ['kubectl/Apply']);
    await ok(['delete', 'pytorchjob', 'pytorch-simple', '-n', 'ssa-training', '--wait=false']);
  });

  it('server-side apply: creates, re-applies a change, conflicts with another manager\'s field, and takes it with --force-conflicts', async () => {
    const cm = (data: Record<string, string>, labels: Record<string, string> = { app: 'web' }): string => YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa-cm', labels }, data });
    assert.match(await ok(['apply', '--server-side', '-f', '-'], cm({ a: '1', b: '2' })), /configmap\/ssa-cm serverside-applied/);
    let live = await getJson(['configmap', 'ssa-cm']);
    assert.deepEqual(managers(live), ['kubectl/Apply']);
    assert.deepEqual(live.metadata.managedFields[0].fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });
    // b no longer applied: removed; c added
    await ok(['apply', '--server-side', '-f', '-'], cm({ a: '1', c: '3' }));
    live = await getJson(['configmap', 'ssa-cm']);
    assert.deepEqual(live.data, { a: '1', c: '3' });
    // another manager changes a field the applier owns
    await ok(['patch', 'configmap', 'ssa-cm', '--type=merge', '-p', '{"data":{"a":"patched"}}']);
    live = await getJson(['configmap', 'ssa-cm']);
    assert.deepEqual(managers(live), ['kubectl-patch/Update', 'kubectl/Apply']);
    const conflict = await kubectl(['apply', '--server-side', '-f', '-'], cm({ a: '1', c: '3' }));
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: \.data\.a/);
    // a second applier conflicts with the first on a field they set differently
    const second = await kubectl(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], cm({ c: 'other' }));
    assert.equal(second.code, 1);
    assert.match(second.stderr, /conflict with "kubectl": \.data\.c/);
    await ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], cm({ a: '1', c: '3' }));
    live = await getJson(['configmap', 'ssa-cm']);
    assert.equal(live.data.a, '1');
    assert.deepEqual(managers(live), ['kubectl/Apply'], 'kubectl-patch lost its only field');
    // the same value applied by two managers is shared, without a conflict
    await ok(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], cm({ c: '3' }, {}));
    live = await getJson(['configmap', 'ssa-cm']);
    assert.deepEqual(managers(live), ['kubectl/Apply', 'team-b/Apply']);
  });

  it('an apply after kubectl edit and kubectl annotate conflicts with the editor; --dry-run=server and diff --server-side change nothing', async () => {
    const cm = (team: string): string => YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'edited', annotations: { team } }, data: { mode: 'fast' } });
    await ok(['apply', '--server-side', '-f', '-'], cm('a'));
    const editor = join(s.dataDir, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/mode: fast/mode: slow/" "$1"\n');
    chmodSync(editor, 0o755);
    const edit = await s.kubectl(['edit', 'configmap', 'edited'], undefined, { EDITOR: editor, KUBE_EDITOR: editor });
    assert.equal(edit.code, 0, edit.stderr);
    await ok(['annotate', 'configmap', 'edited', 'note=hi']);
    let live = await getJson(['configmap', 'edited']);
    assert.equal(live.data.mode, 'slow');
    assert.deepEqual(managers(live), ['kubectl-annotate/Update', 'kubectl-edit/Update', 'kubectl/Apply']);
    const conflict = await kubectl(['apply', '--server-side', '-f', '-'], cm('a'));
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /conflict with "kubectl-edit" using v1: \.data\.mode/);
    const rv = live.metadata.resourceVersion;
    const dry = await ok(['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', '-', '-o', 'json'], cm('b'));
    assert.equal(JSON.parse(dry).metadata.annotations.team, 'b');
    const diff = await kubectl(['diff', '--server-side', '--force-conflicts', '-f', '-'], cm('b'));
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /-\s+team: a\n\+\s+team: b/);
    live = await getJson(['configmap', 'edited']);
    assert.equal(live.metadata.resourceVersion, rv);
    assert.equal(live.metadata.annotations.team, 'a');
    assert.equal(live.metadata.annotations.note, 'hi');
  });

  it('server-side apply after client-side apply takes over kubectl\'s own fields without a conflict', async () => {
    const svc = (tier: string): string => YAML.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'moved', labels: { tier } }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } });
    await ok(['apply', '-f', '-'], svc('a'));
    await ok(['apply', '--server-side', '-f', '-'], svc('b'));
    const live = await getJson(['service', 'moved']);
    assert.equal(live.metadata.labels.tier, 'b');
    assert.ok(managers(live).includes('kubectl/Apply'));
    assert.deepEqual(live.spec.ports.map((p: any) => p.port), [80]);
  });

  it('kubectl patch of every type, and the errors kube-apiserver gives for patches that do not apply', async () => {
    await ok(['apply', '--server-side', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'patched' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } }));
    await ok(['patch', 'service', 'patched', '--type=strategic', '-p', '{"spec":{"ports":[{"port":81,"name":"extra"}]}}']);
    let live = await getJson(['service', 'patched']);
    assert.deepEqual(live.spec.ports.map((p: any) => p.port).sort(), [80, 81]);
    await ok(['patch', 'service', 'patched', '--type=merge', '-p', '{"spec":{"ports":[{"port":82,"name":"only"}]}}']);
    live = await getJson(['service', 'patched']);
    assert.deepEqual(live.spec.ports.map((p: any) => p.port), [82]);
    await ok(['patch', 'service', 'patched', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]']);
    live = await getJson(['service', 'patched']);
    assert.deepEqual(live.metadata.labels, { x: 'y' });
    assert.ok(managers(live).includes('kubectl-patch/Update'));
    // managedFields: [{}] clears the record, as Kubernetes documents
    await ok(['patch', 'service', 'patched', '--type=merge', '-p', '{"metadata":{"managedFields":[{}]}}']);
    assert.deepEqual(managers(await getJson(['service', 'patched'])), []);
    const missing = await kubectl(['patch', 'service', 'patched', '--type=json', '-p', '[{"op":"replace","path":"/spec/nothing/here","value":1}]']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /The request is invalid/);
    const noKey = await kubectl(['patch', 'service', 'patched', '--type=strategic', '-p', '{"spec":{"ports":[{"name":"nokey"}]}}']);
    assert.notEqual(noKey.code, 0);
    assert.match(noKey.stderr, /does not contain declared merge key: port/);
  });

  it('the Python client: patch_namespaced_pod with a dict (strategic merge) and a list (JSON patch), server-side apply through call_api', async () => {
    const script = `
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config()
v1 = client.CoreV1Api()
v1.create_namespaced_pod('default', {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'py-pod', 'labels': {'a': '1'}},
  'spec': {'restartPolicy': 'Never', 'containers': [{'name': 'main', 'image': 'python', 'command': ['sleep', '600']}, {'name': 'side', 'image': 'python', 'command': ['sleep', '600']}]}})
p = v1.patch_namespaced_pod('py-pod', 'default', {'metadata': {'labels': {'b': '2'}}, 'spec': {'containers': [{'name': 'side', 'image': 'python:3'}]}})
out = {'smp': [p.metadata.labels, [(c.name, c.image) for c in p.spec.containers]]}
p = v1.patch_namespaced_pod('py-pod', 'default', [{'op': 'remove', 'path': '/metadata/labels/a'}])
out['json'] = p.metadata.labels
try:
    v1.patch_namespaced_pod('py-pod', 'default', [{'op': 'replace', 'path': '/spec/nothing', 'value': 1}])
except ApiException as e:
    s = json.loads(e.body)
    out['unapplied'] = [e.status, s['reason'], s['message'], s['details']['causes'][0]['message']]
from kubernetes.dynamic import DynamicClient
api = client.ApiClient()
cms = DynamicClient(api).resources.get(api_version='v1', kind='ConfigMap')
body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'py-cm'}, 'data': {'k': 'v'}}
rival = {**body, 'data': {'k': 'w'}}
def apply(body, manager, force=None):
    q = [('fieldManager', manager)] if manager else []
    if force: q.append(('force', 'true'))
    data = api.call_api('/api/v1/namespaces/default/configmaps/py-cm', 'PATCH', query_params=q,
        header_params={'Content-Type': 'application/apply-patch+yaml', 'Accept': 'application/json'}, body=body,
        response_type='object', auth_settings=['BearerToken'], _return_http_data_only=True)
    return data
cm = cms.server_side_apply(body=body, namespace='default', field_manager='py-script')
out['ssa'] = [cm.data.to_dict(), [m['manager'] + '/' + m['operation'] for m in cm.metadata.managedFields]]
for args in [(rival, 'rival'), (body, '')]:
    try:
        apply(*args)
    except ApiException as e:
        s = json.loads(e.body)
        out.setdefault('errors', []).append([e.status, s['reason'], s['message'], s['details'].get('causes')])
out['forced'] = apply(rival, 'rival', True)['data']
print(json.dumps(out))
`;
    const r = await s.python(script);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
    assert.deepEqual(out.smp, [{ a: '1', b: '2' }, [['main', 'python'], ['side', 'python:3']]]);
    assert.deepEqual(out.json, { b: '2' });
    assert.deepEqual(out.unapplied, [422, 'Invalid', 'the server rejected our request due to an error in our request', 'replace operation does not apply: doc is missing key: /spec/nothing: missing value']);
    assert.deepEqual(out.ssa, [{ k: 'v' }, ['py-script/Apply']]);
    assert.deepEqual(out.errors, [
      [409, 'Conflict', 'Apply failed with 1 conflict: conflict with "py-script": .data.k', [{ reason: 'FieldManagerConflict', message: 'conflict with "py-script"', field: '.data.k' }]],
      [422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }]],
    ]);
    assert.deepEqual(out.forced, { k: 'w' });
    await ok(['delete', 'pod', 'py-pod', '--grace-period=0', '--wait=false']);
  });
});
