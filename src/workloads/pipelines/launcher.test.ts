import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { S3ArtifactStore } from '../../artifacts/s3.js';
import { MinioServer, minioSkip } from '../../testing/minio.js';
import { buildExecutorInput } from './executor-input.js';
import type { Container, Volume } from '../../api/core-types.js';
import { PodLauncher, inPodLauncher, launcherAnnotation, launcherError, launcherPlan, launcherVolumes, podLauncherPlan, uriForLocalPath, type PodPathResolver } from './launcher.js';

const ei = (): ReturnType<typeof buildExecutorInput> => buildExecutorInput({
  inputArtifacts: {
    data: [{ name: 'data', uri: 'minio://mlpipeline/v2/p/r/produce/1/data' }],
    model: [{ name: 'model', uri: 's3://mlpipeline/v2/p/r/produce/1/model' }],
  },
  outputArtifacts: { out: { schemaTitle: 'system.Dataset' } },
  outputArtifactUri: 'minio://mlpipeline/v2/p/r/consume/2',
  outputParameterFiles: { Output: '/minio/mlpipeline/v2/p/r/consume/2/output_parameters/Output' },
  executorOutputFile: '/minio/mlpipeline/v2/p/r/consume/2/output_metadata.json',
});

describe('KFP\'s launcher on the node: the plan on a task Pod', () => {
  it('maps local paths under /minio and /s3 back to the URIs they stand for', () => {
    assert.equal(uriForLocalPath('/minio/b/k/x'), 'minio://b/k/x');
    assert.equal(uriForLocalPath('/s3/b/k/../y'), 's3://b/y');
    assert.equal(uriForLocalPath('/tmp/x'), undefined);
    assert.equal(uriForLocalPath('/minions/x'), undefined);
  });

  it('tells the node what goes where before and after the command, and gives the Pod emptyDirs', () => {
    const plan = launcherPlan(ei(), 'minio://mlpipeline/v2');
    assert.equal(plan.pipelineRoot, 'minio://mlpipeline/v2');
    assert.deepEqual(plan.downloads, [
      { name: 'data', uri: 'minio://mlpipeline/v2/p/r/produce/1/data', path: '/minio/mlpipeline/v2/p/r/produce/1/data' },
      { name: 'model', uri: 's3://mlpipeline/v2/p/r/produce/1/model', path: '/s3/mlpipeline/v2/p/r/produce/1/model' },
    ]);
    assert.deepEqual(plan.parameterFiles, [{ path: '/minio/mlpipeline/v2/p/r/consume/2/output_parameters/Output', uri: 'minio://mlpipeline/v2/p/r/consume/2/output_parameters/Output' }]);
    assert.deepEqual(plan.executorOutput, { path: '/minio/mlpipeline/v2/p/r/consume/2/output_metadata.json', uri: 'minio://mlpipeline/v2/p/r/consume/2/output_metadata.json' });
    assert.ok(plan.outputPaths.includes('/minio/mlpipeline/v2/p/r/consume/2/out'));
    assert.equal(plan.artifacts['out']?.artifacts[0]?.uri, 'minio://mlpipeline/v2/p/r/consume/2/out');
    const { volumes, mounts } = launcherVolumes();
    assert.deepEqual(volumes, [{ name: 'kfp-artifacts-minio', emptyDir: {} }, { name: 'kfp-artifacts-s3', emptyDir: {} }]);
    assert.deepEqual(mounts.map((m) => m.mountPath), ['/minio', '/s3']);
    // what the node reads back from the annotation
    const pod = { metadata: { annotations: { [launcherAnnotation]: JSON.stringify(plan) } } };
    assert.deepEqual(podLauncherPlan(pod), plan);
    assert.equal(podLauncherPlan({ metadata: {} }), undefined);
  });

  it('refuses an output file outside /minio and /s3, and a malformed plan, naming the field', () => {
    const bad = buildExecutorInput({ executorOutputFile: '/tmp/out.json' });
    assert.throws(() => launcherPlan(bad, 'minio://b/r'), /the output file \/tmp\/out.json is not under \/minio or \/s3/);
    const plan = launcherPlan(ei(), 'minio://mlpipeline/v2');
    const pod = (p: unknown): { metadata: { annotations: Record<string, string> } } => ({ metadata: { annotations: { [launcherAnnotation]: typeof p === 'string' ? p : JSON.stringify(p) } } });
    assert.throws(() => podLauncherPlan(pod('{')), /annotation pipelines.kubeflow.org\/launcher is not JSON/);
    assert.throws(() => podLauncherPlan(pod({ ...plan, pipelineRoot: '/local/root' })), /pipelineRoot \(an s3:\/\/ or minio:\/\/ URI\) is missing or malformed/);
    assert.throws(() => podLauncherPlan(pod({ ...plan, downloads: [{ uri: 3 }] })), /downloads is missing or malformed/);
    assert.throws(() => podLauncherPlan(pod({ ...plan, executorOutput: undefined })), /executorOutput is missing or malformed/);
  });

  it('puts the launcher inside a Pod for a real kubelet: an init container copies it, the command runs under it', () => {
    const plan = launcherPlan(ei(), 'minio://mlpipeline/v2');
    const spec: { volumes?: Volume[]; initContainers?: Container[]; containers: Container[] } = {
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [{ name: 'main', image: 'python:3.11', command: ['sh', '-c', 'echo $0'], args: ['hi'], env: [{ name: 'A', value: '1' }] }],
    };
    inPodLauncher(spec, plan, { image: 'registry.example/skiff:1', endpoint: 'http://minio.kubeflow:9000', region: 'us-east-1' });
    assert.deepEqual(spec.volumes?.map((v) => [v.name, Boolean(v.emptyDir)]), [['data', true], ['kfp-artifacts-minio', true], ['kfp-artifacts-s3', true], ['skiff-launcher', true]]);
    assert.deepEqual(spec.initContainers, [{ name: 'kfp-launcher', image: 'registry.example/skiff:1', command: ['skiff-launcher', 'copy', '/skiff-launcher/launch'], volumeMounts: [{ name: 'skiff-launcher', mountPath: '/skiff-launcher' }] }]);
    const main = spec.containers[0] as Container;
    // the command wrapped, the args as they were (they follow the command)
    assert.deepEqual(main.command, ['/skiff-launcher/launch', 'run', '--', 'sh', '-c', 'echo $0']);
    assert.deepEqual(main.args, ['hi']);
    assert.equal(main.image, 'python:3.11');
    const env = Object.fromEntries((main.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    assert.equal(env['A'], '1');
    assert.deepEqual(JSON.parse(String(env['SKIFF_LAUNCHER_PLAN'])), plan);
    assert.equal(env['SKIFF_S3_ENDPOINT'], 'http://minio.kubeflow:9000');
    assert.equal(env['SKIFF_S3_REGION'], 'us-east-1');
    // the credentials never in the Pod's spec: from KFP's Secret in the namespace
    assert.deepEqual(env['SKIFF_S3_ACCESS_KEY_ID'], { secretKeyRef: { name: 'mlpipeline-minio-artifact', key: 'accesskey' } });
    assert.deepEqual(env['SKIFF_S3_SECRET_ACCESS_KEY'], { secretKeyRef: { name: 'mlpipeline-minio-artifact', key: 'secretkey' } });
    assert.deepEqual(main.volumeMounts?.map((m) => m.mountPath), ['/minio', '/s3', '/skiff-launcher']);
    assert.equal(main.terminationMessagePolicy, 'FallbackToLogsOnError');
    // an image's entrypoint is not known here: nothing to wrap
    assert.throws(() => inPodLauncher({ containers: [{ name: 'main', image: 'x', args: ['a'] }] }, plan, { image: 'i', endpoint: 'http://e', region: 'r' }), /its container has no command/);
  });

  it('finds the launcher\'s error as the last line of a failed container\'s message, not the command\'s', () => {
    assert.equal(launcherError('training...\nskiff-launcher: uploading its output artifact m to minio://b/m: no bucket\n'), 'skiff-launcher: uploading its output artifact m to minio://b/m: no bucket');
    // the launcher's progress before a command that failed is not the error
    assert.equal(launcherError('skiff-launcher: downloaded input artifact data (1 object)\nTraceback ...\nValueError: x'), undefined);
    assert.equal(launcherError(undefined), undefined);
    // the command failed, not the launcher: the exit code says so already
    assert.equal(launcherError('Traceback ...\nValueError: x\nskiff-launcher: python3 exited with 1; nothing uploaded\n'), undefined);
    assert.equal(launcherError('skiff-launcher: sh was killed by SIGKILL; nothing uploaded'), undefined);
  });

  describe('with MinIO', { skip: minioSkip() }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-launcher-'));
    let minio: MinioServer;
    let s3: S3ArtifactStore;
    let launcher: PodLauncher;
    const others: S3ArtifactStore[] = [];
    /** a Pod's emptyDirs: /minio and /s3 in two folders */
    const vol = (m: string): string => join(dir, 'pod', 'volumes', `kfp-artifacts-${m}`);
    const paths: PodPathResolver = (p) => {
      const m = /^\/(minio|s3)(\/.*)?$/.exec(p);
      return m ? { host: join(vol(m[1] as string), m[2] ?? ''), base: vol(m[1] as string) } : undefined;
    };
    before(async () => {
      minio = await MinioServer.start({ buckets: ['mlpipeline'] });
      s3 = new S3ArtifactStore({ endpoint: minio.endpoint, root: 'minio://mlpipeline/v2', stagingDir: join(dir, 's3-staging'), cacheDir: join(dir, 's3-cache'), credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
      launcher = new PodLauncher(new LocalArtifactStore(join(dir, 'pod')), async (namespace, root) => {
        assert.equal(namespace, 'team-a');
        if (root === 'minio://mlpipeline/v2') return s3;
        const other = new S3ArtifactStore({ endpoint: minio.endpoint, root, stagingDir: join(dir, 's3-staging'), cacheDir: join(dir, 's3-cache'), credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
        others.push(other);
        return other;
      });
      mkdirSync(vol('minio'), { recursive: true });
      mkdirSync(vol('s3'), { recursive: true });
    });
    after(async () => {
      s3?.destroy();
      for (const o of others) o.destroy();
      await minio?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('downloads the inputs into the Pod\'s volumes and uploads its outputs, its parameters and its executor output', async () => {
      await s3.write('minio://mlpipeline/v2/p/r/produce/1/data', 'dataset bytes');
      await s3.write('minio://mlpipeline/v2/p/r/produce/1/model/conf/c.json', '{}');
      const plan = launcherPlan(ei(), 'minio://mlpipeline/v2');
      await launcher.download('team-a', plan, paths);
      assert.equal(readFileSync(join(vol('minio'), 'mlpipeline/v2/p/r/produce/1/data'), 'utf8'), 'dataset bytes');
      assert.equal(readFileSync(join(vol('s3'), 'mlpipeline/v2/p/r/produce/1/model/conf/c.json'), 'utf8'), '{}');
      assert.ok(existsSync(join(vol('minio'), 'mlpipeline/v2/p/r/consume/2/output_parameters')));
      // the component: a directory artifact, a parameter file, an executor output with metadata
      const out = join(vol('minio'), 'mlpipeline/v2/p/r/consume/2');
      mkdirSync(join(out, 'out', 'part'), { recursive: true });
      writeFileSync(join(out, 'out', 'part', '0.csv'), 'a,b');
      writeFileSync(join(out, 'output_parameters', 'Output'), '42');
      writeFileSync(join(out, 'output_metadata.json'), JSON.stringify({ artifacts: { out: { artifacts: [{ name: 'out', uri: 'minio://mlpipeline/v2/p/r/consume/2/out', metadata: { rows: 1 } }] } } }));
      await launcher.upload('team-a', plan, paths);
      assert.equal((await s3.read('minio://mlpipeline/v2/p/r/consume/2/out/part/0.csv')).toString(), 'a,b');
      assert.equal((await s3.read('minio://mlpipeline/v2/p/r/consume/2/output_parameters/Output')).toString(), '42');
      assert.match((await s3.read('minio://mlpipeline/v2/p/r/consume/2/output_metadata.json')).toString(), /"rows":1/);
    });

    it('fails for an input that is not there, and refuses a link out of the Pod\'s volume', async () => {
      const missing = launcherPlan(buildExecutorInput({ inputArtifacts: { data: [{ name: 'data', uri: 'minio://mlpipeline/v2/none' }] }, executorOutputFile: '/minio/mlpipeline/x/output_metadata.json' }), 'minio://mlpipeline/v2');
      await assert.rejects(launcher.download('team-a', missing, paths), /its input artifact data: minio:\/\/mlpipeline\/v2\/none does not exist/);
      const plan = launcherPlan(buildExecutorInput({ outputArtifacts: { leak: { schemaTitle: 'system.Dataset' } }, outputArtifactUri: 'minio://mlpipeline/v2/p/r/leaky/3', executorOutputFile: '/minio/mlpipeline/v2/p/r/leaky/3/output_metadata.json' }), 'minio://mlpipeline/v2');
      writeFileSync(join(dir, 'secret.txt'), 'node secret');
      mkdirSync(join(vol('minio'), 'mlpipeline/v2/p/r/leaky/3'), { recursive: true });
      symlinkSync(join(dir, 'secret.txt'), join(vol('minio'), 'mlpipeline/v2/p/r/leaky/3/leak'));
      await assert.rejects(launcher.upload('team-a', plan, paths), /\/minio\/mlpipeline\/v2\/p\/r\/leaky\/3\/leak leads out of the Pod's volume/);
      assert.equal(await s3.exists('minio://mlpipeline/v2/p/r/leaky/3/leak'), false);
    });

    it('names the object whose upload failed (its bucket removed while the Pod ran)', async () => {
      await minio.makeBuckets(['gone-bucket']);
      const plan = launcherPlan(buildExecutorInput({ outputArtifacts: { model: { schemaTitle: 'system.Model' } }, outputArtifactUri: 'minio://gone-bucket/v2/t/4', executorOutputFile: '/minio/gone-bucket/v2/t/4/output_metadata.json' }), 'minio://gone-bucket/v2');
      await launcher.download('team-a', plan, paths);
      const client = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
      await client.send(new DeleteBucketCommand({ Bucket: 'gone-bucket' }));
      client.destroy();
      mkdirSync(join(vol('minio'), 'gone-bucket/v2/t/4'), { recursive: true });
      writeFileSync(join(vol('minio'), 'gone-bucket/v2/t/4/model'), 'weights');
      await assert.rejects(launcher.upload('team-a', plan, paths), /^Error: uploading its output artifact model to minio:\/\/gone-bucket\/v2\/t\/4\/model: .*bucket does not exist/);
    });
  });
});
