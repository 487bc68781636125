// The Trial controller end to end on the real store, with the real Job controller and the fake node
// agent running the trial's Pods; what the Pods print or write is scripted at the substrate's seam
// (ScriptedPodLogs, ScriptedPodFiles).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from '../../api/batch.js';
import type { Condition } from '../../api/conditions.js';
import type { PodTemplateSpec } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { Kinds } from '../../api/index.js';
import type { ObservationLog, Trial } from '../../api/tuning-types.js';
import { Manager } from '../../control/controller.js';
import { GarbageCollector } from '../../control/gc.js';
import { TestEnv } from '../../testing/fake-agent.js';
import type { PodObject } from '../jobs/pods.js';
import { filesBegin, filesEnd, filesInLogScript } from './files-in-log.js';
import { addTrialController, metricsPath, renderTrialJob } from './trial-controller.js';
import type { TrialOptions } from './testing.js';
import { ScriptedPodFiles, ScriptedPodLogs, encodeEvent, makeTrial, tfRecords } from './testing.js';

let env: TestEnv;
let logs: ScriptedPodLogs;
let files: ScriptedPodFiles;
let gc: GarbageCollector;
const managers: Manager[] = [];

beforeEach(async () => {
  env = await TestEnv.start();
  logs = new ScriptedPodLogs();
  files = new ScriptedPodFiles();
  gc = new GarbageCollector(env.client, env.store, env.registry);
  await gc.start();
  env.runController();
});

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  await gc.stop();
  await env.close();
});

function startTrials(): Manager {
  const mgr = new Manager(env.client);
  addTrialController(mgr, { client: env.client, recorder: env.recorder, podLogs: logs, podFiles: files, pollMs: 10 });
  mgr.start();
  managers.push(mgr);
  return mgr;
}

const trialKey = (name: string) => ({ namespace: 'default', name });
const getTrial = async (name: string): Promise<Trial | undefined> => env.client.find<Trial>(Kinds.Trial, trialKey(name));
const getLog = async (name: string): Promise<ObservationLog | undefined> => env.client.find<ObservationLog>(Kinds.ObservationLog, trialKey(name));
const cond = (t: Trial | undefined, type: string): Condition | undefined => t?.status?.conditions?.find((c) => c.type === type);

async function createTrial(name: string, o: TrialOptions = {}): Promise<void> {
  await env.client.create(makeTrial(name, o));
}

async function waitTrial(name: string, type: string): Promise<Trial> {
  return env.waitFor(`trial ${name} ${type}`, async () => {
    const t = await getTrial(name);
    return cond(t, type)?.status === 'True' ? t : undefined;
  });
}

const metric = (t: Trial, name: string) => t.status?.observation?.metrics?.find((m) => m.name === name);

