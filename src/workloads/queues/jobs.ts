// Kueue's job framework for batch/v1 Jobs: a Job labelled with a LocalQueue is created suspended (the
// store's KueueJobSuspend admission), gets a Workload it owns, runs when the Workload is admitted
// (the flavors' node labels and tolerations put into its pod template, then suspend=false), is
// suspended again when the Workload is evicted (template restored, quota given back once its Pods
// are gone), and marks the Workload Finished when it ends. Each reconcile takes one step, as the
// Job controller does, so a restart anywhere converges.
import { createHash } from 'node:crypto';
import type { Job } from '../../api/batch.js';
import { Kinds } from '../../api/index.js';
import {
  KueueGroup, KueueNames, KueueStorageVersion, ResourceFlavorKind, WorkloadConditions as C, WorkloadKind, WorkloadPriorityClassKind, WorkloadReasons as R,
} from '../../api/kueue.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import type { KObject } from '../../api/meta.js';
import type { PodSetAssignmentLike, PodSetLike, ResourceFlavorLike, Toleration, WorkloadLike } from './engine/index.js';
import { findCondition, isTrue, setCondition, unsetQuotaReservation } from './status.js';

type JobObj = Job & StoredObject;
type WorkloadObj = StoredObject & WorkloadLike;

export interface QueueJobOptions {
  client: Client;
  cache: InformerCache;
  recorder: Recorder;
  /** Kueue's manageJobsWithoutQueueName: Jobs without the label go to the namespace's "default" LocalQueue */
  manageJobsWithoutQueueName?: boolean;
  now?: () => Date;
}

/** Kueue's name for a job's Workload: `<kind>-<name>-<5 hex>`, the hash telling jobs of one name apart */
export function workloadNameFor(kind: string, name: string, uid: string): string {
  const hash = createHash('sha1').update(`${kind}/${name}/${uid}`).digest('hex').slice(0, 5);
  const prefix = `${kind.toLowerCase()}-${name}`.slice(0, 253 - 6);
  return `${prefix}-${hash}`;
}

/** the LocalQueue a job names, or undefined when it is not Kueue's to manage */
export function queueNameOf(obj: StoredObject, manageWithoutQueueName = false): string | undefined {
  const q = obj.metadata.labels?.[KueueNames.queueLabel];
  if (q) return q;
  return manageWithoutQueueName ? KueueNames.defaultLocalQueue : undefined;
}

/** a job's finish as Kueue's Workload records it */
export interface JobFinish {
  reason: 'Succeeded' | 'Failed';
  message: string;
}

function jobFinish(job: JobObj): JobFinish | undefined {
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete') return { reason: R.Succeeded, message: 'Job finished successfully' };
    if (c.type === 'Failed') return { reason: R.Failed, message: c.message ?? 'Job failed' };
  }
  return undefined;
}

/** The Workload a Job stands for: one pod set "main" of `parallelism` Pods. */
export function workloadForJob(job: JobObj, queueName: string, priority?: number): KObject & WorkloadLike {
  const parallelism = job.spec.parallelism ?? 1;
  const podSet: PodSetLike = { name: KueueNames.defaultPodSetName, count: parallelism, template: structuredClone(job.spec.template) as PodSetLike['template'] };
  const min = Number(job.metadata.annotations?.[KueueNames.jobMinParallelism]);
  if (Number.isInteger(min) && min > 0 && min < parallelism) podSet.minCount = min;
  return workloadObject(job, 'Job', queueName, [podSet], priority);
}

/**
 * a Workload owned by `owner`, with the priority class (and `priority`, the class's value, which
 * Kueue's webhook requires beside it) and the maximum execution time its labels name
 */
