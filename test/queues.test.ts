// Kueue's controllers against `skiff up`, through kubectl: Jobs through a LocalQueue under a quota
// (never more admitted than the quota, all finish), a queue that does not exist, a Workload that can
// never fit, Kueue's columns, and a kill -9 with queued and admitted Workloads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { TestServer, sleep } from './harness.js';

const ns = 'default';
const jobs = `/apis/batch/v1/namespaces/${ns}/jobs`;
const workloads = `/apis/kueue.x-k8s.io/v1beta2/namespaces/${ns}/workloads`;

const setup = [
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } },
  {
    apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'team' },
    spec: {
      namespaceSelector: {},
      resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: '200m' }, { name: 'memory', nominalQuota: '1Gi' }] }] }],
    },
  },
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: ns, name: 'user-queue' }, spec: { clusterQueue: 'team' } },
];

function job(name: string, cpu: string, command: string[], queue = 'user-queue'): any {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: ns, labels: { 'kueue.x-k8s.io/queue-name': queue } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command, resources: { requests: { cpu, memory: '64Mi' } } }] } } },
  };
}

const cond = (o: any, type: string): any => o?.status?.conditions?.find((c: any) => c.type === type);

describe('Kueue\'s controllers end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
    const r = await s.kubectl(['apply', '-f', '-'], setup.map((o) => YAML.stringify(o)).join('---\n'));
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await s.cleanup();
  });

  const workloadOf = async (jobName: string): Promise<any> => {
    const j = await s.get(`${jobs}/${jobName}`);
    const list = await s.get(workloads);
    return list.items.find((w: any) => w.metadata.ownerReferences?.[0]?.uid === j.metadata.uid);
  };

  it('runs Jobs through a LocalQueue, never more admitted than the quota, all to completion', async () => {
    const names = ['q1', 'q2', 'q3', 'q4', 'q5'];
    for (const n of names) await s.create(jobs, job(n, '100m', ['python', '-c', 'import time; time.sleep(1.5)']));
    let most = 0;
    await s.until('all complete', async () => {
      const list = await s.get(jobs);
      const ours = list.items.filter((j: any) => names.includes(j.metadata.name));
      const running = ours.filter((j: any) => !j.spec.suspend && !cond(j, 'Complete'));
      most = Math.max(most, running.length);
      assert.ok(running.length <= 2, `more admitted than the quota: ${running.map((j: any) => j.metadata.name).join()}`);
      return ours.length === names.length && ours.every((j: any) => cond(j, 'Complete')?.status === 'True');
    }, 90_000);
    assert.equal(most, 2);
    for (const n of names) assert.equal(cond(await workloadOf(n), 'Finished')?.reason, 'Succeeded');
    const cq = await s.get('/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team');
    assert.equal(cq.status.admittedWorkloads, 0);
    assert.equal(cond(cq, 'Active')?.status, 'True');
    const table = await s.kubectl(['get', 'clusterqueues']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+COHORT\s+PENDING WORKLOADS/);
    const wl = await s.kubectl(['get', 'workloads', '-n', ns]);
    assert.equal(wl.code, 0, wl.stderr);
    assert.match(wl.stdout, /job-q1-\w{5}\s+user-queue\s+team\s+True\s+True/);
  });

  it('admits a PyTorchJob whole (one pod set per replica type), one at a time under the quota', async () => {
    const path = `/apis/kubeflow.org/v1/namespaces/${ns}/pytorchjobs`;
    const replica = (n: number) => ({
      replicas: n, restartPolicy: 'Never',
      template: { spec: { containers: [{ name: 'pytorch', image: 'python', command: ['python', '-c', 'import time; time.sleep(1)'], resources: { requests: { cpu: '100m', memory: '64Mi' } } }] } },
    });
    const ptj = (name: string) => ({
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace: ns, labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' } },
      spec: { pytorchReplicaSpecs: { Master: replica(1), Worker: replica(1) } },
    });
    const created = await s.create(path, ptj('pt1'));
    assert.equal(created.spec.runPolicy.suspend, true);
    await s.create(path, ptj('pt2'));
    const done = (j: any) => (j.status?.conditions ?? []).some((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
    await s.until('both PyTorchJobs finished', async () => {
      const list = (await s.get(path)).items;
      const running = list.filter((j: any) => !j.spec.runPolicy?.suspend && !done(j));
      assert.ok(running.length <= 1, `two PyTorchJobs admitted on a quota for one: ${running.map((j: any) => j.metadata.name).join()}`);
      return list.length === 2 && list.every(done);
    }, 90_000);
    for (const n of ['pt1', 'pt2']) {
      const j = await s.get(`${path}/${n}`);
      assert.ok(j.status.conditions.some((c: any) => c.type === 'Succeeded' && c.status === 'True'), JSON.stringify(j.status.conditions));
      const list = await s.get(workloads);
      const w = list.items.find((x: any) => x.metadata.ownerReferences?.[0]?.uid === j.metadata.uid);
      assert.deepEqual(w.spec.podSets.map((p: any) => [p.name, p.count]), [['master', 1], ['worker', 1]]);
      assert.equal(cond(w, 'Finished')?.reason, 'Succeeded');
    }
  });

  it('runs a plain Pod through the queue: gated until admitted, its Workload Finished when it ends', async () => {
    const pods = `/api/v1/namespaces/${ns}/pods`;
    const created = await s.create(pods, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain', namespace: ns, labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' } },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['true'], resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
    });
    assert.deepEqual(created.spec.schedulingGates, [{ name: 'kueue.x-k8s.io/admission' }]);
    await s.until('pod succeeded', async () => (await s.get(`${pods}/plain`)).status?.phase === 'Succeeded', 60_000);
    await s.until('its Workload finished', async () => {
      const p = await s.get(`${pods}/plain`);
      const w = (await s.get(workloads)).items.find((x: any) => x.metadata.ownerReferences?.[0]?.uid === p.metadata.uid);
      return cond(w, 'Finished')?.status === 'True';
    });
  });

  it('keeps a Job of a queue that does not exist suspended, with the reason on its Workload', async () => {
    await s.create(jobs, job('orphan', '100m', ['true'], 'no-such-queue'));
    const w = await s.until('pending', async () => {
      const wl = await workloadOf('orphan');
      return cond(wl, 'QuotaReserved')?.status === 'False' ? wl : undefined;
    });
    assert.equal(cond(w, 'QuotaReserved').message, "LocalQueue no-such-queue doesn't exist");
    await sleep(500);
    assert.equal((await s.get(`${jobs}/orphan`)).spec.suspend, true);
    const pods = await s.get(`/api/v1/namespaces/${ns}/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dorphan`);
    assert.equal(pods.items.length, 0);
  });

  it('leaves a Workload that can never fit pending, saying so', async () => {
    await s.create(jobs, job('too-big', '4', ['true']));
    const w = await s.until('pending', async () => {
      const wl = await workloadOf('too-big');
      return cond(wl, 'QuotaReserved')?.status === 'False' ? wl : undefined;
    });
    assert.match(cond(w, 'QuotaReserved').message, /insufficient quota for cpu in flavor default-flavor, .*current podset request \(4\) > maximum capacity \(200m\)/);
    assert.equal((await s.get(`${jobs}/too-big`)).spec.suspend, true);
    // its Workload goes with it (owner reference), and with it its place in the queue
    await s.req('DELETE', `${jobs}/too-big?propagationPolicy=Background`);
    await s.until('its Workload deleted', async () => (await s.get(workloads)).items.every((w: any) => !w.metadata.name.startsWith('job-too-big-')));
  });

  it('lists pending Workloads in order through the visibility API, and exports Kueue\'s metrics', async () => {
    for (const n of ['v-run1', 'v-run2']) await s.create(jobs, job(n, '100m', ['python', '-c', 'import time; time.sleep(4)']));
    await s.until('blockers admitted', async () => (await s.get(jobs)).items.filter((j: any) => j.metadata.name.startsWith('v-run') && !j.spec.suspend).length === 2);
    for (const n of ['v-wait1', 'v-wait2', 'v-wait3']) await s.create(jobs, job(n, '100m', ['true']));
    const summary = await s.until('three pending', async () => {
      const r = await s.get('/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads');
      return r.items?.length === 3 ? r : undefined;
    });
    assert.equal(summary.kind, 'PendingWorkloadsSummary');
    // positions from 0, the same in the ClusterQueue and the LocalQueue (one LocalQueue feeds it)
    assert.deepEqual(summary.items.map((i: any) => [i.positionInClusterQueue, i.positionInLocalQueue, i.localQueueName]), [[0, 0, 'user-queue'], [1, 1, 'user-queue'], [2, 2, 'user-queue']]);
    assert.deepEqual(summary.items.map((i: any) => i.metadata.name.replace(/-\w{5}$/, '')).sort(), ['job-v-wait1', 'job-v-wait2', 'job-v-wait3']);
    const lq = await s.get(`/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/${ns}/localqueues/user-queue/pendingworkloads?offset=1&limit=1`);
    assert.deepEqual(lq.items.map((i: any) => i.positionInLocalQueue), [1]);
    const raw = await s.kubectl(['get', '--raw', '/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads']);
    assert.equal(raw.code, 0, raw.stderr);
    const groups = await s.get('/apis');
    assert.ok(groups.groups.some((g: any) => g.name === 'visibility.kueue.x-k8s.io'));
    const metrics = (await s.req('GET', '/metrics')).text;
    assert.match(metrics, /kueue_pending_workloads\{cluster_queue="team",status="(active|inadmissible)"\} [1-3]/);
    assert.match(metrics, /kueue_admitted_workloads_total\{cluster_queue="team"\} \d+/);
    assert.match(metrics, /kueue_cluster_queue_nominal_quota\{cohort="",cluster_queue="team",flavor="default-flavor",resource="cpu"\} 0\.2/);
    assert.match(metrics, /kueue_cluster_queue_resource_usage\{cohort="",cluster_queue="team",flavor="default-flavor",resource="cpu"\} 0\.2/);
    assert.match(metrics, /kueue_cluster_queue_status\{cluster_queue="team",status="active"\} 1/);
    assert.match(metrics, /kueue_admission_wait_time_seconds_bucket\{cluster_queue="team",le="1"\}/);
    await s.until('all run', async () => (await s.get('/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads')).items.length === 0, 60_000);
  });

  it('skiff get workloads adds POSITION from the visibility API; the queues print Kueue\'s columns', async () => {
    for (const n of ['p-run1', 'p-run2']) await s.create(jobs, job(n, '100m', ['python', '-c', 'import time; time.sleep(120)']));
    await s.until('blockers admitted', async () => (await s.get(jobs)).items.filter((j: any) => j.metadata.name.startsWith('p-run') && !j.spec.suspend).length === 2);
    // Kueue orders equal priorities by creation time, kept to the second: one second apart, the
    // order is the order of creation
    for (const n of ['p-wait1', 'p-wait2', 'p-wait3']) {
      await s.create(jobs, job(n, '100m', ['true']));
      await s.until(`${n}'s Workload`, () => workloadOf(n));
      await sleep(1100);
    }
    await s.until('three pending', async () => (await s.get('/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads')).items?.length === 3);
    // the cell under a header, by the header's offset (a blank cell reads '')
    const cell = (out: string, row: string, header: string): string => {
      const lines = out.split('\n');
      const at = (lines[0] ?? '').indexOf(header);
      const line = lines.find((l) => l.startsWith(row));
      assert.ok(at >= 0 && line, `no ${header} column or no row ${row} in:\n${out}`);
      return /^\S*/.exec(line.slice(at))?.[0] ?? '';
    };
    const get = await s.cli(['get', 'workloads']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^NAME\s+QUEUE\s+RESERVED IN\s+ADMITTED\s+FINISHED\s+POSITION\s+AGE\n/);
    assert.deepEqual(['p-wait1', 'p-wait2', 'p-wait3'].map((n) => cell(get.stdout, `job-${n}-`, 'POSITION')), ['0', '1', '2']);
    assert.deepEqual(['p-run1', 'p-run2', 'q1'].map((n) => cell(get.stdout, `job-${n}-`, 'POSITION')), ['', '', ''], 'admitted and finished ones have none');
    const wide = await s.cli(['get', 'workloads', '-o', 'wide']);
    assert.equal(wide.code, 0, wide.stderr);
    assert.deepEqual(['p-wait1', 'p-wait2', 'p-wait3'].map((n) => cell(wide.stdout, `job-${n}-`, 'POSITION IN LOCALQUEUE')), ['0', '1', '2']);
    // kubectl keeps Kueue's columns: Kueue stores no position
    const kc = await s.kubectl(['get', 'workloads']);
    assert.equal(kc.code, 0, kc.stderr);
    assert.doesNotMatch(kc.stdout.split('\n')[0] ?? '', /POSITION/);
    // the queues: Kueue's printer columns, STRATEGY and ADMITTED WORKLOADS only with -o wide as in Kueue's CRD
    const cq = await s.cli(['get', 'clusterqueues']);
    assert.equal(cq.code, 0, cq.stderr);
    assert.match(cq.stdout, /^NAME\s+COHORT\s+PENDING WORKLOADS\nteam\s+3\n/);
    const cqWide = await s.cli(['get', 'clusterqueues', '-o', 'wide']);
    assert.match(cqWide.stdout, /^NAME\s+COHORT\s+STRATEGY\s+PENDING WORKLOADS\s+ADMITTED WORKLOADS\nteam\s+BestEffortFIFO\s+3\s+2\n/);
    const lq = await s.cli(['get', 'localqueues']);
    assert.equal(lq.code, 0, lq.stderr);
    assert.match(lq.stdout, /^NAME\s+CLUSTERQUEUE\s+PENDING WORKLOADS\s+ADMITTED WORKLOADS\nuser-queue\s+team\s+3\s+2\n/);
    // the blockers go, and the queue empties
    for (const n of ['p-run1', 'p-run2']) await s.req('DELETE', `${jobs}/${n}?propagationPolicy=Background`);
    await s.until('all run', async () => (await s.get('/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads')).items.length === 0, 60_000);
  });

  it('survives kill -9 with queued and admitted Workloads: nothing admitted twice, nothing lost', async () => {
    const names = ['c1', 'c2', 'c3', 'c4'];
    for (const n of names) await s.create(jobs, job(n, '100m', ['python', '-c', 'import time; time.sleep(2)']));
    await s.until('two admitted', async () => {
      const list = await s.get(jobs);
      return list.items.filter((j: any) => names.includes(j.metadata.name) && !j.spec.suspend).length === 2;
    });
    await s.crash();
    await s.launch();
    await s.until('all complete after the restart', async () => {
      const list = await s.get(jobs);
      const ours = list.items.filter((j: any) => names.includes(j.metadata.name));
      const running = ours.filter((j: any) => !j.spec.suspend && !cond(j, 'Complete'));
      assert.ok(running.length <= 2, `more admitted than the quota after the restart: ${running.map((j: any) => j.metadata.name).join()}`);
      return ours.length === names.length && ours.every((j: any) => cond(j, 'Complete')?.status === 'True');
    }, 90_000);
    const list = await s.get(workloads);
    const ours = list.items.filter((w: any) => names.some((n) => w.metadata.name.startsWith(`job-${n}-`)));
    // one Workload per Job, each Finished once
    assert.equal(ours.length, names.length);
    assert.ok(ours.every((w: any) => cond(w, 'Finished')?.status === 'True'));
  });
});
