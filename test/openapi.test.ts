// Discovery, OpenAPI, `kubectl explain` and server-side field validation, with the real kubectl and the
// Python client against `skiff up`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { defaultRegistry } from '../src/api/index.js';
import { apiVersionOf } from '../src/api/registry.js';
import { conformanceDir } from '../src/conformance-path.js';
import { TestServer } from './harness.js';

const registry = defaultRegistry();

function podYaml(name: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  restartPolicy: Never
  foo: bar
  containers:
  - name: main
    image: python
    command: ["python", "-c", "pass"]
    bogus: 1
`;
}

describe('discovery, OpenAPI and field validation with kubectl', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  const kubectl = async (args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> => s.kubectl(args, input);
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await kubectl(args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  it('answers aggregated discovery with an ETag, and 304 to a client that has it', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const r = await fetch(`${s.url}/apis`, { headers: { accept } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const doc = (await r.json()) as any;
    assert.equal(doc.kind, 'APIGroupDiscoveryList');
    assert.ok(doc.items.some((g: any) => g.metadata.name === 'kubeflow.org' && g.versions.map((v: any) => v.version).join() === 'v1,v2beta1,v1beta1,v1alpha1'));
    const etag = r.headers.get('etag') ?? '';
    assert.match(etag, /^"[0-9A-F]+"$/);
    const again = await fetch(`${s.url}/apis`, { headers: { accept, 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const legacy = (await (await fetch(`${s.url}/api`)).json()) as any;
    assert.equal(legacy.kind, 'APIVersions');
    // what discovery does not list is not served: kube-apiserver deletes no collection of Namespaces
    assert.equal((await s.req('DELETE', '/api/v1/namespaces')).status, 405);
  });

  it('kubectl api-resources and api-versions list every served kind', async () => {
    const versions = (await ok(['api-versions'])).trim().split('\n').sort();
    // the stored kinds' group-versions, and those of resources nothing stores: the access reviews
    // (kubectl auth can-i), with a node to measure, metrics.k8s.io (kubectl top), and Kueue's visibility API
    const unstored = ['authentication.k8s.io/v1', 'authorization.k8s.io/v1', 'metrics.k8s.io/v1beta1', 'visibility.kueue.x-k8s.io/v1beta1'];
    assert.deepEqual(versions, [...new Set([...registry.all().map(apiVersionOf), ...unstored])].sort());
    const table = (await ok(['api-resources', '-o', 'wide', '--no-headers'])).trim().split('\n').map((l) => l.trim().split(/\s+/));
    // kubectl lists each group's preferred version only
    const preferred = new Set(((await s.get('/apis')).groups as any[]).map((g) => g.preferredVersion.groupVersion));
    for (const def of registry.all().filter((d) => !d.group || preferred.has(apiVersionOf(d)))) {
      const row = table.find((cols) => cols[0] === def.plural && cols.includes(apiVersionOf(def)));
      assert.ok(row, `api-resources lists ${def.plural} ${apiVersionOf(def)}`);
      const at = row.indexOf(apiVersionOf(def));
      // several short names print as one column, comma-separated (Kueue's localqueues: queue,queues,lq)
      assert.deepEqual(row.slice(1, at).flatMap((c) => c.split(',')), def.shortNames ?? [], `${def.plural} short names`);
      assert.equal(row[at + 1], String(def.namespaced));
      assert.equal(row[at + 2], def.kind);
      assert.equal(row[at + 3], def.kind === 'Namespace' ? 'create,delete,get,list,patch,update,watch' : 'create,delete,deletecollection,get,list,patch,update,watch');
    }
    const all = (await ok(['api-resources', '--categories=all', '-o', 'name'])).trim().split('\n').sort();
    // Katib's CRDs put their kinds in `all`, `kubeflow` and `katib`
    assert.deepEqual(all, ['experiments.kubeflow.org', 'jobs.batch', 'pods', 'services', 'suggestions.kubeflow.org', 'trials.kubeflow.org']);
    const katib = (await ok(['api-resources', '--categories=katib', '-o', 'name'])).trim().split('\n').sort();
    assert.deepEqual(katib, ['experiments.kubeflow.org', 'suggestions.kubeflow.org', 'trials.kubeflow.org']);
    await ok(['create', 'namespace', 'categories']);
    const none = await kubectl(['get', 'kubeflow', '-n', 'categories']);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stderr, /No resources found in categories namespace/);
  });

  it('kubectl explain reads built-in and Kubeflow kinds', async () => {
    const pod = await ok(['explain', 'pod.spec.containers']);
    assert.match(pod, /KIND:\s+Pod/);
    assert.match(pod, /FIELD: containers <\[\]Container>/);
    assert.match(pod, /imagePullPolicy\s+<string>/);
    const pt = await ok(['explain', 'pytorchjob.spec.pytorchReplicaSpecs']);
    assert.match(pt, /GROUP:\s+kubeflow\.org/);
    assert.match(pt, /FIELD: pytorchReplicaSpecs <map\[string\]Object>/);
    assert.match(pt, /restartPolicy\s+<string>/);
    const isvc = await ok(['explain', 'isvc.spec.predictor', '--recursive']);
    assert.match(isvc, /KIND:\s+InferenceService/);
    assert.match(isvc, /^\s+sklearn\s+<Object>$/m);
    assert.match(isvc, /^\s+storageUri\s+<string>$/m);
    const mpi = await ok(['explain', 'mpijobs.spec.mpiReplicaSpecs', '--api-version=kubeflow.org/v2beta1']);
    assert.match(mpi, /VERSION:\s+v2beta1/);
    // the profile-controller's CRD; Katib's CRDs declare no fields upstream, so kubectl explains none of theirs
    const profile = await ok(['explain', 'profile.spec.owner']);
    assert.match(profile, /KIND:\s+Profile/);
    assert.match(profile, /FIELD: owner <Object>/);
    assert.match(profile, /^\s+name\s+<string> -required-$/m);
    const quota = await ok(['explain', 'profiles.spec.resourceQuotaSpec.hard', '--api-version=kubeflow.org/v1beta1']);
    assert.match(quota, /VERSION:\s+v1beta1/);
    // the notebook-controller's CRD in its three versions, with Skiff's template metadata beside `spec`
    const nb = await ok(['explain', 'notebook.spec.template.spec.containers']);
    assert.match(nb, /KIND:\s+Notebook/);
    assert.match(nb, /VERSION:\s+v1$/m);
    assert.match(nb, /FIELD: containers <\[\]Object>/);
    assert.match(nb, /^\s+imagePullPolicy\s+<string>$/m);
    for (const version of ['v1beta1', 'v1alpha1']) {
      const older = await ok(['explain', 'notebooks.spec.template.spec.containers.resources', `--api-version=kubeflow.org/${version}`]);
      assert.match(older, new RegExp(`VERSION:\\s+${version}`));
    }
    const template = await ok(['explain', 'notebook.spec.template']);
    assert.match(template, /^\s+metadata\s+<Object>$/m);
    assert.match(template, /^\s+spec\s+<Object>$/m);
    assert.match(await ok(['explain', 'notebook.spec.template.metadata.labels']), /FIELD: labels <map\[string\]string>/);
  });

  it('kubectl apply --validate=strict refuses an unknown field and names it', async () => {
    for (const validate of [[], ['--validate=strict'], ['--validate=true']]) {
      const r = await kubectl(['apply', '-f', '-', ...validate], podYaml('strict'));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Error from server \(BadRequest\): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec\.containers\[0\]\.bogus", unknown field "spec\.foo"/);
    }
    const r = await kubectl(['get', 'pod', 'strict']);
    assert.notEqual(r.code, 0, 'nothing was created');
    // a CRD kind: KServe removed the alibi explainer from its schema
    const alibi = readFileSync(join(conformanceDir(), 'kserve', 'samples', 'explanation', 'alibi', 'income', 'income.yaml'), 'utf8');
    const refused = await kubectl(['apply', '-f', '-'], alibi);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /error when creating "STDIN": InferenceService in version "v1beta1" cannot be handled as a InferenceService: strict decoding error: unknown field "spec\.explainer\.alibi"/);
    const profile = await kubectl(['apply', '-f', '-'], 'apiVersion: kubeflow.org/v1\nkind: Profile\nmetadata:\n  name: strict-profile\nspec:\n  owner:\n    kind: User\n    name: a@example.com\n  ownr: b@example.com\n');
    assert.notEqual(profile.code, 0);
    assert.match(profile.stderr, /Profile in version "v1" cannot be handled as a Profile: strict decoding error: unknown field "spec\.ownr"/);
    const notebook = (extra: string): string => `apiVersion: kubeflow.org/v1\nkind: Notebook\nmetadata:\n  name: strict-nb\nspec:\n  template:\n    metadata:\n      labels:\n        team: a\n    spec:\n      containers:\n      - name: nb\n        image: jupyter\n${extra}`;
    const nb = await kubectl(['apply', '--validate=strict', '-f', '-'], notebook('        imagePullPolice: Always\n'));
    assert.notEqual(nb.code, 0);
    assert.match(nb.stderr, /Notebook in version "v1" cannot be handled as a Notebook: strict decoding error: unknown field "spec\.template\.spec\.containers\[0\]\.imagePullPolice"/);
    // the template's metadata is Skiff's addition to the schema: neither refused nor pruned
    assert.match(await ok(['apply', '--validate=strict', '-f', '-'], notebook('')), /notebook\.kubeflow\.org\/strict-nb created/);
    assert.equal(await ok(['get', 'notebook', 'strict-nb', '-o', 'jsonpath={.spec.template.metadata.labels.team}']), 'a');
    // Skiff's own checks still name a missing required field
    const bare = await kubectl(['apply', '-f', '-'], 'apiVersion: kubeflow.org/v1\nkind: Notebook\nmetadata:\n  name: bare-nb\nspec:\n  template:\n    spec: {}\n');
    assert.notEqual(bare.code, 0);
    assert.match(bare.stderr, /spec\.template\.spec\.containers: Required value/);
  });

  it('kubectl apply of a value of the wrong JSON type prints what a cluster answers: Go\'s decode error for a built-in kind, the schema\'s for a CRD', async () => {
    const cm = await kubectl(['apply', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\ndata:\n  a: 1\n');
    assert.notEqual(cm.code, 0);
    assert.equal(cm.stderr.trim(), 'Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string');
    const pod = await kubectl(['apply', '-f', '-'], 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: typed\nspec:\n  containers:\n  - name: main\n    image: python\n    ports:\n    - containerPort: "80"\n');
    assert.notEqual(pod.code, 0);
    assert.equal(pod.stderr.trim(), 'Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32');
    const raw = await s.req('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed' }, data: { a: true } });
    assert.equal(raw.status, 400);
    assert.equal(raw.body.reason, 'BadRequest');
    const job = await kubectl(['apply', '-f', '-'], 'apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: typed\nspec:\n  runPolicy:\n    backoffLimit: "3"\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            image: python\n');
    assert.notEqual(job.code, 0);
    assert.equal(job.stderr.trim(), 'The PyTorchJob "typed" is invalid: spec.runPolicy.backoffLimit: Invalid value: "string": spec.runPolicy.backoffLimit in body must be of type integer: "string"');
  });

  it('kubectl apply --validate=warn prints a warning per field and stores the object without them', async () => {
    const r = await kubectl(['apply', '-f', '-', '--validate=warn'], podYaml('warned'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod\/warned created/);
    assert.match(r.stderr, /Warning: unknown field "spec\.containers\[0\]\.bogus"/);
    assert.match(r.stderr, /Warning: unknown field "spec\.foo"/);
    const pod = JSON.parse(await ok(['get', 'pod', 'warned', '-o', 'json']));
    assert.equal(pod.spec.foo, undefined);
    assert.equal(pod.spec.containers[0].bogus, undefined);
    assert.equal(pod.spec.restartPolicy, 'Never');
    const ignored = await kubectl(['apply', '-f', '-', '--validate=false'], podYaml('ignored'));
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.doesNotMatch(ignored.stderr, /unknown field/);
  });

  it('server-side: Strict on a patch answers 422 naming the field, a bad directive 422, JSON duplicates are named', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fv' }, data: { a: '1' } };
    assert.equal((await s.req('POST', '/api/v1/namespaces/default/configmaps', cm)).status, 201);
    const patched = await s.req('PATCH', '/api/v1/namespaces/default/configmaps/fv?fieldValidation=Strict', { spec: { x: 1 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(patched.status, 422);
    assert.equal(patched.body.details.causes[0].field, 'patch');
    assert.match(patched.body.message, /strict decoding error: unknown field "spec"$/);
    const bad = await s.req('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=strict', cm);
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /^CreateOptions\.meta\.k8s\.io "" is invalid: fieldValidation: Unsupported value: "strict"/);
    const dup = await fetch(`${s.url}/api/v1/namespaces/default/configmaps?fieldValidation=Strict`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1"},"data":{"b":"2"}}',
    });
    assert.equal(dup.status, 400);
    assert.match(((await dup.json()) as any).message, /strict decoding error: duplicate field "data"/);
    const yamlDup = await fetch(`${s.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ydup\ndata:\n  a: "1"\n  a: "2"\n',
    });
    assert.equal(yamlDup.status, 201);
    assert.equal(yamlDup.headers.get('warning'), '299 - "line 7: key \\"a\\" already set in map"');
    const warned = await fetch(`${s.url}/api/v1/namespaces/default/configmaps/fv`, {
      method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...cm, extra: true }),
    });
    assert.equal(warned.status, 200);
    assert.equal(warned.headers.get('warning'), '299 - "unknown field \\"extra\\""');
  });

  it('client-side apply of the upstream training and KServe examples: create, change, re-apply', async () => {
    await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubeflow\n');
    const corpus = conformanceDir();
    const examples = [
      { file: join(corpus, 'training', 'pytorch', 'cpu-demo', 'demo.yaml'), resource: 'pytorchjob' },
      { file: join(corpus, 'training', 'tensorflow', 'simple.yaml'), resource: 'tfjob' },
      { file: join(corpus, 'training', 'mpi-operator', 'v2beta1', 'pi', 'pi.yaml'), resource: 'mpijobs.v2beta1.kubeflow.org' },
      { file: join(corpus, 'kserve', 'samples', 'v1beta1', 'sklearn', 'v1', 'sklearn.yaml'), resource: 'isvc' },
    ];
    for (const ex of examples) {
      const text = readFileSync(ex.file, 'utf8');
      const obj = YAML.parse(text);
      const ns = obj.metadata.namespace ?? 'default';
      const name = obj.metadata.name;
      const created = await ok(['apply', '-f', '-'], text);
      assert.match(created, / created/, `${ex.file}: ${created}`);
      // the first change adds two labels; the second drops one and changes the other, which only the
      // last-applied configuration lets kubectl tell apart from a label someone else set
      const changed = structuredClone(obj);
      changed.metadata.labels = { ...changed.metadata.labels, step: 'one', keep: 'me' };
      assert.match(await ok(['apply', '-f', '-'], YAML.stringify(changed)), / configured/);
      changed.metadata.labels = { ...obj.metadata.labels, step: 'two' };
      assert.match(await ok(['apply', '-f', '-'], YAML.stringify(changed)), / configured/);
      const live = JSON.parse(await ok(['get', ex.resource, name, '-n', ns, '-o', 'json']));
      assert.equal(live.metadata.labels.step, 'two', ex.file);
      assert.equal(live.metadata.labels.keep, undefined, `${ex.file}: a label dropped from the file is removed`);
      assert.ok(live.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], ex.file);
      await ok(['delete', ex.resource, name, '-n', ns, '--wait=false']);
    }
  });

  it('the Python client reads the OpenAPI index and a group-version document', async () => {
    const r = await s.python(`
import json
from kubernetes import client, config
config.load_kube_config()
api = client.ApiClient()
index = api.call_api('/openapi/v3', 'GET', response_type='object', _return_http_data_only=True)
url = index['paths']['apis/batch/v1']['serverRelativeURL']
doc = api.call_api(url.split('?')[0], 'GET', query_params=[('hash', url.split('hash=')[1])], response_type='object', _return_http_data_only=True)
print(json.dumps({'paths': sorted(index['paths']), 'job': doc['components']['schemas']['io.k8s.api.batch.v1.Job']['x-kubernetes-group-version-kind']}))
`);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
    assert.ok(out.paths.includes('api/v1') && out.paths.includes('apis/kubeflow.org/v1') && out.paths.includes('apis/serving.kserve.io/v1beta1'), r.stdout);
    assert.deepEqual(out.job, [{ group: 'batch', kind: 'Job', version: 'v1' }]);
  });
});
