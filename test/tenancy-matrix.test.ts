// The isolation matrix of issue 13's proof: every user Skiff can meet with tenancy on, against every
// surface that answers for a namespace (REST verbs on each namespaced kind the registry serves, lists
// and watches across namespaces, a Pod's log, exec and port-forward, the KFP API, the inference
// gateway, the notebook proxy, the dashboard's stream mux and usage charts). Each cell's expected
// answer comes from the user's role as Kubeflow's ClusterRoles define it, written out here apart from
// Skiff's own policy; a cell answered where a refusal was expected is a leak, and there must be none.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import YAML from 'yaml';
import { modelRegistryGroup, modelRegistryKinds } from '../src/api/model-registry.js';
import { startSkiff, type Skiff } from '../src/server/main.js';
import { repoRoot } from './harness.js';

type Role = 'owner' | 'edit' | 'view' | 'none';
interface User {
  name: string;
  role: Role;
  headers: Record<string, string>;
  /** refused with 401, not 403 */
  unauthenticated: boolean;
  /** bob as himself: team-b's owner */
  bob?: boolean;
}

const users: User[] = [
  { name: 'owner (alice)', role: 'owner', headers: { authorization: 'Bearer alice-token' }, unauthenticated: false },
  { name: 'contributor-edit (carol)', role: 'edit', headers: { authorization: 'Bearer carol-token' }, unauthenticated: false },
  { name: 'contributor-view (dave)', role: 'view', headers: { authorization: 'Bearer dave-token' }, unauthenticated: false },
  { name: 'other tenant (bob)', role: 'none', headers: { authorization: 'Bearer bob-token' }, unauthenticated: false, bob: true },
  { name: 'anonymous', role: 'none', headers: {}, unauthenticated: true },
  { name: 'forged token', role: 'none', headers: { authorization: `Bearer ${randomBytes(24).toString('base64url')}` }, unauthenticated: true },
  // 127.0.0.1 is no trusted proxy: the header alone proves nothing, and beside a token it changes nobody
  { name: 'spoofed header', role: 'none', headers: { 'kubeflow-userid': 'alice@example.com' }, unauthenticated: true },
  { name: 'spoofed header + bob\'s token', role: 'none', headers: { authorization: 'Bearer bob-token', 'kubeflow-userid': 'alice@example.com' }, unauthenticated: false, bob: true },
  // `kubectl --as`: bob may impersonate nobody, so every request of his that asks is refused whole
  { name: 'bob impersonating alice', role: 'none', headers: { authorization: 'Bearer bob-token', 'impersonate-user': 'alice@example.com' }, unauthenticated: false },
];

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete'];

/**
 * Kubeflow's kubeflow-view, kubeflow-edit and kubeflow-admin (common/kubeflow-roles and each
 * component's aggregated roles) by kind: which verbs each role holds in its namespace. A kind not
 * named here is granted to no tenant.
 */
