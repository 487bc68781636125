import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { S3ArtifactStore } from '../../artifacts/s3.js';
import { MinioServer, minioSkip } from '../../testing/minio.js';
import { buildExecutorInput } from './executor-input.js';
import { TaskStaging } from './staging.js';

describe('task staging for S3 roots', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-staging-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const local = new LocalArtifactStore(join(dir, 'root'));
  const staging = new TaskStaging(local, (ns) => join(dir, 'root', ns), false);

  it('keeps each Pod\'s files in its namespace\'s part of the root, shown at /minio and /s3', () => {
    const d = staging.dir('team-a', 'run-1-train-abc');
    assert.equal(d, join(dir, 'root', 'team-a', '.artifact-staging', 'run-1-train-abc'));
    const { volumes, mounts } = staging.podVolumes(d);
    assert.deepEqual(volumes.map((v) => [v.name, v.hostPath?.path]), [['kfp-artifacts-minio', join(d, 'minio')], ['kfp-artifacts-s3', join(d, 's3')]]);
    assert.deepEqual(mounts.map((m) => [m.name, m.mountPath]), [['kfp-artifacts-minio', '/minio'], ['kfp-artifacts-s3', '/s3']]);
    assert.equal(staging.hostPath(d, '/minio/b/k/model'), join(d, 'minio', 'b', 'k', 'model'));
    assert.equal(staging.hostPath(d, '/s3/b/../../../etc/passwd'), undefined);
    assert.equal(staging.hostPath(d, '/s3/b/x/../k'), join(d, 's3', 'b', 'k'));
    assert.equal(staging.hostPath(d, '/tmp/x'), undefined);
    assert.equal(staging.hostPath(d, '/minions/x'), undefined);
  });

  it('finds a made Pod\'s staging directory from its volumes, as another replica with another root made it', () => {
    const other = new TaskStaging(local, (ns) => join(dir, 'other-replica', 'root', ns), false);
    const d = other.dir('team-a', 'run-1-train-abc');
    const pod = { metadata: { name: 'run-1-train-abc' }, spec: { volumes: other.podVolumes(d).volumes } };
    assert.equal(staging.dirOf(pod), d);
    // only the directory podVolumes makes for a Pod of that name
    assert.equal(staging.dirOf({ ...pod, metadata: { name: 'another-pod' } }), undefined);
    assert.equal(staging.dirOf({ metadata: pod.metadata, spec: { volumes: [{ name: 'kfp-artifacts-minio', hostPath: { path: '/etc/minio' } }] } }), undefined);
    assert.equal(staging.dirOf({ metadata: pod.metadata, spec: {} }), undefined);
  });

  it('reads what the Pod wrote only inside its own files', async () => {
    const d = staging.dir('default', 'p1');
    mkdirSync(join(d, 'minio', 'b', 't'), { recursive: true });
    writeFileSync(join(d, 'minio', 'b', 't', 'out'), 'value');
    assert.equal(await staging.read(d, '/minio/b/t/out'), 'value');
    assert.equal(await staging.read(d, '/minio/b/t/none'), undefined);
    writeFileSync(join(dir, 'secret.txt'), 'host secret');
    symlinkSync(join(dir, 'secret.txt'), join(d, 'minio', 'b', 't', 'sneaky'));
    await assert.rejects(staging.read(d, '/minio/b/t/sneaky'), /leads out of the task's own files/);
    await staging.remove(d);
    assert.equal(existsSync(d), false);
  });

  describe('with MinIO', { skip: minioSkip() }, () => {
    let minio: MinioServer;
    let s3: S3ArtifactStore;
    before(async () => {
      minio = await MinioServer.start({ buckets: ['mlpipeline'] });
      s3 = new S3ArtifactStore({ endpoint: minio.endpoint, root: 'minio://mlpipeline/v2', stagingDir: join(dir, 's3-staging'), cacheDir: join(dir, 's3-cache'), credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
    });
    after(async () => {
      s3?.destroy();
      await minio?.stop();
    });

    it('downloads the inputs before the Pod, makes its output folders, and uploads its outputs after', async () => {
      await s3.write('minio://mlpipeline/v2/p/r/produce/1/data', 'dataset bytes');
      await s3.write('minio://mlpipeline/v2/p/r/produce/1/model/weights.bin', 'w');
      await s3.write('minio://mlpipeline/v2/p/r/produce/1/model/conf/c.json', '{}');
      const ei = buildExecutorInput({
        inputArtifacts: {
          data: [{ name: 'data', uri: 'minio://mlpipeline/v2/p/r/produce/1/data' }],
          model: [{ name: 'model', uri: 's3://mlpipeline/v2/p/r/produce/1/model' }],
        },
        outputArtifacts: { out: { schemaTitle: 'system.Dataset' } },
        outputArtifactUri: 'minio://mlpipeline/v2/p/r/consume/2',
        outputParameterFiles: { Output: '/minio/mlpipeline/v2/p/r/consume/2/output_parameters/Output' },
        executorOutputFile: '/minio/mlpipeline/v2/p/r/consume/2/output_metadata.json',
      });
      const d = staging.dir('default', 'consume-pod');
      await staging.stageInputs(s3, d, ei as never);
      assert.equal(readFileSync(join(d, 'minio/mlpipeline/v2/p/r/produce/1/data'), 'utf8'), 'dataset bytes');
      assert.equal(readFileSync(join(d, 's3/mlpipeline/v2/p/r/produce/1/model/conf/c.json'), 'utf8'), '{}');
      assert.ok(existsSync(join(d, 'minio/mlpipeline/v2/p/r/consume/2/output_parameters')));
      // the component writes its output, a directory here
      mkdirSync(join(d, 'minio/mlpipeline/v2/p/r/consume/2/out/part'), { recursive: true });
      writeFileSync(join(d, 'minio/mlpipeline/v2/p/r/consume/2/out/part/0.csv'), 'a,b');
      await staging.upload(s3, d, '/minio/mlpipeline/v2/p/r/consume/2/out', 'minio://mlpipeline/v2/p/r/consume/2/out');
      assert.equal((await s3.read('minio://mlpipeline/v2/p/r/consume/2/out/part/0.csv')).toString(), 'a,b');
      // a link out of the Pod's files is refused, not followed
      symlinkSync(join(dir, 'secret.txt'), join(d, 'minio/mlpipeline/v2/p/r/consume/2/leak'));
      await assert.rejects(staging.upload(s3, d, '/minio/mlpipeline/v2/p/r/consume/2/leak', 'minio://mlpipeline/v2/leak'), /leads out of the task's own files/);
      assert.equal(await s3.exists('minio://mlpipeline/v2/leak'), false);
    });

    it('fails the task for an input that is not there', async () => {
      const ei = buildExecutorInput({ inputArtifacts: { data: [{ name: 'data', uri: 'minio://mlpipeline/v2/none' }] }, executorOutputFile: '/minio/mlpipeline/x/output_metadata.json' });
      await assert.rejects(staging.stageInputs(s3, staging.dir('default', 'p3'), ei as never), /its input artifact data: minio:\/\/mlpipeline\/v2\/none does not exist/);
    });

    it('refuses an isolated Pod\'s output written outside /minio and /s3', async () => {
      const isolated = new TaskStaging(local, (ns) => join(dir, 'root', ns), true);
      await assert.rejects(isolated.upload(s3, isolated.dir('default', 'p4'), '/tmp/out', 'minio://mlpipeline/v2/x'), /outside \/minio and \/s3/);
    });
  });
});
