// The batch/v1 Job controller, with Kubernetes' semantics (pkg/controller/job, 1.31+), written as a
// ladder: reconcile(key) reads the Job and its Pods afresh, walks the rungs in order, and the first
// rung with something to do makes that one change and returns. The watch event the change causes
// (or a requeueAfter, for time) brings the next rung. Nothing is remembered between calls, so a
// server killed at any instant converges after restart: see tracking.ts for how counting stays exact.
import type { Job } from '../../api/batch.js';
import { JobLabels } from '../../api/batch.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey } from '../../api/meta.js';
import { controllerOf } from '../../api/meta.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import { JobActions } from './actions.js';
import { manageRung } from './manage.js';
import type { Pass } from './pass.js';
import {
  JobConditionTypes, JobReasons, ensureCondition, evaluateFinish, interimCondition, isSuspended, terminalCondition, timestamp, wasSuspended,
} from './job-status.js';
import type { PodObject } from './pods.js';
import { hasTrackingFinalizer } from './pods.js';
import type { Finishing, JobView } from './tracking.js';
import { buildView, ownedBy, planFlush, planTracking } from './tracking.js';

export interface JobControllerOptions {
  client: Client;
  recorder: Recorder;
  /** base of the exponential delay before re-creating a failed pod (Kubernetes: 10s, doubling, capped at 6m) */
  podBackoffBaseMs?: number;
  podBackoffMaxMs?: number;
  /** clock, for tests */
  now?: () => Date;
  /** the Manager's informers, which the Job's Pods are read from; made here when absent */
  cache?: InformerCache;
}

/** a rung returns true when it made its change (the pass ends there) */
type Rung = (p: Pass) => Promise<boolean>;

export function addJobController(mgr: Manager, opts: JobControllerOptions): Controller {
  const r = new JobReconciler({ cache: mgr.cache, ...opts });
  return mgr.add({
    name: 'job',
    for: Kinds.Job,
    owns: [Kinds.Pod],
    // pods orphaned by the garbage collector still carry the finalizer; their Job's key releases them
    watches: [{
      kind: Kinds.Pod,
      predicate: (e) => !controllerOf(e.object) && hasTrackingFinalizer(e.object),
      map: (pod) => {
        const name = pod.metadata.labels?.[JobLabels.jobName] ?? pod.metadata.labels?.[JobLabels.legacyJobName];
        return name ? [{ namespace: pod.metadata.namespace, name }] : [];
      },
    }],
    reconcile: (key) => r.reconcile(key),
  });
}

export class JobReconciler {
  private readonly client: Client;
  private readonly actions: JobActions;
  private readonly recorder: Recorder;
  private readonly now: () => Date;
  private readonly backoff: { baseMs: number; maxMs: number };
  private readonly cache: InformerCache;

