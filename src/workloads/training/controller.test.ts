// The training controller end to end: the real controller on an in-memory store, the fake node agent
// of the Job controller's tests, and a small PyTorch-like kind defined here (names, labels, one
// Service per replica, the PyTorch success rule).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../api/conditions.js';
import type { Pod } from '../../api/core-types.js';
import { Kinds } from '../../api/index.js';
import type { KindDef } from '../../api/registry.js';
import { Manager } from '../../control/controller.js';
import { TestEnv } from '../../testing/fake-agent.js';
import type { Script } from '../../testing/fake-agent.js';
import type { TrainingControllerOptions } from './controller.js';
import { addTrainingController } from './controller.js';
import { updateCondition } from './conditions.js';
import { GangAdmission } from './gang.js';
import type { RenderedReplica, ReplicaRestartPolicy, ReplicaSpec, TrainingJob, TrainingJobStatus, TrainingKind } from './types.js';
import { TrainingLabels } from './types.js';
import { trainingKindFor } from './render.js';
import type { ReplicaOptions } from './testing.js';
import { makePyTorchJob, makeTFJob } from './testing.js';
import type { RunPolicy } from '../../api/training-types.js';

const PyTorchJobDef: KindDef = {
  group: 'kubeflow.org', version: 'v1', kind: 'PyTorchJob', plural: 'pytorchjobs', singular: 'pytorchjob', namespaced: true, hasStatus: true,
};
const TFJobDef: KindDef = {
  group: 'kubeflow.org', version: 'v1', kind: 'TFJob', plural: 'tfjobs', singular: 'tfjob', namespaced: true, hasStatus: true,
};

function fakeKind(kind: string, field: string, container: string): TrainingKind {
  return {
    kind,
    apiVersion: 'kubeflow.org/v1',
    replicaSpecsField: field,
    defaultContainer: container,
    controllerName: `${kind.toLowerCase()}-controller`,
    render(job) {
      const specs = (job.spec[field] ?? {}) as Record<string, ReplicaSpec>;
      const replicas: RenderedReplica[] = [];
      const objects = [];
      for (const type of ['Master', 'Worker']) {
        const spec = specs[type];
        if (!spec) continue;
        const policy: ReplicaRestartPolicy = spec.restartPolicy ?? 'OnFailure';
        for (let i = 0; i < (spec.replicas ?? 1); i++) {
          const name = `${job.metadata.name}-${type.toLowerCase()}-${i}`;
          const labels: Record<string, string> = {
            [TrainingLabels.operatorName]: `${kind.toLowerCase()}-controller`,
            [TrainingLabels.jobName]: job.metadata.name ?? '',
            [TrainingLabels.replicaType]: type.toLowerCase(),
            [TrainingLabels.replicaIndex]: String(i),
          };
          const pod: Pod = {
            apiVersion: 'v1', kind: 'Pod',
            metadata: { name, labels },
            spec: { ...structuredClone(spec.template.spec), restartPolicy: policy === 'ExitCode' ? 'Never' : policy },
          } as Pod;
          replicas.push({ type, index: i, pod, restartPolicy: policy });
          objects.push({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { clusterIP: 'None', selector: labels, ports: [{ name: 'port', port: 23456 }] } });
        }
      }
      return { replicas, objects };
    },
    succeeded(job, views) {
      const master = views.find((v) => v.type === 'Master');
      if (master) return master.succeeded === master.replicas;
      const workers = views.find((v) => v.type === 'Worker');
      if (!workers) return false;
      return workers.succeeded === workers.replicas || (job.spec.elasticPolicy !== undefined && workers.succeeded > 0);
    },
  };
}

const kinds = [fakeKind('PyTorchJob', 'pytorchReplicaSpecs', 'pytorch'), fakeKind('TFJob', 'tfReplicaSpecs', 'tensorflow')];
/** the fakes above; MPIJob is the real kind (its renderer and the registry's defaults) */
const lookup = (apiVersion: string, kind: string): TrainingKind | undefined => kinds.find((k) => k.apiVersion === apiVersion && k.kind === kind) ?? (kind === 'MPIJob' ? trainingKindFor(apiVersion, kind) : undefined);