const readEveryone = { view: READ, edit: READ, owner: READ };
const workload = { view: READ, edit: [...READ, ...WRITE], owner: [...READ, ...WRITE] };
const kubeflowPolicy: Record<string, { view: string[]; edit: string[]; owner: string[] }> = {};
const grant = (group: string, resources: string[], verbs: { view: string[]; edit: string[]; owner: string[] }): void => {
  for (const r of resources) kubeflowPolicy[`${group}/${r}`] = verbs;
};
grant('', ['configmaps', 'endpoints', 'persistentvolumeclaims', 'pods', 'replicationcontrollers', 'serviceaccounts', 'services'], workload);
grant('', ['events', 'limitranges', 'resourcequotas', 'bindings'], readEveryone);
// a viewer reads no Secret: kube's view role leaves them out
grant('', ['secrets'], { view: [], edit: [...READ, ...WRITE], owner: [...READ, ...WRITE] });
grant('apps', ['daemonsets', 'deployments', 'replicasets', 'statefulsets'], workload);
grant('apps', ['controllerrevisions'], readEveryone);
grant('autoscaling', ['horizontalpodautoscalers'], workload);
grant('batch', ['cronjobs', 'jobs'], workload);
grant('policy', ['poddisruptionbudgets'], workload);
grant('networking.k8s.io', ['ingresses', 'networkpolicies'], workload);
grant('kubeflow.org', ['mpijobs', 'tfjobs', 'pytorchjobs', 'mxjobs', 'xgboostjobs', 'paddlejobs', 'jaxjobs', 'experiments', 'trials', 'suggestions', 'notebooks'], workload);
grant('serving.kserve.io', ['inferencegraphs', 'inferenceservices', 'servingruntimes', 'trainedmodels'], workload);
// only the owner manages who may work in the namespace
grant('rbac.authorization.k8s.io', ['roles', 'rolebindings'], { view: [], edit: [], owner: [...READ, ...WRITE] });
// the pipelines' own kinds: editors run them, viewers see them through the KFP API only
grant('kubeflow.org', ['scheduledworkflows'], { view: [], edit: [...READ, ...WRITE], owner: [...READ, ...WRITE] });
grant('argoproj.io', ['cronworkflows', 'workflows', 'workfloweventbindings', 'workflowtemplates'], { view: [], edit: [...READ, ...WRITE], owner: [...READ, ...WRITE] });
// KFP's multi-user authorization, in pipelines.kubeflow.org (its own verbs, beyond REST's, are not cells here)
grant('pipelines.kubeflow.org', ['pipelines', 'pipelineversions'], { view: ['get', 'list'], edit: ['get', 'list', 'create', 'update', 'delete'], owner: ['get', 'list', 'create', 'update', 'delete'] });
grant('pipelines.kubeflow.org', ['experiments', 'runs', 'jobs'], { view: ['get', 'list'], edit: ['get', 'list', 'create', 'delete'], owner: ['get', 'list', 'create', 'delete'] });
// Skiff serves KFP's objects as resources too (skiff run --watch, kubectl get runs -w, the dashboard):
// editors have the REST verbs on them, viewers read them; a run's task records and cache are read-only
grant('pipelines.kubeflow.org', ['runs', 'recurringruns', 'pipelines', 'pipelineversions', 'experiments'], workload);
grant('pipelines.kubeflow.org', ['runtasks', 'taskcaches'], readEveryone);
// Kueue's queues and workloads: Kueue's chart aggregates their viewers into view/edit/admin, and Skiff
// also into kubeflow-view, so a Profile's members see their namespace's queue (writing them is Kueue's)
grant('kueue.x-k8s.io', ['localqueues', 'workloads'], readEveryone);
grant('authorization.k8s.io', ['localsubjectaccessreviews'], { view: [], edit: [], owner: ['create'] });
grant('kubeflow.org', ['viewers'], { view: ['get', 'create', 'delete'], edit: ['get', 'create', 'delete'], owner: ['get', 'create', 'delete'] });
// the Model Registry's kinds: Skiff's kubeflow-model-registry-edit and -view, aggregated as a component's roles are
grant(modelRegistryGroup, modelRegistryKinds.map((d) => d.plural), workload);

function restAllowed(role: Role, group: string, resource: string, verb: string): boolean {
  if (role === 'none') return false;
  return kubeflowPolicy[`${group}/${resource}`]?.[role].includes(verb) ?? false;
}

interface Cell { surface: string; user: User; allowed: boolean; status: number }

/** one HTTP request's status; a watch is answered once its headers come, an upgrade once it is taken or refused */
function call(base: string, method: string, path: string, headers: Record<string, string>, opts: { body?: unknown; contentType?: string; upgrade?: string } = {}): Promise<number> {
  const u = new URL(path, base);
  const h: Record<string, string> = { ...headers };
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (body !== undefined) h['content-type'] = opts.contentType ?? 'application/json';
  if (opts.upgrade) Object.assign(h, { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), 'sec-websocket-protocol': opts.upgrade });
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path: u.pathname + u.search, headers: h }, (res) => {
      const status = res.statusCode ?? 0;
      if (u.searchParams.get('watch') === 'true' || u.searchParams.get('follow') === 'true') {
        res.destroy();
        return resolve(status);
      }
      res.resume();
      res.on('end', () => resolve(status));
      res.on('error', () => resolve(status));
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.end(body);
  });
}

