// The training job controller: one reconciler for every Kubeflow training kind (PyTorchJob, TFJob,
// XGBoostJob, PaddleJob, JAXJob, MPIJob v1 and v2beta1). The kind renders what a job runs (its replica
// Pods, Services, ConfigMaps); this controller makes it so and keeps the operator's status.
//
// Level-triggered: reconcile(key) reads the job and its Pods afresh, decides, writes the job's status
// (compare-and-swap) and then changes Pods. Pod names are deterministic, so a create that already
// happened fails as AlreadyExists and nothing is duplicated; a server killed at any instant converges.
// Restarts the controller makes (deleting and re-creating a failed Pod) are counted in the status
// *before* the Pod is deleted, with the Pod's uid, so each is counted once.
//
// MPIJob v2beta1: the launcher runs as the rendered launcher Pod, owned by the MPIJob directly (not
// through a batch/v1 Job as the mpi-operator does); its restartPolicy (OnFailure) is the kubelet's,
// runPolicy.backoffLimit bounds its restarts, and the job's status follows that Pod. With
// `launcherCreationPolicy: WaitForWorkersReady` the launcher is created once every worker runs.
import type { Pod } from '../../api/core-types.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject, ObjectKey, OwnerReference, StoredObject } from '../../api/meta.js';
import { controllerOf, keyString, ownerRefTo } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import { TrainingConditions, conditionOf, hasTrue, isFinished, reasonFor, updateCondition } from './conditions.js';
import type { TrainingConditionType } from './conditions.js';
import type { GangAdmissionOptions } from './gang.js';
import { GangAdmission } from './gang.js';
import type { Active, Pass, PodObject, Rung, Slot } from './pass.js';
import { exitCodeOf, isMpiV2, isTerminal, keyOf, lastWordsOf, managedHere, minAvailable, observe, podRestarts, replicaStatuses, startErrorOf, timestamp } from './pass.js';
import type { Rendered, RenderedReplica, TrainingJob, TrainingKind } from './types.js';

export type TrainingKindLookup = (apiVersion: string, kind: string) => TrainingKind | undefined;

export interface TrainingControllerOptions {
  client: Client;
  recorder: Recorder;
  /** the training kinds: `trainingKindFor` of render.ts */
  kinds: TrainingKindLookup;
  /** which kinds to reconcile; default: every kind of group kubeflow.org in the client's registry that `kinds` knows */
  defs?: KindDef[];
  /** the node gangs are admitted against (default: the only Node) */
  nodeName?: string;
  /** stands in for the Node's allocatable resources (tests) */
  nodeCapacity?: GangAdmissionOptions['nodeCapacity'];
  /** shared by every training controller of a server; made here when absent */
  admission?: GangAdmission;
  /** how long a gang that does not fit waits before looking again without an event (default 10 s) */
  gangRetryMs?: number;
  /** clock, for tests */
  now?: () => Date;
  /** the Manager's informers, which the jobs' Pods are read from; made here when absent */
  cache?: InformerCache;
}

/** The group of the training kinds. */
export const trainingGroup = 'kubeflow.org';

/** Kueue's queue label: a labelled job is admitted by the queue controllers, not by the gang check */
const KueueQueueLabel = 'kueue.x-k8s.io/queue-name';

/**
 * Adds one controller per training kind (an MPIJob served in two versions is one kind in the store:
 * one controller, which reads each object's own apiVersion). Returns none while no kind is registered.
 */
export function addTrainingController(mgr: Manager, opts: TrainingControllerOptions): Controller[] {
  const admission = opts.admission ?? new GangAdmission({ client: opts.client, nodeName: opts.nodeName, nodeCapacity: opts.nodeCapacity });
  const defs = opts.defs ?? opts.client.registry.all().filter((d) => d.group === trainingGroup && opts.kinds(apiVersionOf(d), d.kind));
  const seen = new Set<string>();
  const out: Controller[] = [];
  for (const def of defs) {
    const storage = `${def.group}/${def.plural}`;
    if (seen.has(storage)) continue;
    seen.add(storage);
    out.push(addOne(mgr, def, { ...opts, admission }));
  }
  return out;
}

