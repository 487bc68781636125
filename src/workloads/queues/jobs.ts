// Kueue's integration for batch/v1 Jobs: spec.suspend (set on create by the store's KueueJobSuspend
// admission), one pod set "main" of `parallelism` Pods (at least kueue.x-k8s.io/job-min-parallelism
// with partial admission), the admitted count written to parallelism while it runs.
import type { Job } from '../../api/batch.js';
import { Kinds } from '../../api/index.js';
import { KueueNames } from '../../api/kueue.js';
import type { StoredObject } from '../../api/meta.js';
import type { Controller, Manager } from '../../control/controller.js';
import type { PodSetLike } from './engine/index.js';
import type { IntegrationOptions, JobAdapter, JobFinish } from './integration.js';
import { addIntegration, placeTemplate, restoreTemplate } from './integration.js';

type JobObj = Job & StoredObject;

function jobFinish(job: JobObj): JobFinish | undefined {
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete') return { reason: 'Succeeded', message: 'Job finished successfully' };
    if (c.type === 'Failed') return { reason: 'Failed', message: c.message ?? 'Job failed' };
  }
  return undefined;
}

export function jobPodSets(job: Job): PodSetLike[] {
  const parallelism = job.spec.parallelism ?? 1;
  const podSet: PodSetLike = { name: KueueNames.defaultPodSetName, count: parallelism, template: structuredClone(job.spec.template) as PodSetLike['template'] };
  const min = Number(job.metadata.annotations?.[KueueNames.jobMinParallelism]);
  if (Number.isInteger(min) && min > 0 && min < parallelism) podSet.minCount = min;
  return [podSet];
}

export const jobAdapter: JobAdapter<JobObj> = {
  def: Kinds.Job,
  kind: 'Job',
  isSuspended: (job) => job.spec.suspend === true,
  suspend(job) {
    const next = structuredClone(job);
    next.spec.suspend = true;
    return next;
  },
  podSets: jobPodSets,
  run(job, placements) {
    const next = structuredClone(job);
    const p = placements.get(KueueNames.defaultPodSetName) ?? [...placements.values()][0];
    placeTemplate(next.spec.template.spec, p);
    if (p?.count !== undefined && p.count < (job.spec.parallelism ?? 1)) next.spec.parallelism = p.count;
    next.spec.suspend = false;
    return next;
  },
  restore(job, podSets) {
    const ps = podSets[0];
    if (!ps) return undefined;
    const next = structuredClone(job);
    // the template may change only while the Job is suspended, which it is here
    const changed = restoreTemplate(next.spec.template.spec, ps.template?.spec as never);
    const parallelism = ps.count ?? 1;
    if (!changed && (job.spec.parallelism ?? 1) === parallelism) return undefined;
    next.spec.parallelism = parallelism;
    return next;
  },
  finished: jobFinish,
  activePods: (job) => (job.status?.active ?? 0) + (job.status?.terminating ?? 0),
};

export function addQueueJobController(mgr: Manager, opts: IntegrationOptions): Controller {
  return addIntegration(mgr, jobAdapter, opts);
}
