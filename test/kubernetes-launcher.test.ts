// KFP's launcher on a cluster: `skiff up --kubeconfig` runs a pipeline whose root is in MinIO, its
// task Pods run on a node agent with a data directory of its own, and the agent does the launcher's
// part on its machine (the inputs downloaded into the Pod's emptyDir volumes before its containers,
// the outputs and the executor output uploaded after them); the Run controller reads the outputs from
// S3 and keeps no staging directory. An upload that fails (the bucket removed mid-run) fails the task
// with a message naming the object. Then the same with the launcher inside the Pods, as a real
// kubelet needs it (`artifacts.launcherImage`): an init container copies Skiff's launcher binary
// into the Pod and the command runs under it, with the namespace's mlpipeline-minio-artifact Secret;
// the agent only runs the Pod. Skipped, saying why, without the control plane or MinIO (and the
// last part without the launcher binary).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { DeleteBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { StoredObject } from '../src/api/meta.js';
import { KubeCluster, kubeClusterSkipReason } from '../src/testing/kube-cluster.js';
import { MinioServer, minioSkip } from '../src/testing/minio.js';
import { launcherBinary, launcherSkip } from '../src/testing/launcher-binary.js';
import { kubectlBin, repoRoot, runCli } from './harness.js';
import { type Daemon, eventually, removeDataDir, skiffDaemon, stopDaemon } from './kube-daemons.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const skip = kubeClusterSkipReason() ?? (minioSkip() || undefined) ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`) ?? (existsSync(python) ? undefined : 'no .venv (scripts/setup.sh makes it): the kfp SDK compiles a pipeline');
const run = promisify(execFile);
const pipeline = join(repoRoot, 'test', 'fixtures', 's3', 's3_pipeline.yaml');
const runName = (out: string): string => /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(out)?.[1] ?? '';

/** every directory under `dir` (recursively) whose name is `name` */
function findDirs(dir: string, name: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const p = join(dir, e.name);
    if (e.name === name) out.push(p);
    out.push(...findDirs(p, name));
  }
  return out;
}

