// Kueue's own examples (the upstream YAML in the conformance corpus), read as they are and run
// through the engine, with the outcomes Kueue's documentation states for them.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { conformanceDir } from '../../../conformance-path.js';
import { schedule } from './engine.js';
import { T0 } from './testing.js';
import type { ClusterQueueLike, CohortLike, LocalQueueLike, ResourceFlavorLike, Snapshot, WorkloadLike, WorkloadPriorityClassLike } from './types.js';

const kueue = join(conformanceDir(), 'kueue');
const present = existsSync(kueue);

type Doc = { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> } & Record<string, unknown>;

function docs(...files: string[]): Doc[] {
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(join(kueue, f), 'utf8'))
      .map((d) => d.toJS() as Doc | null)
      .filter((d): d is Doc => !!d && typeof d === 'object' && !!d.kind),
  );
}

/** the Workload Kueue's batch/Job integration makes of a Job: one pod set "main" of `parallelism` pods */
function jobWorkload(job: Doc, created = 0): WorkloadLike {
  const spec = job.spec as { parallelism?: number; template?: { spec?: unknown } };
  const min = job.metadata?.annotations?.['kueue.x-k8s.io/job-min-parallelism'];
  const podSet: NonNullable<NonNullable<WorkloadLike['spec']>['podSets']>[number] = { name: 'main', count: spec.parallelism ?? 1, template: spec.template as never };
  if (min !== undefined) podSet.minCount = Number(min);
  const w: WorkloadLike = {
    metadata: { namespace: job.metadata?.namespace ?? 'default', name: `job-${job.metadata?.name}`, uid: `uid-${job.metadata?.name}`, creationTimestamp: new Date(T0 + created * 1000).toISOString() },
    spec: { queueName: job.metadata?.labels?.['kueue.x-k8s.io/queue-name'] ?? '', podSets: [podSet] },
  };
  const pc = job.metadata?.labels?.['kueue.x-k8s.io/priority-class'];
  if (pc) (w.spec as NonNullable<WorkloadLike['spec']>).priorityClassRef = { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: pc };
  return w;
}

/** a snapshot of the corpus objects, with every namespace they use and `extra` workloads */
function snapshotOf(objects: Doc[], workloads: WorkloadLike[] = []): Snapshot {
  const of = <T>(kind: string): T[] => objects.filter((o) => o.kind === kind) as unknown as T[];
  const localQueues = of<LocalQueueLike>('LocalQueue');
  const namespaces = new Set(['default', ...localQueues.map((q) => q.metadata.namespace ?? 'default'), ...workloads.map((w) => w.metadata.namespace ?? '')]);
  return {
    resourceFlavors: of<ResourceFlavorLike>('ResourceFlavor'),
    clusterQueues: of<ClusterQueueLike>('ClusterQueue'),
    cohorts: of<CohortLike>('Cohort'),
    localQueues,
    workloadPriorityClasses: of<WorkloadPriorityClassLike>('WorkloadPriorityClass'),
    namespaces: [...namespaces].map((name) => ({ metadata: { name, labels: { 'kubernetes.io/metadata.name': name } } })),
    workloads: [...of<WorkloadLike>('Workload'), ...workloads],
  };
}

const cpuJob = (ns: string, name: string, cpu: number, queue: string, created = 0): WorkloadLike =>
  jobWorkload({ kind: 'Job', metadata: { name, namespace: ns, labels: { 'kueue.x-k8s.io/queue-name': queue } }, spec: { parallelism: 1, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: String(cpu) } } }] } } } }, created);

/** the largest CPU request team-a's queue admits with these ClusterQueues */
function largest(objects: Doc[]): number {
  let n = 0;
  while (n < 64 && schedule(snapshotOf(objects, [cpuJob('team-a', 'probe', n + 1, 'lq')]), T0).admissions.length === 1) n++;
  return n;
}

const teamQueues: Doc[] = [
  { kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } },
  { kind: 'LocalQueue', metadata: { namespace: 'team-a', name: 'lq' }, spec: { clusterQueue: 'team-a-cq' } },
];

