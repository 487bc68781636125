// The Revision controller, a ladder like the InferenceService's (controller.ts): each pass reads the
// Revision and its Pods afresh, asks the autoscaler how many replicas it wants, and the first rung
// with something to do makes its change.
//
// A revision runs as many model-server Pods (or one in-process model, loaded into the gateway) as
// the autoscaler asks: one while it first loads, then between min and max replicas on load, zero
// when it takes no traffic (or has `minReplicas: 0` and sat idle for a window). Its status carries
// the model state (Pending, Loading, Loaded, Standby when scaled to zero, FailedToLoad with the
// loader's message from the Pod's log).
import type { Pod } from '../../api/core-types.js';
import { isConflict, isNotFound } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { clone, deepEqual, now } from '../../api/meta.js';
import { RevisionKind, ServingLabels } from '../../api/serving-revision.js';
import type { Revision, RevisionStatus } from '../../api/serving-revision.js';
import type { Result } from '../../control/controller.js';
import type { Autoscaler } from './autoscaler.js';
import type { ServingControllerOptions } from './options.js';
import { renderReplicaPod } from './render.js';
import { failureLine, loadFailure, revisionFailure } from './status.js';
import { registryScheme } from './model-registry.js';
import { StorageError, type ModelOwner, type ModelSource } from './storage.js';

type Rev = Revision & StoredObject;
type PodObject = Pod & StoredObject;

/** What one pass knows: read once at its start. */
interface Pass {
  rev: Rev;
  revKey: string;
  /** the status being built, written by the last rung */
  status: RevisionStatus;
  /** the revision's Pods not being deleted */
  pods: PodObject[];
  /** those still running (not Succeeded or Failed) */
  live: PodObject[];
  /** the replicas the autoscaler wants (0 when the model's storage cannot be read) */
  desired: number;
  /** when to look again without an event (the autoscaler's grace for a revision losing traffic) */
  recheck: Result;
  /** the host directory or file holding the model, for an in-process model */
  modelPath: string | undefined;
  /** where the model's files are, when they were looked up */
  source: ModelSource | undefined;
  storageFailure: string | undefined;
}

/** a rung returns a result when it made its change (the pass ends there), undefined to pass on */
type Rung = (p: Pass) => Promise<Result | undefined>;

export class RevisionReconciler {
  /** revisions serving a `model-registry://` model: a change in their namespace's registry may change what it names */
  private readonly fromRegistry = new Set<string>();
  /** revisions whose model could not be read, and how many passes in a row: on KServe the storage
   *  initializer fails and is retried in a crash loop, so a model uploaded after its InferenceService
   *  was applied (a training job's output) is still found; here the pass is requeued with that back-off */
  private readonly storageFailures = new Map<string, number>();