describe('KFP\'s launcher on a node agent: pipeline artifacts in S3 for task Pods on another node', { skip }, () => {
  let cluster: KubeCluster;
  let minio: MinioServer;
  let s3: S3Client;
  let up: Daemon | undefined;
  let agent: Daemon | undefined;
  const dirs: string[] = [];
  const node = 'launcher-agent';
  let upDir = '';
  let agentDir = '';
  let agentConfig = '';
  let inPodConfig = '';
  const launcherImage = 'registry.example/skiff:test';
  const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 60_000 })).stdout;
  const getJson = async <T = StoredObject>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
  const url = (): string => /ready at (http:\/\/\S+)/.exec(up?.output() ?? '')?.[1] ?? '';
  // through Skiff's API, which shows a run's task records (RunTasks) in its status.tasks
  const finished = (name: string): Promise<StoredObject> => eventually(`run ${name} to finish`, async () => {
    const r = await (await fetch(`${url()}/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${name}`)).json() as StoredObject;
    return ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(r.status?.state) ? r : undefined;
  }, 240_000, 500);

  /** a run of a task that writes its dataset after a pause, into a bucket the test removes meanwhile */
  const submitSlow = async (bucket: string): Promise<string> => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-launcher-slow-'));
    dirs.push(dir);
    const compiled = join(dir, 'slow.yaml');
    execFileSync(python, [join(repoRoot, 'test', 'fixtures', 's3', 'slow_produce.py'), compiled]);
    const submitted = await runCli(['run', compiled, '--pipeline-root', `minio://${bucket}/v2`, '-p', 'pause=8'], { SKIFF_SERVER: url() });
    assert.equal(submitted.code, 0, submitted.stdout + submitted.stderr);
    return runName(submitted.stdout);
  };

  before(async () => {
    minio = await MinioServer.start({ buckets: ['mlpipeline', 'doomed', 'doomed-in-pod'] });
    s3 = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
    cluster = await KubeCluster.start();
    upDir = mkdtempSync(join(tmpdir(), 'skiff-kube-launcher-up-'));
    agentDir = mkdtempSync(join(tmpdir(), 'skiff-kube-launcher-agent-'));
    const cfgDir = mkdtempSync(join(tmpdir(), 'skiff-kube-launcher-cfg-'));
    agentConfig = join(cfgDir, 'agent.yaml');
    inPodConfig = join(cfgDir, 'in-pod.yaml');
    dirs.push(upDir, agentDir, cfgDir);
    // the same S3 server for both; the credentials are the config's (no Secret in the namespace)
    const config = join(cfgDir, 'skiff.yaml');
    writeFileSync(config, JSON.stringify({ artifacts: { s3: { endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey } } }));
    // the agent's image of the launcher: Skiff's image has the binary on its PATH, as this directory does
    writeFileSync(agentConfig, JSON.stringify({
      artifacts: { s3: { endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey } },
      environments: [{ image: `${launcherImage.split(':')[0]}:*`, environment: { path: [dirname(launcherBinary())] } }],
    }));
    writeFileSync(inPodConfig, JSON.stringify({ artifacts: { s3: { endpoint: minio.endpoint }, launcherImage } }));
    up = skiffDaemon(['up', '--port', '0', '--data-dir', upDir, '--kubeconfig', cluster.kubeconfig, '--config', config], /ready at http/);
    agent = skiffDaemon(['node', '--kubeconfig', cluster.kubeconfig, '--name', node, '--data-dir', agentDir, '--client-ca-file', cluster.caFile, '--config', agentConfig], new RegExp(`Node ${node} is ready`));
    await Promise.all([up.ready, agent.ready]);
  }, { timeout: 300_000 });

  after(async () => {
    await stopDaemon(agent);
    await stopDaemon(up);
    await cluster?.stop();
    s3?.destroy();
    await minio?.stop();
    for (const d of dirs) removeDataDir(d);
  });

  it('runs an artifact and an output parameter between two tasks on the agent, through MinIO, with no staging on the controller\'s machine', { timeout: 360_000 }, async () => {
    const submitted = await runCli(['run', pipeline, '--pipeline-root', 'minio://mlpipeline/v2/artifacts', '-p', 'text=bytes through the node'], { SKIFF_SERVER: url() });
    assert.equal(submitted.code, 0, submitted.stdout + submitted.stderr);
    const name = runName(submitted.stdout);
    const r = await finished(name);
    assert.equal(r.status?.state, 'SUCCEEDED', JSON.stringify(r.status));
    assert.equal(r.status?.pipelineRoot, 'minio://mlpipeline/v2/artifacts');
    const uid = r.metadata.uid;

    // both task Pods ran on the agent, with emptyDirs at /minio and /s3 and the launcher's plan
    const pods = await getJson<{ items: StoredObject[] }>('pods', '-l', `pipelines.kubeflow.org/run=${name}`);
    assert.equal(pods.items.length, 2);
    for (const p of pods.items) {
      assert.equal(p.spec?.nodeName, node);
      assert.equal(p.status?.phase, 'Succeeded');
      const vols = (p.spec?.volumes ?? []) as { name: string; emptyDir?: object; hostPath?: object }[];
      assert.deepEqual(vols.filter((v) => v.name.startsWith('kfp-artifacts-')).map((v) => [v.name, Boolean(v.emptyDir), Boolean(v.hostPath)]), [['kfp-artifacts-minio', true, false], ['kfp-artifacts-s3', true, false]]);
      const plan = JSON.parse(p.metadata.annotations?.['pipelines.kubeflow.org/launcher'] ?? '{}') as { pipelineRoot?: string; executorOutput?: { uri: string } };
      assert.equal(plan.pipelineRoot, 'minio://mlpipeline/v2/artifacts');
      assert.match(plan.executorOutput?.uri ?? '', new RegExp(`^minio://mlpipeline/v2/artifacts/s3-artifacts/${uid}/\\w+/[0-9a-f]+/output_metadata\\.json$`));
    }
    const consumePod = pods.items.find((p) => p.metadata.annotations?.['pipelines.kubeflow.org/task-path'] === 'consume') as StoredObject;

    // the artifact went through MinIO: produce's dataset and model, consume read them at its /minio paths
    const tasks = (r.status?.tasks ?? {}) as Record<string, { outputs?: { artifacts?: Record<string, { uri: string; metadata: Record<string, unknown> }[]>; parameters?: Record<string, unknown> } }>;
    const dataset = tasks['produce']?.outputs?.artifacts?.['data']?.[0];
    assert.ok(dataset, JSON.stringify(tasks));
    assert.match(dataset.uri, new RegExp(`^minio://mlpipeline/v2/artifacts/s3-artifacts/${uid}/produce/[0-9a-f]+/data$`));
    // its metadata came from the executor output the node uploaded
    assert.equal(dataset.metadata['words'], 4);
    // the output parameter, read by the controller from S3
    assert.equal(tasks['consume']?.outputs?.parameters?.['Output'], `${dataset.uri} at /minio/${dataset.uri.slice('minio://'.length)}: bytes through the node / BYTES THROUGH THE NODE / 22`);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'mlpipeline', Prefix: `v2/artifacts/s3-artifacts/${uid}/` }));
    const keys = (listed.Contents ?? []).map((o) => (o.Key ?? '').replace(/^.*\/(produce|consume)\/[0-9a-f]+\//, '$1/')).sort();
    for (const k of ['produce/data', 'produce/model/conf/size.txt', 'produce/model/weights.txt', 'produce/output_metadata.json', 'consume/output_metadata.json']) assert.ok(keys.includes(k), `${k} in ${keys.join(', ')}`);
    const obj = await s3.send(new GetObjectCommand({ Bucket: 'mlpipeline', Key: dataset.uri.slice('minio://mlpipeline/'.length) }));
    assert.equal(await obj.Body?.transformToString(), 'bytes through the node');

    // the agent did the launcher's part, with its events on the Pod
    const events = await getJson<{ items: { reason: string; message: string; source?: { component?: string } }[] }>('events', '--field-selector', `involvedObject.name=${consumePod.metadata.name}`);
    const reasons = events.items.map((e) => e.reason);
    for (const want of ['DownloadingInputs', 'DownloadedInputs', 'UploadingOutputs', 'UploadedOutputs']) assert.ok(reasons.includes(want), `${want} in ${reasons.join(', ')}`);
    // no staging directory on the controller's machine; none left on the agent's either once the Pods are gone
    assert.deepEqual(findDirs(upDir, '.artifact-staging'), []);
    for (const p of pods.items) assert.deepEqual(findDirs(upDir, p.metadata.name), [], `nothing of ${p.metadata.name} under the controller's data dir`);
  });

  it('fails a task whose upload fails (its bucket removed mid-run), naming the object', { timeout: 360_000 }, async () => {
    const name = await submitSlow('doomed');
    // the task's container is running (its inputs step passed the bucket check): the bucket goes
    await eventually('the produce Pod running', async () => {
      const pods = await getJson<{ items: StoredObject[] }>('pods', '-l', `pipelines.kubeflow.org/run=${name}`);
      return pods.items.some((p) => p.status?.phase === 'Running' && (p.status?.containerStatuses as { state?: { running?: object } }[] | undefined)?.[0]?.state?.running);
    }, 180_000, 200);
    await s3.send(new DeleteBucketCommand({ Bucket: 'doomed' }));
    const r = await finished(name);
    assert.equal(r.status?.state, 'FAILED', JSON.stringify(r.status));
    assert.match(r.status?.message ?? '', /task produce failed: pod Failed \(ArtifactUploadFailed: uploading its output artifact data to minio:\/\/doomed\/v2\/slow-produce\/[0-9a-f-]+\/produce\/[0-9a-f]+\/data: .*bucket does not exist/);
    const pods = await getJson<{ items: StoredObject[] }>('pods', '-l', `pipelines.kubeflow.org/run=${name}`);
    assert.equal(pods.items[0]?.status?.phase, 'Failed');
    assert.equal(pods.items[0]?.status?.reason, 'ArtifactUploadFailed');
  });

  describe('with the launcher inside the Pods (artifacts.launcherImage), as real kubelets need it', { skip: launcherSkip() || undefined }, () => {
    before(async () => {
      // the same Skiff, now putting the launcher into its task Pods; the credentials are the namespace's
      await stopDaemon(up);
      up = skiffDaemon(['up', '--port', '0', '--data-dir', upDir, '--kubeconfig', cluster.kubeconfig, '--config', inPodConfig], /ready at http/);
      await up.ready;
      await kubectl('create', 'secret', 'generic', 'mlpipeline-minio-artifact', `--from-literal=accesskey=${minio.accessKey}`, `--from-literal=secretkey=${minio.secretKey}`);
    }, { timeout: 180_000 });

    it('runs the pipeline with the launcher copied into each task Pod by its init container; the agent only runs the Pods', { timeout: 360_000 }, async () => {
      const submitted = await runCli(['run', pipeline, '--pipeline-root', 'minio://mlpipeline/v2/in-pod', '-p', 'text=bytes through the pod'], { SKIFF_SERVER: url() });
      assert.equal(submitted.code, 0, submitted.stdout + submitted.stderr);
      const name = runName(submitted.stdout);
      const r = await finished(name);
      assert.equal(r.status?.state, 'SUCCEEDED', JSON.stringify(r.status));
      const pods = await getJson<{ items: StoredObject[] }>('pods', '-l', `pipelines.kubeflow.org/run=${name}`);
      assert.equal(pods.items.length, 2);
      for (const p of pods.items) {
        assert.equal(p.spec?.nodeName, node);
        assert.equal(p.metadata.annotations?.['pipelines.kubeflow.org/launcher'], undefined, 'no plan for the agent');
        const init = (p.spec?.initContainers ?? []) as { name: string; image: string; command: string[] }[];
        assert.deepEqual(init.map((c) => [c.name, c.image, c.command.join(' ')]), [['kfp-launcher', launcherImage, 'skiff-launcher copy /skiff-launcher/launch']]);
        const main = (p.spec?.containers as { command: string[]; env: { name: string; value?: string; valueFrom?: object }[] }[])[0];
        assert.deepEqual(main?.command.slice(0, 3), ['/skiff-launcher/launch', 'run', '--']);
        // the credentials are not in the Pod's spec
        for (const n of ['SKIFF_S3_ACCESS_KEY_ID', 'SKIFF_S3_SECRET_ACCESS_KEY']) {
          const e = main?.env.find((x) => x.name === n);
          assert.ok(e?.valueFrom && e.value === undefined, `${n} from the Secret: ${JSON.stringify(e)}`);
        }
        const initStatus = (p.status?.initContainerStatuses as { state?: { terminated?: { exitCode: number } } }[] | undefined)?.[0];
        assert.equal(initStatus?.state?.terminated?.exitCode, 0);
      }
      const tasks = (r.status?.tasks ?? {}) as Record<string, { outputs?: { artifacts?: Record<string, { uri: string; metadata: Record<string, unknown> }[]>; parameters?: Record<string, unknown> } }>;
      const dataset = tasks['produce']?.outputs?.artifacts?.['data']?.[0];
      assert.ok(dataset, JSON.stringify(tasks));
      assert.equal(dataset.metadata['words'], 4);
      assert.equal(tasks['consume']?.outputs?.parameters?.['Output'], `${dataset.uri} at /minio/${dataset.uri.slice('minio://'.length)}: bytes through the pod / BYTES THROUGH THE POD / 21`);
      const obj = await s3.send(new GetObjectCommand({ Bucket: 'mlpipeline', Key: dataset.uri.slice('minio://mlpipeline/'.length) }));
      assert.equal(await obj.Body?.transformToString(), 'bytes through the pod');
      // the agent did nothing of the launcher's
      const consumePod = pods.items.find((p) => p.metadata.annotations?.['pipelines.kubeflow.org/task-path'] === 'consume') as StoredObject;
      const events = await getJson<{ items: { reason: string }[] }>('events', '--field-selector', `involvedObject.name=${consumePod.metadata.name}`);
      const reasons = events.items.map((e) => e.reason);
      for (const agentsOwn of ['DownloadingInputs', 'UploadingOutputs']) assert.ok(!reasons.includes(agentsOwn), `no ${agentsOwn} in ${reasons.join(', ')}`);
    });

    it('fails a task whose upload fails inside the Pod, with the launcher\'s message', { timeout: 360_000 }, async () => {
      const name = await submitSlow('doomed-in-pod');
      // the launcher checked the bucket and started the command (its log says so): the bucket goes
      await eventually('the produce Pod\'s command started', async () => {
        const pods = await getJson<{ items: StoredObject[] }>('pods', '-l', `pipelines.kubeflow.org/run=${name}`);
        const pod = pods.items.find((p) => p.status?.phase === 'Running');
        return pod && /^skiff-launcher: started /m.test(await kubectl('logs', pod.metadata.name, '-c', 'main'));
      }, 180_000, 200);
      await s3.send(new DeleteBucketCommand({ Bucket: 'doomed-in-pod' }));
      const r = await finished(name);
      assert.equal(r.status?.state, 'FAILED', JSON.stringify(r.status));
      assert.match(r.status?.message ?? '', /task produce failed: container exited with code 1 \(Error\): skiff-launcher: uploading its output artifact data to minio:\/\/doomed-in-pod\/v2\/slow-produce\/[0-9a-f-]+\/produce\/[0-9a-f]+\/data: .*bucket does not exist/i);
    });
  });
});