function addOne(mgr: Manager, def: KindDef, opts: TrainingControllerOptions & { admission: GangAdmission }): Controller {
  const r = new TrainingReconciler(def, { cache: mgr.cache, ...opts });
  const c = mgr.add({
    name: `${def.kind.toLowerCase()}-controller`,
    for: def,
    owns: [Kinds.Pod, Kinds.Service, Kinds.ConfigMap],
    watches: [{
      // room frees when a Pod ends or goes away: gangs that wait look again
      kind: Kinds.Pod,
      predicate: (e) => e.type === 'DELETED' || e.object.status?.phase === 'Succeeded' || e.object.status?.phase === 'Failed',
      map: () => r.waitingKeys(),
    }],
    reconcile: (key) => r.reconcile(key),
  });
  return c;
}

export class TrainingReconciler {
  private readonly client: Client;
  private readonly recorder: Recorder;
  private readonly now: () => Date;
  private readonly admission: GangAdmission;
  private readonly gangRetryMs: number;
  /** jobs whose gang waits for room, with the last reason told */
  private readonly waiting = new Map<string, string>();
  private readonly cache: InformerCache;

  constructor(private readonly def: KindDef, private readonly opts: TrainingControllerOptions & { admission: GangAdmission }) {
    this.client = opts.client;
    this.cache = opts.cache ?? new InformerCache(opts.client);
    this.recorder = opts.recorder;
    this.now = opts.now ?? (() => new Date());
    this.admission = opts.admission;
    this.gangRetryMs = opts.gangRetryMs ?? 10_000;
  }

  waitingKeys(): ObjectKey[] {
    return [...this.waiting.keys()].map((k) => {
      const i = k.indexOf('/');
      return { namespace: k.slice(0, i), name: k.slice(i + 1) };
    });
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const job = await this.client.find<TrainingJob>(this.def, key);
    if (!job || job.metadata.deletionTimestamp) {
      this.waiting.delete(keyString(key));
      return {};
    }
    const kind = this.opts.kinds(job.apiVersion, job.kind);
    if (!kind || !managedHere(job)) return {};
    const all = this.cache.list(Kinds.Pod, { namespace: key.namespace }) as (Pod & StoredObject)[];
    const now = this.now();
    const pass: Pass = {
      job, kind, now, at: timestamp(now), status: structuredClone(job.status ?? {}),
      pods: all.filter((p) => controllerOf(p)?.uid === job.metadata.uid), wakes: [], after: [], events: [],
    };
    if (isFinished(job)) {
      this.waiting.delete(keyString(key));
      return this.finished(pass);
    }
    await this.active(pass, all);
    await this.commit(pass);
    const wakes = pass.wakes.filter((w) => w > 0);
    return wakes.length ? { requeueAfter: Math.ceil(Math.min(...wakes)) } : {};
  }

  // ---- the pass of a job that has not finished -------------------------------------------------

  /**
   * A job that has not finished: the rungs below run in order, and the first that decides the pass
   * (suspends the job, fails it, declares it succeeded...) ends it; the status is then written once
   * and the Pod changes made (commit).
   */
  private async active(pass: Pass, all: PodObject[]): Promise<void> {
    const { job, kind, status } = pass;
    if (!conditionOf(status, TrainingConditions.Created)) {
      this.condition(pass, TrainingConditions.Created, 'True', 'Created', `${kind.kind} ${job.metadata.name} is created.`);
    }
    let rendered: Rendered;
    try {
      rendered = kind.render(job);
    } catch (e) {
      this.fail(pass, `${kind.kind} ${job.metadata.name} cannot run: ${(e as Error).message}`);
      return;
    }
    const a = observe(pass, all, rendered);
    const rungs: Rung[] = [
      (x) => this.suspended(x),
      (x) => this.started(x),
      (x) => this.deadline(x),
      (x) => this.adoptAndPrune(x),
      (x) => this.succeeded(x),
      (x) => this.failures(x),
      (x) => this.backoffLimit(x),
      (x) => this.kindsOwnRule(x),
      (x) => this.progress(x),
    ];
    for (const rung of rungs) if (await rung(a)) return;
  }

