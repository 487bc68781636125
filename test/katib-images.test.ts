// Katib's example trial image end to end: the trial Jobs of upstream Experiments (their
// trialTemplate, with Katib's textual substitution of trial parameters) run on `skiff up` with the
// image name unchanged, and what the program writes parses as Katib's collectors parse it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../src/conformance-path.js';
import { imageDirOnHost } from '../src/substrate/local/environments.js';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { TestServer, repoRoot } from './harness.js';

const examples = join(conformanceDir(), 'katib', 'v1beta1');
const skip = !existsSync(examples) ? 'no ../shared/conformance/katib here'
  : !existsSync(join(repoRoot, '.venv', 'bin', 'python')) ? 'no .venv: run scripts/setup.sh'
    : !bwrapAvailable() ? 'bubblewrap cannot run here, so no image files can be bound into a container' : false;

/**
 * Katib's StdOut/File TEXT default filter (pkg/metricscollector/v1beta1/common/const.go,
 * DefaultFilter): the examples without a metricsFormat are parsed with it. Group 1 is the name,
 * group 2 the value.
 */
const katibDefaultFilter = String.raw`([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?)`;

const experiment = (file: string): any => YAML.parse(readFileSync(join(examples, file), 'utf8'));

/**
 * A trial's Job as Katib's Trial controller makes it: each `${trialParameters.x}` replaced in the
 * serialised trialSpec by the value of the parameter x references (here the point 3/4 of the way
 * through each feasible range), then named after the trial.
 */
function trialJob(exp: any, name: string): { job: any; assignments: Record<string, number> } {
  const assignments: Record<string, number> = {};
  for (const p of exp.spec.parameters) {
    const min = Number(p.feasibleSpace.min);
    const max = Number(p.feasibleSpace.max);
    assignments[p.name] = Number((min + 0.75 * (max - min)).toFixed(4));
  }
  const byTrialParameter = Object.fromEntries(exp.spec.trialTemplate.trialParameters.map((t: any) => [t.name, assignments[t.reference]]));
  const text = JSON.stringify(exp.spec.trialTemplate.trialSpec).replace(/\$\{trialParameters\.([\w-]+)\}/g, (_, n: string) => {
    assert.ok(n in byTrialParameter, `trialParameters.${n} is not defined`);
    return String(byTrialParameter[n]);
  });
  const job = JSON.parse(text);
  job.metadata = { name, namespace: 'default' };
  return { job, assignments };
}

/** the primary container's command, as the trial runs it */
const primary = (exp: any, job: any): any => job.spec.template.spec.containers.find((c: any) => c.name === exp.spec.trialTemplate.primaryContainerName);

/**
 * Katib's TEXT parsing: a line is scanned only when it contains a wanted metric name; each match's
 * name must equal one; the line's time is its first token when that is an RFC 3339 time.
 */
const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

function collect(text: string, filters: string[], names: string[]): { name: string; value: number; time: string }[] {
  const out: { name: string; value: number; time: string }[] = [];
  for (const line of text.split('\n')) {
    if (!names.some((n) => line.includes(n))) continue;
    for (const f of filters) {
      for (const m of line.matchAll(new RegExp(f, 'g'))) {
        const name = (m[1] ?? '').trim();
        if (!names.includes(name)) continue;
        const time = line.split(' ')[0] ?? '';
        out.push({ name, value: Number((m[2] ?? '').trim()), time: rfc3339.test(time) ? time : '' });
      }
    }
  }
  return out;
}