  constructor(opts: JobControllerOptions) {
    this.client = opts.client;
    this.cache = opts.cache ?? new InformerCache(opts.client);
    this.recorder = opts.recorder;
    this.actions = new JobActions(opts.client, opts.recorder);
    this.now = opts.now ?? (() => new Date());
    this.backoff = { baseMs: opts.podBackoffBaseMs ?? 10_000, maxMs: opts.podBackoffMaxMs ?? 360_000 };
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const job = await this.client.find<Job>(Kinds.Job, key);
    const pods = this.cache.list(Kinds.Pod, { namespace: key.namespace }) as PodObject[];
    // 1. pods of a Job that is gone (or was replaced under the same name) or orphaned: let them go
    const strays = pods.filter((p) => hasTrackingFinalizer(p) && isStray(p, key.name, job?.metadata.uid));
    if (strays.length) {
      await this.actions.releasePods(strays);
      return {};
    }
    if (!job) return {};
    const owned = ownedBy(job, pods);
    const now = this.now();
    const pass: Pass = { job, view: buildView(job, owned), now, at: timestamp(now), wakes: [] };
    // 2. a Job being deleted: count what finished, release everything, create nothing
    if (job.metadata.deletionTimestamp) {
      await this.firstOf(pass, [(p) => this.flush(p), (p) => this.track(p, undefined, true)]);
      return {};
    }
    // 3. a finished Job only waits for its time to live
    const terminal = terminalCondition(job);
    if (terminal) return this.finished(pass, terminal.lastTransitionTime);
    const interim = interimCondition(job);
    // 4. finishing: stop the pods, count them, then declare the end
    if (interim) {
      const finishing = interim.finishing;
      await this.firstOf(pass, [
        (p) => this.flush(p),
        (p) => this.deleteActive(p),
        (p) => this.track(p, finishing, false),
        (p) => this.finish(p, finishing, interim.cond.reason ?? '', interim.cond.message ?? ''),
        (p) => this.writeCounters(p),
      ]);
      return result(pass);
    }
    // 5. running (or suspended)
    await this.firstOf(pass, [
      (p) => this.flush(p),
      (p) => this.resume(p),
      (p) => this.start(p),
      (p) => this.startFinishing(p),
      (p) => this.track(p, undefined, false),
      (p) => this.suspend(p),
      (p) => manageRung(p, this.actions, this.backoff),
      (p) => this.writeCounters(p),
    ]);
    return result(pass);
  }

  private async firstOf(pass: Pass, rungs: Rung[]): Promise<void> {
    for (const rung of rungs) if (await rung(pass)) return;
  }

  private async writeStatus(pass: Pass, mutate: (s: NonNullable<Job['status']>) => void): Promise<true> {
    const status = structuredClone(pass.job.status ?? {});
    mutate(status);
    setCounters(status, pass.view);
    await this.actions.writeStatus(pass.job, status);
    return true;
  }

  /** counting step 3: uncounted uids whose pods let go of the finalizer join the totals */
  private async flush(pass: Pass): Promise<boolean> {
    const status = planFlush(pass.job, pass.view.pods);
    if (!status) return false;
    return this.writeStatus(pass, (s) => Object.assign(s, status));
  }

  /** counting steps 1 and 2: record finished pods in status, then remove their finalizers */
  private async track(pass: Pass, finishing: Finishing, deleting: boolean): Promise<boolean> {
    const plan = planTracking(pass.view, finishing, deleting);
    if (plan.status) {
      const next = plan.status;
      return this.writeStatus(pass, (s) => Object.assign(s, next));
    }
    if (!plan.release.length) return false;
    await this.actions.releasePods(plan.release);
    return true;
  }

  private async resume(pass: Pass): Promise<boolean> {
    const { job } = pass;
    if (isSuspended(job) || !wasSuspended(job)) return false;
    await this.writeStatus(pass, (s) => {
      ensureCondition(s, JobConditionTypes.Suspended, 'False', JobReasons.JobResumed, 'Job resumed', pass.at);
      // activeDeadlineSeconds counts the time the Job has been continuously active
      s.startTime = pass.at;
    });
    this.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
    return true;
  }

  private async start(pass: Pass): Promise<boolean> {
    if (pass.job.status?.startTime || isSuspended(pass.job)) return false;
    return this.writeStatus(pass, (s) => {
      s.startTime = pass.at;
    });
  }

  /** the interim condition: SuccessCriteriaMet or FailureTarget, recorded before any pod is let go */
  private async startFinishing(pass: Pass): Promise<boolean> {
    const verdict = evaluateFinish(pass.view, pass.now.getTime());
    if (verdict.wakeAfterMs !== undefined) pass.wakes.push(verdict.wakeAfterMs);
    const cond = verdict.cond;
    if (!cond) return false;
    return this.writeStatus(pass, (s) => {
      ensureCondition(s, cond.type, 'True', cond.reason, cond.message, pass.at);
    });
  }