  /** suspended: every Pod goes, whatever cleanPodPolicy says */
  private suspended(a: Active): boolean {
    const { job, kind, status } = a;
    if (!job.spec.runPolicy?.suspend) return false;
    this.waiting.delete(keyString(keyOf(job)));
    for (const pod of a.pods) if (!pod.metadata.deletionTimestamp) a.after.push(() => this.deletePod(a, pod));
    if (hasTrue(status, TrainingConditions.Running)) this.condition(a, TrainingConditions.Running, 'False', 'Suspended', `${kind.kind} ${job.metadata.name} is suspended.`);
    this.condition(a, TrainingConditions.Suspended, 'True', 'Suspended', `${kind.kind} ${job.metadata.name} is suspended.`);
    status.replicaStatuses = replicaStatuses(kind, a.rendered.replicas, []);
    return true;
  }

  /** the start time, from the resume after a suspension */
  private started(a: Active): boolean {
    const { status } = a;
    if (hasTrue(status, TrainingConditions.Suspended)) {
      this.condition(a, TrainingConditions.Suspended, 'False', 'Resumed', `${a.kind.kind} ${a.job.metadata.name} is resumed.`);
      status.startTime = a.at;
    }
    status.startTime ??= a.at;
    return false;
  }

  /** activeDeadlineSeconds: a timer, not only a check when something else happens */
  private async deadline(a: Active): Promise<boolean> {
    const deadline = a.job.spec.runPolicy?.activeDeadlineSeconds;
    if (deadline === undefined) return false;
    const left = Date.parse(a.status.startTime ?? a.at) + deadline * 1000 - a.now.getTime();
    if (left > 0) {
      a.wakes.push(left);
      return false;
    }
    await this.deletePods(a, a.live.filter((p) => !isTerminal(p)));
    this.fail(a, `Job ${a.job.metadata.name} has failed because it was active longer than specified deadline`, 'DeadlineExceeded');
    a.status.replicaStatuses = replicaStatuses(a.kind, a.rendered.replicas, a.live.filter(isTerminal));
    return true;
  }

  /** orphans of ours are adopted; Pods the job no longer renders (fewer replicas) go; counted failures whose Pod is gone are forgotten */
  private adoptAndPrune(a: Active): boolean {
    for (const s of a.slots) {
      const other = s.adoptable;
      if (other) a.after.push(() => this.adopt(a, other));
    }
    for (const pod of a.live) if (!a.wanted.has(pod.metadata.name)) a.after.push(() => this.deletePod(a, pod));
    a.status.replicaStatuses = replicaStatuses(a.kind, a.rendered.replicas, a.live.filter((p) => a.wanted.has(p.metadata.name)));
    const present = new Set(a.pods.map((p) => p.metadata.uid));
    const stillCounted = [...a.counted].filter((u) => present.has(u));
    if (stillCounted.length) a.status.countedFailures = stillCounted;
    else delete a.status.countedFailures;
    return false;
  }

  /** success, by the kind's rule */
  private succeeded(a: Active): boolean {
    const { job, kind, status } = a;
    if (!kind.succeeded(job, a.views)) return false;
    this.condition(a, TrainingConditions.Succeeded, 'True', 'Succeeded', `${kind.kind} ${keyString(keyOf(job))} successfully completed.`);
    status.completionTime ??= a.at;
    for (const rs of Object.values(status.replicaStatuses ?? {})) {
      if (rs.active) {
        rs.succeeded = (rs.succeeded ?? 0) + rs.active;
        delete rs.active;
      }
    }
    return true;
  }

