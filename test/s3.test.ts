// Artifacts in S3: a pipeline compiled by kfp with pipeline_root='minio://...' run by `skiff up` against
// a real MinIO. The output artifacts land in MinIO, the downstream task reads them, the KFP API reads
// them back, and credentials the endpoint refuses fail the task with a message that names the
// endpoint and the access key id, never the secret.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import YAML from 'yaml';
import { startSkiff } from '../src/server/main.js';
import { MinioServer, minioSkip } from '../src/testing/minio.js';
import { TestServer, pollUntil, repoRoot } from './harness.js';

const pipeline = join(repoRoot, 'test', 'fixtures', 's3', 's3_pipeline.yaml');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('artifacts in S3 (MinIO)', { skip: minioSkip() }, () => {
  let minio: MinioServer;
  let s: TestServer;
  let s3: S3Client;
  before(async () => {
    minio = await MinioServer.start({ buckets: ['mlpipeline'] });
    // the endpoint in Skiff's config; the credentials only in the namespace's Secret, as KFP keeps them
    s = await TestServer.start({ config: { artifacts: { s3: { endpoint: minio.endpoint } } } });
    s3 = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
  });
  after(async () => {
    s3?.destroy();
    await s?.cleanup();
    await minio?.stop();
  });

  const secret = (secretKey: string): object => ({
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mlpipeline-minio-artifact', namespace: 'default' },
    data: { accesskey: b64(minio.accessKey), secretkey: b64(secretKey) },
  });
  const runName = (out: string): string => /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(out)?.[1] ?? '';

  it('refuses to start when the configured default root cannot be used, saying why', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-s3-start-'));
    try {
      const s3Config = { endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: 'not-the-secret' };
      await assert.rejects(startSkiff({ dataDir, port: 0, artifacts: { pipelineRoot: 'minio://mlpipeline/v2', s3: s3Config } }), (e: Error) => {
        assert.match(e.message, new RegExp(`^artifacts.pipelineRoot minio://mlpipeline/v2: S3 endpoint ${minio.endpoint} refused the credentials of access key id "${minio.accessKey}"`));
        assert.doesNotMatch(e.message, /not-the-secret/);
        return true;
      });
      await assert.rejects(startSkiff({ dataDir, port: 0, artifacts: { pipelineRoot: 's3://no-bucket/v2', s3: { ...s3Config, secretKey: minio.secretKey } } }), /the bucket no-bucket of pipeline root s3:\/\/no-bucket\/v2 does not exist at S3 endpoint/);
      // nothing was made before the refusal
      assert.deepEqual(readdirSync(dataDir), []);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('fails the task when the endpoint refuses the namespace\'s credentials, naming the endpoint and the key id', async () => {
    await s.create('/api/v1/namespaces/default/secrets', secret('wrong-secret-value'));
    const r = await s.cli(['run', pipeline, '--pipeline-root', 'minio://mlpipeline/v2/artifacts', '--watch']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`produce\\s+FAILED: task produce failed: S3 endpoint ${minio.endpoint} refused the credentials of access key id "${minio.accessKey}"`));
    assert.doesNotMatch(r.stdout + r.stderr, /wrong-secret-value/);
    const run = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${runName(r.stdout)}`);
    assert.equal(run.status.pipelineRoot, 'minio://mlpipeline/v2/artifacts');
    // the task failed before its Pod: nothing ran
    assert.equal(run.status.tasks.produce.podName, undefined);
  });

  it('runs with the kfp-launcher ConfigMap\'s root: outputs land in MinIO and the next task reads them', async () => {
    const put = await s.req('PUT', '/api/v1/namespaces/default/secrets/mlpipeline-minio-artifact', secret(minio.secretKey));
    assert.equal(put.status, 200, put.text);
    await s.create('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kfp-launcher', namespace: 'default' }, data: { defaultPipelineRoot: 'minio://mlpipeline/v2/artifacts' },
    });
    const r = await s.cli(['run', pipeline, '-p', 'text=bytes through s3', '--watch']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const name = runName(r.stdout);
    const run = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${name}`);
    assert.equal(run.status.state, 'SUCCEEDED');
    assert.equal(run.status.pipelineRoot, 'minio://mlpipeline/v2/artifacts');
    const data = run.status.tasks.produce.outputs.artifacts.data[0];
    assert.match(data.uri, new RegExp(`^minio://mlpipeline/v2/artifacts/s3-artifacts/${run.metadata.uid}/produce/[0-9a-f]+/data$`));
    assert.equal(data.metadata.words, 3);
    // the component saw the URI as minio:// and read the file at KFP's local path for it
    const said = run.status.tasks.consume.outputs.parameters.Output;
    assert.equal(said, `${data.uri} at /minio/${data.uri.slice('minio://'.length)}: bytes through s3 / BYTES THROUGH S3 / 16`);
    // in MinIO: the dataset, and the model directory's files as objects under its prefix
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'mlpipeline', Prefix: `v2/artifacts/s3-artifacts/${run.metadata.uid}/` }));
    const keys = (listed.Contents ?? []).map((o) => o.Key?.replace(/^.*\/produce\/[0-9a-f]+\//, 'produce/')).sort();
    assert.deepEqual(keys.filter((k) => k?.startsWith('produce/')), ['produce/data', 'produce/model/conf/size.txt', 'produce/model/weights.txt']);
    // the KFP API reads the artifact back from S3
    const read = await s.req('GET', `/apis/v2beta1/runs/${name}/nodes/produce/artifacts/data:read`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.text, 'bytes through s3');
    // the Pods' staging directories are gone once their results are recorded (removed after the
    // write that records them, so the run may read SUCCEEDED a moment before the last one goes)
    const staging = join(s.dataDir, 'pipeline-root', 'default', '.artifact-staging');
    await pollUntil('the staging directories removed', async () => ((existsSync(staging) ? readdirSync(staging) : []).length === 0 ? true : undefined), 15_000);
  });

  it('serves an sklearn model from s3://, with the credentials and endpoint of a Secret on the predictor\'s service account', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-s3-model-'));
    try {
      const py = join(repoRoot, '.venv', 'bin', 'python');
      const train = spawnSync(py, ['-c', [
        'import joblib, json, sys',
        'from sklearn.datasets import load_iris',
        'from sklearn.linear_model import LogisticRegression',
        'X, y = load_iris(return_X_y=True)',
        'm = LogisticRegression(max_iter=500).fit(X, y)',
        'joblib.dump(m, sys.argv[1] + "/model.joblib")',
        'print(json.dumps({"rows": X[[0, 60, 120]].tolist(), "want": m.predict(X[[0, 60, 120]]).tolist()}))',
      ].join('\n'), dir], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(train.status, 0, train.stderr);
      const { rows, want } = JSON.parse(train.stdout) as { rows: number[][]; want: number[] };
      await minio.makeBuckets(['models']);
      await s3.send(new PutObjectCommand({ Bucket: 'models', Key: 'iris/v1/model.joblib', Body: readFileSync(join(dir, 'model.joblib')) }));
      const objects = [
        {
          apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3creds', annotations: { 'serving.kserve.io/s3-endpoint': minio.endpoint.slice('http://'.length), 'serving.kserve.io/s3-usehttps': '0' } },
          stringData: { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey },
        },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'model-reader' }, secrets: [{ name: 's3creds' }] },
        { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'iris-s3' }, spec: { predictor: { serviceAccountName: 'model-reader', sklearn: { storageUri: 's3://models/iris/v1' } } } },
      ];
      const applied = await s.cli(['apply', '-f', '-'], objects.map((o) => YAML.stringify(o)).join('---\n'));
      assert.equal(applied.code, 0, applied.stderr);
      await s.until('InferenceService iris-s3 Ready', async () => {
        const o = await s.get('/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices/iris-s3');
        return o.status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Ready')?.status === 'True' ? o : undefined;
      }, 120_000);
      const r = await s.req('POST', '/serving/default/iris-s3/v1/models/iris-s3:predict', JSON.stringify({ instances: rows }), { 'content-type': 'application/json' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.predictions, want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