describe('trial controller', () => {
  it('runs a batch Job trial, reads its StdOut metrics, succeeds, and deletes the job (retain false)', async () => {
    let seen: PodObject | undefined;
    env.agent.script = (pod) => {
      seen = pod;
      logs.set(pod.metadata.name, 'epoch 1: loss=0.9 accuracy=0.5\nsome noise\nepoch 2: loss=0.4 accuracy=0.8\n2024-01-01T00:00:00Z loss=0.6\n', 'training');
      return { exitCode: 0 };
    };
    startTrials();
    await createTrial('t1', { labels: { team: 'a' } });
    const job = await env.waitFor('job', async () => env.job('t1'));
    // the job Katib would deploy: named and owned by the Trial, labelled, every container told its trial
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, 'Trial');
    assert.equal(job.metadata.labels?.['katib.kubeflow.org/trial'], 't1');
    assert.equal(job.metadata.labels?.team, 'a');
    const tpl = (job as Job).spec.template;
    assert.equal(tpl.metadata?.labels?.['katib.kubeflow.org/trial'], 't1');
    assert.deepEqual(tpl.spec.containers[0]?.env, [{ name: 'KATIB_TRIAL_NAME', value: 't1' }]);
    const t = await waitTrial('t1', 'Succeeded');
    assert.equal(seen?.metadata.labels?.['katib.kubeflow.org/trial'], 't1');
    assert.equal(seen?.spec.containers[0]?.env?.find((e) => e.name === 'KATIB_TRIAL_NAME')?.value, 't1');
    assert.match(cond(t, 'Succeeded')?.reason ?? '', /^TrialSucceeded/);
    assert.match(cond(t, 'Succeeded')?.message ?? '', /^Trial has succeeded/);
    assert.equal(cond(t, 'Created')?.reason, 'TrialCreated');
    assert.equal(cond(t, 'Running')?.status, 'False');
    assert.equal(cond(t, 'Running')?.reason, 'TrialRunning');
    assert.ok(t.status?.startTime && t.status.completionTime);
    // minimize: default strategy min for both metrics; latest = the line stamped latest (2024 beats zero time)
    assert.deepEqual(metric(t, 'loss'), { name: 'loss', min: '0.4', max: '0.9', latest: '0.6' });
    assert.deepEqual(metric(t, 'accuracy'), { name: 'accuracy', min: '0.5', max: '0.8', latest: '0.8' });
    const olog = await getLog('t1');
    assert.deepEqual(olog?.spec.metricLogs.map((l) => `${l.name}=${l.value}`), ['loss=0.9', 'accuracy=0.5', 'loss=0.4', 'accuracy=0.8', 'loss=0.6']);
    assert.equal(olog?.metadata.ownerReferences?.[0]?.uid, t.metadata?.uid);
    await env.waitFor('job deleted', async () => (await env.job('t1')) === undefined);
    assert.ok(env.recorder.reasons().includes('JobSucceeded'));
  });

  it('a metric that never appears: MetricsUnavailable, naming it', async () => {
    env.agent.script = (pod) => {
      logs.set(pod.metadata.name, 'accuracy=0.5\nloss: 0.3\n');
      return { exitCode: 0 };
    };
    startTrials();
    await createTrial('t2', { retainRun: true });
    const t = await waitTrial('t2', 'MetricsUnavailable');
    assert.match(cond(t, 'MetricsUnavailable')?.reason ?? '', /^MetricsUnavailable/);
    assert.match(cond(t, 'MetricsUnavailable')?.message ?? '', /Metrics are not available: metric loss was not reported/);
    assert.equal(cond(t, 'Succeeded'), undefined);
    assert.equal(metric(t, 'loss')?.latest, 'unavailable');
    assert.equal(metric(t, 'accuracy')?.latest, '0.5');
    const olog = await getLog('t2');
    assert.deepEqual(olog?.spec.metricLogs.map((l) => `${l.name}=${l.value}`), ['accuracy=0.5', 'loss=unavailable']);
    // retained: the job stays
    assert.ok(await env.job('t2'));
  });

  it('a failing payload fails the trial with the job reason', async () => {
    env.agent.script = (pod) => {
      logs.set(pod.metadata.name, 'loss=0.7\nTraceback: boom\n');
      return { exitCode: 1 };
    };
    startTrials();
    await createTrial('t3');
    const t = await waitTrial('t3', 'Failed');
    assert.equal(cond(t, 'Failed')?.reason, 'TrialFailed. Job reason: BackoffLimitExceeded');
    assert.match(cond(t, 'Failed')?.message ?? '', /^Trial has failed. Job message: /);
    assert.equal(cond(t, 'Succeeded'), undefined);
    // what it printed before failing is kept
    assert.equal(metric(t, 'loss')?.latest, '0.7');
  });

  it('File collector, JSON: numbers and strings; the metrics directory is an emptyDir on the primary container', async () => {
    const path = '/var/log/katib/metrics.json';
    env.agent.script = (pod) => {
      files.set(pod.metadata.name, path, '{"loss": 0.8, "timestamp": 1700000000}\n{"loss": "0.3", "accuracy": 0.9, "timestamp": 1700000001}\n');
      return { exitCode: 0 };
    };
    startTrials();
    await createTrial('t4', { metricsCollector: { collector: { kind: 'File' }, source: { fileSystemPath: { path, kind: 'File', format: 'JSON' } } } });
    const job = await env.waitFor('job', async () => env.job('t4'));
    const spec = (job as Job).spec.template.spec;
    assert.deepEqual(spec.volumes, [{ name: 'metrics-volume', emptyDir: {} }]);
    assert.deepEqual(spec.containers[0]?.volumeMounts, [{ name: 'metrics-volume', mountPath: '/var/log/katib' }]);
    const t = await waitTrial('t4', 'Succeeded');
    assert.deepEqual(metric(t, 'loss'), { name: 'loss', min: '0.3', max: '0.8', latest: '0.3' });
    assert.deepEqual(metric(t, 'accuracy'), { name: 'accuracy', min: '0.9', max: '0.9', latest: '0.9' });
  });

  it("File collector where the node's files are out of reach (podFiles 'log'): the command is wrapped, the file read back from its log", async () => {
    const path = '/var/log/katib/metrics.log';
    let command: string[] | undefined;
    env.agent.script = (pod) => {
      command = pod.spec.containers[0]?.command;
      // what the wrapper prints after the command: the file, base64, between the markers
      const block = [filesBegin, `=== ${path}`, Buffer.from('loss=0.7\nloss=0.2\n').toString('base64'), filesEnd].join('\n');
      logs.set(pod.metadata.name, `training\nloss=9\n${block}\n`, 'training');
      return { exitCode: 0 };
    };
    const mgr = new Manager(env.client);
    // no file on any node: only the log may answer
    addTrialController(mgr, { client: env.client, recorder: env.recorder, podLogs: logs, podFiles: 'log', pollMs: 10 });
    mgr.start();
    managers.push(mgr);
    await createTrial('fl', { metricsCollector: { collector: { kind: 'File' }, source: { fileSystemPath: { path, kind: 'File' } } } });
    const t = await waitTrial('fl', 'Succeeded');
    assert.equal(command?.[0], 'sh');
    assert.equal(command?.[1], '-c');
    assert.equal(command?.[2], filesInLogScript(path));
    // the file's values, not the line printed on stdout
    assert.deepEqual(metric(t, 'loss'), { name: 'loss', min: '0.2', max: '0.7', latest: '0.2' });
  });

  it('TensorFlowEvent collector reads the event files under its directory', async () => {
    env.agent.script = (pod) => {
      files.set(pod.metadata.name, '/var/log/katib/tfevent/train/events.out.tfevents.1', tfRecords([
        encodeEvent(1700000001, 1, [{ tag: 'accuracy', simple: 0.5 }]),
        encodeEvent(1700000002, 2, [{ tag: 'accuracy', tensorFloat: 0.75 }]),
      ]));
      return { exitCode: 0 };
    };
    startTrials();
    await createTrial('t5', { objective: { type: 'maximize', objectiveMetricName: 'train/accuracy' }, metricsCollector: { collector: { kind: 'TensorFlowEvent' }, source: { fileSystemPath: { path: '/var/log/katib/tfevent/', kind: 'Directory' } } } });
    const t = await waitTrial('t5', 'Succeeded');
    assert.deepEqual(metric(t, 'train/accuracy'), { name: 'train/accuracy', min: '0.5', max: '0.75', latest: '0.75' });
  });

  it('early stopping: the rule fires while the job runs; the trial is EarlyStopped, not Failed, its job suspended', async () => {
    env.agent.script = (pod) => {
      logs.set(pod.metadata.name, 'accuracy=0.3\naccuracy=0.45\naccuracy=0.4\n');
      return undefined; // keeps running: only the rule ends it
    };
    startTrials();
    await createTrial('t6', {
      retainRun: true,
      objective: { type: 'maximize', objectiveMetricName: 'accuracy' },
      earlyStoppingRules: [{ name: 'accuracy', value: '0.6', comparison: 'less', startStep: 3 }],
    });
    const t = await waitTrial('t6', 'EarlyStopped');
    assert.equal(cond(t, 'EarlyStopped')?.reason, 'TrialEarlyStopped');
    assert.equal(cond(t, 'Running')?.status, 'False');
    assert.deepEqual(metric(t, 'accuracy'), { name: 'accuracy', min: '0.3', max: '0.45', latest: '0.4' });
    const job = await env.waitFor('job suspended', async () => {
      const j = await env.job('t6');
      return j?.spec.suspend === true ? j : undefined;
    });
    await env.waitFor('pods gone', async () => (await env.pods()).every((p: PodObject) => p.status?.phase === 'Failed' || p.metadata.deletionTimestamp));
    // the stopped job does not turn the trial Failed
    await new Promise((r) => setTimeout(r, 50));
    const after = await getTrial('t6');
    assert.equal(cond(after, 'Failed'), undefined);
    assert.equal(job.metadata.ownerReferences?.[0]?.name, 't6');
  });

  it('a rule that does not fire lets the trial run to its end', async () => {
    let done = false;
    env.agent.script = (pod) => {
      logs.set(pod.metadata.name, 'accuracy=0.3\naccuracy=0.7\naccuracy=0.4\n');
      return done ? { exitCode: 0 } : undefined;
    };
    startTrials();
    await createTrial('t7', {
      objective: { type: 'maximize', objectiveMetricName: 'accuracy' },
      earlyStoppingRules: [{ name: 'accuracy', value: '0.6', comparison: 'less', startStep: 3 }],
    });
    // several polls read the full log and find the best so far 0.7 at step 3
    await env.waitFor('polled', async () => logs.reads >= 3);
    assert.equal(cond(await getTrial('t7'), 'EarlyStopped'), undefined);
    done = true;
    const pod = (await env.pods())[0] as PodObject;
    env.agent.finish(pod.metadata.name, { exitCode: 0 });
    const t = await waitTrial('t7', 'Succeeded');
    assert.equal(metric(t, 'accuracy')?.max, '0.7');
  });

  it('while the job runs, a line still being written is not read', async () => {
    let done = false;
    env.agent.script = (pod) => {
      // "loss=0" is the start of "loss=0.5": read early, it would fire the rule
      logs.set(pod.metadata.name, done ? 'loss=0.9\nloss=0.5\n' : 'loss=0.9\nloss=0');
      return done ? { exitCode: 0 } : undefined;
    };
    startTrials();
    await createTrial('t7b', {
      objective: { type: 'maximize', objectiveMetricName: 'accuracy', additionalMetricNames: ['loss'] },
      earlyStoppingRules: [{ name: 'loss', value: '0.1', comparison: 'less' }],
    });
    await env.waitFor('polled', async () => logs.reads >= 3);
    const running = await getTrial('t7b');
    assert.equal(cond(running, 'EarlyStopped'), undefined);
    // values of a running trial are in its ObservationLog, not yet in its observation
    assert.deepEqual((await getLog('t7b'))?.spec.metricLogs.map((l) => l.value), ['0.9']);
    assert.equal(running?.status?.observation, undefined);
    done = true;
    const pod = (await env.pods())[0] as PodObject;
    logs.set(pod.metadata.name, 'loss=0.9\nloss=0.5\n');
    env.agent.finish(pod.metadata.name, { exitCode: 0 });
    const t = await waitTrial('t7b', 'MetricsUnavailable');
    assert.equal(metric(t, 'loss')?.latest, '0.5');
  });

  it('collectors that read nothing end MetricsUnavailable once the job succeeds, saying why', async () => {
    startTrials();
    await createTrial('n1', { metricsCollector: { collector: { kind: 'None' } } });
    await createTrial('n2', { metricsCollector: { collector: { kind: 'PrometheusMetric' } } });
    assert.match(cond(await waitTrial('n1', 'MetricsUnavailable'), 'MetricsUnavailable')?.message ?? '', /collector is None/);
    assert.match(cond(await waitTrial('n2', 'MetricsUnavailable'), 'MetricsUnavailable')?.message ?? '', /PrometheusMetric metrics collector is not supported/);
  });

  it('Push: the trial summarises what was pushed; nothing pushed is MetricsUnavailable at once', async () => {
    env.agent.script = () => undefined;
    startTrials();
    await createTrial('p1', { metricsCollector: { collector: { kind: 'Push' } } });
    await env.waitFor('job', async () => env.job('p1'));
    // what the push endpoint writes
    await env.client.create({
      apiVersion: 'tuning.skiff.dev/v1', kind: 'ObservationLog', metadata: { name: 'p1', namespace: 'default' },
      spec: { trialName: 'p1', metricLogs: [{ timeStamp: '2024-01-01T00:00:01Z', name: 'loss', value: '0.2' }, { timeStamp: '2024-01-01T00:00:02Z', name: 'loss', value: '0.3' }] },
    });
    await createTrial('p2', { metricsCollector: { collector: { kind: 'Push' } } });
    await env.waitFor('pods', async () => (await env.pods()).length === 2);
    for (const pod of await env.pods()) env.agent.finish(pod.metadata.name, { exitCode: 0 });
    const p1 = await waitTrial('p1', 'Succeeded');
    assert.deepEqual(metric(p1, 'loss'), { name: 'loss', min: '0.2', max: '0.3', latest: '0.3' });
    const p2 = await waitTrial('p2', 'MetricsUnavailable');
    assert.match(cond(p2, 'MetricsUnavailable')?.message ?? '', /metric loss was not reported/);
    assert.deepEqual((await getLog('p2'))?.spec.metricLogs, [{ timeStamp: '0001-01-01T00:00:00Z', name: 'loss', value: 'unavailable' }]);
  });

  it('a controller restart mid-trial: one job, one set of values, the same outcome', async () => {
    let finish = false;
    env.agent.script = (pod) => {
      logs.set(pod.metadata.name, 'loss=0.5\nloss=0.25\n');
      return finish ? { exitCode: 0 } : undefined;
    };
    const first = startTrials();
    await createTrial('t8', { retainRun: true });
    await waitTrial('t8', 'Running');
    const job = await env.waitFor('job', async () => env.job('t8'));
    await first.stop();
    managers.splice(managers.indexOf(first), 1);
    finish = true;
    const pod = await env.waitFor('pod', async () => (await env.pods())[0]);
    env.agent.finish(pod.metadata.name, { exitCode: 0 });
    await env.waitForCondition('t8', 'Complete');
    // two controllers after the restart, as a worst case: both converge on the same state
    startTrials();
    startTrials();
    const t = await waitTrial('t8', 'Succeeded');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await env.job('t8'))?.metadata.uid, job.metadata.uid);
    assert.equal(env.agent.created.length, 1);
    assert.deepEqual((await getLog('t8'))?.spec.metricLogs.map((l) => l.value), ['0.5', '0.25']);
    assert.deepEqual(metric(t, 'loss'), { name: 'loss', min: '0.25', max: '0.5', latest: '0.25' });
    assert.equal((await getTrial('t8'))?.status?.conditions?.filter((c) => c.type === 'Succeeded').length, 1);
  });

  it('a deleted Trial takes its job with it (owner garbage collection)', async () => {
    env.agent.script = () => undefined;
    startTrials();
    await createTrial('t9');
    await env.waitFor('job', async () => env.job('t9'));
    await env.client.delete(Kinds.Trial, trialKey('t9'));
    await env.waitFor('job gone', async () => (await env.job('t9')) === undefined);
    assert.equal((await env.client.listAll(Kinds.Job)).length, 0);
  });
});