/** the status the dashboard's stream mux reports for one stream, or the upgrade's own refusal */
function muxStream(base: string, headers: Record<string, string>, path: string): Promise<{ upgraded: boolean; status: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/skiff/v1/streams`, ['skiff.streams.v1'], { headers });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`stream ${path}: no status`));
    }, 15_000);
    const done = (upgraded: boolean, status: number): void => {
      clearTimeout(timer);
      ws.terminate();
      resolve({ upgraded, status });
    };
    ws.on('unexpected-response', (_req, res) => done(false, res.statusCode ?? 0));
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    ws.on('open', () => ws.send(JSON.stringify({ op: 'open', id: 1, path })));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: number; status?: number; error?: string };
      if (m.id === 1 && typeof m.status === 'number') done(true, m.status);
      else if (m.id === 1 && m.error !== undefined) done(true, 0);
    });
  });
}

// run inside a Pod of team-b (bob's): the header claims alice, alone and beside the Pod's own token,
// over the in-cluster https endpoint and over Skiff's plain port
const FROM_POD = `
import os, ssl, urllib.request, urllib.error
sa = '/var/run/secrets/kubernetes.io/serviceaccount'
token = open(sa + '/token').read().strip()
# the in-cluster endpoint, the Pod-facing listener, and the address users reach (with isolation the
# kernel refuses that connection: -1, a refusal before any HTTP)
bases = [('https', 'https://%s:%s' % (os.environ['KUBERNETES_SERVICE_HOST'], os.environ['KUBERNETES_SERVICE_PORT']), ssl.create_default_context(cafile=sa + '/ca.crt')), ('http', os.environ['SKIFF_SERVER'], None), ('users-http', os.environ['SKIFF_URL'], None)]
for scheme, base, ctx in bases:
    for who, headers in [('header', {'kubeflow-userid': 'alice@example.com'}), ('token+header', {'kubeflow-userid': 'alice@example.com', 'authorization': 'Bearer ' + token})]:
        for path in ['/api/v1/namespaces/team-a/configmaps', '/api/v1/namespaces/team-a/secrets', '/apis/v2beta1/runs?namespace=team-a', '/notebook/team-a/nb/api/status']:
            try:
                status = urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), context=ctx, timeout=10).status
            except urllib.error.HTTPError as e:
                status = e.code
            except urllib.error.URLError as e:
                status = -1 if isinstance(e.reason, ConnectionRefusedError) else 0
            except Exception as e:
                status = 0
            print('CELL', scheme, who, path, status, flush=True)
