// Kueue's job framework: what every integration shares. A job kind tells, through a JobAdapter (Kueue's
// GenericJob), how it is suspended, which pod sets it asks for, how an admission's flavors go into its
// templates and how they come out again, and when it has finished. The reconciler below then keeps one
// Workload per job: created while the job is suspended, the job started when the Workload is admitted,
// stopped when it is evicted (quota given back once the job's Pods are gone), the Workload Finished when
// the job ends. Each reconcile takes one step, so a restart anywhere converges.
import { createHash } from 'node:crypto';
import {
  KueueGroup, KueueNames, KueueStorageVersion, ResourceFlavorKind, WorkloadConditions as C, WorkloadKind, WorkloadPriorityClassKind, WorkloadReasons as R,
} from '../../api/kueue.js';
import { Kinds } from '../../api/index.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import type { PodSetAssignmentLike, PodSetLike, ResourceFlavorLike, Toleration, WorkloadLike } from './engine/index.js';
import { findCondition, isTrue, setCondition, unsetQuotaReservation } from './status.js';

export type WorkloadObj = StoredObject & WorkloadLike;

/** a job's end as Kueue's Workload records it */
export interface JobFinish {
  reason: 'Succeeded' | 'Failed';
  message: string;
}

/** what an admission puts into one pod set's template */
export interface PodSetPlacement {
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
  count?: number;
}

/** Kueue's GenericJob: how one kind of job is driven through a Workload. */
export interface JobAdapter<J extends StoredObject = StoredObject> {
  def: KindDef;
  /** the ownerReference kind, and the Workload name's prefix */
  kind: string;
  isSuspended(job: J): boolean;
  /** a copy of the job, suspended */
  suspend(job: J): J;
  podSets(job: J): PodSetLike[];
  /** a copy of the job with the admission's placement per pod set, unsuspended */
  run(job: J, placements: Map<string, PodSetPlacement>): J;
  /** a copy of the job with the pod sets' templates as the Workload recorded them, or undefined when they already are */
  restore(job: J, podSets: PodSetLike[]): J | undefined;
  finished(job: J): JobFinish | undefined;
  /** Pods of the job still running or terminating: its quota goes back only when there are none */
  activePods(job: J, cache: InformerCache): number;
  /** whether this object is the integration's to manage at all (default: every labelled one) */
  manages?(job: J): boolean;
  /** stops a running job some other way than writing suspend(job) (a plain Pod is deleted) */
  stop?(job: J, client: Client): Promise<void>;
  /** Pods of the job that are Ready or Succeeded (default: the job's own Pods in the cache) */
  readyPods?(job: J, cache: InformerCache): number;
}

/** Kueue's waitForPodsReady, in milliseconds */
export interface PodsReadySettings {
  /** admitted to every Pod ready (or succeeded): past it the Workload is evicted, PodsReadyTimeout */
  timeoutMs: number;
  /** once ready, how long it may stay not ready (default: the timeout) */
  recoveryTimeoutMs?: number;
  /** requeues before the Workload is deactivated instead (absent: no limit) */
  backoffLimitCount?: number;
  backoffBaseSeconds: number;
  backoffMaxSeconds: number;
}

/** Kueue's requeue delay after the n-th PodsReady timeout: base * 2^(n-1), capped */
export function podsReadyBackoffSeconds(count: number, s: Pick<PodsReadySettings, 'backoffBaseSeconds' | 'backoffMaxSeconds'>): number {
  return Math.min(s.backoffMaxSeconds, s.backoffBaseSeconds * 2 ** Math.max(0, count - 1));
}

