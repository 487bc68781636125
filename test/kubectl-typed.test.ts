// kubectl's typed commands against `skiff up`: `create namespace|configmap|secret|job`, `cordon`, … send
// their bodies as application/vnd.kubernetes.protobuf (others, like `run` and `expose`, as JSON), and
// what Skiff stores must be what the same command prints under --dry-run=client.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, TestServer } from './harness.js';

/** an object with nothing but empty objects in it, as Go writes a struct left zero */
function hollow(v: unknown): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every(hollow);
}

/**
 * Every field of `want` is in `got` with the same value; an empty object in `want` (kubectl's `status: {}`,
 * a Service's `status: { loadBalancer: {} }`) also matches what the server filled in, or left out.
 * Arrays match element by element.
 */
function contains(got: unknown, want: unknown, path = ''): void {
  if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
    assert.ok(got !== null && typeof got === 'object' && !Array.isArray(got), `${path || '.'}: expected an object, got ${JSON.stringify(got)}`);
    for (const [k, v] of Object.entries(want)) {
      if (hollow(v)) continue;
      contains((got as Record<string, unknown>)[k], v, `${path}.${k}`);
    }
    return;
  }
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got) && got.length === want.length, `${path}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    want.forEach((w, i) => contains((got as unknown[])[i], w, `${path}[${i}]`));
    return;
  }
  assert.deepEqual(got, want, path);
}

describe('kubectl typed commands (protobuf bodies)', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    s = await TestServer.start();
    dir = mkdtempSync(join(tmpdir(), 'skiff-typed-'));
  });
  after(async () => {
    await s?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ok = async (args: string[]): Promise<string> => {
    const r = await s.kubectl(args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  /** runs a create command, then reads the object back: it holds what --dry-run=client printed */
  const created = async (args: string[], ref: string, ns = 'default'): Promise<Record<string, any>> => {
    const at = args.indexOf('--') < 0 ? args.length : args.indexOf('--');
    const flagged = (...flags: string[]): string[] => [...args.slice(0, at), ...flags, ...args.slice(at)];
    const dry = JSON.parse(await ok(flagged('-n', ns, '--dry-run=client', '-o', 'json'))) as Record<string, any>;
    const verbose = await s.kubectl(flagged('-n', ns, '-v=8'));
    assert.equal(verbose.code, 0, verbose.stderr);
    const live = JSON.parse(await ok(['get', ref, '-n', ns, '-o', 'json'])) as Record<string, any>;
    contains(live, dry);
    assert.ok(live.metadata.uid && live.metadata.resourceVersion && live.metadata.creationTimestamp, 'the server set its fields');
    return Object.assign(live, { sentProtobuf: /Content-Type: application\/vnd\.kubernetes\.protobuf/.test(verbose.stderr) });
  };

  it('create namespace, configmap (literal and binary file), secret generic and docker-registry', async () => {
    const ns = await created(['create', 'namespace', 'typed'], 'namespace/typed');
    assert.ok(ns.sentProtobuf, 'kubectl sent the Namespace as protobuf');
    assert.equal(ns.status.phase, 'Active');

    const bin = join(dir, 'weights.bin');
    writeFileSync(bin, Buffer.from([0, 1, 2, 0xfe, 0xff]));
    writeFileSync(join(dir, 'app.conf'), 'mode=fast\n');
    const cm = await created(['create', 'configmap', 'conf', '--from-literal=a=b', `--from-file=${bin}`, `--from-file=${join(dir, 'app.conf')}`], 'configmap/conf', 'typed');
    assert.ok(cm.sentProtobuf);
    assert.deepEqual(cm.data, { a: 'b', 'app.conf': 'mode=fast\n' });
    assert.deepEqual(cm.binaryData, { 'weights.bin': Buffer.from([0, 1, 2, 0xfe, 0xff]).toString('base64') });

    const secret = await created(['create', 'secret', 'generic', 'creds', '--from-literal=user=admin', '--from-literal=empty='], 'secret/creds', 'typed');
    assert.deepEqual(secret.data, { empty: '', user: Buffer.from('admin').toString('base64') });
    assert.equal(secret.type, 'Opaque');
    const reg = await created(['create', 'secret', 'docker-registry', 'registry', '--docker-server=r.example.com', '--docker-username=u', '--docker-password=p'], 'secret/registry', 'typed');
    assert.equal(reg.type, 'kubernetes.io/dockerconfigjson');
    assert.deepEqual(JSON.parse(Buffer.from(reg.data['.dockerconfigjson'], 'base64').toString()), { auths: { 'r.example.com': { username: 'u', password: 'p', auth: Buffer.from('u:p').toString('base64') } } });
  });

  it('create job runs on Skiff to completion', async () => {
    const job = await created(['create', 'job', 'hello', '--image=python', '--', 'python', '-c', 'print("hello from a typed job")'], 'job/hello');
    assert.ok(job.sentProtobuf);
    assert.deepEqual(job.spec.template.spec.containers[0].command, ['python', '-c', 'print("hello from a typed job")']);
    await s.until('job hello Complete', async () => {
      const j = JSON.parse(await ok(['get', 'job/hello', '-o', 'json']));
      return (j.status?.conditions ?? []).some((c: any) => c.type === 'Complete' && c.status === 'True');
    });
    assert.match(await ok(['logs', 'job/hello']), /hello from a typed job/);
  });

  it('run (a Pod), expose (a Service), create service, label, annotate', async () => {
    const pod = await created(['run', 'web', '--image=python', '--restart=Never', '--labels=app=web', '--env=MODE=test', '--port=8080', '--', 'sleep', '600'], 'pod/web');
    assert.deepEqual(pod.spec.containers[0].args, ['sleep', '600']);
    const svc = await created(['expose', 'pod', 'web', '--port=80', '--target-port=8080'], 'service/web');
    assert.deepEqual(svc.spec.selector, { app: 'web' });
    const svc2 = await created(['create', 'service', 'clusterip', 'api', '--tcp=5678:8080'], 'service/api');
    assert.ok(svc2.sentProtobuf);
    assert.deepEqual(svc2.spec.ports, [{ name: '5678-8080', protocol: 'TCP', port: 5678, targetPort: 8080 }]);
    await ok(['label', 'pod', 'web', 'tier=front']);
    await ok(['annotate', 'pod', 'web', 'note=typed']);
    const live = JSON.parse(await ok(['get', 'pod/web', '-o', 'json']));
    assert.equal(live.metadata.labels.tier, 'front');
    assert.equal(live.metadata.annotations.note, 'typed');
    await ok(['delete', 'pod', 'web', '--wait=false']);
  });

  // kubectl cordon sends a strategic merge patch, which Skiff reads once that part of issue 10 lands
  // (until then kubectl prints the 415 and, as it does for cordon, exits 0)
  it('cordon and uncordon a node', async () => {
    const node = (await ok(['get', 'nodes', '-o', 'name'])).trim().split('\n')[0] ?? '';
    assert.match(node, /^node\//);
    assert.match(await ok(['cordon', node]), /cordoned/);
    assert.equal(JSON.parse(await ok(['get', node, '-o', 'json'])).spec.unschedulable, true);
    assert.match(await ok(['uncordon', node]), /uncordoned/);
    assert.equal(JSON.parse(await ok(['get', node, '-o', 'json'])).spec.unschedulable, undefined);
  });

  it('create deployment: apps/v1 is not served, and kubectl says so', async () => {
    const r = await s.kubectl(['create', 'deployment', 'd', '--image=python']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /failed to create deployment: the server could not find the requested resource/);
  });

  it('answers JSON to client-go Accept, 406 to protobuf alone; reads protobuf DeleteOptions; refuses a protobuf patch and custom resource as kube-apiserver does', async () => {
    const both = await s.req('GET', '/api/v1/namespaces/typed/configmaps/conf', undefined, { accept: 'application/vnd.kubernetes.protobuf, application/json' });
    assert.equal(both.status, 200);
    assert.equal(both.body.kind, 'ConfigMap');
    const only = await s.req('GET', '/api/v1/namespaces/typed/configmaps/conf', undefined, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(only.status, 406);
    assert.equal(only.body.reason, 'NotAcceptable');
    assert.equal(only.body.message, 'only the following media types are accepted: application/json, application/yaml');

    const fixtures = JSON.parse(readFileSync(join(repoRoot, 'src', 'api', 'testdata', 'protobuf-kubectl.json'), 'utf8'));
    const cm = Buffer.from(fixtures.cases['create configmap --from-literal --from-file (binary)'].body, 'hex');
    const post = (path: string, body: Buffer): Promise<Response> =>
      fetch(s.url + path, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' } });
    const crd = await post('/apis/kubeflow.org/v1/namespaces/default/pytorchjobs', cm);
    assert.equal(crd.status, 400);
    assert.equal(((await crd.json()) as any).message, 'ConfigMap in version "v1" cannot be handled as a PyTorchJob: object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message');
    const bad = await post('/api/v1/namespaces/default/configmaps', cm.subarray(0, cm.length - 3));
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as any).message, /unexpected EOF/);
    const good = await post('/api/v1/namespaces/default/configmaps', cm);
    assert.equal(good.status, 201);
    assert.deepEqual(((await good.json()) as any).binaryData, { 'bin.dat': 'AAEC/w==' });

    // a patch has no protobuf form
    const patch = await fetch(s.url + '/api/v1/namespaces/default/configmaps/c2', { method: 'PATCH', body: new Uint8Array(cm), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    assert.equal(patch.status, 415);
    // client-go's typed Delete sends its DeleteOptions as protobuf
    const field = (num: number, text: string): Buffer => Buffer.concat([Buffer.from([(num << 3) | 2, text.length]), Buffer.from(text)]);
    const deleteOptions = (policy: string): Uint8Array<ArrayBuffer> => {
      const typeMeta = Buffer.concat([field(1, 'v1'), field(2, 'DeleteOptions')]);
      const raw = field(4, policy);
      return new Uint8Array(Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, raw.length]), raw]));
    };
    const del = (policy: string): Promise<Response> =>
      fetch(s.url + '/api/v1/namespaces/default/configmaps/c2', { method: 'DELETE', body: deleteOptions(policy), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    const sideways = await del('Sideways');
    assert.equal(sideways.status, 422);
    assert.match(((await sideways.json()) as any).message, /Sideways/);
    assert.equal((await del('Background')).status, 200);
    assert.equal((await s.req('GET', '/api/v1/namespaces/default/configmaps/c2')).status, 404);
  });
});
