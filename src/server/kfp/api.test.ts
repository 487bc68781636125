// The KFP API's route table over a real store, through a real HTTP server: the routes kfp.Client's
// end-to-end test (test/kfp-client.test.ts) does not reach, and the answers for paths with no route.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { defaultRegistry, Kinds } from '../../api/index.js';
import type { RecurringRunObj } from '../../api/kfp-objects.js';
import type { Run } from '../../api/pipelines.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { shellPipeline } from '../../workloads/pipelines/testing.js';
import { KfpApi } from './api.js';

describe('KFP API routes', () => {
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  const api = new KfpApi({ client, version: '2.5.0-test' });
  let server: Server;
  let base = '';

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const r = await fetch(`${base}/apis/v2beta1${path}`, { method, ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) : undefined };
  };
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await call(method, path, body);
    assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.json)}`);
    return r.json;
  };

  before(async () => {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    server = createServer((req, res) => {
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

  it('answers healthz with the version', async () => {
    assert.equal((await ok('GET', '/healthz')).tag_name, '2.5.0-test');
  });

  it('gets, renames and deletes a pipeline version, and finds a pipeline by name', async () => {
    const spec = shellPipeline('p', { a: { script: 'true' } });
    const p = await ok('POST', '/pipelines/create', { pipeline: { display_name: 'routes-p' }, pipeline_version: { display_name: 'v1', pipeline_spec: spec } });
    assert.equal((await ok('GET', '/pipelines/names/routes-p')).pipeline_id, p.pipeline_id);
    const [v] = (await ok('GET', `/pipelines/${p.pipeline_id}/versions`)).pipeline_versions;
    assert.equal((await ok('GET', `/pipelines/${p.pipeline_id}/versions/${v.pipeline_version_id}`)).display_name, 'v1');
    assert.equal((await ok('PATCH', `/pipelines/${p.pipeline_id}/versions/${v.pipeline_version_id}`, { display_name: 'first' })).display_name, 'first');
    const other = await call('GET', `/pipelines/not-${p.pipeline_id}/versions/${v.pipeline_version_id}`);
    assert.equal(other.status, 404, JSON.stringify(other.json));
    await ok('DELETE', `/pipelines/${p.pipeline_id}/versions/${v.pipeline_version_id}`);
    assert.equal((await ok('GET', `/pipelines/${p.pipeline_id}/versions`)).total_size, 0);
    await ok('DELETE', `/pipelines/${p.pipeline_id}`);
    assert.equal((await call('GET', `/pipelines/${p.pipeline_id}`)).status, 404);
  });

  it('archives an experiment with its runs and disables its recurring runs; unarchives it alone', async () => {
    const x = await ok('POST', '/experiments', { display_name: 'routes-x' });
    const spec = shellPipeline('q', { a: { script: 'true' } });
    const run = await ok('POST', '/runs', { display_name: 'r', experiment_id: x.experiment_id, pipeline_spec: spec });
    const rr = await ok('POST', '/recurringruns', { display_name: 'rr', experiment_id: x.experiment_id, pipeline_spec: spec, trigger: { periodic_schedule: { interval_second: 3600 } } });
    assert.equal(rr.mode, 'ENABLE');
    await ok('POST', `/experiments/${x.experiment_id}:archive`);
    assert.equal((await ok('GET', `/experiments/${x.experiment_id}`)).storage_state, 'ARCHIVED');
    assert.equal((await ok('GET', `/runs/${run.run_id}`)).storage_state, 'ARCHIVED');
    assert.equal((await ok('GET', `/recurringruns/${rr.recurring_run_id}`)).mode, 'DISABLE');
    await ok('POST', `/experiments/${x.experiment_id}:unarchive`);
    assert.equal((await ok('GET', `/experiments/${x.experiment_id}`)).storage_state, 'AVAILABLE');
    assert.equal((await ok('GET', `/runs/${run.run_id}`)).storage_state, 'ARCHIVED');
    await ok('POST', `/recurringruns/${rr.recurring_run_id}:enable`);
    assert.equal((await client.get<RecurringRunObj>(Kinds.RecurringRun, { namespace: 'default', name: rr.recurring_run_id })).spec.mode, 'ENABLE');
    await ok('DELETE', `/runs/${run.run_id}`);
    assert.equal(await client.find<Run>(Kinds.Run, { namespace: 'default', name: run.run_id }), undefined);
    await ok('DELETE', `/experiments/${x.experiment_id}`);
    assert.equal((await call('GET', `/experiments/${x.experiment_id}`)).status, 404);
  });

  it('says 404 for a path or verb with no route, and 501 for the KFP APIs Skiff does not serve', async () => {
    const none = await call('GET', '/nothing/here');
    assert.equal(none.status, 404);
    assert.equal(none.json.message, 'no route for GET /apis/v2beta1/nothing/here');
    assert.equal((await call('PUT', '/runs')).status, 404);
    const spec = shellPipeline('v', { a: { script: 'true' } });
    const run = await ok('POST', '/runs', { display_name: 'verbs', pipeline_spec: spec });
    const verb = await call('POST', `/runs/${run.run_id}:explode`);
    assert.equal(verb.status, 404);
    assert.equal(verb.json.message, `no route for POST /apis/v2beta1/runs/${run.run_id}:explode`);
    const missing = await call('POST', '/runs/no-such-run:archive');
    assert.equal(missing.status, 404);
    assert.match(missing.json.message, /^run "no-such-run" not found$/);
    for (const family of ['filters', 'visualizations', 'workflows', 'scheduledworkflows']) {
      const r = await call('GET', `/${family}/x`);
      assert.equal(r.status, 501, family);
      assert.equal(r.json.code, 12);
    }
  });
});
