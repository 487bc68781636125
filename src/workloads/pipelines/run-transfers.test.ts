// The Run controller with a root in S3: a task's downloads and uploads run beside the controller, so
// one held transfer does not stop other runs. The S3 server is a store in memory whose reads and
// writes a test holds and releases; the node agent plays a task Pod by reading and writing its
// staging directory where the Pod's /minio volume points.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { Kinds } from '../../api/index.js';
import type { Run, RunTask, TaskStatus } from '../../api/pipelines.js';
import type { PipelineSpec } from '../../api/kfp/ir.js';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { parseS3Uri } from '../../artifacts/s3-uri.js';
import { ArtifactNotFoundError, type ObjectInfo } from '../../artifacts/store.js';
import { Manager } from '../../control/controller.js';
import { sleep } from '../../util/timers.js';
import { TestEnv } from '../../testing/fake-agent.js';
import type { RootStore, RootStores } from './artifact-roots.js';
import { localPathForUri, type ArtifactList, type ExecutorInput } from './executor-input.js';
import { RunAnnotations, addRunController } from './run-controller.js';
import { PodLauncher, launcherAnnotation, podLauncherPlan, type PodPathResolver } from './launcher.js';
import { makeRun } from './testing.js';

/** A gate: `wait()` passes at once while open, else when `open()` is called. */
class Gate {
  private waiters: (() => void)[] = [];
  private held = false;
  /** calls that reached the gate, and those that went through */
  calls = 0;
  passed = 0;

  close(): void {
    this.held = true;
  }

  open(): void {
    this.held = false;
    for (const w of this.waiters.splice(0)) w();
  }

  async wait(): Promise<void> {
    this.calls++;
    if (this.held) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.passed++;
  }
}

/** the S3 server: objects by `bucket/key`, s3:// and minio:// naming the same ones */
class MemoryS3 implements RootStore {
  readonly root = 'minio://mlpipeline/v2';
  readonly objects = new Map<string, Buffer>();
  /** downloads (reading an object) and uploads (writing one) wait here */
  readonly reads = new Gate();
  readonly writes = new Gate();

  private key(uri: string): string {
    const loc = parseS3Uri(uri);
    if (!loc) throw new Error(`not an S3 URI: ${uri}`);
    return `${loc.bucket}/${loc.key}`.replace(/\/+$/, '');
  }

  handles(uri: string): boolean {
    return parseS3Uri(uri)?.bucket === 'mlpipeline';
  }

  async check(): Promise<void> {}

  async stat(uri: string): Promise<ObjectInfo | undefined> {
    const list = await this.list(uri);
    if (list.length === 0) return undefined;
    const one = list.length === 1 && list[0]?.uri === uri.replace(/\/+$/, '');
    return one ? list[0] : { uri, size: 0, directory: true, modified: new Date(0) };
  }

  async exists(uri: string): Promise<boolean> {
    return (await this.stat(uri)) !== undefined;
  }

  async read(uri: string): Promise<Buffer> {
    const b = await this.readIfExists(uri);
    if (!b) throw new ArtifactNotFoundError(uri);
    return b;
  }

  async readIfExists(uri: string): Promise<Buffer | undefined> {
    return this.objects.get(this.key(uri));
  }

  async openRead(uri: string): Promise<Readable> {
    await this.reads.wait();
    return Readable.from([await this.read(uri)]);
  }

  async write(uri: string, data: Buffer | string): Promise<void> {
    this.objects.set(this.key(uri), Buffer.from(data));
  }

  async writeFrom(uri: string, source: Readable): Promise<void> {
    await this.writes.wait();
    const parts: Buffer[] = [];
    for await (const chunk of source) parts.push(Buffer.from(chunk as Buffer));
    await this.write(uri, Buffer.concat(parts));
  }

  async list(uri: string): Promise<ObjectInfo[]> {
    const k = this.key(uri);
    const scheme = uri.slice(0, uri.indexOf('://'));
    const bucket = k.split('/')[0] ?? '';
    return [...this.objects.entries()]
      .filter(([o]) => o === k || o.startsWith(`${k}/`))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([o, b]) => ({ uri: `${scheme}://${bucket}/${o.slice(bucket.length + 1)}`, size: b.length, directory: false, modified: new Date(0) }));
  }

  async copy(from: string, to: string): Promise<void> {
    for (const o of await this.list(from)) await this.write(`${to}${o.uri.slice(from.replace(/\/+$/, '').length)}`, await this.read(o.uri));
  }

  async remove(uri: string): Promise<void> {
    for (const o of await this.list(uri)) this.objects.delete(this.key(o.uri));
  }

  async contains(prefix: string, uri: string): Promise<boolean> {
    const p = this.key(prefix);
    const k = this.key(uri);
    return k === p || k.startsWith(`${p}/`);
  }

  prepareOutputs(uris: string[]): string[] {
    return uris;
  }

  async localPath(): Promise<string> {
    throw new Error('not used by runs');
  }
}

