// The queue manager, Kueue's scheduler and queue controllers in one: it keeps the admission engine's
// view current from the informer cache, runs a scheduling call whenever something changed, and
// writes the engine's answers back to the store (Workload conditions and admission, ClusterQueue
// and LocalQueue status, events). Nothing is kept that the store does not hold: after a restart the
// engine is fed the stored Workloads again, and those with QuotaReserved=True count as using quota,
// so nothing is admitted twice.
import {
  ClusterQueueKind, CohortKind, LocalQueueKind, ResourceFlavorKind, WorkloadConditions as C, WorkloadKind, WorkloadPriorityClassKind,
} from '../../api/kueue.js';
import { Kinds } from '../../api/index.js';
import type { KindDef } from '../../api/registry.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { Controller, Manager } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { InformerCache } from '../../control/informer.js';
import type { Client } from '../../store/client.js';
import type { WatchEvent } from '../../store/store.js';
import { AdmissionEngine } from './engine/index.js';
import type {
  AdmissionDecision, ClusterQueueLike, CohortLike, CycleResult, EngineOptions, EvictionDecision, LocalQueueLike, NamespaceLike,
  PendingWorkload, PreemptionDecision, ResourceFlavorLike, WorkloadLike, WorkloadPriorityClassLike,
} from './engine/index.js';
import { NamespaceQuotaGate } from './namespace-quota.js';
import { findCondition, setCondition } from './status.js';

export interface QueueManagerOptions {
  client: Client;
  cache: InformerCache;
  recorder: Recorder;
  engine?: EngineOptions;
  now?: () => Date;
  log?: (msg: string) => void;
}

/** the one key every change enqueues: a scheduling call looks at everything */
const CycleKey: ObjectKey = { name: 'cycle' };

type WorkloadObj = StoredObject & WorkloadLike;

/** counts of what the manager did, for metrics and the benchmark */
export interface QueueCounters {
  admitted: number;
  preempted: number;
  evicted: number;
  cycles: number;
}

export class QueueManager {
  readonly engine: AdmissionEngine;
  readonly counters: QueueCounters = { admitted: 0, preempted: 0, evicted: 0, cycles: 0 };
  /** the latest call's result, for the visibility API and metrics */
  last?: CycleResult;
  private controller?: Controller;
  private readonly stops: { stop(): void }[] = [];
  /** spec generations already fed, so that the manager's own status writes do not rebuild the engine */
  private readonly generations = new Map<string, number>();
  private readonly client: Client;
  private readonly cache: InformerCache;
  private readonly recorder: Recorder;
  private readonly now: () => Date;
  private readonly quotaGate: NamespaceQuotaGate;
  /** callbacks run after every scheduling call (metrics) */
  readonly listeners: ((r: CycleResult) => void)[] = [];

  constructor(opts: QueueManagerOptions) {
    this.client = opts.client;
    this.cache = opts.cache;
    this.recorder = opts.recorder;
    this.now = opts.now ?? (() => new Date());
    this.quotaGate = new NamespaceQuotaGate(opts.cache);
    // a Workload must fit its namespace's ResourceQuota as well as its ClusterQueue (namespace-quota.ts)
    this.engine = new AdmissionEngine(undefined, { admissionGate: (w, now) => this.quotaGate.check(w, now), ...opts.engine });
  }

  /** Registers the manager's controller: one worker, one key, so scheduling calls never overlap. */
  register(mgr: Manager): Controller {
    this.controller = mgr.add({
      name: 'queue-manager',
      for: ClusterQueueKind,
      predicate: () => false,
      reconcile: async () => {
        await this.cycle();
        // a backoff ending or a HoldAndDrain needs no event to be noticed
        return { requeueAfter: 5_000 };
      },
    });
    this.feed();
    // the gate reads quotas from the cache: their informer must run before the first call
    this.cache.informer(Kinds.ResourceQuota);
    return this.controller;
  }

  stop(): void {
    for (const s of this.stops) s.stop();
  }

  /** asks for a scheduling call */
  trigger(): void {
    this.controller?.enqueue(CycleKey);
  }

