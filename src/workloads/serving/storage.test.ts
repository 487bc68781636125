import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { makeTar, makeZip } from '../../artifacts/testing.js';
import { ModelStore, StorageError } from './storage.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-storage-'));
const files: Record<string, { body: Buffer; type: string }> = {
  '/m/model.tar.gz': { body: makeTar([{ name: 'model/' }, { name: 'model/model.joblib', body: 'weights' }], true), type: 'application/gzip' },
  '/m/model.zip': { body: makeZip([{ name: 'model.onnx', body: 'onnx-bytes' }, { name: 'labels/classes.txt', body: 'a\nb' }]), type: 'application/zip' },
  '/m/model.joblib': { body: Buffer.from('plain'), type: 'application/octet-stream' },
  '/m/evil.tar': { body: makeTar([{ name: 'ok.txt', body: 'x' }, { name: '../../escaped.txt', body: 'x' }]), type: 'application/x-tar' },
};
let server: Server;
let base = '';
let hits = 0;

before(async () => {
  server = createServer((req, res) => {
    hits++;
    const f = files[req.url ?? ''];
    if (!f) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('storage initializer', () => {
  const root = join(dir, 'pipeline-root');
  const cache = join(dir, 'models');
  const models = new ModelStore(cache, (ns, claim) => join(dir, 'volumes', ns, claim), new LocalArtifactStore(root));

  it('mounts a pipeline artifact (file:// or a path) where it is, through the artifact store', async () => {
    mkdirSync(join(root, 'run', 'train', 'model'), { recursive: true });
    assert.deepEqual(await models.resolve(`file://${root}/run/train/model`), { kind: 'host', path: `${root}/run/train/model` });
    assert.deepEqual(await models.resolve(`${root}/run/train/model`), { kind: 'host', path: `${root}/run/train/model` });
    await assert.rejects(models.resolve(`file://${root}/run/none`), (e: Error) => e instanceof StorageError && e.message === `storageUri file://${root}/run/none: ${root}/run/none does not exist`);
  });

  it('downloads a .tar.gz once and unpacks it in place of itself', async () => {
    const before = hits;
    const src = await models.resolve(`${base}/m/model.tar.gz`);
    assert.equal(src.kind, 'host');
    const path = src.path as string;
    assert.deepEqual(readdirSync(path), ['model']);
    assert.equal(readFileSync(join(path, 'model', 'model.joblib'), 'utf8'), 'weights');
    assert.deepEqual(await models.resolve(`${base}/m/model.tar.gz`), src);
    assert.equal(hits - before, 1);
  });

  it('unpacks a .zip and keeps a plain file as it came', async () => {
    const zip = (await models.resolve(`${base}/m/model.zip`)).path as string;
    assert.deepEqual(readdirSync(zip).sort(), ['labels', 'model.onnx']);
    assert.equal(readFileSync(join(zip, 'labels', 'classes.txt'), 'utf8'), 'a\nb');
    const plain = (await models.resolve(`${base}/m/model.joblib`)).path as string;
    assert.deepEqual(readdirSync(plain), ['model.joblib']);
    assert.equal(readFileSync(join(plain, 'model.joblib'), 'utf8'), 'plain');
  });

  it('refuses an archive whose entries leave the model folder, and caches nothing of it', async () => {
    const entriesBefore = readdirSync(cache).sort();
    await assert.rejects(models.resolve(`${base}/m/evil.tar`), (e: Error) => e instanceof StorageError && /unpacking .*evil\.tar: entry "\.\.\/\.\.\/escaped\.txt"/.test(e.message));
    assert.deepEqual(readdirSync(cache).sort(), entriesBefore);
    assert.equal(existsSync(join(dir, 'escaped.txt')), false);
    assert.equal(existsSync(join(cache, 'escaped.txt')), false);
  });

  it('says which download failed', async () => {
    await assert.rejects(models.resolve(`${base}/m/missing.tar.gz`), /downloading http:\/\/127\.0\.0\.1:\d+\/m\/missing\.tar\.gz: HTTP 404/);
  });
});