  /** each failed Pod under its replica's restartPolicy: fail the job, or count a restart and replace the Pod */
  private async failures(a: Active): Promise<boolean> {
    const { job, kind, status } = a;
    for (const slot of a.slots) {
      const pod = slot.pod;
      if (!pod || pod.metadata.deletionTimestamp) continue;
      const startError = startErrorOf(pod);
      if (startError) {
        this.fail(a, `${kind.kind} ${keyString(keyOf(job))} has failed because ${slot.replica.type} replica ${slot.replica.index} could not start: ${startError}`);
        return true;
      }
      if (pod.status?.phase !== 'Failed') continue;
      const type = slot.replica.type;
      if (a.counted.has(pod.metadata.uid)) {
        // counted already: its deletion was cut short; finish it
        a.after.push(() => this.deletePod(a, pod));
        a.restarting.set(type, (a.restarting.get(type) ?? 0) + 1);
        continue;
      }
      const verdict = this.onFailure(a, slot, pod);
      if (verdict === 'ignore') continue;
      if (verdict === 'fail' && kind.unretriedFailure) {
        if (!a.judged.includes(type)) a.judged.push(type);
        continue;
      }
      if (verdict === 'fail') {
        const n = a.views.find((v) => v.type === type)?.failed ?? 1;
        this.fail(a, withLastWords(`${kind.kind} ${keyString(keyOf(job))} has failed because ${n} ${type} replica(s) failed.`, [pod]));
        return true;
      }
      if (a.limitReached(a.restarts + 1)) return this.failBackoff(a);
      // count first (written before the Pod is deleted), then delete, then re-create when it is gone
      a.restarts += 1;
      status.restarts = (status.restarts ?? 0) + 1 + podRestarts(pod);
      status.countedFailures = [...(status.countedFailures ?? []), pod.metadata.uid];
      a.counted.add(pod.metadata.uid);
      a.restarting.set(type, (a.restarting.get(type) ?? 0) + 1);
      a.after.push(() => this.deletePod(a, pod));
    }
    return false;
  }

  /** runPolicy.backoffLimit, over the restarts counted and those the live Pods had */
  private async backoffLimit(a: Active): Promise<boolean> {
    return a.limitReached(a.restarts) ? this.failBackoff(a) : false;
  }

  private async failBackoff(a: Active): Promise<true> {
    await this.deletePods(a, a.live.filter((p) => !isTerminal(p)));
    this.fail(a, withLastWords(`Job ${a.job.metadata.name} has failed because it has reached the specified backoff limit`, a.live), 'BackoffLimitExceeded');
    return true;
  }

  /**
   * The kind's own rule (TFJob). A restart is under way while a replica is being replaced in this
   * pass, or the job is Restarting and a replica's Pod is still gone or going; once every replaced
   * Pod exists again a deferred failure is judged anew, so the job cannot stay Restarting for good.
   */
  private kindsOwnRule(a: Active): boolean {
    const { job, kind } = a;
    if (!a.judged.length || !kind.unretriedFailure) return false;
    const underWay = a.restarting.size > 0 ||
      (hasTrue(a.status, TrainingConditions.Restarting) && a.slots.some((s) => !s.foreign && (!s.pod || Boolean(s.pod.metadata.deletionTimestamp))));
    for (const type of a.judged) {
      if (kind.unretriedFailure(job, type, underWay) !== 'fail') continue;
      const n = a.views.find((v) => v.type === type)?.failed ?? 1;
      const failed = a.slots.flatMap((sl) => (sl.replica.type === type && sl.pod?.status?.phase === 'Failed' ? [sl.pod] : []));
      this.fail(a, withLastWords(`${kind.kind} ${keyString(keyOf(job))} has failed because ${n} ${type} replica(s) failed.`, failed));
      return true;
    }
    return false;
  }

