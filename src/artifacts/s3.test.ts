import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { artifactStoreContract } from '../testing/artifact-store-contract.js';
import { MinioServer, minioSkip } from '../testing/minio.js';
import { S3ArtifactStore, S3CredentialsError, type S3StoreOptions } from './s3.js';
import { parseS3Uri } from './s3-uri.js';
import { copyAcross } from './transfer.js';
import { LocalArtifactStore } from './local.js';
import { ArtifactStoreError } from './store.js';

describe('S3 URIs', () => {
  it('parses s3:// and minio:// into bucket and key, dropping a root query string', () => {
    assert.deepEqual(parseS3Uri('minio://mlpipeline/v2/artifacts/'), { scheme: 'minio', bucket: 'mlpipeline', key: 'v2/artifacts' });
    assert.deepEqual(parseS3Uri('s3://b'), { scheme: 's3', bucket: 'b', key: '' });
    assert.deepEqual(parseS3Uri('s3://b/k?region=eu-west-1'), { scheme: 's3', bucket: 'b', key: 'k' });
    assert.equal(parseS3Uri('gs://b/k'), undefined);
    assert.equal(parseS3Uri('/tmp/x'), undefined);
  });

  it('refuses a root of another scheme, and missing credentials', () => {
    const base = { endpoint: 'http://127.0.0.1:1', stagingDir: '/tmp/x', cacheDir: '/tmp/y', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };
    assert.throws(() => new S3ArtifactStore({ ...base, root: '/tmp/root' }), /root "\/tmp\/root" must be s3:\/\/bucket\/path or minio:\/\/bucket\/path/);
    assert.throws(() => new S3ArtifactStore({ ...base, root: 's3://b', credentials: { accessKeyId: '', secretAccessKey: '' } }), /an access key id and a secret access key are needed/);
  });

  it('says an endpoint that cannot be reached is unreachable, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-s3-'));
    const store = new S3ArtifactStore({ endpoint: 'http://127.0.0.1:9', root: 's3://b', stagingDir: dir, cacheDir: dir, credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, maxAttempts: 1 });
    try {
      await assert.rejects(store.read('s3://b/k'), (e: Error) => e instanceof ArtifactStoreError && /S3 endpoint http:\/\/127\.0\.0\.1:9 cannot be reached reading s3:\/\/b\/k: ECONNREFUSED/.test(e.message));
    } finally {
      store.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('S3 artifact store on MinIO', { skip: minioSkip() }, () => {
  let minio: MinioServer;
  let dir: string;
  let store: S3ArtifactStore;
  const stores: S3ArtifactStore[] = [];
  const make = (o: Partial<S3StoreOptions> = {}): S3ArtifactStore => {
    const s = new S3ArtifactStore({
      endpoint: minio.endpoint, root: 'minio://mlpipeline/v2/artifacts', stagingDir: join(dir, 'staging'), cacheDir: join(dir, 'cache'),
      credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey }, partSize: 5 * 1024 ** 2, ...o,
    });
    stores.push(s);
    return s;
  };
  before(async () => {
    minio = await MinioServer.start({ buckets: ['mlpipeline', 'other'] });
    dir = mkdtempSync(join(tmpdir(), 'skiff-s3-'));
    store = make();
  });
  after(async () => {
    for (const s of stores) s.destroy();
    await minio?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('what every store does', () => {
    artifactStoreContract(() => ({ store, at: (rel) => `minio://mlpipeline/contract/${rel}`, foreign: '/tmp/a' }));
  });

  it('holds s3:// and minio:// alike, in every bucket, and checks its root', async () => {
    assert.equal(store.root, 'minio://mlpipeline/v2/artifacts');
    assert.equal(store.handles('s3://other/x'), true);
    assert.equal(store.handles('file:///x'), false);
    await store.write('s3://other/k.txt', 'other bucket');
    assert.equal((await store.read('minio://other/k.txt')).toString(), 'other bucket');
    await store.check();
    await assert.rejects(make({ root: 's3://no-such-bucket/p' }).check(), /the bucket no-such-bucket of pipeline root s3:\/\/no-such-bucket\/p does not exist at S3 endpoint http:\/\/127\.0\.0\.1:\d+/);
    // the bucket itself is a directory; a missing bucket is nothing
    assert.equal((await store.stat('s3://other'))?.directory, true);
    assert.equal(await store.stat('s3://no-such-bucket/x'), undefined);
    await assert.rejects(store.write('s3://no-such-bucket/x', 'x'), /the bucket does not exist at S3 endpoint/);
  });

  it('refuses credentials clearly: the endpoint and the access key id, never the secret', async () => {
    const wrongSecret = make({ credentials: { accessKeyId: minio.accessKey, secretAccessKey: 'not-the-secret-at-all' } });
    const check = (e: Error): boolean => {
      assert.ok(e instanceof S3CredentialsError, e.message);
      // a HEAD (the bucket check) is refused with a status only
      assert.match(e.message, new RegExp(`S3 endpoint ${minio.endpoint} refused the credentials of access key id "${minio.accessKey}" \\((SignatureDoesNotMatch|HTTP 403)\\)`));
      assert.doesNotMatch(e.message, /not-the-secret-at-all/);
      return true;
    };
    await assert.rejects(wrongSecret.read('minio://mlpipeline/contract/x'), check);
    await assert.rejects(wrongSecret.write('minio://mlpipeline/contract/x', 'x'), check);
    await assert.rejects(wrongSecret.check(), check);
    const unknownKey = make({ credentials: { accessKeyId: 'nobody', secretAccessKey: 'whatever-secret' } });
    await assert.rejects(unknownKey.list('minio://mlpipeline/contract'), (e: Error) => e instanceof S3CredentialsError && /access key id "nobody" \(InvalidAccessKeyId\)/.test(e.message));
  });

  it('copies between stores: a local directory up to S3 and back down', async () => {
    const local = new LocalArtifactStore(join(dir, 'local'));
    await local.write(join(dir, 'local', 'm', 'model.joblib'), 'weights');
    await local.write(join(dir, 'local', 'm', 'sub', 'a.txt'), 'a');
    assert.equal(await copyAcross(local, join(dir, 'local', 'm'), store, 's3://mlpipeline/up/m'), 2);
    assert.deepEqual((await store.list('s3://mlpipeline/up/m')).map((o) => o.uri), ['s3://mlpipeline/up/m/model.joblib', 's3://mlpipeline/up/m/sub/a.txt']);
    assert.equal(await copyAcross(store, 's3://mlpipeline/up/m/model.joblib', local, join(dir, 'local', 'down.bin')), 1);
    assert.equal((await local.read(join(dir, 'local', 'down.bin'))).toString(), 'weights');
    assert.equal(await copyAcross(store, 's3://mlpipeline/up/none', local, join(dir, 'local', 'none')), 0);
  });

  it('downloads for localPath once per version of what is there', async () => {
    await store.write('s3://mlpipeline/cached/model.bin', 'v1');
    const p1 = await store.localPath('s3://mlpipeline/cached');
    const p2 = await store.localPath('s3://mlpipeline/cached');
    assert.equal(p1, p2);
    assert.ok(existsSync(join(p1, 'model.bin')));
    await store.write('s3://mlpipeline/cached/model.bin', 'v2-longer');
    const p3 = await store.localPath('s3://mlpipeline/cached');
    assert.equal(readFileSync(join(p3, 'model.bin'), 'utf8'), 'v2-longer');
  });
});
