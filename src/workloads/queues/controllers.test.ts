// The queue controllers on an in-memory store with the real Job controller and a fake node agent:
// Jobs through a LocalQueue under a quota, a missing queue, a Workload that can never fit,
// priority preemption, and a restart that admits nothing twice.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kinds } from '../../api/index.js';
import { ClusterQueueKind, LocalQueueKind, WorkloadKind } from '../../api/kueue.js';
import type { StoredObject } from '../../api/meta.js';
import { Manager } from '../../control/controller.js';
import { TestEnv } from '../../testing/fake-agent.js';
import { makeJob } from '../jobs/testing.js';
import type { WorkloadLike } from './engine/index.js';
import type { PodsReadySettings } from './integration.js';
import { addQueueJobController } from './jobs.js';
import { addNotebookController } from '../notebooks/controller.js';
import { makeNotebook } from '../notebooks/testing.js';
import { addPodIntegration } from './pods.js';
import { QueueManager } from './manager.js';

let env: TestEnv;
const managers: Manager[] = [];

beforeEach(async () => {
  // pods run until a test finishes them
  env = await TestEnv.start(() => undefined);
});

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  await env.close();
});

function startQueues(waitForPodsReady?: PodsReadySettings): QueueManager {
  const mgr = new Manager(env.client);
  const qm = new QueueManager({ client: env.client, cache: mgr.cache, recorder: env.recorder });
  qm.register(mgr);
  const opts = { client: env.client, cache: mgr.cache, recorder: env.recorder, ...(waitForPodsReady ? { waitForPodsReady } : {}) };
  addQueueJobController(mgr, opts);
  addPodIntegration(mgr, opts);
  mgr.start();
  managers.push(mgr);
  return qm;
}

async function setupQueue(cpu: string, opts: { preemption?: object; nodeLabels?: Record<string, string> } = {}): Promise<void> {
  const c = env.client;
  await c.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default-flavor' }, spec: opts.nodeLabels ? { nodeLabels: opts.nodeLabels } : {} });
  await c.create({
    apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'cq' },
    spec: {
      namespaceSelector: {},
      resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: cpu }, { name: 'memory', nominalQuota: '10Gi' }] }] }],
      ...(opts.preemption ? { preemption: opts.preemption } : {}),
    },
  });
  await c.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: 'default', name: 'lq' }, spec: { clusterQueue: 'cq' } });
}

function queuedJob(name: string, cpu: string, queue = 'lq', labels: Record<string, string> = {}) {
  const job = makeJob(name).obj();
  job.metadata.labels = { 'kueue.x-k8s.io/queue-name': queue, ...labels };
  job.spec.template.spec.containers[0]!.resources = { requests: { cpu, memory: '100Mi' } };
  return job;
}