  /** Restarting and Running, then what is missing: objects first, then Pods (a gang only when it fits) */
  private progress(a: Active): boolean {
    const { job, kind } = a;
    for (const [type, n] of a.restarting) {
      this.condition(a, TrainingConditions.Restarting, 'True', 'Restarting', `${kind.kind} ${keyString(keyOf(job))} is restarting because ${n} ${type} replica(s) failed.`);
    }
    // Running: enough Pods run (the gang's size; all of them by default), none is being replaced
    const running = a.slots.filter((s) => s.pod && !s.pod.metadata.deletionTimestamp && s.pod.status?.phase === 'Running').length;
    const done = a.slots.filter((s) => s.pod && !s.pod.metadata.deletionTimestamp && s.pod.status?.phase === 'Succeeded').length;
    if (a.restarting.size === 0 && running > 0 && running + done >= minAvailable(job, a.slots.length)) {
      this.condition(a, TrainingConditions.Running, 'True', 'Running', `${kind.kind} ${keyString(keyOf(job))} is running.`);
    }
    for (const obj of a.rendered.objects) a.after.push(() => this.ensureObject(a, obj));
    this.createMissing(a, a.slots);
    return true;
  }

  /** what a failed Pod means under its replica's restartPolicy */
  private onFailure(pass: Pass, slot: Slot, pod: PodObject): 'fail' | 'restart' | 'ignore' {
    const { job, kind } = pass;
    const policy = slot.replica.restartPolicy;
    // mpi-operator: a worker's failure does not fail the job (the launcher's mpirun does), eviction does
    if (isMpiV2(job) && slot.replica.type !== 'Launcher') return pod.status?.reason === 'Evicted' ? 'fail' : 'ignore';
    if (policy === 'Never') return 'fail';
    // XGBoostJob and MPIJob v1: a Pod that still ends Failed fails the job unless the policy is ExitCode
    if (policy !== 'ExitCode' && (job.kind === 'XGBoostJob' || (job.kind === 'MPIJob' && job.apiVersion === 'kubeflow.org/v1'))) return 'fail';
    if (policy === 'ExitCode') {
      const code = exitCodeOf(pod, kind.defaultContainer);
      pass.events.push(['Normal', 'ExitedWithCode', `Pod: ${pod.metadata.namespace}.${pod.metadata.name} exited with code ${code}`]);
      return code >= 128 ? 'restart' : 'fail';
    }
    return 'restart';
  }

  private createMissing(pass: Pass, slots: Slot[]): void {
    const { job } = pass;
    const jobKey = keyString(keyOf(job));
    const liveCount = slots.filter((s) => s.pod && !s.pod.metadata.deletionTimestamp && !isTerminal(s.pod)).length;
    const blocked = (s: Slot): boolean => Boolean(s.foreign) || Boolean(s.pod);
    let missing = slots.filter((s) => !blocked(s));
    for (const s of slots) {
      if (s.foreign) {
        pass.events.push(['Warning', 'FailedCreatePod', `pod ${s.name} exists and belongs to ${controllerOf(s.foreign)?.kind ?? 'another owner'} ${controllerOf(s.foreign)?.name ?? ''}`.trim()]);
        pass.wakes.push(5000);
      }
    }
    // MPIJob v2beta1 WaitForWorkersReady: the launcher after every worker runs
    if (isMpiV2(job) && job.spec.launcherCreationPolicy === 'WaitForWorkersReady') {
      const workers = slots.filter((s) => s.replica.type === 'Worker');
      const ready = workers.every((s) => s.pod?.status?.phase === 'Running' && !s.pod.metadata.deletionTimestamp);
      if (!ready) missing = missing.filter((s) => s.replica.type !== 'Launcher');
    }
    if (!missing.length) {
      this.waiting.delete(jobKey);
      return;
    }
    const need = minAvailable(job, slots.length) - liveCount;
    // a job in a Kueue queue runs only once its Workload was admitted whole: that was its gang admission
    if (need <= 0 || job.metadata.labels?.[KueueQueueLabel]) {
      this.waiting.delete(jobKey);
      pass.after.push(() => this.createPods(pass, missing));
      return;
    }
    // a gang: checked and created with no other admission in between; the status is written after
    pass.after.push(() => this.admission.exclusive(async () => {
      const gang = missing.slice(0, need).map((s) => this.podFor(pass, s.replica));
      const verdict = await this.admission.check(gang);
      if (!verdict.fits) {
        if (this.waiting.get(jobKey) !== verdict.reason) {
          this.waiting.set(jobKey, verdict.reason);
          this.recorder.event(job, 'Warning', verdict.never ? 'GangUnschedulable' : 'GangWaiting', verdict.reason);
        }
        return;
      }
      if (this.waiting.delete(jobKey)) this.recorder.event(job, 'Normal', 'GangAdmitted', `the gang of ${gang.length} pod(s) fits: creating its pods`);
      await this.createPods(pass, missing);
    }));
    pass.wakes.push(this.gangRetryMs);
  }

