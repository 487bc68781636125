// The writes the Job controller makes: Pods created in slow-start batches, Pods deleted, tracking
// finalizers removed, and the Job's status written with compare-and-swap. Each tolerates the object
// being gone already, so repeating a step after a crash is harmless.
import type { JobStatus } from '../../api/batch.js';
import { JobLabels } from '../../api/batch.js';
import { isConflict, isNotFound } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import type { JobObject, PodObject, PodPlan } from './pods.js';
import { buildPod, hasTrackingFinalizer } from './pods.js';

/** the most pods one reconcile creates or deletes, as in Kubernetes */
export const maxPodChangesPerSync = 500;

export class JobActions {
  constructor(private readonly client: Client, private readonly recorder: Recorder) {}

  /** Writes status (compare-and-swap on the Job's resourceVersion; a Conflict is thrown). */
  async writeStatus(job: JobObject, status: JobStatus): Promise<JobObject> {
    return this.client.updateStatus<JobObject>({ ...job, status });
  }

  /**
   * Creates pods in batches of 1, 2, 4, … ; a batch with a failure stops the rest, which the next
   * reconcile retries. Returns how many were created; throws the first error after recording it.
   */
  async createPods(job: JobObject, plans: PodPlan[]): Promise<number> {
    let created = 0;
    let firstError: unknown;
    for (let i = 0, size = 1; i < plans.length && firstError === undefined; i += size, size *= 2) {
      const batch = plans.slice(i, i + size);
      const results = await Promise.allSettled(batch.map((plan) => this.client.create<PodObject>(buildPod(job, plan))));
      for (const r of results) {
        if (r.status === 'fulfilled') {
          created++;
          this.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value.metadata.name}`);
        } else {
          firstError ??= r.reason;
          this.recorder.event(job, 'Warning', 'FailedCreate', `Error creating: ${(r.reason as Error)?.message ?? String(r.reason)}`);
        }
      }
    }
    if (firstError !== undefined) throw firstError;
    return created;
  }

  /**
   * Deletes pods. With `release`, the tracking finalizer goes first, so the pod is never counted
   * (suspend, scale-down: Kubernetes' deleteJobPods); without, it stays until the pod is counted
   * (a finishing Job: deleteActivePods).
   */
  async deletePods(job: JobObject, pods: PodObject[], release: boolean): Promise<void> {
    const errors: unknown[] = [];
    await Promise.all(pods.slice(0, maxPodChangesPerSync).map(async (pod) => {
      try {
        if (release) await this.releasePod(pod);
        await this.client.delete(Kinds.Pod, { namespace: pod.metadata.namespace, name: pod.metadata.name }, { uid: pod.metadata.uid });
        this.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
      } catch (e) {
        if (isNotFound(e)) return;
        errors.push(e);
        this.recorder.event(job, 'Warning', 'FailedDelete', `Error deleting: ${(e as Error)?.message ?? String(e)}`);
      }
    }));
    if (errors.length) throw errors[0];
  }

  /** Removes the tracking finalizers of these pods; throws the first failure after trying all. */
  async releasePods(pods: PodObject[]): Promise<void> {
    const results = await Promise.allSettled(pods.slice(0, maxPodChangesPerSync).map((p) => this.releasePod(p)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Removes the tracking finalizer from the live pod (re-read on conflict); gone counts as done. */
  async releasePod(pod: PodObject): Promise<void> {
    const key = { namespace: pod.metadata.namespace, name: pod.metadata.name };
    let live: PodObject | undefined = pod;
    for (let attempt = 0; attempt < 5; attempt++) {
      if (!live || live.metadata.uid !== pod.metadata.uid || !hasTrackingFinalizer(live)) return;
      const finalizers = (live.metadata.finalizers ?? []).filter((f) => f !== JobLabels.trackingFinalizer);
      const next: PodObject = { ...live, metadata: { ...live.metadata, finalizers } };
      if (finalizers.length === 0) delete next.metadata.finalizers;
      try {
        await this.client.update(next);
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e)) throw e;
      }
      live = await this.client.find<PodObject>(Kinds.Pod, key);
    }
    throw new Error(`pod ${key.namespace}/${key.name}: could not remove finalizer ${JobLabels.trackingFinalizer}: kept changing`);
  }

  /** Deletes the Job, leaving its pods to the garbage collector (ttlSecondsAfterFinished). */
  async deleteJob(job: JobObject): Promise<void> {
    try {
      await this.client.delete(Kinds.Job, { namespace: job.metadata.namespace, name: job.metadata.name }, { uid: job.metadata.uid, propagationPolicy: 'Background' });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