/** importer `imp` (an object already in S3) → container task `consume`, which reads it and writes its output artifact `out` */
function s3Pipeline(name: string, input: string): PipelineSpec {
  const dataset = { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' };
  return {
    pipelineInfo: { name }, schemaVersion: '2.1.0', sdkVersion: 'kfp-2.17.0',
    root: {
      dag: {
        tasks: {
          imp: { taskInfo: { name: 'imp' }, componentRef: { name: 'comp-imp' } },
          consume: {
            taskInfo: { name: 'consume' }, componentRef: { name: 'comp-consume' }, dependentTasks: ['imp'],
            inputs: { artifacts: { data: { taskOutputArtifact: { producerTask: 'imp', outputArtifactKey: 'artifact' } } } },
          },
        },
      },
    },
    components: {
      'comp-imp': { executorLabel: 'exec-imp', outputDefinitions: { artifacts: { artifact: { artifactType: dataset } } } },
      'comp-consume': {
        executorLabel: 'exec-consume',
        inputDefinitions: { artifacts: { data: { artifactType: dataset } } },
        outputDefinitions: { artifacts: { out: { artifactType: dataset } } },
      },
    },
    deploymentSpec: {
      executors: {
        'exec-imp': { importer: { artifactUri: { constant: input }, typeSchema: dataset } },
        'exec-consume': { container: { image: 'alpine:3', command: ['sh', '-c', 'true'] } },
      },
    },
  } as unknown as PipelineSpec;
}

/** what the `consume` Pod does: its input as the Pod sees it at /minio, upper-cased into its output */
function playConsume(pod: Pod): { exitCode: number } {
  const ei = JSON.parse(pod.metadata.annotations?.[RunAnnotations.executorInput] ?? '{}') as ExecutorInput;
  const minio = pod.spec.volumes?.find((v) => v.name === 'kfp-artifacts-minio')?.hostPath?.path;
  if (!minio) return { exitCode: 1 };
  const host = (uri: string): string => join(minio, localPathForUri(uri).replace(/^\/minio\//, ''));
  const input = (ei.inputs.artifacts?.['data'] as ArtifactList | undefined)?.artifacts[0]?.uri ?? '';
  const out = (ei.outputs.artifacts['out'] as ArtifactList | undefined)?.artifacts[0]?.uri ?? '';
  if (!existsSync(host(input))) return { exitCode: 2 };
  mkdirSync(dirname(host(out)), { recursive: true });
  writeFileSync(host(out), readFileSync(host(input), 'utf8').toUpperCase());
  return { exitCode: 0 };
}

const key = (name: string) => ({ namespace: 'default', name });

describe('Run controller: transfers of an S3 root in the background', () => {
  let dir: string;
  let root: string;
  let env: TestEnv;
  let s3: MemoryS3;
  let managers: Manager[];
  /** task path → Pods of it the agent ran */
  let ran: Map<string, number>;
  const stores: RootStores = { get: () => s3 };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-run-s3-'));
    root = join(dir, 'root');
    s3 = new MemoryS3();
    managers = [];
    ran = new Map();
    const decided = new Map<string, { exitCode: number }>();
    env = await TestEnv.start((pod) => {
      const known = decided.get(pod.metadata.uid);
      if (known) return known;
      const path = pod.metadata.annotations?.[RunAnnotations.taskPath] ?? '';
      ran.set(path, (ran.get(path) ?? 0) + 1);
      const outcome = path === 'consume' ? playConsume(pod) : { exitCode: 0 };
      decided.set(pod.metadata.uid, outcome);
      return outcome;
    });
  });
  afterEach(async () => {
    s3.reads.open();
    s3.writes.open();
    await Promise.all(managers.map((m) => m.stop()));
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(): Manager {
    const mgr = new Manager(env.client);
    addRunController(mgr, { client: env.client, recorder: env.recorder, pipelineRoot: root, artifacts: new LocalArtifactStore(root), s3: stores });
    mgr.start();
    managers.push(mgr);
    return mgr;
  }

  async function createS3Run(name: string, input = 'minio://mlpipeline/data/in.txt'): Promise<Run> {
    return env.client.create<Run>(makeRun(name).pipelineSpec(s3Pipeline(name, input)).pipelineRoot('minio://mlpipeline/v2').obj());
  }

  async function task(run: string, path: string): Promise<TaskStatus | undefined> {
    const records = await env.client.listAll<RunTask>(Kinds.RunTask, { namespace: 'default', labelSelector: `pipelines.kubeflow.org/run=${run}` });
    return records.find((o) => o.spec.path === path)?.status;
  }

  async function waitDone(name: string): Promise<Run> {
    return env.waitFor(`run ${name} to end`, async () => {
      const r = await env.client.find<Run>(Kinds.Run, key(name));
      return r?.status?.state === 'SUCCEEDED' || r?.status?.state === 'FAILED' || r?.status?.state === 'CANCELED' ? r : undefined;
    }, 30_000);
  }

  async function consumePods(run: string): Promise<Pod[]> {
    const pods = await env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default', labelSelector: `pipelines.kubeflow.org/run=${run}` });
    return pods.filter((p) => p.metadata.annotations?.[RunAnnotations.taskPath] === 'consume');
  }

  it('lets a local run finish while another run\'s download, then its upload, is held', async () => {
    await s3.write('minio://mlpipeline/data/in.txt', 'dataset');
    s3.reads.close();
    start();
    await createS3Run('big');
    const waiting = await env.waitFor('consume waiting on its inputs', async () => (await task('big', 'consume'))?.transfer === 'inputs' && (await task('big', 'consume')), 30_000);
    assert.equal(waiting.state, 'RUNNING');
    assert.equal(waiting.podName, undefined, 'no Pod before its inputs are there');
    assert.ok(env.recorder.events.some((e) => e.reason === 'DownloadingInputs' && e.object === 'Run/big' && e.message.includes('task consume')));

    await env.client.create<Run>(makeRun('small').obj());
    assert.equal((await waitDone('small')).status?.state, 'SUCCEEDED', 'a local run finishes while the download is held');
    assert.equal((await consumePods('big')).length, 0);
    assert.equal((await env.client.find<Run>(Kinds.Run, key('big')))?.status?.state, 'RUNNING');

    // the upload is held next: the download goes through, the Pod runs, its output waits to go up
    s3.writes.close();
    s3.reads.open();
    const uploading = await env.waitFor('consume uploading its outputs', async () => (await task('big', 'consume'))?.transfer === 'outputs' && (await task('big', 'consume')), 30_000);
    assert.equal(uploading.state, 'RUNNING');
    assert.ok(uploading.podName);
    assert.ok(env.recorder.events.some((e) => e.reason === 'UploadingOutputs' && e.object === 'Run/big'));
    await env.client.create<Run>(makeRun('small2').obj());
    assert.equal((await waitDone('small2')).status?.state, 'SUCCEEDED', 'a local run finishes while the upload is held');
    assert.equal((await env.client.find<Run>(Kinds.Run, key('big')))?.status?.state, 'RUNNING');

    s3.writes.open();
    const big = await waitDone('big');
    assert.equal(big.status?.state, 'SUCCEEDED', JSON.stringify(big.status));
    const consume = big.status?.tasks?.['consume'];
    assert.equal(consume?.transfer, undefined);
    const out = consume?.outputs?.artifacts['out']?.[0]?.uri ?? '';
    assert.match(out, /^minio:\/\/mlpipeline\/v2\/big\//);
    assert.equal((await s3.read(out)).toString(), 'DATASET');
    assert.equal(ran.get('consume'), 1);
    assert.equal((await consumePods('big')).length, 1);
    // the staging directory is gone once the outputs are recorded
    await env.waitFor('staging removed', async () => !existsSync(join(root, 'default', '.artifact-staging', consume?.podName ?? '')), 10_000);
  });

  it('fails the task with the download\'s error when an input is not there', async () => {
    start();
    await createS3Run('missing', 'minio://mlpipeline/data/none');
    const run = await waitDone('missing');
    assert.equal(run.status?.state, 'FAILED');
    assert.equal(run.status?.failedTask, 'consume');
    assert.match(run.status?.tasks?.['consume']?.message ?? '', /^task consume failed: its input artifact data: minio:\/\/mlpipeline\/data\/none does not exist$/);
    assert.equal(run.status?.tasks?.['consume']?.transfer, undefined);
    assert.equal((await consumePods('missing')).length, 0);
  });

  it('fails the task with the upload\'s error', async () => {
    await s3.write('minio://mlpipeline/data/in.txt', 'dataset');
    s3.writeFrom = async () => {
      throw new Error('S3 endpoint refused the write');
    };
    start();
    await createS3Run('noupload');
    const run = await waitDone('noupload');
    assert.equal(run.status?.state, 'FAILED');
    assert.match(run.status?.tasks?.['consume']?.message ?? '', /^task consume: uploading its output artifact out failed: S3 endpoint refused the write$/);
  });

  it('terminating a run drops its held download: no Pod is made, and the staging goes when the download ends', async () => {
    await s3.write('minio://mlpipeline/data/in.txt', 'dataset');
    s3.reads.close();
    start();
    await createS3Run('stop');
    await env.waitFor('consume waiting on its inputs', async () => (await task('stop', 'consume'))?.transfer === 'inputs', 30_000);
    await env.client.patch(Kinds.Run, key('stop'), { spec: { terminate: true } }, 'merge');
    const run = await waitDone('stop');
    assert.equal(run.status?.state, 'CANCELED');
    assert.equal(run.status?.tasks?.['consume']?.state, 'CANCELED');
    assert.equal(run.status?.tasks?.['consume']?.transfer, undefined);
    s3.reads.open();
    await env.waitFor('the dropped download to go on', async () => s3.reads.passed === 1, 10_000);
    // it writes nothing more after its object, and what it wrote is removed as it ends
    await sleep(300);
    const staging = join(root, 'default', '.artifact-staging');
    assert.ok(!existsSync(staging) || readdirSync(staging).length === 0, String(existsSync(staging) && readdirSync(staging)));
    assert.equal((await consumePods('stop')).length, 0);
  });

  it('after a restart, starts a held download again and runs the task once', async () => {
    await s3.write('minio://mlpipeline/data/in.txt', 'dataset');
    s3.reads.close();
    const first = start();
    await createS3Run('again');
    await env.waitFor('the first download started', async () => s3.reads.calls === 1, 30_000);
    await first.stop();
    start();
    await env.waitFor('the download started again', async () => s3.reads.calls === 2, 30_000);
    s3.reads.open();
    const run = await waitDone('again');
    assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status));
    assert.equal(ran.get('consume'), 1);
    assert.equal((await consumePods('again')).length, 1);
    assert.equal((await s3.read(run.status?.tasks?.['consume']?.outputs?.artifacts['out']?.[0]?.uri ?? '')).toString(), 'DATASET');
  });
  it('on a cluster, leaves the artifacts to the Pod\'s node and reads its outputs from S3, with no staging here', async () => {
    await s3.write('minio://mlpipeline/data/in.txt', 'dataset');
    // the node: KFP's launcher around the command, on its own disk (a folder per Pod for its emptyDirs)
    const launcher = new PodLauncher(new LocalArtifactStore(join(dir, 'node')), async () => s3);
    const done = new Map<string, { exitCode: number }>();
    const started = new Set<string>();
    env.agent.script = (pod) => {
      if (pod.metadata.annotations?.[RunAnnotations.taskPath] !== 'consume') return { exitCode: 0 };
      const known = done.get(pod.metadata.uid);
      if (known || started.has(pod.metadata.uid)) return known;
      started.add(pod.metadata.uid);
      const plan = podLauncherPlan(pod);
      const vols = pod.spec.volumes ?? [];
      const podDir = join(dir, 'node', pod.metadata.uid);
      const paths: PodPathResolver = (p) => {
        const m = /^\/(minio|s3)(\/.*)?$/.exec(p);
        return m ? { host: join(podDir, m[1] as string, m[2] ?? ''), base: join(podDir, m[1] as string) } : undefined;
      };
      void (async () => {
        let exitCode = 0;
        try {
          assert.ok(plan, 'the Pod carries the launcher plan');
          assert.deepEqual(vols.map((v) => [v.name, Boolean(v.emptyDir), Boolean(v.hostPath)]), [['kfp-artifacts-minio', true, false], ['kfp-artifacts-s3', true, false]]);
          await launcher.download('default', plan, paths);
          const input = plan.downloads[0]?.path ?? '';
          const out = localPathForUri(plan.artifacts['out']?.artifacts[0]?.uri ?? '');
          writeFileSync(paths(out)?.host ?? '', readFileSync(paths(input)?.host ?? '', 'utf8').toUpperCase());
          writeFileSync(paths(plan.executorOutput.path)?.host ?? '', JSON.stringify({ artifacts: { out: { artifacts: [{ name: 'out', uri: plan.artifacts['out']?.artifacts[0]?.uri, metadata: { rows: 1 } }] } } }));
          await launcher.upload('default', plan, paths);
        } catch (e) {
          exitCode = 1;
          process.stderr.write(`node: ${(e as Error).message}\n`);
        }
        done.set(pod.metadata.uid, { exitCode });
        // the Pod is looked at again
        const live = await env.client.get<Pod>(Kinds.Pod, { namespace: 'default', name: pod.metadata.name });
        await env.client.update({ ...live, metadata: { ...live.metadata, labels: { ...live.metadata.labels, 'test/ran': 'yes' } } });
      })();
      return undefined;
    };
    const mgr = new Manager(env.client);
    addRunController(mgr, { client: env.client, recorder: env.recorder, pipelineRoot: root, artifacts: new LocalArtifactStore(root), s3: stores, launcherInPod: true });
    mgr.start();
    managers.push(mgr);
    await createS3Run('cluster');
    const run = await waitDone('cluster');
    assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status));
    const out = (await task('cluster', 'consume'))?.outputs?.artifacts['out']?.[0];
    assert.equal((await s3.read(out?.uri ?? '')).toString(), 'DATASET');
    // the metadata came from the executor output the node uploaded
    assert.deepEqual(out?.metadata, { rows: 1 });
    const [pod] = await consumePods('cluster');
    assert.ok(pod?.metadata.annotations?.[launcherAnnotation]);
    // nothing of the task on the controller's disk
    assert.equal(existsSync(join(root, 'default', '.artifact-staging')), false);
    assert.equal(s3.reads.calls, 1, 'only the node downloaded the input');
  });

  it('with the launcher inside the Pods, needs the namespace\'s Secret, and shows the launcher\'s error', async () => {
    await s3.write('minio://mlpipeline/data/in.txt', 'dataset');
    env.agent.script = (pod) => pod.metadata.annotations?.[RunAnnotations.taskPath] === 'consume'
      ? { exitCode: 1, message: 'reading...\nskiff-launcher: uploading its output artifact out to minio://mlpipeline/v2/x/out: Access Denied.' }
      : { exitCode: 0 };
    const mgr = new Manager(env.client);
    addRunController(mgr, {
      client: env.client, recorder: env.recorder, pipelineRoot: root, artifacts: new LocalArtifactStore(root), s3: stores, launcherInPod: true,
      inPodLauncher: { image: 'registry.example/skiff:1', endpoint: 'http://minio.kubeflow:9000', region: 'us-east-1' },
    });
    mgr.start();
    managers.push(mgr);
    // no Secret: no Pod that would wait forever for it
    await createS3Run('nosecret');
    const refused = await waitDone('nosecret');
    assert.equal(refused.status?.state, 'FAILED');
    assert.match(refused.status?.message ?? '', /: the launcher in its Pod reads the S3 credentials from the Secret mlpipeline-minio-artifact in namespace default \(keys accesskey and secretkey\), which does not exist/);
    assert.equal((await consumePods('nosecret')).length, 0);
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mlpipeline-minio-artifact', namespace: 'default' }, data: { accesskey: Buffer.from('k').toString('base64') } };
    await env.client.create(secret);
    await createS3Run('halfsecret');
    assert.match((await waitDone('halfsecret')).status?.message ?? '', /mlpipeline-minio-artifact in namespace default \(keys accesskey and secretkey\), which has no secretkey/);
    const full = await env.client.get<typeof secret & { metadata: { resourceVersion?: string } }>(Kinds.Secret, { namespace: 'default', name: 'mlpipeline-minio-artifact' });
    await env.client.update({ ...full, data: { ...full.data, secretkey: Buffer.from('s').toString('base64') } });
    await createS3Run('inpod');
    const run = await waitDone('inpod');
    assert.equal(run.status?.state, 'FAILED');
    // the launcher's last line, not the command's output
    assert.match(run.status?.message ?? '', /task consume failed: container exited with code 1 \(Error\): skiff-launcher: uploading its output artifact out to minio:\/\/mlpipeline\/v2\/x\/out: Access Denied\.$/);
    const [pod] = await consumePods('inpod');
    assert.ok(pod);
    assert.equal(pod.metadata.annotations?.[launcherAnnotation], undefined, 'no plan for a node agent to act on as well');
    assert.deepEqual(pod.spec.initContainers?.map((c) => [c.name, c.image]), [['kfp-launcher', 'registry.example/skiff:1']]);
    assert.deepEqual(pod.spec.containers[0]?.command?.slice(0, 3), ['/skiff-launcher/launch', 'run', '--']);
  });
});
