// Kueue's sharing and ordering against `skiff up`: borrowing in a cohort and reclaim by preemption,
// priority preemption inside a ClusterQueue, StrictFIFO against BestEffortFIFO.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { TestServer } from './harness.js';

const ns = 'default';
const jobs = `/apis/batch/v1/namespaces/${ns}/jobs`;
const workloads = `/apis/kueue.x-k8s.io/v1beta2/namespaces/${ns}/workloads`;

function cq(name: string, cpu: string, spec: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name },
    spec: { namespaceSelector: {}, resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: cpu }] }] }], ...spec },
  };
}

const lq = (name: string, clusterQueue: string): object => ({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: ns, name }, spec: { clusterQueue } });

const setup = [
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } },
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', metadata: { name: 'high' }, value: 1000 },
  cq('team-a', '200m', { cohortName: 'org' }),
  cq('team-b', '200m', { cohortName: 'org', preemption: { reclaimWithinCohort: 'Any' } }),
  cq('prio', '100m', { preemption: { withinClusterQueue: 'LowerPriority' } }),
  cq('strict', '200m', { queueingStrategy: 'StrictFIFO' }),
  cq('besteffort', '200m', { queueingStrategy: 'BestEffortFIFO' }),
  lq('a', 'team-a'), lq('b', 'team-b'), lq('p', 'prio'), lq('strict', 'strict'), lq('besteffort', 'besteffort'),
];

function job(name: string, queue: string, cpu: string, seconds: number, labels: Record<string, string> = {}): any {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: ns, labels: { 'kueue.x-k8s.io/queue-name': queue, ...labels } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python', '-c', `import time; time.sleep(${seconds})`], resources: { requests: { cpu } } }] } } },
  };
}

const cond = (o: any, type: string): any => o?.status?.conditions?.find((c: any) => c.type === type);

describe('Kueue\'s borrowing, preemption and ordering end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
    const r = await s.kubectl(['apply', '-f', '-'], setup.map((o) => YAML.stringify(o)).join('---\n'));
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await s.cleanup();
  });

  const running = async (prefix: string): Promise<string[]> =>
    (await s.get(jobs)).items.filter((j: any) => j.metadata.name.startsWith(prefix) && j.spec.suspend === false).map((j: any) => j.metadata.name).sort();

  const workloadOf = async (jobName: string): Promise<any> => {
    const j = await s.get(`${jobs}/${jobName}`);
    return (await s.get(workloads)).items.find((w: any) => w.metadata.ownerReferences?.[0]?.uid === j.metadata.uid);
  };

  it('borrows the idle quota of the cohort, and gives it back by preemption when its owner asks', async () => {
    for (const n of ['bor-1', 'bor-2', 'bor-3', 'bor-4']) await s.create(jobs, job(n, 'a', '100m', 60));
    await s.until('team-a borrows all of team-b', async () => (await running('bor-')).length === 4);
    const borrowed = await s.get('/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team-a');
    await s.until('team-a status shows the borrowing', async () => {
      const c = await s.get('/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team-a');
      return c.status?.flavorsReservation?.[0]?.resources?.find((r: any) => r.name === 'cpu')?.borrowed === '200m';
    }).catch(() => assert.fail(JSON.stringify(borrowed.status)));
    await s.create(jobs, job('owner-1', 'b', '100m', 1));
    await s.until('owner runs', async () => (await running('owner-')).length === 1 || (await s.get(`${jobs}/owner-1`)).status?.succeeded === 1);
    const victims = [];
    for (const n of ['bor-1', 'bor-2', 'bor-3', 'bor-4']) {
      const w = await workloadOf(n);
      if (cond(w, 'Preempted')?.status === 'True') victims.push([n, cond(w, 'Preempted').reason]);
    }
    assert.equal(victims.length, 1, JSON.stringify(victims));
    assert.equal(victims[0]?.[1], 'InCohortReclamation');
    // the victim is suspended again, its quota given back, and it waits for room
    assert.ok((await running('bor-')).length <= 3);
    for (const n of ['bor-1', 'bor-2', 'bor-3', 'bor-4']) await s.req('DELETE', `${jobs}/${n}?propagationPolicy=Background`);
  });

  it('preempts a lower-priority Job for a higher-priority one in the same ClusterQueue', async () => {
    await s.create(jobs, job('low', 'p', '100m', 60));
    await s.until('low runs', async () => (await running('low')).length === 1);
    await s.create(jobs, job('urgent', 'p', '100m', 2, { 'kueue.x-k8s.io/priority-class': 'high' }));
    const w = await s.until('low preempted', async () => {
      const wl = await workloadOf('low');
      return cond(wl, 'Preempted')?.status === 'True' ? wl : undefined;
    });
    assert.equal(cond(w, 'Preempted')?.reason, 'InClusterQueue');
    assert.equal(cond(w, 'Evicted')?.reason, 'Preempted');
    await s.until('urgent finished', async () => cond(await s.get(`${jobs}/urgent`), 'Complete')?.status === 'True');
    // and once urgent is done, low is admitted again
    await s.until('low admitted again', async () => (await running('low')).length === 1 && (await workloadOf('low')).status?.requeueState?.count === 1);
    await s.req('DELETE', `${jobs}/low?propagationPolicy=Background`);
  });

  // big and small are often created in the same second: the order they arrived in, not their uids,
  // must keep small behind big
  it('StrictFIFO holds smaller Jobs behind a head that does not fit; BestEffortFIFO lets them pass', async () => {
    for (const [queue, prefix] of [['strict', 'sf-'], ['besteffort', 'be-']] as const) {
      // first runs long enough that the FIFO check below happens while it still holds the quota
      await s.create(jobs, job(`${prefix}first`, queue, '150m', 10));
      await s.until(`${prefix}first runs`, async () => (await running(`${prefix}first`)).length === 1);
      await s.create(jobs, job(`${prefix}big`, queue, '200m', 1));
      await s.until(`${prefix}big pending`, async () => cond(await workloadOf(`${prefix}big`), 'QuotaReserved')?.status === 'False');
      await s.create(jobs, job(`${prefix}small`, queue, '50m', 1));
    }
    // BestEffortFIFO: small fits beside first and runs; StrictFIFO: small waits behind big
    await s.until('be-small runs', async () => (await s.get(`${jobs}/be-small`)).spec.suspend === false);
    // small is read before big: small running while big still waits would break StrictFIFO
    const sfSmall = await s.get(`${jobs}/sf-small`);
    const sfBig = await s.get(`${jobs}/sf-big`);
    if (sfBig.spec.suspend === true) assert.equal(sfSmall.spec.suspend, true, 'sf-small passed sf-big, the StrictFIFO head');
    // in order once first finishes: big, then small
    await s.until('sf-small runs after sf-big', async () => cond(await s.get(`${jobs}/sf-small`), 'Complete')?.status === 'True', 60_000);
    const bigW = await workloadOf('sf-big');
    const smallW = await workloadOf('sf-small');
    assert.ok(Date.parse(cond(bigW, 'QuotaReserved').lastTransitionTime) <= Date.parse(cond(smallW, 'QuotaReserved').lastTransitionTime));
  });
});
