// The API server end to end: a real `skiff up` process, spoken to over HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer } from './harness.js';

const cmPath = '/api/v1/namespaces/default/configmaps';

describe('API server', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { watchHistory: 100 } });
  });
  after(async () => {
    await s.cleanup();
  });

  it('serves health, version, discovery and an OpenAPI document of every route', async () => {
    assert.equal((await s.req('GET', '/healthz')).text, 'ok');
    assert.equal((await s.req('GET', '/readyz')).text, 'ok');
    assert.match((await s.get('/version')).gitVersion, /^v\d/);
    const groups = await s.get('/apis');
    assert.ok(groups.groups.some((g: any) => g.name === 'batch'));
    const batch = await s.get('/apis/batch/v1');
    assert.deepEqual(batch.resources.filter((r: any) => r.name === 'jobs').map((r: any) => r.kind), ['Job']);
    const core = await s.get('/api/v1');
    assert.ok(core.resources.find((r: any) => r.name === 'pods').shortNames.includes('po'));
    const doc = await s.get('/openapi.json');
    for (const p of ['/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status', '/api/v1/namespaces/{namespace}/pods/{name}/log', '/api/v1/nodes', '/api/v1/namespaces/{namespace}/configmaps']) {
      assert.ok(doc.paths[p], `OpenAPI lacks ${p}`);
    }
  });

  it('creates from YAML, reads back as JSON or YAML, and lists', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: "1"\n';
    const r = await s.req('POST', cmPath, yaml, { 'content-type': 'application/yaml' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.metadata.namespace, 'default');
    const asYaml = await fetch(`${s.url}${cmPath}/from-yaml`, { headers: { accept: 'application/yaml' } });
    assert.match(await asYaml.text(), /name: from-yaml/);
    const list = await s.get(cmPath);
    assert.equal(list.kind, 'ConfigMapList');
    assert.ok(list.items.some((o: any) => o.metadata.name === 'from-yaml'));
  });

  it('answers bad input with a Status naming the field, and writes nothing', async () => {
    const bad = await s.req('POST', '/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'neg' },
      spec: { parallelism: -1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x', command: ['true'] }] } } },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.kind, 'Status');
    assert.equal(bad.body.reason, 'Invalid');
    assert.deepEqual(bad.body.details.causes.map((c: any) => c.field), ['spec.parallelism']);
    assert.equal((await s.req('GET', '/apis/batch/v1/namespaces/default/jobs/neg')).status, 404);

    const yaml = await s.req('POST', cmPath, 'apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed', { 'content-type': 'application/yaml' });
    assert.equal(yaml.status, 400);
    assert.match(yaml.body.message, /not valid YAML/);

    const badName = await s.req('POST', cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_DNS' } });
    assert.equal(badName.status, 422);
    assert.equal(badName.body.details.causes[0].field, 'metadata.name');

    const unknown = await s.req('GET', '/apis/example.com/v1/namespaces/default/widgets');
    assert.equal(unknown.status, 404);
    const wrongVersion = await s.req('POST', cmPath, { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'x' } });
    assert.equal(wrongVersion.status, 400);

    const big = await s.req('POST', cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(4 * 1024 * 1024) } });
    assert.equal(big.status, 413);
    assert.equal((await s.req('GET', `${cmPath}/big`)).status, 404);
  });

  it('compare-and-swap with resourceVersion, merge-patch and JSON patch', async () => {
    const a = await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cas' }, data: { v: '1' } });
    const ok = await s.req('PUT', `${cmPath}/cas`, { ...a, data: { v: '2' } });
    assert.equal(ok.status, 200);
    const stale = await s.req('PUT', `${cmPath}/cas`, { ...a, data: { v: '3' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    const merged = await s.req('PATCH', `${cmPath}/cas`, { data: { w: 'x', v: null } }, { 'content-type': 'application/merge-patch+json' });
    assert.deepEqual(merged.body.data, { w: 'x' });
    const patched = await s.req('PATCH', `${cmPath}/cas`, [{ op: 'add', path: '/data/z', value: 'y' }], { 'content-type': 'application/json-patch+json' });
    assert.deepEqual(patched.body.data, { w: 'x', z: 'y' });
  });

  it('merges a strategic merge patch into a built-in kind by key, and refuses it for a custom kind with 415 and Kubernetes\' Status', async () => {
    const podsPath = '/api/v1/namespaces/default/pods';
    await s.create(podsPath, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'smp' }, spec: { nodeName: 'nowhere', containers: [{ name: 'a', image: 'python', command: ['true'] }, { name: 'b', image: 'python', command: ['true'] }] } });
    // a strategic merge merges this into container "a"; a JSON merge patch would drop container "b"
    const patch = { spec: { containers: [{ name: 'a', image: 'python:3' }] } };
    for (const ct of ['application/strategic-merge-patch+json', 'application/strategic-merge-patch+json; charset=utf-8']) {
      const r = await s.req('PATCH', `${podsPath}/smp`, patch, { 'content-type': ct });
      assert.equal(r.status, 200, ct);
      assert.deepEqual(r.body.spec.containers.map((c: any) => [c.name, c.image]), [['a', 'python:3'], ['b', 'python']]);
    }
    const status = (r: { body: any }): Record<string, unknown> => ({ kind: r.body.kind, apiVersion: r.body.apiVersion, status: r.body.status, reason: r.body.reason, code: r.body.code, message: r.body.message });
    const xml = await s.req('PATCH', `${podsPath}/smp`, '<pod/>', { 'content-type': 'application/xml' });
    assert.deepEqual(status(xml), { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'UnsupportedMediaType', code: 415, message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml' });
    const jobs = '/apis/kubeflow.org/v1/namespaces/default/pytorchjobs';
    const custom = await s.req('PATCH', `${jobs}/any`, { spec: {} }, { 'content-type': 'application/strategic-merge-patch+json' });
    assert.deepEqual(status(custom), { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'UnsupportedMediaType', code: 415, message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml' });
    const noManager = await s.req('PATCH', `${podsPath}/smp`, patch, { 'content-type': 'application/apply-patch+yaml' });
    assert.equal(noManager.status, 422);
    assert.equal(noManager.body.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    await s.req('DELETE', `${podsPath}/smp?gracePeriodSeconds=0`);
  });

  it('streams watch events and resumes from a resourceVersion', async () => {
    const first = await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1', labels: { watch: 'me' } } });
    await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w2', labels: { watch: 'me' } } });
    const res = await fetch(`${s.url}${cmPath}?watch=true&labelSelector=watch%3Dme&resourceVersion=${first.metadata.resourceVersion}&timeoutSeconds=5`);
    const reader = res.body!.getReader();
    const events: any[] = [];
    let buf = '';
    const read = async (n: number): Promise<void> => {
      while (events.length < n) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += Buffer.from(value).toString();
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buf.slice(0, i)));
          buf = buf.slice(i + 1);
        }
      }
    };
    await read(1);
    await s.req('DELETE', `${cmPath}/w1`);
    await read(2);
    await reader.cancel();
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED w2', 'DELETED w1']);
  });

  it('answers a watch from a compacted resourceVersion with a 410 ERROR event', async () => {
    const first = await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old' } });
    // the test server keeps 100 changes; 1,100 writes push the first one out
    for (let i = 0; i < 1100; i++) await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `fill-${i}` } });
    const res = await fetch(`${s.url}${cmPath}?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    assert.equal(res.status, 200);
    const [line] = (await res.text()).trim().split('\n');
    const event = JSON.parse(line as string);
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410);
    assert.match(event.object.message, /too old resource version/);
    const list = await s.req('GET', `${cmPath}?labelSelector=nothing%3Dhere`);
    assert.equal(list.status, 200);
    await s.req('DELETE', `${cmPath}?fieldSelector=metadata.namespace%3Ddefault`);
  });

  it('deleting a namespace deletes what is in it', async () => {
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    await s.create('/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    await s.create('/api/v1/namespaces/team-a/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { token: 'abc' } });
    const del = await s.req('DELETE', '/api/v1/namespaces/team-a');
    assert.equal(del.status, 200);
    await s.until('namespace gone', async () => (await s.req('GET', '/api/v1/namespaces/team-a')).status === 404);
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/configmaps/x')).status, 404);
    const refused = await s.req('POST', '/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } });
    assert.equal(refused.status, 404);
    assert.equal((await s.req('DELETE', '/api/v1/namespaces/default')).status, 409);
  });

  it('cascades deletion through ownerReferences, and orphans when asked', async () => {
    const owner = await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
    await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', ownerReferences: [ref] } });
    await s.req('DELETE', `${cmPath}/owner`);
    await s.until('child collected', async () => (await s.req('GET', `${cmPath}/child`)).status === 404);

    const owner2 = await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner2' } });
    await s.create(cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child2', ownerReferences: [{ ...ref, name: 'owner2', uid: owner2.metadata.uid }] } });
    await s.req('DELETE', `${cmPath}/owner2?propagationPolicy=Orphan`);
    await s.until('owner2 gone', async () => (await s.req('GET', `${cmPath}/owner2`)).status === 404);
    const orphan = await s.get(`${cmPath}/child2`);
    assert.deepEqual(orphan.metadata.ownerReferences ?? [], []);
  });

  it('reports the machine as a Node with capacity', async () => {
    const node = await s.get('/api/v1/nodes/local');
    assert.ok(Number(node.status.capacity.cpu) >= 1);
    assert.match(node.status.capacity.memory, /^\d+(Ki|Mi|Gi)$/);
    assert.equal(node.status.conditions.find((c: any) => c.type === 'Ready').status, 'True');
  });
});
