// KFP's launcher in the kubelet of a node (what `skiff node` runs), without a cluster: the local
// substrate's kubelet over an SQLite store with the pipelines' PodLauncher and a real MinIO. A Pod
// that carries a launcher plan finds its input in its emptyDir before its command runs, its output is
// in MinIO before the Pod is reported Succeeded, and an upload that fails fails the Pod naming the
// object. Skipped, saying so, without MinIO.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../src/api/core-types.js';
import { Kinds, defaultRegistry } from '../src/api/index.js';
import type { StoredObject } from '../src/api/meta.js';
import { LocalArtifactStore } from '../src/artifacts/local.js';
import { S3Stores } from '../src/artifacts/s3.js';
import { Manager } from '../src/control/controller.js';
import { EventRecorder } from '../src/control/events.js';
import { Client } from '../src/store/client.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { Environments } from '../src/substrate/local/environments.js';
import { LocalSubstrate } from '../src/substrate/local/index.js';
import { MinioServer, minioSkip } from '../src/testing/minio.js';
import { buildExecutorInput } from '../src/workloads/pipelines/executor-input.js';
import { PodLauncher, launcherAnnotation, launcherPlan, launcherVolumes, nodeLauncher } from '../src/workloads/pipelines/launcher.js';
import { defaultPath } from '../src/server/main.js';
import { eventually } from './kube-daemons.js';

describe('the node\'s kubelet as a task Pod\'s launcher', { skip: minioSkip() }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-node-launcher-'));
  let minio: MinioServer;
  let stores: S3Stores;
  let store: SqliteStore;
  let client: Client;
  let manager: Manager;
  let substrate: LocalSubstrate;
  const node = 'launcher-node';

  before(async () => {
    minio = await MinioServer.start({ buckets: ['mlpipeline', 'vanishing'] });
    stores = new S3Stores({ endpoint: minio.endpoint, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } }, { stagingDir: join(dir, 'staging'), cacheDir: join(dir, 'cache') });
    store = new SqliteStore({ file: ':memory:' });
    client = new Client(store, defaultRegistry(), []);
    manager = new Manager(client);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } as StoredObject);
    const launcher = new PodLauncher(new LocalArtifactStore(join(dir, 'node', 'pods')), async (_ns, root) => stores.get(root));
    substrate = new LocalSubstrate({
      client, recorder: new EventRecorder(client, 'kubelet'), manager, dataDir: join(dir, 'node'), nodeName: node,
      environments: new Environments([], { path: defaultPath() }), version: 'test', podArtifacts: nodeLauncher(launcher),
    });
    await substrate.start();
    manager.start();
  });

  after(async () => {
    await manager?.stop();
    await substrate?.stop();
    stores?.destroy();
    await minio?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** a task Pod as the Run controller makes it on a cluster: emptyDirs, the plan, a shell command */
  const taskPod = (name: string, root: string, script: string): StoredObject => {
    const taskRoot = `${root}/p/r/${name}/1`;
    const ei = buildExecutorInput({
      inputArtifacts: { data: [{ name: 'data', uri: 'minio://mlpipeline/v2/p/r/produce/0/data' }] },
      outputArtifacts: { out: { schemaTitle: 'system.Dataset' } },
      outputArtifactUri: taskRoot,
      executorOutputFile: `/${taskRoot.replace('://', '/')}/output_metadata.json`,
    });
    const { volumes, mounts } = launcherVolumes();
    return {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'default', annotations: { [launcherAnnotation]: JSON.stringify(launcherPlan(ei, root)) } },
      spec: { nodeName: node, restartPolicy: 'Never', volumes, containers: [{ name: 'main', image: 'shell', command: ['sh', '-c', script], volumeMounts: mounts }] },
    } as unknown as StoredObject;
  };
  const ended = (name: string): Promise<Pod & StoredObject> => eventually(`pod ${name} to end`, async () => {
    const p = await client.get<Pod>(Kinds.Pod, { namespace: 'default', name });
    return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
  }, 120_000, 200);

  it('downloads the input before the command and uploads the output before reporting Succeeded', { timeout: 180_000 }, async () => {
    await stores.get('minio://mlpipeline/v2').write('minio://mlpipeline/v2/p/r/produce/0/data', 'from s3');
    const out = 'minio://mlpipeline/v2/p/r/copy/1/out';
    // the command reads the input at its /minio path and writes its output there
    await client.create(taskPod('copy', 'minio://mlpipeline/v2', 'tr a-z A-Z < /minio/mlpipeline/v2/p/r/produce/0/data > /minio/mlpipeline/v2/p/r/copy/1/out'));
    const pod = await ended('copy');
    assert.equal(pod.status?.phase, 'Succeeded', JSON.stringify(pod.status));
    assert.equal((await stores.get('minio://mlpipeline/v2').read(out)).toString(), 'FROM S3');
    const events = (await client.list(Kinds.Event, { namespace: 'default' })).items as (StoredObject & { reason: string; involvedObject: { name: string } })[];
    const reasons = events.filter((e) => e.involvedObject.name === 'copy').map((e) => e.reason);
    for (const r of ['DownloadingInputs', 'DownloadedInputs', 'Started', 'UploadingOutputs', 'UploadedOutputs']) assert.ok(reasons.includes(r), `${r} in ${reasons.join(', ')}`);
  });

  it('fails the Pod when an input is missing, before its command runs', { timeout: 180_000 }, async () => {
    await stores.get('minio://mlpipeline/v2').remove('minio://mlpipeline/v2/p/r/produce/0/data');
    await client.create(taskPod('no-input', 'minio://mlpipeline/v2', 'echo ran > /minio/mlpipeline/v2/p/r/no-input/1/out'));
    const pod = await ended('no-input');
    assert.equal(pod.status?.phase, 'Failed');
    assert.equal(pod.status?.reason, 'ArtifactDownloadFailed');
    assert.match(pod.status?.message ?? '', /its input artifact data: minio:\/\/mlpipeline\/v2\/p\/r\/produce\/0\/data does not exist/);
    assert.equal(await stores.get('minio://mlpipeline/v2').exists('minio://mlpipeline/v2/p/r/no-input/1/out'), false, 'the command never ran');
  });

  it('fails the Pod whose upload fails, naming the object', { timeout: 180_000 }, async () => {
    await stores.get('minio://mlpipeline/v2').write('minio://mlpipeline/v2/p/r/produce/0/data', 'again');
    // its root's bucket is there when it starts, gone when its command has written the output
    const root = 'minio://vanishing/v2';
    const admin = stores.get(root);
    await client.create(taskPod('lost', root, 'echo out > /minio/vanishing/v2/p/r/lost/1/out; sleep 3'));
    await eventually('the command running', async () => (await client.get<Pod>(Kinds.Pod, { namespace: 'default', name: 'lost' })).status?.phase === 'Running', 60_000, 100);
    const { S3Client, DeleteBucketCommand } = await import('@aws-sdk/client-s3');
    const s3 = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
    await s3.send(new DeleteBucketCommand({ Bucket: 'vanishing' }));
    s3.destroy();
    const pod = await ended('lost');
    assert.equal(pod.status?.phase, 'Failed');
    assert.equal(pod.status?.reason, 'ArtifactUploadFailed');
    assert.match(pod.status?.message ?? '', /^uploading its output artifact out to minio:\/\/vanishing\/v2\/p\/r\/lost\/1\/out: .*bucket does not exist/);
    assert.equal(await admin.exists('minio://vanishing/v2/p/r/lost/1/out').catch(() => false), false);
  });
});