describe('the trial job', () => {
  const stored = (t: Trial): Trial & StoredObject => ({ ...t, metadata: { ...t.metadata, name: t.metadata.name as string, uid: 'uid-1', resourceVersion: '1', creationTimestamp: '2024-01-01T00:00:00Z' } });
  it('a training job: every replica template labelled and told its trial; the metrics volume on the primary container', () => {
    const trial = makeTrial('pt', { metricsCollector: { collector: { kind: 'File' }, source: { fileSystemPath: { path: '/out/metrics.log', kind: 'File' } } }, primaryContainerName: 'pytorch' });
    const container = { name: 'pytorch', image: 'x', env: [{ name: 'A', value: '1' }] };
    trial.spec.runSpec = {
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { labels: { own: 'yes' } },
      spec: { pytorchReplicaSpecs: {
        Master: { replicas: 1, template: { spec: { containers: [structuredClone(container), { name: 'side', image: 'y' }] } } },
        Worker: { replicas: 2, template: { metadata: { labels: { 'training.kubeflow.org/job-role': 'worker' } }, spec: { containers: [structuredClone(container)] } } },
      } },
    };
    trial.spec.primaryPodLabels = { 'training.kubeflow.org/job-role': 'master' };
    const job = renderTrialJob(stored(trial)) as unknown as { metadata: Record<string, any>; spec: { pytorchReplicaSpecs: Record<string, { template: PodTemplateSpec }> } };
    assert.equal(job.metadata.name, 'pt');
    assert.equal(job.metadata.namespace, 'default');
    assert.deepEqual(job.metadata.labels, { 'katib.kubeflow.org/experiment': 'exp', 'katib.kubeflow.org/trial': 'pt', own: 'yes' });
    assert.deepEqual(job.metadata.ownerReferences, [{ apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial', name: 'pt', uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
    const master = job.spec.pytorchReplicaSpecs.Master?.template as PodTemplateSpec;
    const worker = job.spec.pytorchReplicaSpecs.Worker?.template as PodTemplateSpec;
    assert.equal(master.metadata?.labels?.['katib.kubeflow.org/trial'], 'pt');
    assert.equal(worker.metadata?.labels?.['katib.kubeflow.org/trial'], 'pt');
    assert.deepEqual(master.spec.containers.map((c) => c.env), [[{ name: 'A', value: '1' }, { name: 'KATIB_TRIAL_NAME', value: 'pt' }], [{ name: 'KATIB_TRIAL_NAME', value: 'pt' }]]);
    assert.deepEqual(master.spec.containers[0]?.volumeMounts, [{ name: 'metrics-volume', mountPath: '/out' }]);
    assert.equal(master.spec.containers[1]?.volumeMounts, undefined);
    assert.deepEqual((master.spec as { volumes?: unknown[] }).volumes, [{ name: 'metrics-volume', emptyDir: {} }]);
    // a template labelled as another role cannot make the primary Pod
    assert.equal(worker.spec.containers[0]?.volumeMounts, undefined);
    // the Trial's own runSpec is not changed
    assert.equal((trial.spec.runSpec.spec as any).pytorchReplicaSpecs.Master.template.metadata, undefined);
  });
  it("a volume the user mounts over the metrics directory is left as it is; a Run gets labels only", () => {
    const trial = makeTrial('f', { metricsCollector: { collector: { kind: 'TensorFlowEvent' } } });
    const spec = (trial.spec.runSpec?.spec as { template: PodTemplateSpec }).template.spec;
    spec.containers[0]!.volumeMounts = [{ name: 'logs', mountPath: '/var/log' }];
    const job = renderTrialJob(stored(trial)) as unknown as { spec: { template: PodTemplateSpec } };
    assert.deepEqual(job.spec.template.spec.containers[0]?.volumeMounts, [{ name: 'logs', mountPath: '/var/log' }]);
    trial.spec.runSpec = { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: {}, spec: { pipelineSpec: {} } };
    const run = renderTrialJob(stored(trial));
    assert.equal(run.metadata.labels?.['katib.kubeflow.org/trial'], 'f');
    assert.deepEqual(run.spec, { pipelineSpec: {} });
    assert.deepEqual(metricsPath({ collector: { kind: 'TensorFlowEvent' } }), { path: '/var/log/katib/tfevent', dir: '/var/log/katib/tfevent' });
    assert.deepEqual(metricsPath({ collector: { kind: 'File' }, source: { fileSystemPath: { path: '/m.log' } } }), { path: '/m.log', dir: '/' });
    assert.equal(metricsPath({ collector: { kind: 'StdOut' } }), undefined);
  });
});

describe('a Killed trial', () => {
  it('its running job is stopped without failing the trial, and deleted when not retained', async () => {
    env.agent.script = () => undefined;
    startTrials();
    await createTrial('k1', { retainRun: true });
    await createTrial('k2');
    await waitTrial('k1', 'Running');
    await waitTrial('k2', 'Running');
    for (const name of ['k1', 'k2']) {
      const t = await getTrial(name) as Trial & StoredObject;
      const conditions = [...(t.status?.conditions ?? []), { type: 'Killed', status: 'True' as const, reason: 'TrialKilled', message: 'Experiment has ended' }];
      await env.client.updateStatus({ ...t, status: { ...t.status, conditions } });
    }
    await env.waitFor('k1 suspended', async () => (await env.job('k1'))?.spec.suspend === true);
    await env.waitFor('k2 deleted', async () => (await env.job('k2')) === undefined);
    assert.equal(cond(await getTrial('k1'), 'Failed'), undefined);
  });
});