  constructor(private readonly opts: ServingControllerOptions, private readonly scaler: Autoscaler) {}

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client, dataPlane } = this.opts;
    const revKey = `${key.namespace}/${key.name}`;
    const rev = await client.find<Rev>(RevisionKind, key);
    if (!rev || rev.metadata.deletionTimestamp) {
      this.fromRegistry.delete(revKey);
      this.storageFailures.delete(revKey);
      dataPlane.removeRevision(revKey);
      this.scaler.forget(revKey);
      return {};
    }
    const spec = rev.spec;
    if (spec.storageUri?.startsWith(registryScheme)) this.fromRegistry.add(revKey);
    dataPlane.setRevision(revKey, spec);
    this.scaler.track(revKey, spec);
    const status: RevisionStatus = clone(rev.status ?? {});
    // a revision that cannot run says why, and stays so
    if (spec.failure) {
      status.modelState = 'FailedToLoad';
      status.lastFailureInfo = { reason: spec.failure.reason, message: spec.failure.message };
      return this.write(rev, status);
    }
    const pass = await this.observe(rev, revKey, status);
    const rungs: Rung[] = spec.serverKind === 'in-process'
      ? [(p) => this.inProcess(p)]
      : [(p) => this.deleteFinished(p), (p) => this.scaleUp(p), (p) => this.scaleDown(p), (p) => this.podStatus(p)];
    for (const rung of rungs) {
      const r = await rung(pass);
      if (r) return r;
    }
    return {};
  }

  private async observe(rev: Rev, revKey: string, status: RevisionStatus): Promise<Pass> {
    const { client, dataPlane } = this.opts;
    const spec = rev.spec;
    const pods = (await client.listAll<PodObject>(Kinds.Pod, { namespace: rev.metadata.namespace, labelSelector: `${ServingLabels.revision}=${rev.metadata.name}` })).filter((p) => !p.metadata.deletionTimestamp);
    const live = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const current = spec.serverKind === 'in-process' ? dataPlane.readyReplicas(revKey) : live.length;
    const want = this.scaler.desired(revKey, spec, !!status.ready, current);
    const pass: Pass = { rev, revKey, status, pods, live, desired: want.replicas, recheck: want.recheckMs !== undefined ? { requeueAfter: want.recheckMs } : {}, modelPath: undefined, source: undefined, storageFailure: undefined };
    if (spec.storageUri && pass.desired > 0) {
      try {
        const src = await this.opts.models.resolve(spec.storageUri, modelOwner(rev), spec.registryVersionId);
        pass.source = src;
        // what a registry URI named, for the registry's record of the deployment
        if (src.registry) status.registryModel = src.registry;
        else delete status.registryModel;
        pass.modelPath = src.kind === 'host' ? src.path : undefined;
        if (src.kind === 'pvc' && spec.serverKind === 'in-process') pass.modelPath = undefined;
      } catch (e) {
        pass.storageFailure = e instanceof StorageError ? e.message : `storage: ${(e as Error).message}`;
      }
    }
    if (pass.storageFailure) {
      // the same failure again keeps its first time (and the status is not rewritten)
      const same = status.lastFailureInfo?.message === pass.storageFailure ? status.lastFailureInfo.time : undefined;
      status.modelState = 'FailedToLoad';
      status.lastFailureInfo = { reason: 'ModelLoadFailed', message: pass.storageFailure, time: same ?? now() };
      pass.desired = 0;
      const tries = this.storageFailures.get(revKey) ?? 0;
      this.storageFailures.set(revKey, tries + 1);
      const { baseMs, maxMs } = this.opts.storageRetry ?? { baseMs: 10_000, maxMs: 300_000 };
      const retryMs = Math.min(baseMs * 2 ** Math.min(tries, 30), maxMs);
      pass.recheck = { requeueAfter: Math.min(pass.recheck.requeueAfter ?? retryMs, retryMs) };
    } else {
      this.storageFailures.delete(revKey);
    }
    status.desiredReplicas = pass.desired;
    return pass;
  }

  /** an in-process model: loaded into the gateway while replicas are wanted, unloaded when not */
  private async inProcess(p: Pass): Promise<Result> {
    const { rev, revKey, status } = p;
    const { dataPlane } = this.opts;
    if (!p.storageFailure) {
      // the claim of a pvc:// URI, or of the pvc:// URI a registry entry gave
      const src = p.source;
      const pvcPath = src?.kind === 'pvc' && src.claim ? `${this.opts.models.claimDir(rev.metadata.namespace ?? 'default', src.claim)}${src.subPath ? `/${src.subPath}` : ''}` : undefined;
      try {
        await dataPlane.ensureInProcess(revKey, rev.spec, p.desired > 0, p.modelPath ?? pvcPath);
        if (p.desired > 0) delete status.lastFailureInfo;
      } catch (e) {
        status.modelState = 'FailedToLoad';
        status.lastFailureInfo = { reason: 'ModelLoadFailed', message: (e as Error).message, time: now() };
        status.failedCopies = 1;
        return this.finish(p, { requeueAfter: 30_000 });
      }
    }
    const n = dataPlane.readyReplicas(revKey);
    status.replicas = n;
    status.readyReplicas = n;
    if (n > 0) status.ready = true;
    if (!p.storageFailure) status.modelState = n > 0 ? 'Loaded' : status.ready ? 'Standby' : 'Pending';
    if (n > 0) status.failedCopies = 0;
    return this.finish(p, p.recheck);
  }

  /** 1. Pods that ended (a model server does not end on its own) go */
  private async deleteFinished(p: Pass): Promise<Result | undefined> {
    const done = p.pods.filter((x) => x.status?.phase === 'Succeeded' || x.status?.phase === 'Failed');
    for (const pod of done) await this.deletePod(pod);
    return done.length > 0 ? {} : undefined;
  }

  /** 2. fewer Pods than wanted: the missing ones are made */
  private async scaleUp(p: Pass): Promise<Result | undefined> {
    if (p.live.length >= p.desired || p.storageFailure) return undefined;
    const uri = p.rev.spec.storageUri;
    const src = uri ? await this.opts.models.resolve(uri, modelOwner(p.rev), p.rev.spec.registryVersionId) : undefined;
    for (let i = p.live.length; i < p.desired; i++) await this.opts.client.create<PodObject>(renderReplicaPod(p.rev, src));
    return {};
  }

  /** 3. more Pods than wanted: those not ready go first, then the newest; the gateway stops using them at once */
  private async scaleDown(p: Pass): Promise<Result | undefined> {
    if (p.live.length <= p.desired) return undefined;
    const { dataPlane } = this.opts;
    const rank = (x: PodObject): number => (dataPlane.replicaReady(p.revKey, x.metadata.name) ? 1 : 0);
    const extra = [...p.live].sort((a, b) => rank(a) - rank(b) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')).slice(0, p.live.length - p.desired);
    for (const pod of extra) await this.deletePod(pod);
    dataPlane.setReplicas(p.revKey, replicasOf(p.live.filter((x) => !extra.includes(x))));
    return {};
  }

  /** 4. the replicas go to the gateway, and the status says what they do */
  private async podStatus(p: Pass): Promise<Result> {
    const { dataPlane } = this.opts;
    const { live, status } = p;
    dataPlane.setReplicas(p.revKey, replicasOf(live));
    const readyN = dataPlane.readyReplicas(p.revKey);
    status.replicas = live.length;
    status.readyReplicas = readyN;
    if (readyN > 0) status.ready = true;
    const failing = live.map(loadFailure).filter((f): f is { exitCode: number; reason: string } => f !== undefined);
    status.failedCopies = readyN > 0 ? 0 : failing.length;
    if (p.storageFailure) {
      // already set
    } else if (readyN > 0) {
      status.modelState = 'Loaded';
      delete status.lastFailureInfo;
    } else if (failing.length > 0) {
      status.modelState = 'FailedToLoad';
      const pod = live.find((x) => loadFailure(x));
      const f = failing[0] as { exitCode: number; reason: string };
      let message = `the model server exited with code ${f.exitCode} (${f.reason})`;
      if (pod && this.opts.podLog) {
        const line = failureLine(await this.opts.podLog(pod, pod.spec.containers[0]?.name ?? 'kserve-container').catch(() => ''));
        if (line) message = line;
      }
      status.lastFailureInfo = { reason: 'ModelLoadFailed', message, exitCode: f.exitCode, time: status.lastFailureInfo?.time ?? now() };
    } else if (live.length > 0) status.modelState = 'Loading';
    else status.modelState = status.ready ? 'Standby' : 'Pending';
    return this.finish(p, p.recheck);
  }

  /** requests waiting for a revision whose model failed fail with its message; the status is written */
  private finish(p: Pass, result: Result): Promise<Result> {
    this.opts.dataPlane.setFailure(p.revKey, revisionFailure(p.rev, p.status));
    return this.write(p.rev, p.status, result);
  }

  /** the revisions in `ns` whose model comes from its registry */
  registryKeysIn(ns: string | undefined): ObjectKey[] {
    return [...this.fromRegistry].map((k) => {
      const i = k.indexOf('/');
      return { namespace: k.slice(0, i), name: k.slice(i + 1) };
    }).filter((k) => k.namespace === ns);
  }

  private async write(rev: Rev, status: RevisionStatus, result: Result = {}): Promise<Result> {
    if (deepEqual(status, rev.status ?? {})) return result;
    try {
      await this.opts.client.updateStatus({ ...rev, status });
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return { requeueAfter: 10 };
      throw e;
    }
    return result;
  }

  private async deletePod(p: PodObject): Promise<void> {
    try {
      await this.opts.client.delete(Kinds.Pod, { namespace: p.metadata.namespace, name: p.metadata.name }, { gracePeriodSeconds: 5 } as never);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

/** the replicas the gateway may use: running Pods with an address */
/** whose model it is: the revision's namespace and the service account its replicas run as (KServe's storage initializer's credentials) */
function modelOwner(rev: Rev): ModelOwner {
  const sa = rev.spec.podTemplate?.spec.serviceAccountName;
  return { namespace: rev.metadata.namespace ?? 'default', ...(sa ? { serviceAccountName: sa } : {}) };
}

function replicasOf(pods: PodObject[]): { name: string; ip?: string }[] {
  return pods.map((p) => ({ name: p.metadata.name, ...(p.status?.phase === 'Running' && p.status.podIP ? { ip: p.status.podIP } : {}) }));
}