  private feed(): void {
    const watch = (kind: KindDef, apply: (e: WatchEvent) => boolean): void => {
      this.stops.push(this.cache.informer(kind).addHandler((e) => {
        if (apply(e)) this.trigger();
      }));
    };
    const bySpec = (kind: KindDef, up: (o: StoredObject) => void, del: (o: StoredObject) => void) => (e: WatchEvent): boolean => {
      const o = e.object;
      const key = `${kind.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      if (e.type === 'DELETED') {
        this.generations.delete(key);
        del(o);
        return true;
      }
      // status writes leave the generation alone (namespaces have none: their labels matter)
      const gen = o.metadata.generation;
      if (gen !== undefined && this.generations.get(key) === gen) return false;
      if (gen !== undefined) this.generations.set(key, gen);
      up(o);
      return true;
    };
    const e = this.engine;
    watch(ResourceFlavorKind, bySpec(ResourceFlavorKind, (o) => e.upsertResourceFlavor(o as ResourceFlavorLike), (o) => e.deleteResourceFlavor(o.metadata.name)));
    watch(ClusterQueueKind, bySpec(ClusterQueueKind, (o) => e.upsertClusterQueue(o as ClusterQueueLike), (o) => e.deleteClusterQueue(o.metadata.name)));
    watch(CohortKind, bySpec(CohortKind, (o) => e.upsertCohort(o as CohortLike), (o) => e.deleteCohort(o.metadata.name)));
    watch(LocalQueueKind, bySpec(LocalQueueKind, (o) => e.upsertLocalQueue(o as LocalQueueLike), (o) => e.deleteLocalQueue(o.metadata.namespace ?? '', o.metadata.name)));
    watch(WorkloadPriorityClassKind, bySpec(WorkloadPriorityClassKind, (o) => e.upsertWorkloadPriorityClass(o as unknown as WorkloadPriorityClassLike), (o) => e.deleteWorkloadPriorityClass(o.metadata.name)));
    watch(Kinds.Namespace, (ev) => {
      if (ev.type === 'DELETED') e.deleteNamespace(ev.object.metadata.name);
      else e.upsertNamespace(ev.object as NamespaceLike);
      return true;
    });
    watch(WorkloadKind, (ev) => {
      const o = ev.object;
      if (ev.type === 'DELETED') e.deleteWorkload(o.metadata.namespace ?? '', o.metadata.name);
      else e.upsertWorkload(o as WorkloadObj);
      return true;
    });
  }

  /** One scheduling call and its writes. */
  async cycle(): Promise<CycleResult> {
    const now = this.now();
    this.quotaGate.reset();
    const r = this.engine.schedule(now);
    this.counters.cycles++;
    const at = now.toISOString();
    for (const a of r.admissions) await this.admit(a, at);
    for (const p of r.preemptions) await this.evict(p, at, 'Preempted', p);
    for (const ev of r.evictions) await this.evict(ev, at, ev.reason);
    for (const p of r.pending) await this.pending(p, at);
    for (const [name, s] of Object.entries(r.clusterQueues)) await this.queueStatus(ClusterQueueKind, { name }, s, at);
    for (const [key, s] of Object.entries(r.localQueues)) {
      const i = key.indexOf('/');
      await this.queueStatus(LocalQueueKind, { namespace: key.slice(0, i), name: key.slice(i + 1) }, s, at);
    }
    this.last = r;
    for (const l of this.listeners) l(r);
    return r;
  }

  /** read, change, write the Workload's status; false when it is gone or the change was nothing */
  private async writeWorkload(key: ObjectKey, mutate: (w: WorkloadObj) => boolean): Promise<WorkloadObj | undefined> {
    for (let attempt = 0; ; attempt++) {
      const w = await this.client.find<WorkloadObj>(WorkloadKind, key);
      if (!w) return undefined;
      w.status ??= {};
      if (!mutate(w)) return undefined;
      try {
        return await this.client.updateStatus<WorkloadObj>(w);
      } catch (e) {
        if (attempt < 3 && e instanceof ApiError && e.reason === StatusReason.Conflict) continue;
        throw e;
      }
    }
  }

  private async admit(a: AdmissionDecision, at: string): Promise<void> {
    const w = await this.writeWorkload(a, (w) => {
      if (a.uid && w.metadata.uid !== a.uid) return false;
      const s = w.status ?? (w.status = {});
      const conds = (s.conditions ??= []);
      s.admission = a.admission;
      setCondition(conds, C.QuotaReserved, 'True', 'QuotaReserved', a.message, at);
      if (a.admissionChecks.length === 0) setCondition(conds, C.Admitted, 'True', 'Admitted', 'The workload is admitted', at);
      // a workload admitted again after an eviction: those conditions are over
      if (findCondition(conds, C.Evicted)?.status === 'True') setCondition(conds, C.Evicted, 'False', 'QuotaReserved', 'Previously: ' + (findCondition(conds, C.Evicted)?.message ?? ''), at);
      if (findCondition(conds, C.Preempted)?.status === 'True') setCondition(conds, C.Preempted, 'False', 'QuotaReserved', 'Previously: ' + (findCondition(conds, C.Preempted)?.message ?? ''), at);
      if (findCondition(conds, C.Requeued)) setCondition(conds, C.Requeued, 'True', 'QuotaReserved', 'Quota reserved in ClusterQueue ' + a.clusterQueue, at);
      return true;
    });
    if (!w) return;
    this.counters.admitted++;
    this.recorder.event(w, 'Normal', 'QuotaReserved', a.message);
    if (a.admissionChecks.length === 0) {
      const created = Date.parse(w.metadata.creationTimestamp);
      const waited = Number.isNaN(created) ? 0 : Math.max(0, Math.round((Date.parse(at) - created) / 1000));
      this.recorder.event(w, 'Normal', 'Admitted', `Admitted by ClusterQueue ${a.clusterQueue}, wait time since reservation was 0s`);
      this.admittedListeners.forEach((l) => l(a, waited));
    }
  }

  /** called per admission with the seconds the workload waited since creation (metrics) */
  readonly admittedListeners: ((a: AdmissionDecision, waitedSeconds: number) => void)[] = [];

  /**
   * Evicted=True (and Preempted=True for a preemption). The job integration stops the job, then
   * gives the quota back; the engine already counts it as released for its own decisions.
   */
  private async evict(d: PreemptionDecision | EvictionDecision, at: string, reason: string, p?: PreemptionDecision): Promise<void> {
    const w = await this.writeWorkload(d, (w) => {
      const conds = (w.status!.conditions ??= []);
      let changed = setCondition(conds, C.Evicted, 'True', reason, d.message, at);
      if (p) changed = setCondition(conds, C.Preempted, 'True', p.reason, p.message, at) || changed;
      return changed;
    });
    if (!w) return;
    if (p) {
      this.counters.preempted++;
      this.recorder.event(w, 'Normal', 'Preempted', p.message);
    } else {
      this.counters.evicted++;
      this.recorder.event(w, 'Normal', 'EvictedDueTo' + reason, d.message);
    }
  }

  private async pending(p: PendingWorkload, at: string): Promise<void> {
    const cached = this.cache.get(WorkloadKind, p) as WorkloadObj | undefined;
    const old = findCondition(cached?.status?.conditions, C.QuotaReserved);
    if (old && old.status === 'False' && old.reason === p.reason && old.message === p.message) return;
    const w = await this.writeWorkload(p, (w) => {
      if (findCondition(w.status?.conditions, C.QuotaReserved)?.status === 'True') return false;
      return setCondition((w.status!.conditions ??= []), C.QuotaReserved, 'False', p.reason, p.message, at);
    });
    // Kueue records why a workload waits once per new reason
    if (w && old?.reason !== p.reason) this.recorder.event(w, 'Normal', 'Pending', p.message);
  }

  private async queueStatus(kind: KindDef, key: ObjectKey, next: object, at: string): Promise<void> {
    const cached = this.cache.get(kind, key);
    if (!cached) return;
    const status = structuredClone(next) as { conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[] };
    const oldConds = (cached.status?.conditions ?? []) as { type: string; status: string; lastTransitionTime?: string }[];
    for (const c of status.conditions ?? []) {
      const o = oldConds.find((x) => x.type === c.type);
      c.lastTransitionTime = o && o.status === c.status ? o.lastTransitionTime ?? at : at;
    }
    if (JSON.stringify(canonical(cached.status ?? {})) === JSON.stringify(canonical(status))) return;
    try {
      await this.client.updateStatus({ ...cached, status });
    } catch (e) {
      // the next call writes it again
      if (!(e instanceof ApiError) || (e.reason !== StatusReason.Conflict && e.reason !== StatusReason.NotFound)) throw e;
      this.trigger();
    }
  }
}

/** JSON with object keys sorted, for comparing statuses written in any key order */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = canonical((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