describe('Kueue examples', { skip: present ? false : 'no conformance corpus' }, () => {
  it('quick start: the sample Job (3 pods of 1 CPU, 200Mi) is admitted to cluster-queue', () => {
    const objects = docs('examples/admin/single-clusterqueue-setup.yaml', 'examples/getting-started/quick-start-job.yaml');
    const job = objects.find((o) => o.kind === 'Job') as Doc;
    const r = schedule(snapshotOf(objects, [jobWorkload(job)]), T0);
    assert.deepEqual(r.admissions.map((a) => a.admission), [
      { clusterQueue: 'cluster-queue', podSetAssignments: [{ name: 'main', flavors: { cpu: 'default-flavor', memory: 'default-flavor' }, resourceUsage: { cpu: '3', memory: '600Mi' }, count: 3 }] },
    ]);
    assert.deepEqual(r.clusterQueues['cluster-queue']?.flavorsUsage, [{ name: 'default-flavor', resources: [{ name: 'cpu', total: '3' }, { name: 'memory', total: '600Mi' }] }]);
  });

  it('quick start: four sample Jobs fill the 9 CPUs three at a time; the fourth waits', () => {
    const objects = docs('examples/admin/single-clusterqueue-setup.yaml', 'examples/getting-started/quick-start-job.yaml');
    const job = objects.find((o) => o.kind === 'Job') as Doc;
    const jobs = [0, 1, 2, 3].map((i) => jobWorkload({ ...job, metadata: { ...job.metadata, name: `sample-job-${i}` } }, i));
    const r = schedule(snapshotOf(objects, jobs), T0);
    assert.equal(r.admissions.length, 3);
    assert.deepEqual([r.pending[0]?.name, r.pending[0]?.reason], ['job-sample-job-3', 'WaitingForQuota']);
  });

  it('partial admission: parallelism 20 with job-min-parallelism 5 on 9 free CPUs runs 9 pods', () => {
    const objects = docs('examples/admin/single-clusterqueue-setup.yaml', 'examples/jobs/sample-job-partial-admission.yaml');
    const job = objects.find((o) => o.kind === 'Job') as Doc;
    const r = schedule(snapshotOf(objects, [jobWorkload(job)]), T0);
    assert.equal(r.admissions[0]?.admission.podSetAssignments[0]?.count, 9);
  });

  it('cohorts: team-a (9) borrows from team-b (12) up to 21', () => {
    assert.equal(largest([...teamQueues, ...docs('docs-extracted/concepts_cluster_queue-07.yaml', 'docs-extracted/concepts_cluster_queue-08.yaml')]), 21);
  });

  it('borrowingLimit: 1 leaves team-a 10', () => {
    assert.equal(largest([...teamQueues, ...docs('docs-extracted/concepts_cluster_queue-09.yaml', 'docs-extracted/concepts_cluster_queue-10.yaml')]), 10);
  });

  it('lendingLimit: team-b lending 1 leaves team-a 10', () => {
    assert.equal(largest([...teamQueues, ...docs('docs-extracted/concepts_cluster_queue-11.yaml', 'docs-extracted/concepts_cluster_queue-12.yaml')]), 10);
  });

  it('v1beta1 spelling (cohort instead of cohortName) gives the same: borrowingLimit 1 leaves team-a 10', () => {
    assert.equal(largest([...teamQueues, ...docs('legacy-v1beta1/concepts_cluster_queue-09.yaml', 'legacy-v1beta1/concepts_cluster_queue-10.yaml')]), 10);
  });

  it('a Cohort\'s 12 shared CPUs serve a ClusterQueue with nominalQuota 0', () => {
    const objects = [
      { kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } },
      { kind: 'LocalQueue', metadata: { namespace: 'team-a', name: 'lq' }, spec: { clusterQueue: 'my-cluster-queue' } },
      ...docs('docs-extracted/concepts_cohort-03.yaml', 'docs-extracted/concepts_cohort-04.yaml'),
    ];
    (objects.find((o) => o.kind === 'ClusterQueue')?.spec as Record<string, unknown>)['namespaceSelector'] = {};
    assert.equal(largest(objects), 12);
  });

  it('a spot flavor\'s taint turns away pods that do not tolerate it', () => {
    const objects = [
      ...docs('examples/admin/resource-flavor-taints.yaml'),
      { kind: 'ClusterQueue', metadata: { name: 'cq' }, spec: { namespaceSelector: {}, resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'spot', resources: [{ name: 'cpu', nominalQuota: 9 }] }] }] } },
      { kind: 'LocalQueue', metadata: { namespace: 'default', name: 'lq' }, spec: { clusterQueue: 'cq' } },
    ];
    const r = schedule(snapshotOf(objects, [cpuJob('default', 'j', 1, 'lq')]), T0);
    assert.equal(r.pending[0]?.message, "couldn't assign flavors to pod set main: untolerated taint spot=true:NoSchedule in flavor spot");
  });

  it('flavors in resource groups: x86 then arm for CPU, one flavor for memory', () => {
    const objects = [
      ...['x86', 'arm', 'default-flavor'].map((name) => ({ kind: 'ResourceFlavor', metadata: { name } })),
      ...docs('docs-extracted/tasks_manage_administer_cluster_quotas-06.yaml'),
      { kind: 'LocalQueue', metadata: { namespace: 'default', name: 'lq' }, spec: { clusterQueue: 'cluster-queue' } },
    ];
    const r = schedule(snapshotOf(objects, [cpuJob('default', 'a', 9, 'lq'), cpuJob('default', 'b', 12, 'lq', 1), cpuJob('default', 'c', 1, 'lq', 2)]), T0);
    assert.deepEqual(r.admissions.map((a) => [a.name, a.admission.podSetAssignments[0]?.flavors['cpu']]), [['job-a', 'x86'], ['job-b', 'arm']]);
    assert.equal(r.pending[0]?.reason, 'WaitingForQuota');
  });

  it('a WorkloadPriorityClass from the docs orders the Workload the docs show first', () => {
    const objects = [
      ...docs('examples/admin/single-clusterqueue-setup.yaml', 'docs-extracted/tasks_manage_run_job_with_workload_priority-01.yaml'),
      ...docs('docs-extracted/tasks_manage_run_job_with_workload_priority-03.yaml').map((w) => ({ ...w, metadata: { ...w.metadata, namespace: 'default', creationTimestamp: new Date(T0 + 5000).toISOString() } })),
    ];
    (objects.find((o) => o.kind === 'Workload')?.spec as { queueName: string }).queueName = 'user-queue';
    const p = schedule(snapshotOf(objects, [cpuJob('default', 'older', 9, 'user-queue')]), T0, { maxCycles: 1 });
    // the priority-10000 Workload goes first although younger; its pods ask for nothing
    assert.deepEqual(p.admissions.map((a) => a.name), ['job-sample-job-7f173']);
  });
});
