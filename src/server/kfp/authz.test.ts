// KFP's multi-user authorization: the attributes each kind of request is checked with (a table), and
// the KFP API with Skiff's bootstrap policy deciding: a Profile owner's kubeflow-edit and a
// contributor's kubeflow-view in their namespace, nothing in another's, shared pipelines for all.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { defaultRegistry } from '../../api/index.js';
import type { KObject } from '../../api/meta.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { shellPipeline } from '../../workloads/pipelines/testing.js';
import { RbacAuthorizer, staticPolicy } from '../auth/rbac.js';
import { setRequestUser, type UserInfo } from '../auth/types.js';
import { KfpApi } from './api.js';
import { kfpCheck, type KfpAccess, type KfpCheck } from './authz.js';
import { binding, policy } from '../auth/testing.js';

describe('kfpCheck', () => {
  const table: [string, KfpAccess, KfpCheck][] = [
    ['a run in a namespace', { resource: 'runs', verb: 'create', namespace: 'team-a' }, { attributes: { verb: 'create', apiGroup: 'pipelines.kubeflow.org', resource: 'runs', namespace: 'team-a' } }],
    ['a named run', { resource: 'runs', verb: 'terminate', namespace: 'team-a', name: 'r1' }, { attributes: { verb: 'terminate', apiGroup: 'pipelines.kubeflow.org', resource: 'runs', namespace: 'team-a', name: 'r1' } }],
    ['reading a run\'s artifact', { resource: 'runs', verb: 'readArtifact', namespace: 'team-a', name: 'r1' }, { attributes: { verb: 'readArtifact', apiGroup: 'pipelines.kubeflow.org', resource: 'runs', namespace: 'team-a', name: 'r1' } }],
    ['recurring runs are jobs', { resource: 'jobs', verb: 'disable', namespace: 'team-a', name: 'j' }, { attributes: { verb: 'disable', apiGroup: 'pipelines.kubeflow.org', resource: 'jobs', namespace: 'team-a', name: 'j' } }],
    ['listing runs with no namespace', { resource: 'runs', verb: 'list' }, { invalid: 'A run cannot have an empty namespace in multi-user mode: name one (the namespace query parameter, or an experiment in it)' }],
    ['an experiment with no namespace', { resource: 'experiments', verb: 'create', namespace: '' }, { invalid: 'A experiment cannot have an empty namespace in multi-user mode: name one (the namespace query parameter, or an experiment in it)' }],
    ['listing shared pipelines', { resource: 'pipelines', verb: 'list' }, { open: true }],
    ['getting a shared pipeline', { resource: 'pipelines', verb: 'get', namespace: 'default', name: 'p' }, { open: true }],
    ['writing a shared pipeline', { resource: 'pipelines', verb: 'delete', namespace: 'default', name: 'p' }, { attributes: { verb: 'delete', apiGroup: 'pipelines.kubeflow.org', resource: 'pipelines', namespace: 'default', name: 'p' } }],
    ['making a shared pipeline', { resource: 'pipelines', verb: 'create' }, { attributes: { verb: 'create', apiGroup: 'pipelines.kubeflow.org', resource: 'pipelines', namespace: 'default' } }],
    ['a namespace\'s pipeline is checked', { resource: 'pipelines', verb: 'get', namespace: 'team-a', name: 'p' }, { attributes: { verb: 'get', apiGroup: 'pipelines.kubeflow.org', resource: 'pipelines', namespace: 'team-a', name: 'p' } }],
  ];
  for (const [what, access, want] of table) it(what, () => assert.deepEqual(kfpCheck(access), want));
});