`;

interface ApiResource { name: string; namespaced: boolean; kind: string; verbs: string[] }

describe('the isolation matrix: users × surfaces with tenancy on', { timeout: 180_000 }, () => {
  let skiff: Skiff;
  let dir: string;
  let admin: Record<string, string> = {};
  let gatewayReady = false;
  const cells: Cell[] = [];
  const api = async (method: string, path: string, body?: unknown, headers = admin): Promise<{ status: number; body: any }> => {
    const r = await fetch(`${skiff.url}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // a log or a plain-text error
    }
    return { status: r.status, body: parsed };
  };
  const until = async (what: string, fn: () => Promise<boolean>, timeoutMs = 30_000): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await fn()) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-matrix-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, ['alice', 'bob', 'carol', 'dave'].map((u, i) => `${u}-token,${u}@example.com,${1001 + i}`).join('\n') + '\n');
    skiff = await startSkiff({ dataDir: join(dir, 'data'), port: 0, tokenAuthFile: tokens, pythonZygote: false });
    const kubeconfig = YAML.parse(readFileSync(join(dir, 'data', 'kubeconfig'), 'utf8')) as { users: { user: { token?: string } }[] };
    const token = kubeconfig.users.find((u) => u.user.token)?.user.token;
    assert.ok(token, 'the admin kubeconfig carries a token');
    admin = { authorization: `Bearer ${token}` };
    for (const [name, owner] of [['team-a', 'alice@example.com'], ['team-b', 'bob@example.com']] as const) {
      const r = await api('POST', '/apis/kubeflow.org/v1/profiles', { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: owner } } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    const alice = { authorization: 'Bearer alice-token' };
    assert.ok(await until('alice owns team-a', async () => (await api('GET', '/api/v1/namespaces/team-a/configmaps', undefined, alice)).status === 200), 'the Profile controller bound alice');
    // contributors as the dashboard adds them: through KFAM, by the owner
    for (const [user, role] of [['carol@example.com', 'kubeflow-edit'], ['dave@example.com', 'kubeflow-view']]) {
      const r = await api('POST', '/kfam/v1/bindings', { user: { kind: 'User', name: user }, referredNamespace: 'team-a', RoleRef: { kind: 'ClusterRole', name: role } }, alice);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    for (const u of ['carol', 'dave']) {
      assert.ok(await until(`${u} in team-a`, async () => (await api('GET', '/api/v1/namespaces/team-a/configmaps', undefined, { authorization: `Bearer ${u}-token` })).status === 200));
    }
    // a Pod for the log, exec, port-forward and usage cells, and a model for the gateway's
    const pod = await api('POST', '/api/v1/namespaces/team-a/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'matrix-pod' }, spec: { containers: [{ name: 'main', image: 'python', command: ['sleep', '600'] }] } });
    assert.equal(pod.status, 201, JSON.stringify(pod.body));
    const isvc = await api('POST', '/apis/serving.kserve.io/v1beta1/namespaces/team-a/inferenceservices', {
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'echo' },
      spec: { predictor: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', join(repoRoot, 'test', 'fixtures', 'serving', 'echo_server.py')] }] } },
    });
    assert.equal(isvc.status, 201, JSON.stringify(isvc.body));
    const spoofer = await api('POST', '/api/v1/namespaces/team-b/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'spoofer' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python', '-c', FROM_POD], env: [{ name: 'SKIFF_URL', value: skiff.url }] }] } });
    assert.equal(spoofer.status, 201, JSON.stringify(spoofer.body));
    await until('matrix-pod Running', async () => (await api('GET', '/api/v1/namespaces/team-a/pods/matrix-pod')).body?.status?.phase === 'Running');
    gatewayReady = await until('the echo model Ready', async () => (await api('GET', '/apis/serving.kserve.io/v1beta1/namespaces/team-a/inferenceservices/echo')).body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') === true, 45_000);
  });
  after(async () => {
    await skiff?.stop({ containers: 'stop' });
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });

  /** asks one surface as every user at once; the cells keep the order of `users` */
  const run = async (surface: string, allowed: (u: User) => boolean, status: (u: User) => Promise<number>): Promise<void> => {
    const statuses = await Promise.all(users.map(status));
    users.forEach((u, i) => cells.push({ surface, user: u, allowed: allowed(u), status: statuses[i] as number }));
  };

  it('checks every cell: no leaks, and every allowed cell answered', async () => {
    const started = Date.now();
    const base = skiff.url;
    // every namespaced kind the registry serves, once, at the first version of its group that serves it
    // (Katib's kinds are only at kubeflow.org/v1beta1, beside the training jobs' v1)
    const groups: { prefix: string; group: string }[] = [{ prefix: '/api/v1', group: '' }];
    const apis = (await api('GET', '/apis')).body as { groups: { name: string; versions: { groupVersion: string }[]; preferredVersion: { groupVersion: string } }[] };
    for (const g of apis.groups) {
      const versions = [g.preferredVersion.groupVersion, ...g.versions.map((v) => v.groupVersion).filter((v) => v !== g.preferredVersion.groupVersion)];
      for (const v of versions) groups.push({ prefix: `/apis/${v}`, group: g.name });
    }
    const kinds: string[] = [];
    for (const { prefix, group } of groups) {
      const list = (await api('GET', prefix)).body as { resources?: ApiResource[] };
      for (const res of list.resources ?? []) {
        if (!res.namespaced || res.name.includes('/') || kinds.includes(`${group || 'core'}/${res.name}`)) continue;
        kinds.push(`${group || 'core'}/${res.name}`);
        const version = prefix.startsWith('/api/') ? 'v1' : `${group}/${prefix.split('/')[3]}`;
        const collection = `${prefix}/namespaces/team-a/${res.name}`;
        await Promise.all(users.map(async (u) => {
          const name = `mx-${u.role}-${users.indexOf(u)}`;
          const obj: Record<string, unknown> = { apiVersion: version, kind: res.kind, metadata: { name, namespace: 'team-a' } };
          // minimal valid objects where one is trivial; elsewhere the refusal must come before validation
          if (res.kind === 'ConfigMap') obj.data = { k: 'v' };
          if (res.kind === 'Secret') obj.stringData = { k: 'v' };
          const requests: [string, () => Promise<number>][] = [
            ['get', () => call(base, 'GET', `${collection}/${name}`, u.headers)],
            ['list', () => call(base, 'GET', collection, u.headers)],
            ['watch', () => call(base, 'GET', `${collection}?watch=true`, u.headers)],
            ['create', () => call(base, 'POST', collection, u.headers, { body: obj })],
            ['update', () => call(base, 'PUT', `${collection}/${name}`, u.headers, { body: obj })],
            ['patch', () => call(base, 'PATCH', `${collection}/${name}`, u.headers, { body: { metadata: { labels: { matrix: 'yes' } } }, contentType: 'application/merge-patch+json' })],
            ['delete', () => call(base, 'DELETE', `${collection}/${name}`, u.headers)],
          ];
          for (const [verb, send] of requests) {
            if (!res.verbs.includes(verb)) continue;
            cells.push({ surface: `${verb} ${group || 'core'}/${res.name}`, user: u, allowed: restAllowed(u.role, group, res.name, verb), status: await send() });
          }
        }));
      }
    }
    const restCells = cells.length;
    // across namespaces: only cluster admins
    for (const [what, path] of [['list pods -A', '/api/v1/pods'], ['watch pods -A', '/api/v1/pods?watch=true'], ['list notebooks -A', '/apis/kubeflow.org/v1/notebooks'], ['list configmaps -A', '/api/v1/configmaps?watch=false']] as const) {
      await run(what, () => false, (u) => call(base, 'GET', path, u.headers));
    }
    // team-b is bob's: team-a's members are refused there, its owner is not
    const teamB = (u: User): boolean => u.bob === true;
    for (const [what, path] of [['list pods in team-b', '/api/v1/namespaces/team-b/pods'], ['watch pods in team-b', '/api/v1/namespaces/team-b/pods?watch=true'], ['list secrets in team-b', '/api/v1/namespaces/team-b/secrets']] as const) {
      await run(what, teamB, (u) => call(base, 'GET', path, u.headers));
    }
    // the Pod's streams
    const pod = '/api/v1/namespaces/team-a/pods/matrix-pod';
    const reader = (u: User): boolean => u.role === 'owner' || u.role === 'edit' || u.role === 'view';
    const editor = (u: User): boolean => u.role === 'owner' || u.role === 'edit';
    await run('pod log', reader, (u) => call(base, 'GET', `${pod}/log`, u.headers));
    await run('pod log follow', reader, (u) => call(base, 'GET', `${pod}/log?follow=true`, u.headers));
    await run('exec (WebSocket)', editor, (u) => call(base, 'GET', `${pod}/exec?command=true&stdout=true&container=main`, u.headers, { upgrade: 'v4.channel.k8s.io' }));
    await run('exec (POST)', editor, (u) => call(base, 'POST', `${pod}/exec?command=true&stdout=true`, u.headers));
    await run('attach (WebSocket)', editor, (u) => call(base, 'GET', `${pod}/attach?stdout=true`, u.headers, { upgrade: 'v4.channel.k8s.io' }));
    await run('port-forward (WebSocket)', editor, (u) => call(base, 'GET', `${pod}/portforward?ports=8080`, u.headers, { upgrade: 'v4.channel.k8s.io' }));
    // the KFP API, authorized as KFP's multi-user mode does
    await run('kfp list runs', reader, (u) => call(base, 'GET', '/apis/v2beta1/runs?namespace=team-a', u.headers));
    await run('kfp list experiments', reader, (u) => call(base, 'GET', '/apis/v2beta1/experiments?namespace=team-a', u.headers));
    await run('kfp list pipelines', reader, (u) => call(base, 'GET', '/apis/v2beta1/pipelines?namespace=team-a', u.headers));
    await run('kfp create experiment', editor, (u) => call(base, 'POST', '/apis/v2beta1/experiments', u.headers, { body: { display_name: `mx-${users.indexOf(u)}`, namespace: 'team-a' } }));
    // the inference gateway: every member of the namespace may call its models, as through Istio
    if (gatewayReady) {
      await run('gateway predict', reader, (u) => call(base, 'POST', '/serving/team-a/echo/v1/models/echo:predict', u.headers, { body: { instances: [[1]] } }));
      await run('gateway by Host', reader, (u) => call(base, 'GET', '/v1/models/echo', { ...u.headers, host: 'echo.team-a.svc' }));
    }
    // the notebook proxy decides before it looks for the notebook: no Notebook is needed to see who gets in
    await run('notebook proxy', editor, (u) => call(base, 'GET', '/notebook/team-a/nb/api/status', u.headers));
    await run('notebook proxy (WebSocket)', editor, (u) => call(base, 'GET', '/notebook/team-a/nb/api/kernels/k/channels', u.headers, { upgrade: 'jupyter' }));
    // the dashboard: the stream mux lets in anyone signed in, and each stream is decided as its own request
    const signedIn = (u: User): boolean => !u.unauthenticated && u.headers['impersonate-user'] === undefined;
    await run('streams upgrade', signedIn, (u) => muxStream(base, u.headers, '/api/v1/namespaces/default/pods?watch=true').then((s) => (s.upgraded ? 101 : s.status)));
    await run('stream: watch pods in team-a', reader, (u) => muxStream(base, u.headers, '/api/v1/namespaces/team-a/pods?watch=true').then((s) => s.status));
    await run('stream: pod usage', reader, (u) => muxStream(base, u.headers, '/skiff/v1/namespaces/team-a/pods/matrix-pod/usage?watch=true').then((s) => s.status));
    await run('stream: pods in team-b', teamB, (u) => muxStream(base, u.headers, '/api/v1/namespaces/team-b/pods?watch=true').then((s) => s.status));
    await run('pod usage', reader, (u) => call(base, 'GET', '/skiff/v1/namespaces/team-a/pods/matrix-pod/usage', u.headers));
    await run('usage of several pods', reader, (u) => call(base, 'GET', '/skiff/v1/namespaces/team-a/usage?pod=matrix-pod', u.headers));
    await run('usage in team-b', teamB, (u) => call(base, 'GET', '/skiff/v1/namespaces/team-b/usage?pod=x', u.headers));

    // the spoofed header from another tenant's Pod: never alice; with the Pod's token, team-b's service account
    assert.ok(await until('the spoofing Pod to finish', async () => ['Succeeded', 'Failed'].includes((await api('GET', '/api/v1/namespaces/team-b/pods/spoofer')).body?.status?.phase)));
    const log = (await api('GET', '/api/v1/namespaces/team-b/pods/spoofer/log')).body;
    const podCells = String(log).split('\n').filter((l) => l.startsWith('CELL '));
    assert.equal(podCells.length, 24, String(log));
    console.log(`from a team-b Pod: ${podCells.map((l) => l.slice(5)).join('; ')}`);
    const fromPod = (headers: string): User => ({ name: `spoofed header from a team-b Pod (${headers})`, role: 'none', headers: {}, unauthenticated: headers === 'header' });
    for (const line of podCells) {
      const [, scheme, who, path, status] = line.split(' ');
      cells.push({ surface: `${path} over ${scheme}`, user: fromPod(who as string), allowed: false, status: Number(status) });
    }

    // paths that might be read as one namespace and served as another: answered at all (2xx) to anyone
    // but team-b's owner, they would be a leak; a refusal, a 404 or a 400 is not
    const tricks = [
      '/api/v1/namespaces/team-a/../team-b/secrets', '/api/v1/namespaces/team-a/%2e%2e/team-b/secrets', '/api/v1/namespaces/team-a/pods/../../team-b/secrets',
      '/api/v1/namespaces/team-b/secrets/', '/api/v1/namespaces//team-b/secrets', '/api/v1/namespaces/team%2Db/secrets', '/api/v1/watch/namespaces/team-b/secrets',
      '/api/v1/secrets?fieldSelector=metadata.namespace%3Dteam-b', '/apis/v2beta1/runs?namespace=team-b&namespace=team-a', '/skiff/v1/namespaces/team-a/../team-b/usage?pod=x',
      '/notebook/team-a/../team-b/nb/api/status', '/serving/team-a/../team-b/x/v1/models/x',
    ];
    const trickCells: Cell[] = [];
    for (const path of tricks) {
      const statuses = await Promise.all(users.map((u) => call(base, 'GET', path, u.headers)));
      users.forEach((u, i) => trickCells.push({ surface: `GET ${path}`, user: u, allowed: u.bob === true, status: statuses[i] as number }));
    }
    const trickLeaks = trickCells.filter((c) => !c.allowed && c.status >= 200 && c.status < 300);
    for (const path of tricks) console.log(`GET ${path}: ${trickCells.filter((c) => c.surface === `GET ${path}`).map((c) => c.status).join(' ')}`);

    // -1: the connection itself was refused (by the kernel, for an isolated Pod)
    const refused = (s: number): boolean => s === 401 || s === 403 || s === -1;
    const leaks = cells.filter((c) => !c.allowed && !refused(c.status));
    const misses = cells.filter((c) => c.allowed && refused(c.status));
    // a refusal in the wrong words: 403 to someone who proved nothing, or 401 to a signed-in user
    const wrongCode = cells.filter((c) => !c.allowed && refused(c.status) && c.status !== -1 && c.status !== (c.user.unauthenticated ? 401 : 403));
    const show = (cs: Cell[]): string => cs.map((c) => `  ${c.surface} as ${c.user.name}: ${c.status}`).join('\n');
    console.log(`isolation matrix: ${cells.length} cells (${kinds.length} namespaced kinds, ${users.length} users${gatewayReady ? '' : ', gateway not ready: its cells skipped'}) in ${((Date.now() - started) / 1000).toFixed(1)} s, and ${trickCells.length} odd-path cells; leaks ${leaks.length + trickLeaks.length}, misses ${misses.length}, wrong refusal codes ${wrongCode.length}`);
    console.log(`kinds: ${kinds.join(' ')}`);
    // beyond REST, each surface's answers by user, in the order of `users`
    const surfaces = [...new Set(cells.slice(restCells).map((c) => c.surface))];
    for (const surface of surfaces) console.log(`${surface}: ${cells.filter((c) => c.surface === surface).map((c) => c.status).join(' ')}`);
    if (leaks.length) console.log(`leaks:\n${show(leaks)}`);
    if (misses.length) console.log(`misses:\n${show(misses)}`);
    if (wrongCode.length) console.log(`wrong refusal codes:\n${show(wrongCode)}`);
    assert.equal(leaks.length, 0, `leaks:\n${show(leaks)}`);
    assert.equal(trickLeaks.length, 0, `leaks through odd paths:\n${show(trickLeaks)}`);
    assert.equal(misses.length, 0, `misses:\n${show(misses)}`);
    assert.equal(wrongCode.length, 0, `wrong refusal codes:\n${show(wrongCode)}`);
    assert.ok(gatewayReady, 'the echo model became Ready for the gateway cells');
  });
});
