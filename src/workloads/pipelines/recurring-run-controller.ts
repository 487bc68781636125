// RecurringRuns: start a Run at each fire time of a cron or periodic trigger, within the trigger's
// start and end times, never more than maxConcurrency unfinished at once. Missed fire times (the
// server was down, the recurring run was disabled, or concurrency held them back) are all started
// in order, or with noCatchup only the latest of them, as KFP's ScheduledWorkflow does.
// Each Run is named after its recurring run and fire time, so a crash between creating it and
// recording the fire time cannot start it twice.
import { Kinds } from '../../api/index.js';
import { isConflict } from '../../api/errors.js';
import type { RecurringRunObj, RecurringRunStatus, ScheduleWindow } from '../../api/kfp-objects.js';
import { KfpAnnotations, KfpLabels } from '../../api/kfp-objects.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { deepEqual, ownerRefTo } from '../../api/meta.js';
import type { Run } from '../../api/pipelines.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { EventRecorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import type { Schedule } from '../../api/cron.js';
import { IntervalSchedule, parseSchedule } from '../../api/cron.js';

export interface RecurringRunControllerOptions {
  client: Client;
  recorder?: EventRecorder;
  /** the clock, for tests */
  now?: () => Date;
}

const finished = new Set(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELED']);
const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

function scheduleOf(rr: RecurringRunObj): { schedule: Schedule; start?: Date; end?: Date } {
  const { cronSchedule: cron, periodicSchedule: per } = rr.spec.trigger;
  const w: ScheduleWindow = cron ?? per ?? {};
  const start = w.startTime ? new Date(w.startTime) : undefined;
  const end = w.endTime ? new Date(w.endTime) : undefined;
  const schedule = cron ? parseSchedule(cron.cron) : new IntervalSchedule((per?.intervalSecond ?? 0) * 1000);
  return { schedule, ...(start ? { start } : {}), ...(end ? { end } : {}) };
}

/**
 * The fire times due at `now`, oldest first, after the last one started (or, for the first, from
 * the later of creation and the start time); `next` is the first one still to come.
 */
export function dueTimes(rr: RecurringRunObj & StoredObject, now: Date, limit = 100): { due: Date[]; next?: Date } {
  const { schedule, start, end } = scheduleOf(rr);
  const created = new Date(rr.metadata.creationTimestamp);
  let from = rr.status?.lastScheduledTime ? new Date(rr.status.lastScheduledTime) : start && start > created ? start : created;
  const due: Date[] = [];
  // a periodic trigger with a start time fires first at the start time itself
  if (!rr.status?.lastScheduledTime && start && start > created && rr.spec.trigger.periodicSchedule) {
    if (start <= now && (!end || start <= end)) due.push(start);
    else if (start > now && (!end || start <= end)) return { due, next: start };
    from = start;
  }
  for (;;) {
    const t = schedule.next(from);
    if (!t || (end && t > end)) return { due };
    if (t > now) return { due, next: t };
    due.push(t);
    // keep only the most recent `limit` while catching up on a long outage
    if (due.length > limit) due.shift();
    from = t;
  }
}

export class RecurringRunReconciler {
  constructor(private readonly opts: RecurringRunControllerOptions) {}

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  async reconcile(key: ObjectKey): Promise<Result | void> {
    const { client } = this.opts;
    const rr = await client.find<RecurringRunObj>(Kinds.RecurringRun, key);
    if (!rr || rr.metadata.deletionTimestamp) return;
    let status: RecurringRunStatus = { ...(rr.status ?? {}) };
    if (rr.spec.mode === 'DISABLE') {
      delete status.nextScheduledTime;
      await this.writeStatus(rr, status);
      return;
    }
    const now = this.now();
    let { due, next } = dueTimes(rr, now);
    if (rr.spec.noCatchup && due.length > 1) due = due.slice(-1);
    const runs = await client.listAll<Run>(Kinds.Run, { namespace: rr.metadata.namespace, labelSelector: `${KfpLabels.recurringRunId}=${rr.metadata.name}` });
    let active = runs.filter((r) => !finished.has(r.status?.state ?? '')).length;
    const max = rr.spec.maxConcurrency ?? 1;
    let blocked: Date | undefined;
    for (const t of due) {
      if (active >= max) {
        // wait for a run to finish (its status change wakes this recurring run up)
        blocked = t;
        break;
      }
      await this.startRun(rr, t);
      active++;
      status = { ...status, lastScheduledTime: iso(t), runCount: (status.runCount ?? 0) + 1 };
      // recorded after each run, so a crash re-creates (and finds) at most the one in flight
      rr.status = status;
      await this.writeStatus(rr, status);
    }
    if (blocked) next = blocked;
    if (next) status = { ...status, nextScheduledTime: iso(next) };
    else delete status.nextScheduledTime;
    await this.writeStatus(rr, status);
    if (blocked) return;
    if (next) return { requeueAfter: Math.max(10, next.getTime() - this.now().getTime()) };
  }

  private async writeStatus(rr: RecurringRunObj & StoredObject, status: RecurringRunStatus): Promise<void> {
    const live = await this.opts.client.get<RecurringRunObj>(Kinds.RecurringRun, { namespace: rr.metadata.namespace, name: rr.metadata.name });
    if (deepEqual(live.status ?? {}, status)) return;
    await this.opts.client.updateStatus({ ...live, status });
  }

  private async startRun(rr: RecurringRunObj & StoredObject, at: Date): Promise<void> {
    const { client } = this.opts;
    const spec = rr.spec;
    if (!spec.pipelineSpec) throw new Error('the recurring run has no pipelineSpec');
    const name = `${rr.metadata.name.slice(0, 200)}-${Math.floor(at.getTime() / 1000)}`;
    const labels: Record<string, string> = {
      [KfpLabels.recurringRunId]: rr.metadata.name,
      [KfpLabels.storageState]: 'AVAILABLE',
    };
    if (spec.experimentId) labels[KfpLabels.experimentId] = spec.experimentId;
    const ref = spec.pipelineVersionReference;
    if (ref?.pipelineVersionId) {
      labels[KfpLabels.pipelineVersionId] = ref.pipelineVersionId;
      if (ref.pipelineId) labels[KfpLabels.pipelineId] = ref.pipelineId;
    }
    const annotations: Record<string, string> = {
      [KfpAnnotations.displayName]: `${spec.displayName ?? rr.metadata.name}-${iso(at).replace(/[-:]/g, '').replace('T', '-').replace('Z', '')}`,
      [KfpAnnotations.scheduledAt]: iso(at),
    };
    if (spec.description) annotations[KfpAnnotations.description] = spec.description;
    if (spec.serviceAccount) annotations[KfpAnnotations.serviceAccount] = spec.serviceAccount;
    try {
      await client.create<Run>({
        apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run',
        metadata: { name, namespace: rr.metadata.namespace, labels, annotations, ownerReferences: [ownerRefTo(rr)] },
        spec: {
          pipelineSpec: spec.pipelineSpec,
          ...(spec.platformSpec ? { platformSpec: spec.platformSpec } : {}),
          parameters: { ...(spec.runtimeConfig?.parameters ?? {}) },
          ...(spec.runtimeConfig?.pipelineRoot ? { pipelineRoot: spec.runtimeConfig.pipelineRoot } : {}),
        },
      });
      this.opts.recorder?.event(rr, 'Normal', 'RunCreated', `started run ${name} for ${iso(at)}`);
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
}

export function addRecurringRunController(mgr: Manager, opts: RecurringRunControllerOptions): Controller {
  const r = new RecurringRunReconciler(opts);
  return mgr.add({
    name: 'recurring-run', for: Kinds.RecurringRun, owns: [Kinds.Run],
    // a Run's status change matters only once it finishes (a slot frees)
    reconcile: (key) => r.reconcile(key),
  });
}