describe('the KFP API in multi-user mode, with the bootstrap policy', () => {
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  const authorizer = new RbacAuthorizer(staticPolicy(policy([
    binding('team-a', 'kubeflow-edit', 'alice'), binding('team-b', 'kubeflow-edit', 'bob'), binding('team-a', 'kubeflow-view', 'carol'),
  ])));
  const api = new KfpApi({ client, version: 'test', authorizer });
  const users: Record<string, UserInfo> = Object.fromEntries(['alice', 'bob', 'carol'].map((u) => [u, { username: u, groups: ['system:authenticated'] }]));
  let server: Server;
  let base = '';
  const call = async (who: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const r = await fetch(`${base}/apis/v2beta1${path}`, { method, headers: { 'x-user': who, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) : undefined };
  };
  const ok = async (who: string, method: string, path: string, body?: unknown): Promise<any> => {
    const r = await call(who, method, path, body);
    assert.equal(r.status, 200, `${who} ${method} ${path}: ${JSON.stringify(r.json)}`);
    return r.json;
  };

  before(async () => {
    for (const name of ['default', 'team-a', 'team-b']) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    server = createServer((req, res) => {
      const u = users[String(req.headers['x-user'])];
      if (u) setRequestUser(req, u);
      const url = new URL(req.url ?? '/', 'http://localhost');
      void api.handle(req, res, url, url.pathname);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  });

  it('says multi_user, and needs a namespace to list runs', async () => {
    assert.equal((await ok('alice', 'GET', '/healthz')).multi_user, true);
    const r = await call('alice', 'GET', '/runs');
    assert.equal(r.status, 400);
    assert.match(r.json.message, /empty namespace in multi-user mode/);
  });

  it('lets an editor run in their namespace, a viewer read, and refuses another tenant', async () => {
    const x = await ok('alice', 'POST', '/experiments', { display_name: 'x', namespace: 'team-a' });
    const run = await ok('alice', 'POST', '/runs', { display_name: 'r', experiment_id: x.experiment_id, pipeline_spec: shellPipeline('p', { a: { script: 'true' } }) });
    assert.equal((await ok('alice', 'GET', '/runs?namespace=team-a')).runs.length, 1);
    assert.equal((await ok('carol', 'GET', `/runs/${run.run_id}`)).run_id, run.run_id);
    assert.equal((await ok('carol', 'GET', `/runs?experiment_id=${x.experiment_id}`)).runs.length, 1);
    const archive = await call('carol', 'POST', `/runs/${run.run_id}:archive`);
    assert.equal(archive.status, 403);
    assert.equal(archive.json.code, 7);
    assert.equal(archive.json.message, `runs.pipelines.kubeflow.org "${run.run_id}" is forbidden: User "carol" cannot archive resource "runs" in API group "pipelines.kubeflow.org" in the namespace "team-a"`);
    const list = await call('bob', 'GET', '/runs?namespace=team-a');
    assert.equal(list.status, 403);
    assert.match(list.json.message, /User "bob" cannot list resource "runs" in API group "pipelines.kubeflow.org" in the namespace "team-a"/);
    assert.equal((await call('bob', 'GET', `/runs/${run.run_id}`)).status, 403);
    assert.equal((await call('bob', 'GET', `/experiments/${x.experiment_id}`)).status, 403);
    assert.equal((await call('bob', 'POST', '/runs', { display_name: 'r', experiment_id: x.experiment_id, pipeline_spec: shellPipeline('p', { a: { script: 'true' } }) })).status, 403);
    assert.equal((await call('bob', 'POST', '/recurringruns', { display_name: 'rr', namespace: 'team-a', pipeline_spec: shellPipeline('p', { a: { script: 'true' } }), trigger: { periodic_schedule: { interval_second: 3600 } } })).status, 403);
    assert.equal((await call('bob', 'DELETE', `/experiments/${x.experiment_id}`)).status, 403);
    await ok('alice', 'POST', `/runs/${run.run_id}:archive`);
  });

  it('shares namespace-less pipelines for reading only; a namespace\'s pipelines stay its own', async () => {
    const spec = shellPipeline('s', { a: { script: 'true' } });
    assert.equal((await call('alice', 'POST', '/pipelines/create', { pipeline: { display_name: 'shared' }, pipeline_version: { display_name: 'v1', pipeline_spec: spec } })).status, 403);
    const mine = await ok('alice', 'POST', '/pipelines/create', { pipeline: { display_name: 'mine', namespace: 'team-a' }, pipeline_version: { display_name: 'v1', pipeline_spec: spec } });
    assert.equal((await ok('alice', 'GET', '/pipelines?namespace=team-a')).pipelines.length, 1);
    assert.equal((await call('bob', 'GET', `/pipelines/${mine.pipeline_id}`)).status, 403);
    assert.equal((await call('bob', 'GET', `/pipelines/${mine.pipeline_id}/versions`)).status, 403);
    assert.equal((await call('bob', 'GET', '/pipelines?namespace=team-a')).status, 403);
    // a shared pipeline (made by whoever may write `default`): everyone may read it, not change it
    await client.create({ apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Pipeline', metadata: { name: 'shared-1', namespace: 'default' }, spec: { name: 'shared', displayName: 'shared' } } as KObject);
    const shared = await ok('bob', 'GET', '/pipelines');
    assert.deepEqual(shared.pipelines.map((p: { pipeline_id: string }) => p.pipeline_id), ['shared-1']);
    assert.equal((await ok('carol', 'GET', '/pipelines/shared-1')).display_name, 'shared');
    assert.equal((await call('bob', 'DELETE', '/pipelines/shared-1')).status, 403);
  });
});