export function workloadObject(owner: StoredObject, kind: string, queueName: string, podSets: PodSetLike[], priority?: number): KObject & WorkloadLike {
  const labels = owner.metadata.labels ?? {};
  const spec: NonNullable<WorkloadLike['spec']> & { maximumExecutionTimeSeconds?: number } = { queueName, podSets };
  const pc = labels[KueueNames.priorityClassLabel];
  if (pc) {
    spec.priorityClassRef = { group: KueueGroup, kind: 'WorkloadPriorityClass', name: pc };
    spec.priority = priority ?? 0;
  }
  const maxExec = Number(labels[KueueNames.maxExecTimeLabel]);
  if (Number.isInteger(maxExec) && maxExec > 0) spec.maximumExecutionTimeSeconds = maxExec;
  return {
    apiVersion: `${KueueGroup}/${KueueStorageVersion}`,
    kind: 'Workload',
    metadata: {
      name: workloadNameFor(kind, owner.metadata.name, owner.metadata.uid),
      namespace: owner.metadata.namespace,
      labels: { [KueueNames.jobUidLabel]: owner.metadata.uid },
      ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec,
  };
}

/** The node labels and tolerations of the flavors a pod set was admitted with. */
export function flavorPlacement(cache: InformerCache, flavors: Record<string, string> | undefined): { nodeSelector: Record<string, string>; tolerations: Toleration[] } {
  const nodeSelector: Record<string, string> = {};
  const tolerations: Toleration[] = [];
  const seen = new Set<string>();
  for (const f of Object.values(flavors ?? {})) {
    if (seen.has(f)) continue;
    seen.add(f);
    const rf = cache.get(ResourceFlavorKind, { name: f }) as (StoredObject & ResourceFlavorLike) | undefined;
    Object.assign(nodeSelector, rf?.spec?.nodeLabels ?? {});
    for (const t of rf?.spec?.tolerations ?? []) tolerations.push(t as Toleration);
  }
  return { nodeSelector, tolerations };
}

/** whether a Workload holds quota that lets its job run: admitted, and not being evicted */
export function runnable(w: WorkloadLike): boolean {
  const conds = w.status?.conditions;
  return !!w.status?.admission && isTrue(conds, C.Admitted) && !isTrue(conds, C.Evicted) && !isTrue(conds, C.Finished);
}

export function addQueueJobController(mgr: Manager, opts: QueueJobOptions): Controller {
  const r = new QueueJobReconciler(opts);
  return mgr.add({
    name: 'kueue-job',
    for: Kinds.Job,
    owns: [WorkloadKind],
    reconcile: (key) => r.reconcile(key),
  });
}

export class QueueJobReconciler {
  private readonly now: () => Date;

  constructor(private readonly opts: QueueJobOptions) {
    this.now = opts.now ?? (() => new Date());
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client, cache, recorder } = this.opts;
    const job = await client.find<JobObj>(Kinds.Job, key);
    if (!job || job.metadata.deletionTimestamp) return {};
    const queueName = queueNameOf(job, this.opts.manageJobsWithoutQueueName);
    if (!queueName) return {};
    const wl = (cache.owned(WorkloadKind, job.metadata.uid) as WorkloadObj[])[0];
    const at = this.now().toISOString();
    const finish = jobFinish(job);

    if (!wl) {
      // a Job that finished before it had a Workload (or whose Workload was removed) needs none
      if (finish) return {};
      const pc = job.metadata.labels?.[KueueNames.priorityClassLabel];
      const wpc = pc ? cache.get(WorkloadPriorityClassKind, { name: pc }) : undefined;
      if (pc && !wpc) {
        recorder.event(job, 'Warning', 'WorkloadPriorityClassNotFound', `workloadPriorityClass.kueue.x-k8s.io "${pc}" not found`);
        return { requeueAfter: 10_000 };
      }
      // a Job created before the queue label reached it may be running: Kueue stops it first
      if (!job.spec.suspend) return this.suspend(job, 'Not admitted by cluster queue');
      try {
        const created = await client.create<WorkloadObj>(workloadForJob(job, queueName, wpc ? Number(wpc.value ?? 0) : undefined));
        recorder.event(job, 'Normal', 'CreatedWorkload', `Created Workload: ${created.metadata.namespace}/${created.metadata.name}`);
      } catch (e) {
        if ((e as { reason?: string }).reason !== 'AlreadyExists') throw e;
      }
      return {};
    }

    if (finish) {
      if (isTrue(wl.status?.conditions, C.Finished)) return {};
      await this.writeWorkload(wl, (s) => setCondition((s.conditions ??= []), C.Finished, 'True', finish.reason, finish.message, at));
      return {};
    }

    if (runnable(wl)) {
      if (job.spec.suspend) await this.start(job, wl);
      return {};
    }

    // not admitted (pending, or evicted): the Job must not run
    if (!job.spec.suspend) {
      const ev = findCondition(wl.status?.conditions, C.Evicted);
      return this.suspend(job, ev?.status === 'True' ? ev.message ?? 'Evicted' : 'Not admitted by cluster queue');
    }
    if (await this.restore(job, wl)) return {};
    // the Job is stopped and its Pods are gone: the quota goes back and the Workload queues again
    const ev = findCondition(wl.status?.conditions, C.Evicted);
    if (wl.status?.admission && ev?.status === 'True') {
      if ((job.status?.active ?? 0) > 0 || (job.status?.terminating ?? 0) > 0) return { requeueAfter: 1_000 };
      await this.writeWorkload(wl, (s) => {
        unsetQuotaReservation(s, R.Pending, ev.message ?? '', at);
        setCondition((s.conditions ??= []), C.Requeued, 'True', ev.reason ?? R.Preempted, ev.message ?? '', at);
        const rs = (s.requeueState ??= {});
        rs.count = (rs.count ?? 0) + 1;
        return true;
      });
    }
    return {};
  }

  private async writeWorkload(wl: WorkloadObj, mutate: (s: NonNullable<WorkloadLike['status']>) => boolean): Promise<void> {
    const fresh = structuredClone(wl);
    fresh.status ??= {};
    if (!mutate(fresh.status)) return;
    await this.opts.client.updateStatus(fresh);
  }

  /** admitted: the flavors' placement into the template (and the admitted count), then run */
  private async start(job: JobObj, wl: WorkloadObj): Promise<void> {
    const assignments: PodSetAssignmentLike[] = wl.status?.admission?.podSetAssignments ?? [];
    const psa = assignments.find((p) => p.name === KueueNames.defaultPodSetName) ?? assignments[0];
    const { nodeSelector, tolerations } = flavorPlacement(this.opts.cache, psa?.flavors);
    const next = structuredClone(job);
    const spec = next.spec.template.spec ?? (next.spec.template.spec = { containers: [] } as never);
    if (Object.keys(nodeSelector).length) spec.nodeSelector = { ...spec.nodeSelector, ...nodeSelector };
    if (tolerations.length) spec.tolerations = [...(spec.tolerations ?? []), ...tolerations];
    if (psa?.count !== undefined && psa.count < (job.spec.parallelism ?? 1)) next.spec.parallelism = psa.count;
    next.spec.suspend = false;
    await this.opts.client.update(next);
    this.opts.recorder.event(job, 'Normal', 'Started', `Admitted by clusterQueue ${wl.status?.admission?.clusterQueue ?? ''}`);
  }

  private async suspend(job: JobObj, message: string): Promise<Result> {
    const next = structuredClone(job);
    next.spec.suspend = true;
    await this.opts.client.update(next);
    this.opts.recorder.event(job, 'Normal', 'Stopped', message);
    return {};
  }

  /** a suspended Job gets back the template (and parallelism) it had before admission */
  private async restore(job: JobObj, wl: WorkloadObj): Promise<boolean> {
    const ps = wl.spec?.podSets?.[0];
    const orig = ps?.template?.spec;
    const cur = job.spec.template.spec;
    if (!orig || !cur) return false;
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
    const parallelism = ps.count ?? 1;
    if (same(orig.nodeSelector, cur.nodeSelector) && same(orig.tolerations, cur.tolerations) && (job.spec.parallelism ?? 1) === parallelism) return false;
    const next = structuredClone(job);
    const spec = next.spec.template.spec!;
    if (orig.nodeSelector) spec.nodeSelector = structuredClone(orig.nodeSelector);
    else delete spec.nodeSelector;
    if (orig.tolerations) spec.tolerations = structuredClone(orig.tolerations) as Toleration[];
    else delete spec.tolerations;
    next.spec.parallelism = parallelism;
    await this.opts.client.update(next);
    return true;
  }
}
