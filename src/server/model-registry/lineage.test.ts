// A model artifact's modelSource* fields filled from the lineage of its URI, through the REST API over
// a real store: on create (the collection, the generic /artifacts and a version's nested upsert), on a
// PATCH of the URI, never over the caller's own values, and gone when the URI leaves the pipeline.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { defaultRegistry } from '../../api/index.js';
import { allowAll, type Authorizer } from '../auth/types.js';
import { KfpAnnotations } from '../../api/kfp-objects.js';
import type { Run } from '../../api/pipelines.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { shellPipeline } from '../../workloads/pipelines/testing.js';
import { matchRegistryPath, ModelRegistryApi } from './api.js';

const API = '/api/model_registry/v1alpha3';

describe('lineage of model artifacts', () => {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  const api = new ModelRegistryApi({ client });
  let server: Server;
  let base = '';
  let uid = '';
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const r = await fetch(`${base}${API}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };

  before(async () => {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } });
    const run = await client.create<Run>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run',
      metadata: { name: 'run-abc', namespace: 'default', annotations: { [KfpAnnotations.displayName]: 'nightly training' } },
      spec: { pipelineSpec: shellPipeline('train', { train: { script: 'true' } }) },
    } as Run);
    uid = run.metadata.uid as string;
    // an ended run carries its tasks in its status: `train` wrote the model, `ingest` was imported
    await client.updateStatus<Run>({
      ...run,
      status: {
        state: 'SUCCEEDED',
        tasks: {
          train: { state: 'SUCCEEDED', podName: 'run-abc-train', outputs: { parameters: {}, artifacts: { model: [{ name: 'model', uri: 's3://bucket/custom/model' }] } } },
          ingest: { state: 'SUCCEEDED', outputs: { parameters: {}, artifacts: { artifact: [{ name: 'artifact', uri: 's3://elsewhere/data.csv' }] } } },
        },
      },
    } as Run);
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const m = matchRegistryPath(url.pathname);
      if (m) void api.handle(req, res, url, m);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());
  /** a registry for a caller who may do everything but see the namespace's runs (tenancy's RBAC is tested with the real authorizer elsewhere) */
  const blind = async <T>(fn: (post: (body: unknown) => Promise<any>) => Promise<T>): Promise<T> => {
    const deny: Authorizer = {
      ...allowAll,
      authorize: (a) => (a.resource?.resource === 'runs' ? { allowed: false, reason: 'no role grants runs' } : { allowed: true, reason: 'test' }),
    };
    const other = new ModelRegistryApi({ client, authorizer: deny });
    const srv = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      void other.handle(req, res, url, matchRegistryPath(url.pathname) ?? { path: url.pathname });
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    try {
      const at = `http://127.0.0.1:${(srv.address() as AddressInfo).port}${API}/model_artifacts?namespace=default`;
      return await fn(async (body) => (await fetch(at, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json());
    } finally {
      srv.close();
    }
  };

  const source = { modelSourceKind: 'kfp', modelSourceClass: 'pipelinerun', modelSourceGroup: 'default', modelSourceId: 'run-abc', modelSourceName: 'nightly training' };
  const sourceOf = (a: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(a).filter(([k]) => k.startsWith('modelSource')));

  it('fills the run from a URI under the run\'s root, from a recorded output, and a file inside one', async () => {
    const underRoot = await call('POST', '/model_artifacts', { name: 'a1', uri: `minio://mlpipeline/v2/artifacts/train/${uid}/train/7/model` });
    assert.equal(underRoot.status, 201, JSON.stringify(underRoot.body));
    assert.deepEqual(sourceOf(underRoot.body), source);
    const recorded = await call('POST', '/artifacts', { artifactType: 'model-artifact', name: 'a2', uri: 's3://bucket/custom/model/model.joblib' });
    assert.deepEqual(sourceOf(recorded.body), source);
    // an importer's output was not made by the run; an unrelated URI has no lineage
    assert.deepEqual(sourceOf((await call('POST', '/model_artifacts', { name: 'a3', uri: 's3://elsewhere/data.csv' })).body), {});
    assert.deepEqual(sourceOf((await call('POST', '/model_artifacts', { name: 'a4', uri: 's3://bucket/custom/modelx' })).body), {});
  });

  it('keeps what the caller gives, follows a PATCHed URI, and fills a version\'s upserted artifact', async () => {
    const given = await call('POST', '/model_artifacts', { name: 'b1', uri: 's3://bucket/custom/model', modelSourceKind: 'hf', modelSourceName: 'org/model' });
    assert.deepEqual(sourceOf(given.body), { modelSourceKind: 'hf', modelSourceName: 'org/model' });
    const moved = await call('PATCH', `/model_artifacts/${given.body.id}`, { uri: 's3://elsewhere/x' });
    assert.deepEqual(sourceOf(moved.body), { modelSourceKind: 'hf', modelSourceName: 'org/model' });

    const plain = await call('POST', '/model_artifacts', { name: 'b2', uri: 's3://nowhere/m' });
    const patched = await call('PATCH', `/model_artifacts/${plain.body.id}`, { uri: 's3://bucket/custom/model' });
    assert.deepEqual(sourceOf(patched.body), source);
    // the client sends the whole entity back: the values Skiff filled are not taken for the caller's
    const resent = await call('PATCH', `/artifacts/${plain.body.id}`, { ...patched.body, description: 'tuned' });
    assert.equal(resent.status, 200, JSON.stringify(resent.body));
    const away = await call('PATCH', `/model_artifacts/${plain.body.id}`, { uri: 's3://nowhere/m2' });
    assert.deepEqual(sourceOf(away.body), {}, 'lineage Skiff filled goes with the URI');

    const rm = await call('POST', '/registered_models', { name: 'm' });
    const mv = await call('POST', `/registered_models/${rm.body.id}/versions`, { name: 'v1', registeredModelId: rm.body.id });
    const art = await call('POST', `/model_versions/${mv.body.id}/artifacts`, { artifactType: 'model-artifact', name: 'model', uri: `file:///data/pipelines/train/${uid}/train/9/model` });
    assert.equal(art.status, 201, JSON.stringify(art.body));
    assert.deepEqual(sourceOf(art.body), source);
    const again = await call('POST', `/model_versions/${mv.body.id}/artifacts`, { artifactType: 'model-artifact', name: 'model', uri: 's3://nowhere/y' });
    assert.deepEqual(sourceOf(again.body), {});
  });

  it('names no run to a caller who may not list the namespace\'s runs', async () => {
    const made = await blind((post) => post({ name: 'c1', uri: `minio://mlpipeline/v2/artifacts/train/${uid}/train/7/model` }));
    assert.equal(made.name, 'c1', JSON.stringify(made));
    assert.deepEqual(sourceOf(made), {});
  });
});
