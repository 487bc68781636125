// Katib's simple-pbt example on `skiff up`: its trial container as a plain Job (the image's program,
// its checkpoint resumed from the directory it is given, its one metric line read with Katib's
// default filter), and the upstream PBT Experiment itself, with a variant long enough for a second
// generation to continue from its parents' checkpoints.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../src/conformance-path.js';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { DefaultMetricsFormat, compileFormats, parseTextMetrics } from '../src/workloads/tuning/metrics.js';
import { TestServer, repoRoot } from './harness.js';

const example = join(conformanceDir(), 'katib', 'v1beta1', 'hp-tuning', 'simple-pbt.yaml');
const skip = !existsSync(example) ? 'no ../shared/conformance/katib here'
  : !existsSync(join(repoRoot, '.venv', 'bin', 'python')) ? 'no .venv: run scripts/setup.sh'
    : !bwrapAvailable() ? 'bubblewrap cannot run here, so no image files can be bound into a container' : false;

const metricName = 'Validation-accuracy';
const readMetric = (text: string): number[] => parseTextMetrics(text, [metricName], compileFormats([DefaultMetricsFormat])).map((m) => Number(m.value));

/** the example's trial Job with ${trialParameters.learningRate} replaced, as Katib's Trial controller does */
function trialJob(name: string, lr: string): any {
  const exp = YAML.parse(readFileSync(example, 'utf8'));
  const job = JSON.parse(JSON.stringify(exp.spec.trialTemplate.trialSpec).replaceAll('${trialParameters.learningRate}', lr));
  job.metadata = { name, namespace: 'default' };
  return job;
}

