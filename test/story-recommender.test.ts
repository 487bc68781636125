// The recommender story end to end (examples/stories/recommender): generate.py's users.csv and
// transactions.csv are put into MinIO, recommender.yaml is applied as a user applies it (only the
// endpoint changed to this MinIO's), a Chief and a Worker train a Keras recommender on the CSVs read
// from S3 with MultiWorkerMirroredStrategy, the chief uploads the SavedModel to S3, the
// InferenceService downloads it with the Secret on its ServiceAccount and serves it, and its V1 answers
// are what the same SavedModel, fetched from MinIO, predicts in Python. Then bad input: a broken row and
// a missing object fail the job with the program's own words in its Failed condition.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import YAML from 'yaml';
import { MinioServer, minioSkip } from '../src/testing/minio.js';
import { TestServer, repoRoot } from './harness.js';

const python = join(repoRoot, '.venv-tensorflow', 'bin', 'python');
const story = join(repoRoot, 'examples', 'stories', 'recommender');
const tfEnv = { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' };

/** why the story cannot run here, if it cannot: TensorFlow's environment with boto3, and MinIO */
function missing(): string | false {
  if (process.env.SKIFF_TENSORFLOW === '0') return 'SKIFF_TENSORFLOW=0: TensorFlow\'s environment is left out';
  if (!existsSync(python)) return 'no .venv-tensorflow (scripts/setup.sh makes it)';
  const r = spawnSync(python, ['-c', 'import tensorflow, boto3'], { encoding: 'utf8', env: tfEnv });
  if (r.status !== 0) return `TensorFlow or boto3 cannot be imported in .venv-tensorflow (scripts/setup.sh installs python/requirements-tensorflow.txt): ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
  return minioSkip();
}

type Obj = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: any; status?: any };

describe('the recommender story: CSVs in S3, a TFJob trains, an InferenceService serves', { skip: missing(), timeout: 600_000 }, () => {
  let minio: MinioServer;
  let s: TestServer;
  let work: string;
  let manifest: string;

  const tfjob = (name: string): Promise<Obj> => s.get(`/apis/kubeflow.org/v1/namespaces/default/tfjobs/${name}`);
  const finished = (name: string, timeoutMs: number): Promise<Obj> => s.until(`TFJob ${name} finished`, async () => {
    const j = await tfjob(name);
    return (j.status?.conditions ?? []).some((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? j : undefined;
  }, timeoutMs);
  const condition = (j: Obj, type: string): any => (j.status?.conditions ?? []).find((c: any) => c.type === type && c.status === 'True');
  const apply = async (text: string): Promise<void> => {
    const r = await s.cli(['apply', '-f', '-'], text);
    assert.equal(r.code, 0, r.stderr);
  };

  before(async () => {
    minio = await MinioServer.start({ buckets: ['stories'] });
    s = await TestServer.start({ config: { artifacts: { s3: { endpoint: minio.endpoint } } } });
    work = mkdtempSync(join(tmpdir(), 'skiff-recommender-'));
    const gen = spawnSync(python, [join(story, 'generate.py'), join(work, 'data')], { encoding: 'utf8' });
    assert.equal(gen.status, 0, gen.stderr);
    const s3 = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
    try {
      const put = (Key: string, Body: string): Promise<unknown> => s3.send(new PutObjectCommand({ Bucket: 'stories', Key, Body }));
      const users = readFileSync(join(work, 'data', 'users.csv'), 'utf8');
      const transactions = readFileSync(join(work, 'data', 'transactions.csv'), 'utf8');
      await put('data/users.csv', users);
      await put('data/transactions.csv', transactions);
      // the same data with one row broken (line 101 of the file: the header is line 1)
      const lines = transactions.split('\n');
      lines[100] = lines[100]!.replace(/^(\d+),\d+,/, '$1,seven,');
      await put('broken/users.csv', users);
      await put('broken/transactions.csv', lines.join('\n'));
      // users.csv alone: transactions.csv is missing
      await put('partial/users.csv', users);
    } finally {
      s3.destroy();
    }
    // the example as it is, but for where MinIO listens and its keys
    const host = minio.endpoint.replace(/^http:\/\//, '');
    manifest = readFileSync(join(story, 'recommender.yaml'), 'utf8')
      .replaceAll('127.0.0.1:9000', host)
      .replace('AWS_ACCESS_KEY_ID: minio', `AWS_ACCESS_KEY_ID: ${minio.accessKey}`)
      .replace('AWS_SECRET_ACCESS_KEY: minio123', `AWS_SECRET_ACCESS_KEY: ${minio.secretKey}`);
  });
  after(async () => {
    await s?.cleanup();
    await minio?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the TFJob trains on the CSVs from S3 (the loss falls), the chief uploads a SavedModel, the InferenceService serves what it predicts in Python', async () => {
    const t0 = Date.now();
    await apply(manifest);
    const j = await finished('recommender', 240_000);
    // the job is done with its chief; the worker ends on its own right after
    await s.until('the worker ended', async () => {
      const p = await s.get('/api/v1/namespaces/default/pods/recommender-worker-0');
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    }, 60_000);
    // as the README reads them
    const chief = (await s.cli(['logs', 'tfjob/recommender'])).stdout;
    const worker = (await s.cli(['logs', 'tfjob/recommender', '--replica', 'worker-0'])).stdout;
    assert.ok(condition(j, 'Succeeded'), `${JSON.stringify(j.status?.conditions)}\n--- chief\n${chief}\n--- worker\n${worker}`);
    console.log(`# TFJob recommender (Chief + 1 Worker) succeeded ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`);
    console.log(`# ${/trained \d+ steps .*/.exec(chief)?.[0] ?? 'no training time in the chief\'s log'}`);

    for (const [task, log] of [['chief:0', chief], ['worker:0', worker]] as const) {
      assert.match(log, new RegExp(`${task}: read 300 users and 12000 ratings from s3://stories/data at ${minio.endpoint}`), log);
      assert.match(log, new RegExp(`${task}: joined the cluster as ${task}, 2 replicas in sync`), log);
    }
    const losses = [...chief.matchAll(/^chief:0: epoch \d+ loss ([\d.]+)$/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 6, chief);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0) * 0.8, `the loss did not fall: ${losses.join(' ')}`);
    // the all-reduced loss is the same on both replicas
    assert.deepEqual([...worker.matchAll(/^worker:0: epoch \d+ loss ([\d.]+)$/gm)].map((m) => Number(m[1])), losses, worker);
    // it learned the users' tastes: well under what the mean rating alone scores on the held-out tenth
    const [, rmse, baseline] = /held-out RMSE ([\d.]+) \(the mean rating alone: ([\d.]+)\)/.exec(chief) ?? [];
    assert.ok(Number(rmse) < Number(baseline) * 0.7, chief);
    assert.match(chief, /SavedModel exported to s3:\/\/stories\/recommender\/1 \(\d+ objects\), it answers as the trained model: True/);
    assert.doesNotMatch(worker, /SavedModel exported/);

    let last: Obj | undefined;
    const isvc = await s.until('InferenceService recommender Ready', async () => {
      const o: Obj = await s.get('/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices/recommender');
      last = o;
      return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
    }, 180_000).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(last?.status)}`);
    });
    assert.equal(isvc.status.clusterServingRuntimeName, 'kserve-tensorflow-serving');
    console.log(`# InferenceService recommender ready ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`);

    // a request names only the ids: the users' features are in the model
    const meta = await s.get('/serving/default/recommender/v1/models/recommender/metadata');
    const sig = meta.metadata.signature_def.signature_def.serving_default;
    assert.deepEqual(Object.keys(sig.inputs).sort(), ['item_id', 'user_id'], JSON.stringify(sig));

    const pairs = [[3, 7], [3, 12], [42, 7], [299, 59], [0, 0], [150, 33]] as const;
    const r = await s.req('POST', '/serving/default/recommender/v1/models/recommender:predict',
      JSON.stringify({ instances: pairs.map(([u, i]) => ({ user_id: u, item_id: i })) }), { 'content-type': 'application/json' });
    assert.equal(r.status, 200, r.text);
    const served = r.body.predictions as number[];

    // the SavedModel the job put into MinIO, fetched and asked the same in Python
    const check = [
      'import json, os, sys, boto3, tensorflow as tf',
      's3 = boto3.client("s3", endpoint_url=sys.argv[1])',
      'for o in s3.list_objects_v2(Bucket="stories", Prefix="recommender/1/")["Contents"]:',
      '    path = os.path.join(sys.argv[2], o["Key"]); os.makedirs(os.path.dirname(path), exist_ok=True)',
      '    s3.download_file("stories", o["Key"], path)',
      'f = tf.saved_model.load(os.path.join(sys.argv[2], "recommender", "1")).signatures["serving_default"]',
      'pairs = json.loads(sys.argv[3])',
      'out = f(user_id=tf.constant([p[0] for p in pairs], tf.int32), item_id=tf.constant([p[1] for p in pairs], tf.int32))',
      'print(json.dumps(next(iter(out.values())).numpy().tolist()))',
    ].join('\n');
    const { stdout } = await promisify(execFile)(python, ['-c', check, minio.endpoint, join(work, 'fetched'), JSON.stringify(pairs)], {
      env: { ...tfEnv, AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey, AWS_REGION: 'us-east-1' },
    });
    const want = JSON.parse(stdout.trim().split('\n').pop() as string) as number[];
    assert.equal(served.length, pairs.length, r.text);
    served.forEach((got, k) => assert.ok(Math.abs(got - (want[k] as number)) < 1e-4, `pair ${JSON.stringify(pairs[k])}: served ${got}, Python ${want[k]}`));
    // ratings on the data's 1-5 scale, and they differ by user and by item
    assert.ok(served.every((x) => x > 0 && x < 6.5), JSON.stringify(served));
    assert.ok(new Set(served.map((x) => x.toFixed(3))).size === served.length, JSON.stringify(served));
    console.log(`# the whole story took ${((Date.now() - t0) / 1000).toFixed(1)}s from apply to the checked answers`);
  });

  it('bad input fails the TFJob with the program\'s own error: a broken row names the object and its line, a missing object its key', async () => {
    // the example's TFJob alone, renamed and pointed at the broken data and at the partial one
    const job = YAML.parseAllDocuments(manifest).map((d) => d.toJS() as Obj).find((o) => o.kind === 'TFJob')!;
    const variant = (name: string, dataUri: string): string => {
      const v = structuredClone(job);
      v.metadata.name = name;
      for (const spec of Object.values(v.spec.tfReplicaSpecs) as any[]) {
        for (const c of spec.template.spec.containers) c.env = c.env.map((e: any) => (e.name === 'DATA_URI' ? { name: e.name, value: dataUri } : e));
      }
      return YAML.stringify(v);
    };
    writeFileSync(join(work, 'bad.yaml'), `${variant('recommender-broken', 's3://stories/broken')}---\n${variant('recommender-partial', 's3://stories/partial')}`);
    const r = await s.cli(['apply', '-f', join(work, 'bad.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    const [broken, partial] = await Promise.all([finished('recommender-broken', 90_000), finished('recommender-partial', 90_000)]);
    // both replicas read the data before anything else: whichever the controller sees fail first is named
    const failed = (j: Obj, error: string): void => {
      const c = condition(j, 'Failed');
      assert.ok(c, JSON.stringify(j.status?.conditions));
      const n = j.metadata.name;
      assert.match(c.message, new RegExp(`^TFJob default/${n} has failed because 1 (Chief|Worker) replica\\(s\\) failed\\. ${n}-(chief|worker)-0: `), c.message);
      assert.ok(c.message.endsWith(`-0: ${error}`), c.message);
    };
    failed(broken, 'ValueError: s3://stories/broken/transactions.csv line 101: item_id \'seven\' is not an integer');
    failed(partial, `FileNotFoundError: s3://stories/partial/transactions.csv does not exist at ${minio.endpoint} (NoSuchKey): upload it first`);
  });
});