  private async suspend(pass: Pass): Promise<boolean> {
    const { job, view } = pass;
    if (!isSuspended(job)) return false;
    if (view.active.length) {
      await this.actions.deletePods(job, view.active, true);
      return true;
    }
    if (wasSuspended(job) && !job.status?.startTime) return false;
    await this.writeStatus(pass, (s) => {
      ensureCondition(s, JobConditionTypes.Suspended, 'True', JobReasons.JobSuspended, 'Job suspended', pass.at);
      delete s.startTime;
    });
    if (!wasSuspended(job)) this.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
    return true;
  }

  /** a finishing Job deletes its running pods, keeping their finalizers until they are counted */
  private async deleteActive(pass: Pass): Promise<boolean> {
    if (!pass.view.active.length) return false;
    await this.actions.deletePods(pass.job, pass.view.active, false);
    return true;
  }

  /** Complete or Failed, once every pod is counted and none is still terminating */
  private async finish(pass: Pass, finishing: NonNullable<Finishing>, reason: string, message: string): Promise<boolean> {
    const { job, view } = pass;
    const u = job.status?.uncountedTerminatedPods;
    if ((u?.succeeded?.length ?? 0) + (u?.failed?.length ?? 0) > 0) return false;
    if (view.terminating > 0 || view.pods.some(hasTrackingFinalizer)) return false;
    const type = finishing === 'success' ? JobConditionTypes.Complete : JobConditionTypes.Failed;
    await this.writeStatus(pass, (s) => {
      ensureCondition(s, type, 'True', reason, message, pass.at);
      if (finishing === 'success') s.completionTime = pass.at;
    });
    if (finishing === 'success') {
      const completions = job.spec.completions;
      if (completions !== undefined && (job.status?.succeeded ?? 0) > completions) {
        this.recorder.event(job, 'Warning', 'TooManySucceededPods', 'Too many succeeded pods running after completion count reached');
      }
      this.recorder.event(job, 'Normal', 'Completed', 'Job completed');
    } else {
      this.recorder.event(job, 'Warning', reason, message);
    }
    return true;
  }

  private async writeCounters(pass: Pass): Promise<boolean> {
    const before = pass.job.status ?? {};
    const after = structuredClone(before);
    setCounters(after, pass.view);
    if (after.active === before.active && after.ready === before.ready && after.terminating === before.terminating && before.uncountedTerminatedPods) return false;
    return this.writeStatus(pass, () => undefined);
  }

  /** A finished Job: let go of any pod still held, then delete the Job once its ttl has passed. */
  private async finished(pass: Pass, finishedAt: string | undefined): Promise<Result> {
    const held = pass.view.pods.filter(hasTrackingFinalizer);
    if (held.length) {
      await this.actions.releasePods(held);
      return {};
    }
    const ttl = pass.job.spec.ttlSecondsAfterFinished;
    const since = Date.parse(finishedAt ?? pass.job.status?.completionTime ?? '');
    if (ttl === undefined || Number.isNaN(since)) return {};
    const left = since + ttl * 1000 - pass.now.getTime();
    if (left > 0) return { requeueAfter: left };
    await this.actions.deleteJob(pass.job);
    return {};
  }
}

function isStray(pod: PodObject, jobName: string, jobUid: string | undefined): boolean {
  const ref = controllerOf(pod);
  if (!ref) return (pod.metadata.labels?.[JobLabels.jobName] ?? pod.metadata.labels?.[JobLabels.legacyJobName]) === jobName;
  return ref.kind === 'Job' && ref.apiVersion === 'batch/v1' && ref.name === jobName && ref.uid !== jobUid;
}

function setCounters(status: NonNullable<Job['status']>, view: JobView): void {
  const active = view.active.length;
  if (active) status.active = active;
  else delete status.active;
  status.ready = view.ready;
  status.terminating = view.terminating;
  status.uncountedTerminatedPods ??= {};
}

function result(pass: Pass): Result {
  const wakes = pass.wakes.filter((w) => w > 0);
  return wakes.length ? { requeueAfter: Math.ceil(Math.min(...wakes)) } : {};
}