  // ---- a finished job ---------------------------------------------------------------------------

  private async finished(pass: Pass): Promise<Result> {
    const { job } = pass;
    const runPolicy = job.spec.runPolicy ?? {};
    const policy = runPolicy.cleanPodPolicy ?? 'None';
    const live = pass.pods.filter((p) => !p.metadata.deletionTimestamp);
    const doomed = policy === 'All' ? live : policy === 'Running' ? live.filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Pending' || !p.status?.phase) : [];
    if (doomed.length) await this.deletePods(pass, doomed, true);
    const ttl = runPolicy.ttlSecondsAfterFinished;
    const since = Date.parse(job.status?.completionTime ?? '');
    if (ttl === undefined || Number.isNaN(since)) return {};
    const left = since + ttl * 1000 - pass.now.getTime();
    if (left > 0) return { requeueAfter: left };
    try {
      await this.client.delete(this.def, keyOf(job), { uid: job.metadata.uid, propagationPolicy: 'Background' });
      this.recorder.event(job, 'Normal', 'JobDeleted', `${pass.kind.kind} ${job.metadata.name} deleted: ttlSecondsAfterFinished (${ttl}s) passed`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    return {};
  }

  // ---- status -----------------------------------------------------------------------------------

  private condition(pass: Pass, type: TrainingConditionType, value: 'True' | 'False', what: Parameters<typeof reasonFor>[1], message: string): void {
    const reason = reasonFor(pass.kind.kind, what);
    const frozen = !(pass.job.kind === 'MPIJob' && pass.job.apiVersion === 'kubeflow.org/v1');
    if (updateCondition(pass.status, type, value, reason, message, pass.at, frozen) && value === 'True') {
      pass.events.push([type === TrainingConditions.Failed || type === TrainingConditions.Restarting ? 'Warning' : 'Normal', reason, message]);
    }
  }

  private fail(pass: Pass, message: string, eventReason?: string): void {
    const before = hasTrue(pass.status, TrainingConditions.Failed);
    this.condition(pass, TrainingConditions.Failed, 'True', 'Failed', message);
    if (!before) pass.status.completionTime ??= pass.at;
    if (eventReason) pass.events.push(['Warning', eventReason, message]);
  }

  /** writes the status when it changed (compare-and-swap), then makes the Pod changes */
  private async commit(pass: Pass): Promise<void> {
    const before = { ...(pass.job.status ?? {}) };
    const after = { ...pass.status };
    delete before.lastReconcileTime;
    delete after.lastReconcileTime;
    if (JSON.stringify(before) !== JSON.stringify(after)) {
      pass.status.lastReconcileTime = pass.at;
      pass.job = await this.client.updateStatus<TrainingJob>({ ...pass.job, status: pass.status });
    }
    for (const [type, reason, message] of pass.events) this.recorder.event(pass.job, type, reason, message);
    for (const step of pass.after) await step();
  }

  // ---- writes -----------------------------------------------------------------------------------

  private podFor(pass: Pass, replica: RenderedReplica): Pod {
    const pod = structuredClone(replica.pod);
    pod.metadata.namespace = pass.job.metadata.namespace;
    pod.metadata.ownerReferences = ownedBy(pass.job, pod.metadata.ownerReferences);
    return pod;
  }

  private async createPods(pass: Pass, slots: Slot[]): Promise<void> {
    let firstError: unknown;
    for (const slot of slots) {
      try {
        await this.client.create(this.podFor(pass, slot.replica));
        this.recorder.event(pass.job, 'Normal', 'SuccessfulCreatePod', `Created pod: ${slot.name}`);
      } catch (e) {
        if (isAlreadyExists(e)) continue;
        firstError ??= e;
        this.recorder.event(pass.job, 'Warning', 'FailedCreatePod', `Error creating: ${(e as Error)?.message ?? String(e)}`);
      }
    }
    if (firstError !== undefined) throw firstError;
  }

  private async deletePods(pass: Pass, pods: PodObject[], withServices = false): Promise<void> {
    for (const pod of pods) await this.deletePod(pass, pod, withServices);
  }

  private async deletePod(pass: Pass, pod: PodObject, withService = false): Promise<void> {
    try {
      await this.client.delete(Kinds.Pod, { namespace: pod.metadata.namespace, name: pod.metadata.name }, { uid: pod.metadata.uid });
      this.recorder.event(pass.job, 'Normal', 'SuccessfulDeletePod', `Deleted pod: ${pod.metadata.name}`);
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    if (!withService) return;
    const svc = await this.client.find(Kinds.Service, { namespace: pod.metadata.namespace, name: pod.metadata.name });
    if (svc && controllerOf(svc)?.uid === pass.job.metadata.uid) {
      try {
        await this.client.delete(Kinds.Service, keyOf(svc), { uid: svc.metadata.uid });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  /** an object of the job's name that no one controls becomes the job's */
  private async adopt(pass: Pass, obj: StoredObject): Promise<void> {
    const refs = ownedBy(pass.job, obj.metadata.ownerReferences);
    try {
      await this.client.update({ ...obj, metadata: { ...obj.metadata, ownerReferences: refs } });
      this.recorder.event(pass.job, 'Normal', 'Adopted', `Adopted ${obj.kind.toLowerCase()} ${obj.metadata.name}`);
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async ensureObject(pass: Pass, obj: KObject): Promise<void> {
    const def = this.client.registry.forObject(obj.apiVersion, obj.kind);
    if (!def) throw new Error(`${pass.kind.kind} ${pass.job.metadata.name}: cannot create a ${obj.kind} (${obj.apiVersion}): kind not served`);
    const namespace = def.namespaced ? (obj.metadata.namespace ?? pass.job.metadata.namespace) : undefined;
    const name = obj.metadata.name ?? '';
    const existing = await this.client.find(def, { namespace, name });
    if (existing) {
      if (!controllerOf(existing)) await this.adopt(pass, existing);
      return;
    }
    const out = structuredClone(obj);
    if (namespace) out.metadata.namespace = namespace;
    out.metadata.ownerReferences = ownedBy(pass.job, out.metadata.ownerReferences);
    try {
      await this.client.create(out);
      this.recorder.event(pass.job, 'Normal', `SuccessfulCreate${obj.kind}`, `Created ${obj.kind.toLowerCase()}: ${name}`);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}

// ---- pure helpers ---------------------------------------------------------------------------------

/** the job as the controlling owner, beside any other (non-controlling) owners already named */
function ownedBy(job: StoredObject, refs: OwnerReference[] | undefined): OwnerReference[] {
  return [...(refs ?? []).filter((r) => !r.controller && r.uid !== job.metadata.uid), { ...ownerRefTo(job), blockOwnerDeletion: true }];
}

/** the operator's message, then what the first failed container said, when one said anything */
function withLastWords(message: string, pods: PodObject[]): string {
  const words = pods.map(lastWordsOf).find((w) => w !== undefined);
  return words ? `${message}${message.endsWith('.') ? '' : '.'} ${words}` : message;
}