async function workloadOf(jobName: string): Promise<StoredObject & WorkloadLike | undefined> {
  const job = await env.job(jobName);
  if (!job) return undefined;
  const wls = await env.client.listAll<StoredObject & WorkloadLike>(WorkloadKind, { namespace: 'default' });
  return wls.find((w) => w.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
}

const cond = (w: WorkloadLike | undefined, type: string) => w?.status?.conditions?.find((c) => c.type === type);

async function admittedNames(): Promise<string[]> {
  const jobs = await env.client.listAll(Kinds.Job, { namespace: 'default' });
  return jobs.filter((j) => j.spec.suspend === false).map((j) => j.metadata.name).sort();
}

void describe('queue controllers', () => {
  void it('suspends a labelled Job on create, and leaves an unlabelled one alone', async () => {
    const j = await env.createJob(queuedJob('a', '1'));
    assert.equal(j.spec.suspend, true);
    const free = await env.createJob(makeJob('free').obj());
    assert.equal(free.spec.suspend, false);
  });

  void it('admits Jobs within the quota, the rest wait with Kueue\'s reason, and finishing frees the quota', async () => {
    env.runController();
    await setupQueue('2', { nodeLabels: { pool: 'a' } });
    startQueues();
    for (const n of ['j1', 'j2', 'j3']) await env.createJob(queuedJob(n, '1'));
    await env.waitFor('two admitted', async () => (await admittedNames()).length === 2 && (await cond(await workloadOf('j3'), 'QuotaReserved'))?.status === 'False');
    assert.deepEqual(await admittedNames(), ['j1', 'j2']);
    const w1 = await workloadOf('j1');
    assert.equal(w1?.spec?.podSets?.[0]?.name, 'main');
    assert.equal(w1?.status?.admission?.clusterQueue, 'cq');
    assert.match(cond(w1, 'QuotaReserved')?.message ?? '', /^Quota reserved in ClusterQueue cq, wait time since queued was \d+s$/);
    assert.equal(cond(w1, 'Admitted')?.status, 'True');
    const j1 = await env.job('j1');
    assert.deepEqual(j1?.spec.template.spec.nodeSelector, { pool: 'a' });
    const w3 = await workloadOf('j3');
    assert.match(cond(w3, 'QuotaReserved')?.message ?? '', /insufficient unused quota for cpu in flavor default-flavor/);
    // queue status
    await env.waitFor('cq status', async () => {
      const cq = await env.client.get(ClusterQueueKind, { name: 'cq' });
      return cq.status?.admittedWorkloads === 2 && cq.status?.pendingWorkloads === 1;
    });
    const lq = await env.client.get(LocalQueueKind, { namespace: 'default', name: 'lq' });
    assert.equal(lq.status?.admittedWorkloads, 2);
    // j1 finishes: its Workload is Finished and j3 runs
    const pod = (await env.pods()).find((p) => p.metadata.ownerReferences?.[0]?.uid === j1?.metadata.uid);
    assert.ok(pod);
    env.agent.finish(pod.metadata.name, { exitCode: 0 });
    await env.waitFor('j3 admitted', async () => (await admittedNames()).includes('j3'));
    const done = await workloadOf('j1');
    assert.equal(cond(done, 'Finished')?.reason, 'Succeeded');
    assert.ok(env.recorder.reasons().includes('QuotaReserved'));
    assert.ok(env.recorder.reasons().includes('Admitted'));
  });

  void it('keeps a Job pending while its namespace\'s ResourceQuota has no room, and admits it once there is', async () => {
    env.runController();
    await setupQueue('4');
    const rq = await env.client.create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { namespace: 'default', name: 'team' }, spec: { hard: { 'requests.cpu': '1' } } });
    // other Pods of the namespace already use half of it
    await env.client.updateStatus({ ...rq, status: { hard: { 'requests.cpu': '1' }, used: { 'requests.cpu': '500m' } } });
    const qm = startQueues();
    await env.createJob(queuedJob('big', '1'));
    await env.waitFor('pending on the ResourceQuota', async () => /ResourceQuota/.test(cond(await workloadOf('big'), 'QuotaReserved')?.message ?? ''));
    const w = await workloadOf('big');
    assert.equal(cond(w, 'QuotaReserved')?.status, 'False');
    assert.equal(cond(w, 'QuotaReserved')?.reason, 'Pending');
    assert.match(cond(w, 'QuotaReserved')?.message ?? '', /exceeded quota: team, requested: requests.cpu=1, used: requests.cpu=500m, limited: requests.cpu=1/);
    assert.deepEqual(await admittedNames(), []);
    // the other Pods end: the next look admits it
    const cur = await env.client.get(Kinds.ResourceQuota, { namespace: 'default', name: 'team' });
    await env.client.updateStatus({ ...cur, status: { hard: { 'requests.cpu': '1' }, used: { 'requests.cpu': '0' } } });
    qm.trigger();
    await env.waitFor('admitted', async () => (await admittedNames()).includes('big'), 15_000);
  });

  void it('records PodsReady once the admitted Job\'s Pods are ready', async () => {
    env.runController();
    await setupQueue('2');
    startQueues({ timeoutMs: 60_000, backoffBaseSeconds: 60, backoffMaxSeconds: 3600 });
    await env.createJob(queuedJob('ok', '1'));
    await env.waitFor('PodsReady', async () => cond(await workloadOf('ok'), 'PodsReady')?.status === 'True');
    const w = await workloadOf('ok');
    assert.equal(cond(w, 'PodsReady')?.reason, 'Started');
    assert.equal(cond(w, 'PodsReady')?.message, 'All pods reached readiness and the workload is running');
  });

  void it('evicts a Workload whose Pods are not ready in time, requeues it, and deactivates it past the backoff limit', async () => {
    env.runController();
    await setupQueue('2');
    // a readiness probe that never passes: every running Pod of the Job is turned not ready
    let stop = false;
    const unready = (async () => {
      while (!stop) {
        for (const p of await env.pods()) {
          if (p.status?.phase !== 'Running' || !p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
          const conditions = p.status.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c));
          await env.client.updateStatus({ ...p, status: { ...p.status, conditions } }).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      startQueues({ timeoutMs: 1_000, backoffLimitCount: 1, backoffBaseSeconds: 0, backoffMaxSeconds: 0 });
      await env.createJob(queuedJob('slow', '1'));
      await env.waitFor('requeued once', async () => (await workloadOf('slow'))?.status?.requeueState?.count === 1, 10_000);
      // (with no backoff it may already be admitted again, so Requeued is not looked at here)
      assert.ok((await workloadOf('slow'))?.status?.requeueState?.requeueAt);
      assert.ok(env.recorder.reasons().includes('EvictedDueToPodsReadyTimeout'));
      // admitted again, timed out again: the limit is spent
      // the deactivation (spec) and its Requeued condition (status) are two writes: wait for both
      await env.waitFor('deactivated', async () => {
        const w = await workloadOf('slow');
        return w?.spec?.active === false && cond(w, 'Requeued')?.status === 'False';
      }, 15_000);
      const w2 = await workloadOf('slow');
      assert.equal(cond(w2, 'Requeued')?.status, 'False');
      assert.equal(cond(w2, 'Requeued')?.reason, 'RequeuingLimitExceeded');
      assert.equal(w2?.status?.requeueState?.count, 2);
      assert.equal((await env.job('slow'))?.spec.suspend, true);
    } finally {
      stop = true;
      await unready;
    }
  });

  void it('deactivates a Workload past its maximum execution time, and its quota goes to the next', async () => {
    env.runController();
    await setupQueue('1');
    startQueues();
    await env.createJob(queuedJob('capped', '1', 'lq', { 'kueue.x-k8s.io/max-exec-time-seconds': '1' }));
    await env.createJob(queuedJob('next', '1'));
    await env.waitFor('capped runs', async () => (await admittedNames()).includes('capped'));
    assert.equal((await workloadOf('capped'))?.spec?.maximumExecutionTimeSeconds, 1);
    await env.waitFor('next runs', async () => (await admittedNames()).includes('next'), 10_000);
    const w = await workloadOf('capped');
    assert.equal(w?.spec?.active, false);
    assert.equal(cond(w, 'Evicted')?.reason, 'DeactivatedDueToMaximumExecutionTimeExceeded');
    assert.equal(cond(w, 'Requeued')?.status, 'False');
    assert.equal(cond(w, 'QuotaReserved')?.status, 'False');
    assert.ok(((w?.status as { accumulatedPastExecutionTimeSeconds?: number }).accumulatedPastExecutionTimeSeconds ?? 0) >= 1);
    assert.equal((await env.job('capped'))?.spec.suspend, true);
  });

  void it('keeps a Job of a LocalQueue that does not exist suspended, saying why', async () => {
    env.runController();
    await setupQueue('2');
    startQueues();
    await env.createJob(queuedJob('lost', '1', 'nope'));
    const w = await env.waitFor('pending', async () => {
      const wl = await workloadOf('lost');
      return cond(wl, 'QuotaReserved')?.status === 'False' ? wl : undefined;
    });
    assert.equal(cond(w, 'QuotaReserved')?.message, "LocalQueue nope doesn't exist");
    assert.equal((await env.job('lost'))?.spec.suspend, true);
    assert.equal((await env.pods()).length, 0);
  });

  void it('leaves a Workload that can never fit pending with the reason', async () => {
    env.runController();
    await setupQueue('2');
    startQueues();
    await env.createJob(queuedJob('huge', '5'));
    const w = await env.waitFor('pending', async () => {
      const wl = await workloadOf('huge');
      return cond(wl, 'QuotaReserved')?.status === 'False' ? wl : undefined;
    });
    assert.match(cond(w, 'QuotaReserved')?.message ?? '', /^couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests \(0\) \+ current podset request \(5\) > maximum capacity \(2\)$/);
    assert.equal((await env.job('huge'))?.spec.suspend, true);
  });

  void it('preempts a lower-priority Job for a higher one, and requeues it', async () => {
    env.runController();
    await setupQueue('1', { preemption: { withinClusterQueue: 'LowerPriority' } });
    await env.client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', metadata: { name: 'high' }, value: 1000 });
    startQueues();
    await env.createJob(queuedJob('low', '1'));
    await env.waitFor('low runs', async () => (await env.pods()).length === 1);
    await env.createJob(queuedJob('high', '1', 'lq', { 'kueue.x-k8s.io/priority-class': 'high' }));
    await env.waitFor('high admitted', async () => (await admittedNames()).join() === 'high');
    const low = await env.waitFor('low requeued', async () => {
      const w = await workloadOf('low');
      return cond(w, 'Requeued')?.status === 'True' && !w?.status?.admission ? w : undefined;
    });
    assert.equal(cond(low, 'Evicted')?.reason, 'Preempted');
    assert.equal(cond(low, 'Preempted')?.reason, 'InClusterQueue');
    assert.match(cond(low, 'Preempted')?.message ?? '', /^Preempted to accommodate a workload \(UID: .*\) due to prioritization in the ClusterQueue/);
    assert.equal(low?.status?.requeueState?.count, 1);
    assert.equal((await env.job('low'))?.spec.suspend, true);
  });

  void it('holds a plain labelled Pod behind the admission gate until its Workload is admitted', async () => {
    await setupQueue('1', { nodeLabels: { pool: 'a' } });
    const pod = (name: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'lq' } },
      spec: { containers: [{ name: 'main', image: 'python', resources: { requests: { cpu: '1' } } }] },
    });
    const created = await env.client.create(pod('p1'));
    assert.deepEqual(created.spec.schedulingGates, [{ name: 'kueue.x-k8s.io/admission' }]);
    await env.client.create(pod('p2'));
    startQueues();
    const p1 = await env.waitFor('p1 ungated', async () => {
      const p = await env.client.find(Kinds.Pod, { namespace: 'default', name: 'p1' });
      return p && !p.spec.schedulingGates ? p : undefined;
    });
    assert.deepEqual(p1.spec.nodeSelector, { pool: 'a' });
    await new Promise((r) => setTimeout(r, 100));
    const p2 = await env.client.get(Kinds.Pod, { namespace: 'default', name: 'p2' });
    assert.deepEqual(p2.spec.schedulingGates, [{ name: 'kueue.x-k8s.io/admission' }]);
  });

  void it('runs a labelled Notebook\'s Pod through a Workload, one at a time under the quota', async () => {
    await setupQueue('1');
    const nbs = new Manager(env.client);
    addNotebookController(nbs, { client: env.client, recorder: env.recorder });
    nbs.start();
    managers.push(nbs);
    startQueues();
    const notebook = (name: string) => {
      const nb = makeNotebook(name).label('kueue.x-k8s.io/queue-name', 'lq').obj();
      nb.spec.template.spec.containers[0]!.resources = { requests: { cpu: '1', memory: '100Mi' } };
      return nb;
    };
    await env.client.create(notebook('nb1'));
    const pod = await env.waitFor('nb1 ungated', async () => {
      const p = await env.client.find(Kinds.Pod, { namespace: 'default', name: 'nb1-0' });
      return p && !p.spec.schedulingGates ? p : undefined;
    });
    const wls = await env.client.listAll<StoredObject & WorkloadLike>(WorkloadKind, { namespace: 'default' });
    const w = wls.find((x) => x.metadata.ownerReferences?.some((r) => r.uid === pod.metadata.uid));
    assert.equal(w?.spec?.queueName, 'lq');
    assert.equal(cond(w, 'Admitted')?.status, 'True');
    // a second notebook does not fit the quota: its Pod waits behind the gate, saying why on its Workload
    await env.client.create(notebook('nb2'));
    await env.waitFor('nb2 pending', async () => {
      const p2 = await env.client.find(Kinds.Pod, { namespace: 'default', name: 'nb2-0' });
      if (!p2) return false;
      const w2 = (await env.client.listAll<StoredObject & WorkloadLike>(WorkloadKind, { namespace: 'default' })).find((x) => x.metadata.ownerReferences?.some((r) => r.uid === p2.metadata.uid));
      return cond(w2, 'QuotaReserved')?.status === 'False' && !!p2.spec.schedulingGates?.length;
    });
  });

  void it('caps each user with a ClusterQueue of their own borrowing from the team\'s Cohort', async () => {
    env.runController();
    const c = env.client;
    const quota = (cpu: string, borrowingLimit?: string) => [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default-flavor', resources: [
      { name: 'cpu', nominalQuota: cpu, ...(borrowingLimit ? { borrowingLimit } : {}) }, { name: 'memory', nominalQuota: '0', ...(borrowingLimit ? { borrowingLimit: '10Gi' } : {}) },
    ] }] }];
    await c.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } });
    // the team's quota lives on its Cohort; each user's ClusterQueue owns nothing and may borrow up to the user's cap
    await c.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'Cohort', metadata: { name: 'team' }, spec: { resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: '3' }, { name: 'memory', nominalQuota: '10Gi' }] }] }] } });
    for (const user of ['alice', 'bob']) {
      await c.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: `user-${user}` }, spec: { namespaceSelector: {}, cohortName: 'team', resourceGroups: quota('0', '2') } });
      await c.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: 'default', name: user }, spec: { clusterQueue: `user-${user}` } });
    }
    startQueues();
    for (const n of ['a1', 'a2', 'a3']) await env.createJob(queuedJob(n, '1', 'alice'));
    await env.waitFor('alice at her cap', async () => (await admittedNames()).length === 2 && (await cond(await workloadOf('a3'), 'QuotaReserved'))?.status === 'False');
    for (const n of ['b1', 'b2']) await env.createJob(queuedJob(n, '1', 'bob'));
    await env.waitFor('bob gets what is left of the team', async () => (await admittedNames()).filter((n) => n.startsWith('b')).length === 1 && (await cond(await workloadOf('b2'), 'QuotaReserved'))?.status === 'False');
    assert.deepEqual(await admittedNames(), ['a1', 'a2', 'b1']);
  });

  void it('a restart admits nothing twice: admitted Workloads keep their quota', async () => {
    env.runController();
    await setupQueue('2');
    startQueues();
    for (const n of ['r1', 'r2', 'r3', 'r4']) await env.createJob(queuedJob(n, '1'));
    await env.waitFor('two admitted', async () => (await admittedNames()).length === 2);
    await Promise.all(managers.splice(0).map((m) => m.stop()));
    startQueues();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await admittedNames()).length, 2);
    const wls = await env.client.listAll<StoredObject & WorkloadLike>(WorkloadKind, { namespace: 'default' });
    assert.equal(wls.length, 4);
    assert.equal(wls.filter((w) => cond(w, 'QuotaReserved')?.status === 'True').length, 2);
  });
});