describe('Katib\'s pytorch-mnist trial image', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  const host = mkdtempSync(join(tmpdir(), 'skiff-katib-images-'));
  const katibExisted = existsSync('/katib');
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    rmSync(host, { recursive: true, force: true });
  });

  const jobs = '/apis/batch/v1/namespaces/default/jobs';
  const complete = (name: string): Promise<any> => s.until(`job ${name} to complete`, async () => {
    const j = await s.get(`${jobs}/${name}`);
    const failed = j.status?.conditions?.find((c: any) => c.type === 'Failed' && c.status === 'True');
    if (failed) throw new Error(`job ${name} failed: ${failed.message}\n${await logs(name)}`);
    return j.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') && j;
  }, 180_000);
  const logs = async (name: string): Promise<string> => {
    const pods = await s.get(`/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D${name}`);
    return (await s.req('GET', `/api/v1/namespaces/default/pods/${pods.items[0].metadata.name}/log`)).text;
  };
  /** the metrics volume Katib's webhook mounts at the directory of the collector's file, here kept on the host to read */
  const withMetricsVolume = (exp: any, job: any, dir: string): void => {
    const path: string = exp.spec.metricsCollectorSpec.source.fileSystemPath.path;
    job.spec.template.spec.volumes = [{ name: 'metrics-volume', hostPath: { path: dir, type: 'DirectoryOrCreate' } }];
    primary(exp, job).volumeMounts = [{ name: 'metrics-volume', mountPath: dirname(path) }];
  };

  it('hp-tuning/random.yaml: the training log on stdout, with the loss Katib\'s default filter reads', async () => {
    const exp = experiment('hp-tuning/random.yaml');
    const { job, assignments } = trialJob(exp, 'random-x7k2m9pq');
    const c = primary(exp, job);
    assert.equal(c.image, 'ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest');
    assert.deepEqual(c.command, ['python3', '/opt/pytorch-mnist/mnist.py', '--epochs=1', '--batch-size=16', `--lr=${assignments.lr}`, `--momentum=${assignments.momentum}`]);
    assert.equal(exp.spec.metricsCollectorSpec, undefined, 'random.yaml uses the StdOut collector with the default filter');
    await s.create(jobs, job);
    await complete('random-x7k2m9pq');
    const text = await logs('random-x7k2m9pq');
    const lines = text.split('\n').filter(Boolean);
    // the standard logger's lines: UTC time, the level padded to 8, the message
    for (const l of lines) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ INFO {5}\S/, l);
    // 1,437 training images at batch size 16: 90 steps, logged every 10th
    const train = lines.filter((l) => l.includes('Train Epoch: 1 ['));
    assert.deepEqual(train.map((l) => /\[(\d+)\/1437 \((\d+)%\)\]\tloss=\d+\.\d{4}$/.exec(l)?.slice(1, 3).join(' ')), ['0 0', '160 11', '320 22', '480 33', '640 44', '800 56', '960 67', '1120 78', '1280 89']);
    const got = collect(text, [katibDefaultFilter], [exp.spec.objective.objectiveMetricName]);
    assert.equal(got.length, train.length, 'one loss per training log line');
    for (const m of got) {
      assert.equal(m.name, 'loss');
      assert.ok(Number.isFinite(m.value) && m.value > 0, `loss=${m.value}`);
      assert.ok(m.time, 'each line\'s first token is its time, as Katib reads it');
    }
    // the evaluation line is there too, in the format the file-collector examples' filter reads
    assert.match(text, /\{metricName: accuracy, metricValue: \d\.\d{4}\};\{metricName: loss, metricValue: \d+\.\d{4}\}\n/);
  });

  it('metrics-collector/file-metrics-collector.yaml: the log file, parsed with the example\'s metricsFormat', async () => {
    const exp = experiment('metrics-collector/file-metrics-collector.yaml');
    const { job } = trialJob(exp, 'file-metrics-collector-p4n8q2zd');
    const source = exp.spec.metricsCollectorSpec.source;
    assert.equal(source.fileSystemPath.path, '/katib/mnist.log');
    assert.ok(primary(exp, job).command.includes(`--log-path=${source.fileSystemPath.path}`));
    const dir = join(host, 'text');
    withMetricsVolume(exp, job, dir);
    await s.create(jobs, job);
    await complete('file-metrics-collector-p4n8q2zd');
    const text = readFileSync(join(dir, 'mnist.log'), 'utf8');
    assert.doesNotMatch(await logs('file-metrics-collector-p4n8q2zd'), /metricName/, 'with --log-path the log goes to the file only');
    const names = [exp.spec.objective.objectiveMetricName, ...exp.spec.objective.additionalMetricNames];
    const got = collect(text, source.filter.metricsFormat, names);
    assert.deepEqual(got.map((m) => m.name), ['accuracy', 'loss']);
    const [accuracy, loss] = got.map((m) => m.value) as [number, number];
    assert.ok(accuracy > 0.1 && accuracy <= 1, `accuracy ${accuracy}: the model learnt something in one epoch`);
    assert.ok(loss > 0 && loss < 2.3, `loss ${loss}: below chance's ln 10`);
    assert.ok(got.every((m) => m.time));
    // the training lines are in the file, and the example's filter takes nothing from them
    assert.match(text, /Train Epoch: 1 \[0\/1437 \(0%\)\]\tloss=/);
  });

  it('metrics-collector/file-metrics-collector-with-json-format.yaml: cloudml-hypertune\'s JSON lines', async () => {
    const exp = experiment('metrics-collector/file-metrics-collector-with-json-format.yaml');
    const { job } = trialJob(exp, 'file-metrics-collector-with-json-format-k3v9w1xb');
    const fsPath = exp.spec.metricsCollectorSpec.source.fileSystemPath;
    assert.equal(fsPath.format, 'JSON');
    assert.ok(primary(exp, job).command.includes('--logger=hypertune'));
    const dir = join(host, 'json');
    withMetricsVolume(exp, job, dir);
    await s.create(jobs, job);
    await complete(job.metadata.name);
    const lines = readFileSync(join(dir, fsPath.path.split('/').pop()), 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'every line ends with a newline');
    const records = lines.map((l) => JSON.parse(l));
    // Katib's JSON collector takes a metric only when its value is a string
    const names = [exp.spec.objective.objectiveMetricName, ...exp.spec.objective.additionalMetricNames];
    assert.deepEqual(records.map((r) => Object.keys(r).find((k) => names.includes(k))), ['loss', 'accuracy']);
    for (const r of records) {
      const name = names.find((n) => n in r) as string;
      assert.deepEqual(Object.keys(r), [...Object.keys(r)].sort(), 'keys sorted, as json.dumps(sort_keys=True)');
      assert.deepEqual(Object.keys(r).sort(), ['global_step', name, 'timestamp', 'trial'].sort());
      assert.equal(typeof r[name], 'string');
      assert.ok(Number.isFinite(Number(r[name])));
      assert.equal(r.global_step, '1');
      assert.equal(r.trial, '0');
      assert.equal(typeof r.timestamp, 'number');
      assert.ok(Math.abs(r.timestamp * 1000 - Date.now()) < 3_600_000, 'epoch seconds');
    }
    // the log lines stay on stdout with the hypertune logger
    assert.match(await logs(job.metadata.name), /\{metricName: accuracy, metricValue: /);
  });

  it('kubeflow-training-operator/pytorchjob-mnist.yaml: master and worker train together, and agree on the metrics', async () => {
    const exp = experiment('kubeflow-training-operator/pytorchjob-mnist.yaml');
    const { job } = trialJob(exp, 'pytorchjob-mnist-r5t7y2ua');
    assert.equal(job.kind, 'PyTorchJob');
    const base = '/apis/kubeflow.org/v1/namespaces/default/pytorchjobs';
    await s.create(base, job);
    const done = await s.until('the PyTorchJob to end', async () => {
      const j = await s.get(`${base}/pytorchjob-mnist-r5t7y2ua`);
      return j.status?.conditions?.find((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
    }, 180_000);
    const pods = (await s.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent('training.kubeflow.org/job-name=pytorchjob-mnist-r5t7y2ua')}`)).items;
    const texts = await Promise.all(pods.map(async (p: any) => (await s.req('GET', `/api/v1/namespaces/default/pods/${p.metadata.name}/log`)).text));
    assert.equal(done.type, 'Succeeded', texts.join('\n---\n'));
    assert.equal(texts.length, 2);
    const metrics = texts.map((t) => {
      assert.match(t, /^Using distributed PyTorch with gloo backend$/m);
      // each process trains on its half of the 1,437 images
      assert.match(t, /Train Epoch: 1 \[0\/719 \(0%\)\]\tloss=/);
      return /\{metricName: accuracy.*\}/.exec(t)?.[0];
    });
    assert.ok(metrics[0]);
    assert.equal(metrics[0], metrics[1], 'DDP keeps the replicas\' weights equal, so both evaluate the same');
  });

  it('the image\'s own /katib takes the file when no volume is mounted; its program is read-only', async () => {
    const exp = experiment('metrics-collector/file-metrics-collector.yaml');
    const { job } = trialJob(exp, 'file-metrics-collector-novol001');
    const c = primary(exp, job);
    // the program fails if it cannot write its --log-path; a shell after it shows the directory
    c.command = ['sh', '-c', `${c.command.join(' ')} && cat /katib/mnist.log && touch /opt/pytorch-mnist/x 2>/dev/null || echo read-only`];
    await s.create(jobs, job);
    await complete('file-metrics-collector-novol001');
    const text = await logs('file-metrics-collector-novol001');
    assert.match(text, /\{metricName: accuracy, metricValue: \d\.\d{4}\};\{metricName: loss, metricValue: \d+\.\d{4}\}/);
    assert.match(text, /read-only\n$/);
    // where Skiff finds a file the trial wrote into its image's /katib (a File collector needs it)
    const pods = await s.get('/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dfile-metrics-collector-novol001');
    const onHost = join(imageDirOnHost(join(s.dataDir, 'pods', pods.items[0].metadata.uid), 'training-container', '/katib'), 'mnist.log');
    assert.match(readFileSync(onHost, 'utf8'), /\{metricName: accuracy, metricValue: \d\.\d{4}\}/);
    if (!katibExisted) assert.ok(!existsSync('/katib'), 'nothing written on the host\'s /katib');
  });

  it('the image\'s ENTRYPOINT runs when a container gives only args', async () => {
    await s.create(jobs, {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'mnist-entrypoint' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727', args: ['--epochs=1', '--batch-size=64', '--log-interval=5'] }] } } },
    });
    await complete('mnist-entrypoint');
    const text = await logs('mnist-entrypoint');
    // 1,437 images at batch size 64: 23 steps, logged every 5th
    assert.deepEqual([...text.matchAll(/\[(\d+)\/1437/g)].map((m) => m[1]), ['0', '320', '640', '960', '1280']);
  });
});

describe('image files without bubblewrap', { skip: !existsSync(examples) && 'no ../shared/conformance/katib here', timeout: 120_000 }, () => {
  let s: TestServer;
  before(async () => {
    // the server reads this when it starts; this process's own probe is not affected
    process.env.SKIFF_NO_BWRAP = '1';
    try {
      s = await TestServer.start();
    } finally {
      delete process.env.SKIFF_NO_BWRAP;
    }
  });
  after(async () => {
    await s?.cleanup();
  });

  it('fails the Pod, saying why, instead of running the program without its files', async () => {
    const exp = experiment('hp-tuning/random.yaml');
    const { job } = trialJob(exp, 'random-nobwrap1');
    job.spec.backoffLimit = 0;
    await s.create('/apis/batch/v1/namespaces/default/jobs', job);
    const pod = await s.until('the pod to fail', async () => {
      const pods = await s.get('/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Drandom-nobwrap1');
      return pods.items.find((p: any) => p.status?.phase === 'Failed');
    });
    assert.equal(pod.status.reason, 'ImageFilesUnavailable');
    assert.match(pod.status.message, /container training-container: image ghcr\.io\/kubeflow\/katib\/pytorch-mnist-cpu:latest provides files at \/opt\/pytorch-mnist, \/katib, which need bubblewrap \(bwrap\)/);
    const events = (await s.get('/api/v1/namespaces/default/events')).items.filter((e: any) => e.involvedObject?.name === pod.metadata.name);
    assert.ok(events.some((e: any) => e.type === 'Warning' && /need bubblewrap/.test(e.message)), JSON.stringify(events.map((e: any) => e.message)));
    const state = pod.status.containerStatuses?.[0]?.state;
    assert.ok(!state?.running, 'the program never started');
  });
});
