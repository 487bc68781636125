// Authentication and the 401/403 answers with tenancy on: the server starts with a token file and a
// small authorizer (alice may do anything in namespace `a` but read Pods' logs or exec into them;
// bob may do nothing), and kubectl, the Python client and the CLI are driven as each user.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import type { Attributes, Authorizer } from '../src/server/auth/types.js';
import { startSkiff, type Skiff } from '../src/server/main.js';
import { clientsPython, kubectlBin, runCli, runProgram } from './harness.js';

const skip = !existsSync(kubectlBin) || !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up' : false;

/** the policy of this test: discovery for every signed-in user, namespace `a` for alice (no logs, no exec), everything for admins */
const policy: Authorizer = {
  authorize(a: Attributes) {
    if (a.user.groups.includes('system:masters')) return { allowed: true };
    if (a.nonResource) return { allowed: a.nonResource.verb === 'get' && /^\/(api|apis|openapi|version)(\/|$)/.test(a.nonResource.path) };
    const r = a.resource;
    if (r.resource === 'selfsubjectreviews') return { allowed: true };
    if (a.user.username !== 'alice' || r.namespace !== 'a') return { allowed: false };
    return { allowed: !(r.resource === 'pods' && (r.subresource === 'log' || r.subresource === 'exec')) };
  },
  rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: true }),
};

const unauthorized = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

