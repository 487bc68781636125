import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { makeTar, makeZip } from '../../artifacts/testing.js';
import type { KObject } from '../../api/meta.js';
import { S3Stores } from '../../artifacts/s3.js';
import type { Client } from '../../store/client.js';
import { MinioServer, minioSkip } from '../../testing/minio.js';
import { S3Annotations, endpointOf, serviceAccountS3Store } from './s3-credentials.js';
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

describe('storage initializer: s3://', () => {
  it('fails clearly without an S3 server, and for a URI without a bucket', async () => {
    const models = new ModelStore(join(dir, 'm2'), (ns, claim) => join(dir, 'volumes', ns, claim), new LocalArtifactStore(join(dir, 'root2')));
    await assert.rejects(models.resolve('s3://bucket/model'), (e: Error) => e instanceof StorageError && e.message === 'storageUri s3://bucket/model: Skiff has no S3 server configured (artifacts.s3 in its config)');
    await assert.rejects(models.resolve('s3:///model'), /storageUri s3:\/\/\/model: no bucket/);
  });

  it('takes the endpoint from KServe\'s Secret annotations', () => {
    assert.equal(endpointOf({ [S3Annotations.endpoint]: 'minio-service.kubeflow:9000', [S3Annotations.useHttps]: '0' }), 'http://minio-service.kubeflow:9000');
    assert.equal(endpointOf({ [S3Annotations.endpoint]: 's3.example.com' }), 'https://s3.example.com');
    assert.equal(endpointOf({ [S3Annotations.endpoint]: 'http://127.0.0.1:9000/' }), 'http://127.0.0.1:9000');
    assert.equal(endpointOf({}), undefined);
  });

  describe('with MinIO', { skip: minioSkip() }, () => {
    let minio: MinioServer;
    let s3: S3Stores;
    before(async () => {
      minio = await MinioServer.start({ buckets: ['models'] });
      s3 = new S3Stores({}, { stagingDir: join(dir, 's3-staging'), cacheDir: join(dir, 's3-cache') });
    });
    after(async () => {
      s3?.destroy();
      await minio?.stop();
    });

    it('downloads a model with the credentials of a Secret on the service account, and says when they are refused', async () => {
      const b64 = (v: string): string => Buffer.from(v).toString('base64');
      const objects: Record<string, KObject> = {
        'ServiceAccount/team/predictor': { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'predictor', namespace: 'team' }, secrets: [{ name: 'not-s3' }, { name: 's3creds' }] } as KObject,
        'Secret/team/not-s3': { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'not-s3', namespace: 'team' }, data: { token: b64('x') } } as KObject,
        'Secret/team/s3creds': {
          apiVersion: 'v1', kind: 'Secret',
          metadata: { name: 's3creds', namespace: 'team', annotations: { [S3Annotations.endpoint]: minio.endpoint.slice('http://'.length), [S3Annotations.useHttps]: '0' } },
          data: { AWS_ACCESS_KEY_ID: b64(minio.accessKey), AWS_SECRET_ACCESS_KEY: b64(minio.secretKey) },
        } as KObject,
      };
      const client = { find: async (def: { kind: string }, key: { namespace?: string; name: string }) => objects[`${def.kind}/${key.namespace}/${key.name}`] } as unknown as Client;
      const models = new ModelStore(join(dir, 'm3'), (ns, claim) => join(dir, 'volumes', ns, claim), new LocalArtifactStore(join(dir, 'root3')), (owner, uri) => serviceAccountS3Store(client, s3, owner, uri));
      const direct = s3.get('s3://models', { credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey }, endpoint: minio.endpoint });
      await direct.write('s3://models/iris/model.joblib', 'weights');
      await direct.write('s3://models/iris/settings/labels.txt', 'setosa');
      const src = await models.resolve('s3://models/iris', { namespace: 'team', serviceAccountName: 'predictor' });
      assert.equal(src.kind, 'host');
      assert.equal(readFileSync(join(src.path as string, 'model.joblib'), 'utf8'), 'weights');
      assert.equal(readFileSync(join(src.path as string, 'settings', 'labels.txt'), 'utf8'), 'setosa');
      await assert.rejects(models.resolve('s3://models/none', { namespace: 'team', serviceAccountName: 'predictor' }), /storageUri s3:\/\/models\/none: no object or prefix of that name/);
      // the default service account has no such Secret, and the config no credentials
      await assert.rejects(models.resolve('s3://models/iris', { namespace: 'team' }), /no credentials for S3 endpoint .*the service account team\/default lists no Secret with AWS_ACCESS_KEY_ID/);
      (objects['Secret/team/s3creds'] as unknown as { data: Record<string, string> }).data['AWS_SECRET_ACCESS_KEY'] = b64('wrong-secret');
      await assert.rejects(models.resolve('s3://models/iris', { namespace: 'team', serviceAccountName: 'predictor' }), (e: Error) => {
        assert.match(e.message, new RegExp(`storageUri s3://models/iris: S3 endpoint ${minio.endpoint} refused the credentials of access key id "${minio.accessKey}"`));
        assert.doesNotMatch(e.message, /wrong-secret/);
        return true;
      });
    });
  });
});
