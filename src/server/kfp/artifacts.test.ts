// Reading an artifact's content back in part: the byte cap the dashboard's previews rely on (a Range
// header or limit=), over a real store, a real local artifact store and a real HTTP server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { defaultRegistry, Kinds } from '../../api/index.js';
import type { Run } from '../../api/pipelines.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { shellPipeline } from '../../workloads/pipelines/testing.js';
import { KfpApi } from './api.js';
import { requestedRange } from './artifacts.js';

describe('requestedRange', () => {
  it('reads the ranges HTTP allows and the limit= cap', () => {
    assert.deepEqual(requestedRange('bytes=0-9', undefined, 100), { start: 0, end: 9 });
    assert.deepEqual(requestedRange('bytes=90-', undefined, 100), { start: 90, end: 99 });
    assert.deepEqual(requestedRange('bytes=-5', undefined, 100), { start: 95, end: 99 });
    assert.deepEqual(requestedRange('bytes=0-500', undefined, 100), { start: 0, end: 99 });
    assert.equal(requestedRange('bytes=100-', undefined, 100), 'unsatisfiable');
    // several ranges, other units, nonsense: ignored, the whole file is sent
    assert.equal(requestedRange('bytes=0-1,5-6', undefined, 100), undefined);
    assert.equal(requestedRange('lines=0-1', undefined, 100), undefined);
    assert.equal(requestedRange('bytes=9-2', undefined, 100), undefined);
    assert.equal(requestedRange(undefined, undefined, 100), undefined);
    assert.deepEqual(requestedRange(undefined, '10', 100), { start: 0, end: 9 });
    assert.equal(requestedRange(undefined, '100', 100), undefined);
    assert.throws(() => requestedRange(undefined, '-1', 100), /limit: "-1" is not a number of bytes/);
  });
});

describe('artifact read-back with a byte cap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-artifacts-read-'));
  const root = join(dir, 'root');
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  const files = new LocalArtifactStore(root);
  const api = new KfpApi({ client, version: 'test', pipelineRoot: root, artifacts: files });
  let server: Server;
  let base = '';
  const body = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
  const read = (output: string, init: RequestInit = {}, query = ''): Promise<Response> =>
    fetch(`${base}/apis/v2beta1/runs/r1/nodes/train/artifacts/${output}:read${query}`, init);

  before(async () => {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await files.write(`${root}/r1/train/model`, body);
    await files.write(`${root}/r1/train/notes`, 'hello, world');
    const run = await client.create<Run>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: 'r1', namespace: 'default' },
      spec: { pipelineSpec: shellPipeline('p', { train: { script: 'true' } }) },
    } as Run);
    const artifact = (name: string, schemaTitle: string) => [{ name, uri: `${root}/r1/train/${name}`, type: { schemaTitle }, metadata: {} }];
    await client.updateStatus({
      ...run,
      status: {
        state: 'SUCCEEDED',
        tasks: { train: { state: 'SUCCEEDED', outputs: { parameters: {}, artifacts: { model: artifact('model', 'system.Model'), notes: artifact('notes', 'system.Markdown') } } } },
      },
    });
    assert.equal((await client.get(Kinds.Run, { namespace: 'default', name: 'r1' })).status?.state, 'SUCCEEDED');
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
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the whole file without a range, saying ranges are accepted', async () => {
    const r = await read('model');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), body);
  });

  it('answers a Range request with 206 and exactly those bytes', async () => {
    const r = await read('model', { headers: { range: 'bytes=0-1023' } });
    assert.equal(r.status, 206);
    assert.equal(r.headers.get('content-range'), 'bytes 0-1023/5000');
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), body.subarray(0, 1024));
    const mid = await read('model', { headers: { range: 'bytes=4000-' } });
    assert.equal(mid.status, 206);
    assert.equal(mid.headers.get('content-range'), 'bytes 4000-4999/5000');
    assert.deepEqual(Buffer.from(await mid.arrayBuffer()), body.subarray(4000));
  });

  it('caps with limit= and keeps the type of an HTML or Markdown file', async () => {
    const r = await read('notes', {}, '?limit=5');
    assert.equal(r.status, 206);
    assert.equal(r.headers.get('content-type'), 'text/markdown; charset=utf-8');
    assert.equal(r.headers.get('content-range'), 'bytes 0-4/12');
    assert.equal(r.headers.get('x-artifact-size'), '12');
    assert.equal(await r.text(), 'hello');
    const whole = await read('notes', {}, '?limit=4096');
    assert.equal(whole.status, 200);
    assert.equal(await whole.text(), 'hello, world');
  });

  it('refuses a range past the end with 416 and the size, and a bad limit with 400', async () => {
    const r = await read('model', { headers: { range: 'bytes=6000-' } });
    assert.equal(r.status, 416);
    assert.equal(r.headers.get('content-range'), 'bytes */5000');
    const bad = await read('model', {}, '?limit=lots');
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).message, 'limit: "lots" is not a number of bytes');
  });
});