export const podReadyOrDone = (p: StoredObject): boolean => p.status?.phase === 'Succeeded'
  || (p.status?.phase === 'Running' && ((p.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'Ready' && c.status === 'True'));

/** the default readyPods: the job's own Pods */
export function ownedReadyPods(job: StoredObject, cache: InformerCache): number {
  return cache.owned(Kinds.Pod, job.metadata.uid).filter(podReadyOrDone).length;
}

export interface IntegrationOptions {
  client: Client;
  cache: InformerCache;
  recorder: Recorder;
  /** Kueue's manageJobsWithoutQueueName: jobs without the label go to the namespace's "default" LocalQueue */
  manageJobsWithoutQueueName?: boolean;
  /** Kueue's waitForPodsReady: absent, PodsReady is still recorded but nothing times out */
  waitForPodsReady?: PodsReadySettings;
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
export function flavorPlacement(cache: InformerCache, a: PodSetAssignmentLike | undefined): PodSetPlacement {
  const nodeSelector: Record<string, string> = {};
  const tolerations: Toleration[] = [];
  const seen = new Set<string>();
  for (const f of Object.values(a?.flavors ?? {})) {
    if (seen.has(f)) continue;
    seen.add(f);
    const rf = cache.get(ResourceFlavorKind, { name: f }) as (StoredObject & ResourceFlavorLike) | undefined;
    Object.assign(nodeSelector, rf?.spec?.nodeLabels ?? {});
    for (const t of rf?.spec?.tolerations ?? []) tolerations.push(t);
  }
  return a?.count !== undefined ? { nodeSelector, tolerations, count: a.count } : { nodeSelector, tolerations };
}

/** whether a Workload holds quota that lets its job run: admitted, and not being evicted */
export function runnable(w: WorkloadLike): boolean {
  const conds = w.status?.conditions;
  return !!w.status?.admission && isTrue(conds, C.Admitted) && !isTrue(conds, C.Evicted) && !isTrue(conds, C.Finished);
}

/** the fields of a pod template an admission sets */
export interface SchedulingFields {
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
}

/** a template's scheduling fields set to a placement on top of what it asked for itself */
export function placeTemplate(spec: SchedulingFields, p: PodSetPlacement | undefined): void {
  if (!p) return;
  if (Object.keys(p.nodeSelector).length) spec.nodeSelector = { ...spec.nodeSelector, ...p.nodeSelector };
  if (p.tolerations.length) spec.tolerations = [...(spec.tolerations ?? []), ...p.tolerations];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** whether a template's scheduling fields are the recorded ones; when not, sets them back */
export function restoreTemplate(spec: SchedulingFields | undefined, orig: SchedulingFields | undefined): boolean {
  if (!spec || !orig) return false;
  if (same(spec.nodeSelector, orig.nodeSelector) && same(spec.tolerations, orig.tolerations)) return false;
  if (orig.nodeSelector) spec.nodeSelector = structuredClone(orig.nodeSelector);
  else delete spec.nodeSelector;
  if (orig.tolerations) spec.tolerations = structuredClone(orig.tolerations);
  else delete spec.tolerations;
  return true;
}

export function addIntegration<J extends StoredObject>(mgr: Manager, adapter: JobAdapter<J>, opts: IntegrationOptions): Controller {
  const r = new IntegrationReconciler(adapter, opts);
  return mgr.add({
    name: `kueue-${adapter.kind.toLowerCase()}`,
    for: adapter.def,
    // only labelled objects are Kueue's (Pods especially: most are not)
    predicate: (e) => !!opts.manageJobsWithoutQueueName || !!e.object.metadata.labels?.[KueueNames.queueLabel],
    owns: [WorkloadKind],
    reconcile: (key) => r.reconcile(key),
  });
}

export class IntegrationReconciler<J extends StoredObject> {
  private readonly now: () => Date;

  constructor(private readonly adapter: JobAdapter<J>, private readonly opts: IntegrationOptions) {
    this.now = opts.now ?? (() => new Date());
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client, cache, recorder } = this.opts;
    const a = this.adapter;
    const job = await client.find<J>(a.def, key);
    if (!job || job.metadata.deletionTimestamp) return {};
    const queueName = queueNameOf(job, this.opts.manageJobsWithoutQueueName);
    if (!queueName || (a.manages && !a.manages(job))) return {};
    const wl = (cache.owned(WorkloadKind, job.metadata.uid) as WorkloadObj[])[0];
    const at = this.now().toISOString();
    const finish = a.finished(job);

    if (!wl) {
      // a job that finished before it had a Workload (or whose Workload was removed) needs none
      if (finish) return {};
      const pc = job.metadata.labels?.[KueueNames.priorityClassLabel];
      const wpc = pc ? cache.get(WorkloadPriorityClassKind, { name: pc }) : undefined;
      if (pc && !wpc) {
        recorder.event(job, 'Warning', 'WorkloadPriorityClassNotFound', `workloadPriorityClass.kueue.x-k8s.io "${pc}" not found`);
        return { requeueAfter: 10_000 };
      }
      // a job that started before the queue reached it: Kueue stops it first
      if (!a.isSuspended(job)) return this.stop(job, 'Not admitted by cluster queue');
      try {
        const created = await client.create<WorkloadObj>(workloadObject(job, a.kind, queueName, a.podSets(job), wpc ? Number(wpc.value ?? 0) : undefined));
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
      if (a.isSuspended(job)) {
        const placements = new Map<string, PodSetPlacement>();
        for (const psa of wl.status?.admission?.podSetAssignments ?? []) placements.set(psa.name, flavorPlacement(cache, psa));
        await client.update(a.run(job, placements));
        recorder.event(job, 'Normal', 'Started', `Admitted by clusterQueue ${wl.status?.admission?.clusterQueue ?? ''}`);
        return {};
      }
      const left = await this.executionTime(wl, at);
      if (left === 0) return {};
      const r = await this.podsReady(job, wl, at);
      return left === undefined ? r : { requeueAfter: Math.min(left, r.requeueAfter ?? left) };
    }

    // not admitted (pending, or evicted): the job must not run
    const ev = findCondition(wl.status?.conditions, C.Evicted);
    if (!a.isSuspended(job)) return this.stop(job, ev?.status === 'True' ? ev.message ?? 'Evicted' : 'Not admitted by cluster queue');
    const restored = a.restore(job, wl.spec?.podSets ?? []);
    if (restored) {
      await client.update(restored);
      return {};
    }
    // the job is stopped and its Pods are gone: the quota goes back and the Workload queues again
    if (wl.status?.admission && ev?.status === 'True') {
      if (a.activePods(job, cache) > 0) return { requeueAfter: 1_000 };
      const cfg = this.opts.waitForPodsReady;
      const timedOut = !!cfg && ev.reason === R.PodsReadyTimeout;
      const count = (wl.status?.requeueState?.count ?? 0) + 1;
      // Kueue deactivates a Workload that used up its requeues: it stays, inactive, until a user sets active again
      const exhausted = timedOut && cfg?.backoffLimitCount !== undefined && count > cfg.backoffLimitCount;
      // the admitted time so far counts against maximumExecutionTimeSeconds at the next admission
      const admittedAt = Date.parse(findCondition(wl.status?.conditions, C.Admitted)?.lastTransitionTime ?? '');
      const evictedAt = Date.parse(ev.lastTransitionTime ?? at);
      const ranSeconds = !Number.isNaN(admittedAt) && evictedAt > admittedAt ? Math.round((evictedAt - admittedAt) / 1000) : 0;
      let target = wl;
      if (exhausted && wl.spec?.active !== false) {
        // the spec first: were the status written first, a failed spec write would never be retried
        target = await client.update<WorkloadObj>({ ...structuredClone(wl), spec: { ...wl.spec, active: false } });
      }
      await this.writeWorkload(target, (s) => {
        unsetQuotaReservation(s, R.Pending, ev.message ?? '', at);
        if (exhausted) setCondition((s.conditions ??= []), C.Requeued, 'False', R.RequeuingLimitExceeded, 'The maximum number of re-queuing retries have been exceeded', at);
        // a deactivated Workload is not queued again until it is active again
        else if (wl.spec?.active === false) setCondition((s.conditions ??= []), C.Requeued, 'False', ev.reason ?? R.Deactivated, ev.message ?? '', at);
        else setCondition((s.conditions ??= []), C.Requeued, 'True', ev.reason ?? R.Preempted, ev.message ?? '', at);
        const st = s as { accumulatedPastExecutionTimeSeconds?: number };
        if (ranSeconds > 0) st.accumulatedPastExecutionTimeSeconds = (st.accumulatedPastExecutionTimeSeconds ?? 0) + ranSeconds;
        const rs = (s.requeueState ??= {});
        rs.count = count;
        // PodsReady timeouts back off before the Workload may be admitted again
        if (cfg && timedOut && !exhausted) rs.requeueAt = new Date(Date.parse(at) + podsReadyBackoffSeconds(count, cfg) * 1000).toISOString();
        // the next admission waits for its Pods afresh
        if (findCondition(s.conditions, C.PodsReady)) setCondition((s.conditions ??= []), C.PodsReady, 'False', R.WaitForStart, 'Not all pods are ready or succeeded', at);
        return true;
      });
      return {};
    }
    // set active again by a user: Kueue queues it afresh, its requeue count forgotten
    const rq = findCondition(wl.status?.conditions, C.Requeued);
    if (wl.spec?.active !== false && !wl.status?.admission && rq?.status === 'False' && (rq.reason === R.RequeuingLimitExceeded || rq.reason?.startsWith(R.Deactivated))) {
      await this.writeWorkload(wl, (s) => {
        setCondition((s.conditions ??= []), C.Requeued, 'True', R.Reactivated, 'The workload was reactivated', at);
        delete s.requeueState;
        return true;
      });
    }
    return {};
  }

  /**
   * Kueue's PodsReady condition, and with waitForPodsReady its timeouts: a Workload whose Pods are not
   * all ready (or succeeded) within the timeout of its admission, or within the recovery timeout of
   * losing readiness, is evicted with PodsReadyTimeout; the eviction path below then stops the job and
   * requeues it after a backoff, or deactivates it once the backoff limit is spent.
   */
  private async podsReady(job: J, wl: WorkloadObj, at: string): Promise<Result> {
    const conds = wl.status?.conditions ?? [];
    const want = (wl.status?.admission?.podSetAssignments ?? []).reduce((n: number, psa: { count?: number }) => n + (psa.count ?? 0), 0);
    const ready = (this.adapter.readyPods ?? ownedReadyPods)(job, this.opts.cache);
    const old = findCondition(conds, C.PodsReady);
    if (ready >= want) {
      if (old?.status !== 'True') {
        const reason = old?.reason === R.WaitForRecovery ? R.Recovered : R.Started;
        await this.writeWorkload(wl, (s) => setCondition((s.conditions ??= []), C.PodsReady, 'True', reason, 'All pods reached readiness and the workload is running', at));
      }
      return {};
    }
    // once ready, the workload is recovering: Kueue tells the two apart by reason and by timeout
    const recovering = old?.status === 'True' || old?.reason === R.WaitForRecovery;
    const reason = recovering ? R.WaitForRecovery : R.WaitForStart;
    if (old?.status !== 'False' || old.reason !== reason) {
      await this.writeWorkload(wl, (s) => setCondition((s.conditions ??= []), C.PodsReady, 'False', reason, 'Not all pods are ready or succeeded', at));
      return {};
    }
    const cfg = this.opts.waitForPodsReady;
    if (!cfg) return {};
    const limit = recovering ? cfg.recoveryTimeoutMs ?? cfg.timeoutMs : cfg.timeoutMs;
    // the wait starts at admission, or at the loss of readiness
    const since = Date.parse((recovering ? old.lastTransitionTime : findCondition(conds, C.Admitted)?.lastTransitionTime) ?? at);
    const left = since + limit - Date.parse(at);
    if (left > 0) return { requeueAfter: left };
    await this.writeWorkload(wl, (s) => setCondition((s.conditions ??= []), C.Evicted, 'True', R.PodsReadyTimeout, `Exceeded the PodsReady timeout ${wl.metadata.namespace ?? ''}/${wl.metadata.name}`, at));
    this.opts.recorder.event(wl, 'Normal', 'EvictedDueToPodsReadyTimeout', `Exceeded the PodsReady timeout ${wl.metadata.namespace ?? ''}/${wl.metadata.name}`);
    return {};
  }

  /**
   * Kueue's maximumExecutionTimeSeconds: the time a Workload may stay admitted, summed over its
   * admissions (status.accumulatedPastExecutionTimeSeconds holds the earlier ones). Past it the
   * Workload is deactivated (spec.active false) and evicted, as Kueue's workload controller does, and
   * stays inactive until a user sets it active again. Returns the milliseconds left, 0 once evicted,
   * undefined without a limit.
   */
  private async executionTime(wl: WorkloadObj, at: string): Promise<number | undefined> {
    const max = (wl.spec as { maximumExecutionTimeSeconds?: number } | undefined)?.maximumExecutionTimeSeconds;
    if (!max) return undefined;
    const since = Date.parse(findCondition(wl.status?.conditions, C.Admitted)?.lastTransitionTime ?? at);
    const past = (wl.status as { accumulatedPastExecutionTimeSeconds?: number } | undefined)?.accumulatedPastExecutionTimeSeconds ?? 0;
    const left = (max - past) * 1000 - (Date.parse(at) - since);
    if (left > 0) return left;
    const { client, recorder } = this.opts;
    // the spec first, so that a failed write is tried again from an unchanged status
    const target = wl.spec?.active === false ? wl : await client.update<WorkloadObj>({ ...structuredClone(wl), spec: { ...wl.spec, active: false } });
    // Kueue's reason for an eviction by deactivation names its cause: Deactivated + DueTo + cause
    const message = 'The workload is deactivated due to exceeding the maximum execution time';
    await this.writeWorkload(target, (s) => setCondition((s.conditions ??= []), C.Evicted, 'True', `${R.Deactivated}DueTo${R.MaximumExecutionTimeExceeded}`, message, at));
    recorder.event(wl, 'Normal', `EvictedDueTo${R.Deactivated}DueTo${R.MaximumExecutionTimeExceeded}`, message);
    return 0;
  }

  private async writeWorkload(wl: WorkloadObj, mutate: (s: NonNullable<WorkloadLike['status']>) => boolean): Promise<void> {
    const fresh = structuredClone(wl);
    fresh.status ??= {};
    if (!mutate(fresh.status)) return;
    await this.opts.client.updateStatus(fresh);
  }

  private async stop(job: J, message: string): Promise<Result> {
    if (this.adapter.stop) await this.adapter.stop(job, this.opts.client);
    else await this.opts.client.update(this.adapter.suspend(job));
    this.opts.recorder.event(job, 'Normal', 'Stopped', message);
    return {};
  }
}
