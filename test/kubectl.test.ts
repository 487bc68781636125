// The real kubectl against `skiff up`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer } from './harness.js';

describe('kubectl', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('lists namespaces and reads the server version', async () => {
    const v = await s.kubectl(['version', '-o', 'json']);
    assert.equal(v.code, 0, v.stderr);
    const server = JSON.parse(v.stdout).serverVersion;
    // the Kubernetes API Skiff serves, its own release as build metadata, as k3s writes `v1.31.4+k3s1`
    assert.match(server.gitVersion, /^v1\.\d+\.\d+\+skiff-\d+\.\d+\.\d+/);
    assert.equal(server.major, '1');
    assert.equal(`v${server.major}.${server.minor}`, server.gitVersion.replace(/\.\d+\+.*$/, ''));
    assert.equal(server.platform, `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`);
    // the Node reports the same version as its kubelet, and Go's name for the architecture
    const node = await s.kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].status.nodeInfo.kubeletVersion} {.items[0].status.nodeInfo.architecture}']);
    assert.equal(node.code, 0, node.stderr);
    assert.equal(node.stdout, `${server.gitVersion} ${server.platform.split('/')[1]}`);
    const ns = await s.kubectl(['get', 'namespaces', '-o', 'name']);
    assert.equal(ns.code, 0, ns.stderr);
    assert.match(ns.stdout, /namespace\/default/);
  });

  it('creates a token for a ServiceAccount (serviceaccounts/token)', async () => {
    await s.until('the default ServiceAccount', async () => (await s.req('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200);
    const t = await s.kubectl(['create', 'token', 'default', '--duration=20m']);
    assert.equal(t.code, 0, t.stderr);
    const claims = JSON.parse(Buffer.from(t.stdout.trim().split('.')[1] ?? '', 'base64url').toString());
    assert.equal(claims.sub, 'system:serviceaccount:default:default');
    assert.equal(claims.exp - claims.iat, 1200);
    const short = await s.kubectl(['create', 'token', 'default', '--duration=1m']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /spec\.expirationSeconds: Invalid value: 60/);
    const missing = await s.kubectl(['create', 'token', 'nosuch']);
    assert.match(missing.stderr, /serviceaccounts "nosuch" not found/);
  });

  it('kubectl debug: ephemeral containers are not served, and kubectl says so (it reads the Pod\'s defaulted securityContext first)', async () => {
    const run = await s.kubectl(['run', 'debugged', '--image=python', '--restart=Never', '--', 'sleep', '300']);
    assert.equal(run.code, 0, run.stderr);
    const r = await s.kubectl(['debug', 'debugged', '--image=python', '--attach=false']);
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.stderr, /panic/);
    assert.match(r.stderr, /error: ephemeral containers are disabled for this cluster \(error from server: "the server could not find the requested resource: pods\/ephemeralcontainers"\)/);
    await s.kubectl(['delete', 'pod', 'debugged', '--now']);
  });

  it('kubectl logs of a Pod no node runs yet prints nothing and succeeds (204, as kube-apiserver answers it)', async () => {
    const gated = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: gated\nspec:\n  schedulingGates:\n  - name: example.com/hold\n  containers:\n  - name: main\n    image: python\n    command: ["sleep", "300"]\n  - name: side\n    image: python\n    command: ["sleep", "300"]\n';
    assert.equal((await s.kubectl(['apply', '-f', '-'], gated)).code, 0);
    const r = await s.kubectl(['logs', 'gated', '-c', 'main']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, '');
    const raw = await s.req('GET', '/api/v1/namespaces/default/pods/gated/log?container=main');
    assert.equal(raw.status, 204);
    assert.equal(raw.text, '');
    // the container is still checked first, as LogLocation checks it
    // kubectl picks the first container itself; a request naming none is refused as kube-apiserver refuses it
    const unnamed = await s.req('GET', '/api/v1/namespaces/default/pods/gated/log');
    assert.equal(unnamed.status, 400);
    assert.equal(unnamed.body.message, 'a container name must be specified for pod gated, choose one of: [main side]');
    const wrong = await s.kubectl(['logs', 'gated', '-c', 'nosuch']);
    assert.match(wrong.stderr, /container nosuch is not valid for pod gated/);
    await s.kubectl(['delete', 'pod', 'gated', '--now']);
  });

  it('runs `kubectl run --image=python:3.11 -- python3 ...`: an image without an entrypoint runs the args', async () => {
    const r = await s.kubectl(['run', 'argsonly', '--image=python:3.11', '--restart=Never', '--', 'python3', '-c', 'print("args ran")']);
    assert.equal(r.code, 0, r.stderr);
    await s.until('the Pod to succeed', async () => (await s.get('/api/v1/namespaces/default/pods/argsonly')).status?.phase === 'Succeeded');
    const logs = await s.kubectl(['logs', 'argsonly']);
    assert.equal(logs.stdout.trim(), 'args ran');
  });
});