describe('Katib\'s simple-pbt trial image', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  const host = mkdtempSync(join(tmpdir(), 'skiff-simple-pbt-'));
  const hostHadCheckpoints = existsSync('/var/log/katib/checkpoints');
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    rmSync(host, { recursive: true, force: true });
  });

  const complete = (ns: string, name: string): Promise<any> => s.until(`job ${name} to complete`, async () => {
    const j = await s.get(`/apis/batch/v1/namespaces/${ns}/jobs/${name}`);
    const failed = j.status?.conditions?.find((c: any) => c.type === 'Failed' && c.status === 'True');
    if (failed) throw new Error(`job ${name} failed: ${failed.message}\n${await logs(ns, name)}`);
    return j.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') && j;
  }, 120_000);
  const logs = async (ns: string, name: string): Promise<string> => {
    const pods = await s.get(`/api/v1/namespaces/${ns}/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D${name}`);
    return (await s.req('GET', `/api/v1/namespaces/${ns}/pods/${pods.items[0].metadata.name}/log`)).text;
  };
  const checkpoint = (dir: string): { step: number; accuracy: number } => JSON.parse(readFileSync(join(dir, 'training.ckpt'), 'utf8'));

  it('the trial container prints the metric Katib\'s default filter reads, and a second run resumes from the checkpoint', async () => {
    const dir = join(host, 'ckpt');
    const run = async (name: string): Promise<string> => {
      const job = trialJob(name, '0.0150');
      const c = job.spec.template.spec.containers[0];
      assert.equal(c.image, 'ghcr.io/kubeflow/katib/simple-pbt:latest');
      assert.deepEqual(c.command, ['python3', '/opt/pbt/pbt_test.py', '--epochs=20', '--lr=0.0150', '--checkpoint=/var/log/katib/checkpoints/']);
      // the volume Skiff's Trial controller mounts for a PBT trial
      job.spec.template.spec.volumes = [{ name: 'suggestion-volume', hostPath: { path: dir, type: 'DirectoryOrCreate' } }];
      c.volumeMounts = [{ name: 'suggestion-volume', mountPath: '/var/log/katib/checkpoints/' }];
      await s.create('/apis/batch/v1/namespaces/default/jobs', job);
      await complete('default', name);
      return logs('default', name);
    };
    const first = await run('simple-pbt-first');
    assert.match(first, /^epoch 21:\nlr=0\.0150\nValidation-accuracy=\d\.\d{4}\n$/);
    const [acc] = readMetric(first);
    assert.equal(readMetric(first).length, 1, 'one metric line, printed once training ends');
    assert.ok(acc !== undefined && acc >= 0 && acc <= 1, `accuracy ${acc} is a fraction`);
    assert.equal(checkpoint(dir).step, 21);
    assert.equal(Number((checkpoint(dir).accuracy / 100).toFixed(4)), acc, 'the checkpoint holds what was printed');
    const second = await run('simple-pbt-second');
    assert.match(second, /^epoch 41:\n/, 'twenty more epochs after the checkpoint\'s twenty');
    assert.equal(checkpoint(dir).step, 41);
  });

  it('a metrics volume over /var/log/katib, listed after the checkpoint volume, does not hide it', async () => {
    const dir = join(host, 'ckpt-under-metrics');
    const metrics = join(host, 'metrics');
    const job = trialJob('simple-pbt-nested', '0.0010');
    const c = job.spec.template.spec.containers[0];
    job.spec.template.spec.volumes = [
      { name: 'suggestion-volume', hostPath: { path: dir, type: 'DirectoryOrCreate' } },
      { name: 'metrics-volume', hostPath: { path: metrics, type: 'DirectoryOrCreate' } },
    ];
    c.volumeMounts = [{ name: 'suggestion-volume', mountPath: '/var/log/katib/checkpoints/' }, { name: 'metrics-volume', mountPath: '/var/log/katib' }];
    await s.create('/apis/batch/v1/namespaces/default/jobs', job);
    await complete('default', 'simple-pbt-nested');
    assert.equal(checkpoint(dir).step, 21);
    assert.ok(!existsSync(join(metrics, 'checkpoints', 'training.ckpt')));
  });

  it('without a volume the checkpoint stays in the container\'s own directory; ENTRYPOINT runs with args only', async () => {
    await s.create('/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'simple-pbt-entrypoint' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'docker.io/kubeflowkatib/simple-pbt:v0.14.0', args: ['--epochs=3', '--lr=0.002'] }] } } },
    });
    await complete('default', 'simple-pbt-entrypoint');
    assert.match(await logs('default', 'simple-pbt-entrypoint'), /^epoch 4:\nlr=0\.0020\nValidation-accuracy=\d\.\d{4}\n$/);
    if (!hostHadCheckpoints) assert.ok(!existsSync('/var/log/katib/checkpoints'), 'nothing written on the host\'s /var/log');
  });

  const experiments = '/apis/kubeflow.org/v1beta1/namespaces/kubeflow/experiments';
  const finished = (name: string): Promise<any> => s.until(`experiment ${name} to finish`, async () => {
    const e = await s.get(`${experiments}/${name}`);
    const end = e.status?.conditions?.find((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
    return end && e;
  }, 240_000);
  const trialsOf = async (name: string): Promise<any[]> => (await s.get(`/apis/kubeflow.org/v1beta1/namespaces/kubeflow/trials?labelSelector=katib.kubeflow.org%2Fexperiment%3D${name}`)).items;
  const ckptDir = (exp: string, trial: string): string => join(s.dataDir, 'tuning', 'checkpoints', 'kubeflow', exp, trial);

  it('hp-tuning/simple-pbt.yaml runs as it is: two first-generation trials, each with its checkpoint', async () => {
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubeflow' } });
    await s.create(experiments, YAML.parse(readFileSync(example, 'utf8')));
    const e = await finished('simple-pbt');
    const trials = await trialsOf('simple-pbt');
    assert.equal(e.status.conditions.find((c: any) => c.status === 'True' && (c.type === 'Succeeded' || c.type === 'Failed')).type, 'Succeeded', JSON.stringify(e.status.conditions));
    assert.equal(trials.length, 2);
    for (const t of trials) {
      assert.equal(t.metadata.labels['pbt.suggestion.katib.kubeflow.org/generation'], '0');
      assert.equal(t.metadata.labels['pbt.suggestion.katib.kubeflow.org/parent'], undefined);
      const m = t.status.observation.metrics.find((x: any) => x.name === metricName);
      assert.ok(Number(m.latest) >= 0 && Number(m.latest) <= 1, JSON.stringify(m));
      const ck = checkpoint(ckptDir('simple-pbt', t.metadata.name));
      assert.equal(ck.step, 21);
      assert.equal((ck.accuracy / 100).toFixed(4), Number(m.latest).toFixed(4));
    }
  });

  it('a second generation continues from its parents\' checkpoints', async () => {
    const exp = YAML.parse(readFileSync(example, 'utf8'));
    exp.metadata.name = 'simple-pbt-gen1';
    exp.spec.maxTrialCount = 7;
    exp.spec.parallelTrialCount = 5;
    exp.spec.objective.goal = 2; // never reached: all seven trials run
    exp.spec.algorithm.algorithmSettings.find((x: any) => x.name === 'n_population').value = '5';
    await s.create(experiments, exp);
    await finished('simple-pbt-gen1');
    const trials = await trialsOf('simple-pbt-gen1');
    const gen = (t: any): string => t.metadata.labels['pbt.suggestion.katib.kubeflow.org/generation'];
    assert.deepEqual(trials.map(gen).sort(), ['0', '0', '0', '0', '0', '1', '1']);
    const names = new Set(trials.filter((t) => gen(t) === '0').map((t) => t.metadata.name));
    for (const t of trials.filter((x) => gen(x) === '1')) {
      const parent = t.metadata.labels['pbt.suggestion.katib.kubeflow.org/parent'];
      assert.ok(names.has(parent), `${t.metadata.name}'s parent ${parent} is a first-generation trial`);
      assert.ok(t.status.conditions.some((c: any) => c.type === 'Succeeded' && c.status === 'True'), JSON.stringify(t.status.conditions));
      // twenty epochs on top of the parent's twenty, the parent's own checkpoint untouched
      assert.equal(checkpoint(ckptDir('simple-pbt-gen1', t.metadata.name)).step, 41);
      assert.equal(checkpoint(ckptDir('simple-pbt-gen1', parent)).step, 21);
    }
  });
});