/** the fakes, with the real TFJob kind (its success and failure rules) */
const withRealTF = (apiVersion: string, kind: string): TrainingKind | undefined => (kind === 'TFJob' ? trainingKindFor(apiVersion, kind) : lookup(apiVersion, kind));

interface JobOpts {
  kind?: 'PyTorchJob' | 'TFJob';
  master?: number;
  workers?: number;
  policy?: ReplicaRestartPolicy;
  cpu?: string;
  runPolicy?: Record<string, unknown>;
  elastic?: boolean;
}

function makeJob(name: string, o: JobOpts = {}): TrainingJob {
  const replica = (n: number): ReplicaOptions => ({ replicas: n, restartPolicy: o.policy ?? 'OnFailure', command: ['python', '-c', 'pass'], image: 'python', ...(o.cpu ? { cpu: o.cpu } : {}) });
  const replicas: Record<string, ReplicaOptions> = {};
  if ((o.master ?? 1) > 0) replicas.Master = replica(o.master ?? 1);
  if ((o.workers ?? 1) > 0) replicas.Worker = replica(o.workers ?? 1);
  const make = o.kind === 'TFJob' ? makeTFJob : makePyTorchJob;
  return make(name, { replicas, runPolicy: (o.runPolicy ?? {}) as RunPolicy, ...(o.elastic ? { spec: { elasticPolicy: { minReplicas: 1, maxReplicas: 2 } } } : {}) });
}

let env: TestEnv;
const managers: Manager[] = [];
/** every Pod creation, in order (the agent's list keeps each name once) */
let creations: string[] = [];
let watch: { stop(): void } | undefined;
const createdTimes = (name: string): number => creations.filter((n) => n === name).length;

/** pods keep running until the test ends them */
const keepRunning: Script = () => undefined;

beforeEach(async () => {
  env = await TestEnv.start(keepRunning);
  env.registry.register(PyTorchJobDef, TFJobDef);
  creations = [];
  watch = env.client.watch(Kinds.Pod, {}, (e) => {
    if (e.type === 'ADDED') creations.push(e.object.metadata.name);
  });
});

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  watch?.stop();
  await env.close();
});

function run(opts: Partial<TrainingControllerOptions> = {}): Manager {
  const mgr = new Manager(env.client);
  addTrainingController(mgr, { client: env.client, recorder: env.recorder, kinds: lookup, gangRetryMs: 50, ...opts });
  mgr.start();
  managers.push(mgr);
  return mgr;
}

async function stop(mgr: Manager): Promise<void> {
  managers.splice(managers.indexOf(mgr), 1);
  await mgr.stop();
}

const def = (kind = 'PyTorchJob'): KindDef => (kind === 'PyTorchJob' ? PyTorchJobDef : TFJobDef);

async function job(name: string, kind = 'PyTorchJob'): Promise<(TrainingJob & { metadata: { uid: string } }) | undefined> {
  return env.client.find<TrainingJob>(def(kind), { namespace: 'default', name });
}

function cond(j: { status?: TrainingJobStatus } | undefined, type: string): Condition | undefined {
  return j?.status?.conditions?.find((c) => c.type === type);
}

async function waitCond(name: string, type: string, status: 'True' | 'False' = 'True', timeoutMs = 5000, kind = 'PyTorchJob'): Promise<TrainingJob> {
  return env.waitFor(`${name} ${type}=${status}`, async () => {
    const j = await job(name, kind);
    return cond(j, type)?.status === status ? j : undefined;
  }, timeoutMs);
}

async function pod(name: string): Promise<(Pod & { metadata: { uid: string } }) | undefined> {
  return env.client.find<Pod>(Kinds.Pod, { namespace: 'default', name });
}

async function waitPhase(name: string, phase: string): Promise<Pod> {
  return env.waitFor(`${name} ${phase}`, async () => {
    const p = await pod(name);
    return p?.status?.phase === phase && !p.metadata.deletionTimestamp ? p : undefined;
  });
}