describe('authentication and refusals with tenancy on', { skip, timeout: 240_000 }, () => {
  let skiff: Skiff;
  let dir: string;
  let url: string;
  // kubectl sends a token only over TLS: users reach the HTTPS endpoint, as the admin's kubeconfig does
  const kubeconfigOf = (token: string | undefined): string => {
    const file = join(dir, `kubeconfig-${token ?? 'none'}`);
    const admin = YAML.parse(readFileSync(join(dir, 'data', 'kubeconfig'), 'utf8')) as { clusters: { name: string; cluster: Record<string, string> }[] };
    const https = admin.clusters.find((c) => c.name === 'skiff-https')?.cluster;
    assert.ok(https, 'the kubeconfig has the HTTPS endpoint');
    writeFileSync(file, YAML.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'c', preferences: {},
      // without a token kubectl would ask for a user name on a TLS server: the plain one it is
      clusters: [{ name: 'c', cluster: token ? https : { server: url } }],
      users: [{ name: 'u', user: token ? { token } : {} }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', namespace: 'a' } }],
    }));
    return file;
  };
  const kubectl = (token: string | undefined, args: string[]): ReturnType<typeof runProgram> => runProgram(kubectlBin, args, { KUBECONFIG: kubeconfigOf(token), HOME: dir });
  const get = async (path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(url + path, { headers });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // plain text
    }
    return { status: res.status, body };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-authn-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'alice-token,alice,1001,"team-a"\nbob-token,bob,1002\n');
    skiff = await startSkiff({ dataDir: join(dir, 'data'), port: 0, tokenAuthFile: tokens, trustedProxies: ['10.0.0.0/8'], authorizer: policy, pythonZygote: false });
    url = skiff.url;
    for (const name of ['a', 'b']) await skiff.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await skiff.client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sleeper', namespace: 'a' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python', '-c', 'import time; print("hello", flush=True); time.sleep(120)'] }] } });
  });
  after(async () => {
    await skiff?.stop({ containers: 'stop' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('says it is multi-user', () => {
    assert.match(skiff.authentication, /multi-user/);
    assert.match(skiff.authentication, /1 user|2 users/);
  });

  it('answers 401 without credentials, with a forged token, and to a header from an untrusted address; health stays open', async () => {
    assert.deepEqual(await get('/api/v1/namespaces/a/pods'), { status: 401, body: unauthorized });
    assert.deepEqual(await get('/api/v1/namespaces/a/pods', { authorization: 'Bearer forged-token' }), { status: 401, body: unauthorized });
    const fakeJwt = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: 'https://kubernetes.default.svc.cluster.local', sub: 'skiff-admin', 'skiff.io/groups': ['system:masters'] })).toString('base64url')}.AAAA`;
    assert.deepEqual(await get('/api/v1/namespaces/a/pods', { authorization: `Bearer ${fakeJwt}` }), { status: 401, body: unauthorized });
    assert.deepEqual(await get('/api/v1/namespaces/a/pods', { 'kubeflow-userid': 'alice' }), { status: 401, body: unauthorized });
    assert.equal((await get('/metrics')).status, 401);
    assert.equal((await get('/apis/v2beta1/runs')).status, 401);
    for (const p of ['/healthz', '/readyz', '/livez', '/version']) assert.equal((await get(p, { authorization: 'Bearer forged' })).status, 200, p);
    // with a valid token a user is who the file says
    const me = await fetch(`${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' }, body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' });
    assert.equal(me.status, 201);
    assert.deepEqual(((await me.json()) as { status: { userInfo: unknown } }).status.userInfo, { username: 'alice', uid: '1001', groups: ['team-a', 'system:authenticated'] });
  });

  it('kubectl: alice lists her namespace, and is refused another in kube\'s words; no token is 401', async () => {
    const ok = await kubectl('alice-token', ['get', 'pods', '-n', 'a', '-o', 'name']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /pod\/sleeper/);
    const no = await kubectl('alice-token', ['get', 'pods', '-n', 'b']);
    assert.notEqual(no.code, 0);
    assert.match(no.stderr, /Error from server \(Forbidden\): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "b"/);
    const bob = await kubectl('bob-token', ['get', 'configmaps', '-n', 'a']);
    assert.match(bob.stderr, /configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "a"/);
    const cluster = await kubectl('alice-token', ['get', 'nodes']);
    assert.match(cluster.stderr, /nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope/);
    const anon = await kubectl(undefined, ['get', 'pods', '-n', 'a']);
    assert.notEqual(anon.code, 0);
    assert.match(anon.stderr, /Unauthorized|must be logged in/);
    const forged = await kubectl('forged', ['get', 'pods', '-n', 'a']);
    assert.match(forged.stderr, /Unauthorized|must be logged in/);
    // the admin's kubeconfig, as `skiff up` wrote it
    const admin = await runProgram(kubectlBin, ['get', 'pods', '-A', '-o', 'name'], { KUBECONFIG: join(dir, 'data', 'kubeconfig'), HOME: dir });
    assert.equal(admin.code, 0, admin.stderr);
    assert.match(admin.stdout, /pod\/sleeper/);
  });

  it('kubectl logs and exec are refused to a user without pods/log and pods/exec', async () => {
    const logs = await kubectl('alice-token', ['logs', 'sleeper', '-n', 'a']);
    assert.notEqual(logs.code, 0);
    assert.match(logs.stderr, /pods "sleeper" is forbidden: User "alice" cannot get resource "pods\/log" in API group "" in the namespace "a"/);
    const exec = await kubectl('alice-token', ['exec', 'sleeper', '-n', 'a', '--', 'echo', 'hi']);
    assert.notEqual(exec.code, 0);
    assert.match(exec.stderr, /forbidden: User "alice" cannot (get|create) resource "pods\/exec" in API group "" in the namespace "a"/);
    assert.doesNotMatch(exec.stdout, /hi/);
  });

  it('the Python client with a token', async () => {
    const script = `
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
print("names", [p.metadata.name for p in v1.list_namespaced_pod("a").items])
try:
    v1.list_namespaced_pod("b")
except ApiException as e:
    print("status", e.status, e.reason)
`;
    const r = await runProgram(clientsPython, ['-c', script, kubeconfigOf('alice-token')], { PYTHONWARNINGS: 'ignore' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /names \['sleeper'\]/);
    assert.match(r.stdout, /status 403 Forbidden/);
  });

  it('the CLI takes --token and SKIFF_TOKEN', async () => {
    const env = { SKIFF_SERVER: url, HOME: dir, SKIFF_DATA_DIR: join(dir, 'none') };
    const withFlag = await runCli(['get', 'pods', '-n', 'a', '--token', 'alice-token'], env);
    assert.equal(withFlag.code, 0, withFlag.stderr);
    assert.match(withFlag.stdout, /sleeper/);
    const withEnv = await runCli(['get', 'pods', '-n', 'a'], { ...env, SKIFF_TOKEN: 'alice-token' });
    assert.equal(withEnv.code, 0, withEnv.stderr);
    const without = await runCli(['get', 'pods', '-n', 'a'], env);
    assert.notEqual(without.code, 0);
    assert.match(without.stderr, /Unauthorized/);
  });

  it('fuzz: malformed Authorization headers, a 1 MB token, header injection, non-UTF-8 bytes: never a 5xx, never a crash', async () => {
    const raw = (head: Buffer): Promise<number> => new Promise((resolve) => {
      const u = new URL(url);
      const sock = connect(Number(u.port), u.hostname);
      let got = '';
      sock.on('data', (d) => (got += d.toString('latin1')));
      sock.on('error', () => resolve(0));
      sock.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
      sock.setTimeout(5000, () => sock.destroy());
      sock.end(head);
    });
    const request = (headerLines: (string | Buffer)[], path = '/api/v1/namespaces/a/pods', method = 'GET'): Buffer =>
      Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n`), ...headerLines.flatMap((h) => [typeof h === 'string' ? Buffer.from(h, 'latin1') : h, Buffer.from('\r\n')]), Buffer.from('\r\n')]);
    const cases: (string | Buffer)[][] = [
      ['Authorization: Bearer'], ['Authorization: Bearer '], ['Authorization: Bearer  alice-token'], ['Authorization: bearer'], ['Authorization: Basic ???'],
      ['Authorization: Bearer a.b.c'], ['Authorization: Bearer ...'], ['Authorization: Bearer eyJhbGciOiJub25lIn0.bnVsbA.'], ['Authorization: Bearer eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.'],
      ['Authorization: Bearer alice-token', 'Authorization: Bearer bob-token'],
      ['Authorization: Bearer x', 'kubeflow-userid: alice'],
      ['Authorization: Bearer x\rkubeflow-userid: alice'],
      ['Authorization: Bearer x\nkubeflow-userid: alice'],
      [Buffer.concat([Buffer.from('Authorization: Bearer '), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80])])],
      [Buffer.concat([Buffer.from('kubeflow-userid: '), Buffer.from([0xff, 0x00, 0x41])])],
      [`Authorization: Bearer ${'A'.repeat(1024 * 1024)}`],
      [`Authorization: Bearer ${'eyJ'.repeat(3000)}.${'x'.repeat(3000)}.y`],
      ['Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.!!!, v5.channel.k8s.io'],
      ['Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.${Buffer.from('alice-token').toString('base64url')}`],
    ];
    // and random bytes, as a fuzzer would send them
    let seed = 42;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 150; i++) {
      const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)));
      cases.push([Buffer.concat([Buffer.from(rand() < 0.5 ? 'Authorization: Bearer ' : 'Authorization: '), bytes])]);
    }
    const statuses = new Map<number, number>();
    for (const c of cases) {
      for (const path of ['/api/v1/namespaces/a/pods', '/api/v1/namespaces/a/pods/sleeper/exec?command=ls']) {
        const code = await raw(request(c, path));
        statuses.set(code, (statuses.get(code) ?? 0) + 1);
        assert.ok(code < 500, `${code} for ${String(c[0]).slice(0, 80)} on ${path}`);
      }
    }
    // none let anybody in without a valid token (the valid one in the WebSocket protocol was refused for exec: alice has no pods/exec)
    assert.ok(![...statuses.keys()].some((c) => c === 101), `statuses: ${JSON.stringify([...statuses])}`);
    assert.equal((await get('/healthz')).status, 200);
  });
});