const types = (j: TrainingJob | undefined): string[] => (j?.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`);

void describe('training conditions', () => {
  void it('follows the operator update rules', () => {
    const s: TrainingJobStatus = {};
    assert.ok(updateCondition(s, 'Created', 'True', 'PyTorchJobCreated', 'm', 't0'));
    assert.ok(updateCondition(s, 'Running', 'True', 'PyTorchJobRunning', 'm', 't1'));
    assert.ok(!updateCondition(s, 'Running', 'True', 'PyTorchJobRunning', 'other', 't2'));
    assert.ok(updateCondition(s, 'Restarting', 'True', 'PyTorchJobRestarting', 'm', 't3'));
    assert.deepEqual(s.conditions?.map((c) => c.type), ['Created', 'Restarting']);
    assert.ok(updateCondition(s, 'Running', 'True', 'PyTorchJobRunning', 'm', 't4'));
    assert.deepEqual(s.conditions?.map((c) => c.type), ['Created', 'Running']);
    assert.ok(updateCondition(s, 'Failed', 'True', 'PyTorchJobFailed', 'm', 't5'));
    assert.deepEqual(s.conditions?.map((c) => `${c.type}=${c.status}`), ['Created=True', 'Running=False', 'Failed=True']);
    assert.ok(!updateCondition(s, 'Succeeded', 'True', 'PyTorchJobSucceeded', 'm', 't6'));
    assert.equal(s.conditions?.length, 3);
  });
});

void describe('training controller', () => {
  void it('creates the pods and services, owned and labelled, and follows them to Succeeded', async () => {
    run();
    await env.client.create(makeJob('pt', { workers: 2 }));
    await env.waitFor('3 pods running', async () => (await env.pods()).filter((p) => p.status?.phase === 'Running').length === 3);
    let j = await waitCond('pt', 'Running');
    assert.equal(cond(j, 'Running')?.reason, 'PyTorchJobRunning');
    const pods = await env.pods();
    assert.deepEqual(pods.map((p) => p.metadata.name).sort(), ['pt-master-0', 'pt-worker-0', 'pt-worker-1']);
    for (const p of pods) {
      assert.equal(p.metadata.ownerReferences?.[0]?.uid, j.metadata.uid);
      assert.equal(p.metadata.ownerReferences?.[0]?.controller, true);
      assert.equal(p.metadata.labels?.[TrainingLabels.jobName], 'pt');
    }
    const svcs = await env.client.listAll(Kinds.Service, { namespace: 'default' });
    assert.deepEqual(svcs.map((s) => s.metadata.name).sort(), ['pt-master-0', 'pt-worker-0', 'pt-worker-1']);
    assert.ok(svcs.every((s) => s.metadata.ownerReferences?.[0]?.uid === j.metadata.uid));
    assert.equal(j.status?.replicaStatuses?.Worker?.active, 2);
    assert.equal(j.status?.replicaStatuses?.Master?.selector, 'training.kubeflow.org/job-name=pt,training.kubeflow.org/operator-name=pytorchjob-controller,training.kubeflow.org/replica-type=master');
    assert.ok(j.status?.startTime);
    env.agent.finish('pt-master-0', { exitCode: 0 });
    j = await waitCond('pt', 'Succeeded');
    assert.deepEqual(types(j), ['Created=True', 'Running=False', 'Succeeded=True']);
    assert.equal(cond(j, 'Succeeded')?.reason, 'PyTorchJobSucceeded');
    assert.ok(j.status?.completionTime);
    // active moved into succeeded
    assert.equal(j.status?.replicaStatuses?.Worker?.succeeded, 2);
    assert.equal(j.status?.replicaStatuses?.Master?.succeeded, 1);
    // cleanPodPolicy None: the workers keep running
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await pod('pt-worker-0'))?.status?.phase, 'Running');
    assert.ok(env.recorder.reasons().includes('PyTorchJobSucceeded'));
  });

  void it('adopts an existing pod of its name instead of making another', async () => {
    const stray = fakeKind('PyTorchJob', 'pytorchReplicaSpecs', 'pytorch').render(makeJob('adopt', { workers: 0 })).replicas[0]?.pod as Pod;
    await env.client.create({ ...stray, metadata: { ...stray.metadata, namespace: 'default' } });
    run();
    const created = await env.client.create(makeJob('adopt', { workers: 0 }));
    await env.waitFor('adopted', async () => (await pod('adopt-master-0'))?.metadata.ownerReferences?.[0]?.uid === created.metadata.uid);
    await waitCond('adopt', 'Running');
    assert.equal(createdTimes('adopt-master-0'), 1);
  });

  void it('OnFailure: container restarts count toward backoffLimit', async () => {
    env.agent.script = (p) => (p.metadata.name === 'bo-worker-0' ? { restarts: 3 } : undefined);
    run();
    await env.client.create(makeJob('bo', { runPolicy: { backoffLimit: 3 } }));
    const j = await waitCond('bo', 'Failed');
    assert.equal(cond(j, 'Failed')?.message, 'Job bo has failed because it has reached the specified backoff limit');
    assert.equal(cond(j, 'Failed')?.reason, 'PyTorchJobFailed');
    // the running pods were stopped
    await env.waitFor('pods stopped', async () => (await env.pods()).every((p) => p.status?.phase === 'Failed'));
  });

  void it('OnFailure: a pod that still ends Failed is re-created with Restarting', async () => {
    let first = true;
    env.agent.script = (p) => {
      if (p.metadata.name !== 'rs-worker-0') return undefined;
      if (first) {
        first = false;
        return { exitCode: 1 };
      }
      return { exitCode: 0 };
    };
    run();
    await env.client.create(makeJob('rs'));
    await env.waitFor('Restarting', async () => env.recorder.events.some((e) => e.reason === 'PyTorchJobRestarting' && e.message === 'PyTorchJob default/rs is restarting because 1 Worker replica(s) failed.'));
    await env.waitFor('re-created and done', async () => (await pod('rs-worker-0'))?.status?.phase === 'Succeeded');
    assert.equal(createdTimes('rs-worker-0'), 2);
    env.agent.finish('rs-master-0', { exitCode: 0 });
    const done = await waitCond('rs', 'Succeeded');
    assert.equal(done.status?.restarts, 1);
    assert.equal(cond(done, 'Restarting'), undefined);
    assert.deepEqual(types(done), ['Created=True', 'Running=False', 'Succeeded=True']);
  });

  void it('ExitCode: 128-255 is retried, 1-127 fails the job', async () => {
    let tries = 0;
    env.agent.script = (p) => {
      if (p.metadata.name !== 'ec-master-0') return undefined;
      tries++;
      return tries === 1 ? { exitCode: 137 } : { exitCode: 3 };
    };
    run();
    await env.client.create(makeJob('ec', { policy: 'ExitCode', workers: 0 }));
    const j = await waitCond('ec', 'Failed');
    assert.equal(cond(j, 'Failed')?.message, 'PyTorchJob default/ec has failed because 1 Master replica(s) failed.');
    assert.equal(createdTimes('ec-master-0'), 2);
    assert.equal(j.status?.restarts, 1);
    assert.ok(env.recorder.events.some((e) => e.reason === 'ExitedWithCode' && e.message.endsWith('exited with code 137')));
    assert.ok(env.recorder.reasons().includes('PyTorchJobRestarting'));
    // pod rendered with restartPolicy Never
    assert.equal((await pod('ec-master-0'))?.spec.restartPolicy, 'Never');
  });

  void it('Never: the failed container\'s termination message ends the Failed condition, its last line only', async () => {
    const message = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nValueError: the learning rate must be positive\n';
    env.agent.script = (p) => (p.metadata.name === 'lw-master-0' ? { exitCode: 1, message } : undefined);
    run();
    await env.client.create(makeJob('lw', { policy: 'Never', workers: 0 }));
    const j = await waitCond('lw', 'Failed');
    assert.equal(cond(j, 'Failed')?.message,
      'PyTorchJob default/lw has failed because 1 Master replica(s) failed. lw-master-0: ValueError: the learning rate must be positive');
  });

  void it('ExitCode: backoffLimit bounds the re-creations, across a controller restart', async () => {
    env.agent.script = (p) => (p.metadata.name === 'ecb-master-0' ? { exitCode: 137 } : undefined);
    const first = run();
    await env.client.create(makeJob('ecb', { policy: 'ExitCode', workers: 0, runPolicy: { backoffLimit: 3 } }));
    await env.waitFor('first restart counted', async () => ((await job('ecb'))?.status?.restarts ?? 0) >= 1);
    await stop(first);
    run();
    const j = await waitCond('ecb', 'Failed');
    assert.equal(cond(j, 'Failed')?.message, 'Job ecb has failed because it has reached the specified backoff limit');
    assert.equal(j.status?.restarts, 2);
    assert.equal(createdTimes('ecb-master-0'), 3);
  });

  void it("Never: a failed replica's program error ends the Failed condition's message", async () => {
    const log = 'epoch 0 loss 2.3\nTraceback (most recent call last):\n  File "train.py", line 9, in <module>\nValueError: no column "label"\n';
    env.agent.script = (p) => (p.metadata.name === 'nvm-worker-0' ? { exitCode: 1, message: log } : undefined);
    run();
    await env.client.create(makeJob('nvm', { policy: 'Never' }));
    const j = await waitCond('nvm', 'Failed');
    assert.equal(cond(j, 'Failed')?.message, 'PyTorchJob default/nvm has failed because 1 Worker replica(s) failed. nvm-worker-0: ValueError: no column "label"');
  });

  void it('Never: a failed replica fails the job', async () => {
    env.agent.script = (p) => (p.metadata.name === 'nv-worker-0' ? { exitCode: 2 } : undefined);
    run();
    await env.client.create(makeJob('nv', { policy: 'Never' }));
    const j = await waitCond('nv', 'Failed');
    assert.equal(cond(j, 'Failed')?.message, 'PyTorchJob default/nv has failed because 1 Worker replica(s) failed.');
    assert.equal(j.status?.replicaStatuses?.Worker?.failed, 1);
    assert.equal(creations.length, 2);
  });

  void it('a container that cannot start fails the job whatever the restart policy', async () => {
    run();
    await env.client.create(makeJob('se', { workers: 0 }));
    const p = await waitPhase('se-master-0', 'Running');
    const status = structuredClone(p.status ?? {});
    for (const c of status.containerStatuses ?? []) {
      c.restartCount = 1;
      c.state = { waiting: { reason: 'CrashLoopBackOff' } };
      c.lastState = { terminated: { exitCode: 127, reason: 'StartError', message: 'exec: "nope": executable file not found in $PATH' } };
    }
    await env.client.updateStatus({ ...p, status });
    const j = await waitCond('se', 'Failed');
    assert.match(cond(j, 'Failed')?.message ?? '', /Master replica 0 could not start: container pytorch: exec: "nope"/);
  });

  void it('activeDeadlineSeconds fires on its own timer', async () => {
    run();
    await env.client.create(makeJob('dl', { runPolicy: { activeDeadlineSeconds: 1 } }));
    await waitCond('dl', 'Running');
    const j = await waitCond('dl', 'Failed', 'True', 4000);
    assert.equal(cond(j, 'Failed')?.message, 'Job dl has failed because it was active longer than specified deadline');
    await env.waitFor('pods stopped', async () => (await env.pods()).every((p) => p.status?.phase === 'Failed'));
    assert.ok(env.recorder.reasons().includes('DeadlineExceeded'));
  });

  void it('ttlSecondsAfterFinished deletes the job after it finished', async () => {
    env.agent.script = () => ({ exitCode: 0 });
    run();
    await env.client.create(makeJob('ttl', { runPolicy: { ttlSecondsAfterFinished: 1 } }));
    await waitCond('ttl', 'Succeeded');
    assert.ok(await job('ttl'));
    await env.waitFor('job deleted', async () => !(await job('ttl')), 4000);
  });

  void it('cleanPodPolicy Running deletes running pods at the end, keeps finished ones', async () => {
    run();
    await env.client.create(makeJob('cp', { runPolicy: { cleanPodPolicy: 'Running' } }));
    await waitCond('cp', 'Running');
    env.agent.finish('cp-master-0', { exitCode: 0 });
    await waitCond('cp', 'Succeeded');
    await env.waitFor('worker gone', async () => !(await pod('cp-worker-0')));
    assert.equal((await pod('cp-master-0'))?.status?.phase, 'Succeeded');
    await env.waitFor('worker service gone', async () => !(await env.client.find(Kinds.Service, { namespace: 'default', name: 'cp-worker-0' })));
  });

  void it('cleanPodPolicy All deletes every pod', async () => {
    run();
    await env.client.create(makeJob('ca', { runPolicy: { cleanPodPolicy: 'All' } }));
    await waitCond('ca', 'Running');
    env.agent.finish('ca-master-0', { exitCode: 0 });
    await waitCond('ca', 'Succeeded');
    await env.waitFor('all pods gone', async () => (await env.pods()).length === 0);
  });

  void it('suspend deletes the pods; resume starts again with a new startTime', async () => {
    run();
    await env.client.create(makeJob('sp'));
    let j = await waitCond('sp', 'Running');
    const started = j.status?.startTime;
    await env.client.patch(PyTorchJobDef, { namespace: 'default', name: 'sp' }, { spec: { runPolicy: { suspend: true } } }, 'merge');
    j = await waitCond('sp', 'Suspended');
    assert.equal(cond(j, 'Suspended')?.reason, 'PyTorchJobSuspended');
    assert.equal(cond(j, 'Running')?.status, 'False');
    await env.waitFor('pods gone', async () => (await env.pods()).length === 0);
    await new Promise((r) => setTimeout(r, 1100));
    await env.client.patch(PyTorchJobDef, { namespace: 'default', name: 'sp' }, { spec: { runPolicy: { suspend: false } } }, 'merge');
    j = await waitCond('sp', 'Suspended', 'False');
    assert.equal(cond(j, 'Suspended')?.reason, 'PyTorchJobResumed');
    j = await waitCond('sp', 'Running');
    assert.notEqual(j.status?.startTime, started);
    assert.equal(createdTimes('sp-master-0'), 2);
  });

  void it('elastic: any worker succeeding succeeds a worker-only job', async () => {
    run();
    await env.client.create(makeJob('el', { master: 0, workers: 2, elastic: true }));
    await waitCond('el', 'Running');
    env.agent.finish('el-worker-1', { exitCode: 0 });
    await waitCond('el', 'Succeeded');
  });

  void it('a gang that does not fit creates nothing, waits, and starts when room frees', async () => {
    run({ nodeName: 'node-1', nodeCapacity: { cpu: '4' } });
    await env.client.create(makeJob('ga', { workers: 2, cpu: '1' }));
    await waitCond('ga', 'Running');
    await env.client.create(makeJob('gb', { workers: 2, cpu: '1' }));
    await env.waitFor('gb waits', async () => env.recorder.events.some((e) => e.object === 'PyTorchJob/gb' && e.reason === 'GangWaiting'));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await env.pods()).filter((p) => p.metadata.name.startsWith('gb-')).length, 0);
    env.agent.finish('ga-master-0', { exitCode: 0 });
    env.agent.finish('ga-worker-0', { exitCode: 0 });
    env.agent.finish('ga-worker-1', { exitCode: 0 });
    await waitCond('gb', 'Running');
    assert.equal((await env.pods()).filter((p) => p.metadata.name.startsWith('gb-')).length, 3);
  });

  void it('a gang that can never fit says so', async () => {
    run({ nodeName: 'node-1', nodeCapacity: { cpu: '2' } });
    await env.client.create(makeJob('big', { workers: 2, cpu: '1' }));
    await env.waitFor('unschedulable', async () => env.recorder.events.some((e) => e.reason === 'GangUnschedulable'));
    assert.equal((await env.pods()).length, 0);
  });

  void it('two gangs racing for room for one: one is admitted whole, the other creates nothing', async () => {
    // two kinds, two controllers, one admission shared between them
    run({ nodeName: 'node-1', nodeCapacity: { cpu: '4' }, admission: new GangAdmission({ client: env.client, nodeName: 'node-1', nodeCapacity: { cpu: '4' } }) });
    await Promise.all([
      env.client.create(makeJob('ra', { workers: 2, cpu: '1' })),
      env.client.create(makeJob('rb', { kind: 'TFJob', workers: 2, cpu: '1' })),
    ]);
    await env.waitFor('one running', async () => cond(await job('ra'), 'Running')?.status === 'True' || cond(await job('rb', 'TFJob'), 'Running')?.status === 'True');
    await new Promise((r) => setTimeout(r, 150));
    const names = (await env.pods()).map((p) => p.metadata.name);
    const a = names.filter((n) => n.startsWith('ra-')).length;
    const b = names.filter((n) => n.startsWith('rb-')).length;
    assert.ok((a === 3 && b === 0) || (a === 0 && b === 3), `pods: ${names.join(',')}`);
  });

  void it('a controller restarted mid-job converges without duplicates', async () => {
    const first = run();
    await env.client.create(makeJob('cr', { workers: 3 }));
    await env.waitFor('some pods', async () => (await env.pods()).length >= 1);
    await stop(first);
    run();
    await waitCond('cr', 'Running');
    const again = run();
    await new Promise((r) => setTimeout(r, 100));
    await stop(again);
    assert.deepEqual([...creations].sort(), ['cr-master-0', 'cr-worker-0', 'cr-worker-1', 'cr-worker-2']);
    env.agent.finish('cr-master-0', { exitCode: 0 });
    await waitCond('cr', 'Succeeded');
  });

  void it('TFJob: a failed replica that is not retried fails the job; with enableDynamicWorker a Worker does not', async () => {
    run({ kinds: withRealTF });
    env.agent.script = (p) => (p.metadata.name === 'tfn-worker-0' || p.metadata.name === 'tfd-worker-1' || p.metadata.name === 'tfm-master-0' ? { exitCode: 2 } : undefined);
    await env.client.create(makeJob('tfn', { kind: 'TFJob', policy: 'Never' }));
    let j = await waitCond('tfn', 'Failed', 'True', 5000, 'TFJob');
    assert.equal(cond(j, 'Failed')?.message, 'TFJob default/tfn has failed because 1 Worker replica(s) failed.');
    assert.equal(cond(j, 'Failed')?.reason, 'TFJobFailed');

    // dynamic workers: the job goes on without the failed Worker (not re-created) and ends by its chief
    const dyn = makeJob('tfd', { kind: 'TFJob', policy: 'Never', workers: 2 });
    dyn.spec.enableDynamicWorker = true;
    await env.client.create(dyn);
    await waitPhase('tfd-worker-1', 'Failed');
    await waitPhase('tfd-master-0', 'Running');
    await new Promise((r) => setTimeout(r, 150));
    j = (await job('tfd', 'TFJob')) as TrainingJob;
    assert.equal(cond(j, 'Failed'), undefined);
    assert.equal(j.status?.replicaStatuses?.Worker?.failed, 1);
    assert.equal(createdTimes('tfd-worker-1'), 1);
    env.agent.finish('tfd-master-0', { exitCode: 0 });
    j = await waitCond('tfd', 'Succeeded', 'True', 5000, 'TFJob');
    assert.equal(cond(j, 'Failed'), undefined);

    // ... but only a Worker: a failed chief still fails it
    const chief = makeJob('tfm', { kind: 'TFJob', policy: 'Never' });
    chief.spec.enableDynamicWorker = true;
    await env.client.create(chief);
    j = await waitCond('tfm', 'Failed', 'True', 5000, 'TFJob');
    assert.equal(cond(j, 'Failed')?.message, 'TFJob default/tfm has failed because 1 Master replica(s) failed.');
  });

  void it('TFJob: a failure seen while the job is restarting fails it once the restart is over', async () => {
    const tf = makeJob('tfr', { kind: 'TFJob' });
    const specs = tf.spec.tfReplicaSpecs as Record<string, ReplicaSpec>;
    (specs.Worker as ReplicaSpec).restartPolicy = 'Never';
    const first = run({ kinds: withRealTF });
    await env.client.create(tf);
    await waitCond('tfr', 'Running', 'True', 5000, 'TFJob');
    await stop(first);
    // as a restart of the chief leaves it: Restarting, its Pod gone; meanwhile the worker fails
    const cur = (await job('tfr', 'TFJob')) as TrainingJob & { metadata: { uid: string } };
    const status = structuredClone(cur.status ?? {});
    updateCondition(status, 'Restarting', 'True', 'TFJobRestarting', 'TFJob default/tfr is restarting because 1 Master replica(s) failed.', new Date().toISOString());
    await env.client.updateStatus({ ...cur, status });
    await env.client.delete(Kinds.Pod, { namespace: 'default', name: 'tfr-master-0' });
    await env.waitFor('chief gone', async () => (await pod('tfr-master-0'))?.metadata.deletionTimestamp !== undefined || !(await pod('tfr-master-0')));
    env.agent.finish('tfr-worker-0', { exitCode: 2 });
    await waitPhase('tfr-worker-0', 'Failed');
    run({ kinds: withRealTF });
    // not failed while the chief is being replaced: it is re-created first, then the job fails
    const j = await waitCond('tfr', 'Failed', 'True', 5000, 'TFJob');
    assert.equal(createdTimes('tfr-master-0'), 2);
    assert.equal(cond(j, 'Failed')?.message, 'TFJob default/tfr has failed because 1 Worker replica(s) failed.');
  });

  void it('PyTorchJob: a failure seen while the job is restarting fails it at once', async () => {
    const pt = makeJob('ptr');
    const specs = pt.spec.pytorchReplicaSpecs as Record<string, ReplicaSpec>;
    (specs.Worker as ReplicaSpec).restartPolicy = 'Never';
    const first = run();
    await env.client.create(pt);
    await waitCond('ptr', 'Running');
    await stop(first);
    const cur = (await job('ptr')) as TrainingJob & { metadata: { uid: string } };
    const status = structuredClone(cur.status ?? {});
    updateCondition(status, 'Restarting', 'True', 'PyTorchJobRestarting', 'PyTorchJob default/ptr is restarting because 1 Master replica(s) failed.', new Date().toISOString());
    await env.client.updateStatus({ ...cur, status });
    await env.client.delete(Kinds.Pod, { namespace: 'default', name: 'ptr-master-0' });
    await env.waitFor('master gone', async () => (await pod('ptr-master-0'))?.metadata.deletionTimestamp !== undefined || !(await pod('ptr-master-0')));
    env.agent.finish('ptr-worker-0', { exitCode: 2 });
    await waitPhase('ptr-worker-0', 'Failed');
    run();
    await waitCond('ptr', 'Failed');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(createdTimes('ptr-master-0'), 1);
  });

  void it('MPIJob v2beta1: the launcher Pod waits for the workers (WaitForWorkersReady); the job follows it', async () => {
    run();
    const container = { name: 'mpi', image: 'python', command: ['python', '-c', 'pass'] };
    await env.client.create({
      apiVersion: 'kubeflow.org/v2beta1', kind: 'MPIJob', metadata: { name: 'mpi', namespace: 'default' },
      spec: {
        launcherCreationPolicy: 'WaitForWorkersReady',
        mpiReplicaSpecs: {
          Launcher: { replicas: 1, template: { spec: { containers: [container] } } },
          Worker: { replicas: 2, template: { spec: { containers: [{ ...container, command: ['sleep', '100'] }] } } },
        },
      },
    });
    const mpiDef = env.registry.forObject('kubeflow.org/v2beta1', 'MPIJob') as KindDef;
    await waitPhase('mpi-worker-0', 'Running');
    await waitPhase('mpi-worker-1', 'Running');
    const launcher = await env.waitFor('launcher', async () => pod('mpi-launcher'));
    assert.equal(launcher.spec.hostname, 'mpi-launcher');
    assert.ok(creations.indexOf('mpi-launcher') > creations.indexOf('mpi-worker-1'));
    await env.waitFor('running', async () => (await env.client.find<TrainingJob>(mpiDef, { namespace: 'default', name: 'mpi' }))?.status?.conditions?.some((c: Condition) => c.type === 'Running' && c.status === 'True'));
    env.agent.finish('mpi-launcher', { exitCode: 0 });
    const j = await env.waitFor('succeeded', async () => {
      const o = await env.client.find<TrainingJob>(mpiDef, { namespace: 'default', name: 'mpi' });
      return cond(o, 'Succeeded')?.status === 'True' ? o : undefined;
    });
    assert.equal(cond(j, 'Succeeded')?.reason, 'MPIJobSucceeded');
    assert.ok(await env.client.find(Kinds.ConfigMap, { namespace: 'default', name: 'mpi-config' }));
  });
});
