// Kueue's Prometheus metrics by their names and labels (pkg/metrics/metrics.go), read off the queue
// manager: gauges from the latest scheduling call and the queue objects, counters from its decisions.
import { ClusterQueueKind, LocalQueueKind } from '../api/kueue.js';
import type { StoredObject } from '../api/meta.js';
import type { InformerCache } from '../control/informer.js';
import type { MetricsRegistry } from './metrics.js';
import { toAmount } from '../workloads/queues/engine/index.js';
import type { ClusterQueueLike, ResourceGroupLike } from '../workloads/queues/engine/index.js';
import type { QueueManager } from '../workloads/queues/manager.js';

/** Kueue's buckets for admission wait time: 1 s doubling to about 3 h */
const waitBuckets = Array.from({ length: 14 }, (_, i) => 2 ** i);

/** a Kueue integer amount (millicores for cpu, bytes for memory) as the metric's number */
function number(resource: string, v: string | number | undefined | null): number {
  if (v === undefined || v === null) return 0;
  const a = toAmount(resource, v) ?? 0;
  return resource === 'cpu' ? a / 1000 : a;
}

interface FlavorUsage { name: string; resources: { name: string; total: string; borrowed?: string }[] }

export function registerQueueMetrics(metrics: MetricsRegistry, qm: QueueManager, cache: InformerCache): void {
  const admitted = metrics.counter('kueue_admitted_workloads_total', 'The total number of admitted workloads per cluster_queue', ['cluster_queue']);
  const wait = metrics.histogram('kueue_admission_wait_time_seconds', 'The time between a workload was created or requeued until admission, per cluster_queue', ['cluster_queue'], waitBuckets);
  const evicted = metrics.counter('kueue_evicted_workloads_total', 'The number of evicted workloads per cluster_queue and reason', ['cluster_queue', 'reason']);
  const preempted = metrics.counter('kueue_preempted_workloads_total', 'The number of preempted workloads per preempting_cluster_queue and reason', ['preempting_cluster_queue', 'reason']);
  const lqAdmitted = metrics.counter('kueue_local_queue_admitted_workloads_total', 'The total number of admitted workloads per local_queue', ['name', 'namespace']);
  qm.admittedListeners.push((a, waited) => {
    admitted.inc([a.clusterQueue]);
    wait.observe([a.clusterQueue], waited);
    lqAdmitted.inc([a.localQueue, a.namespace]);
  });
  qm.listeners.push((r) => {
    for (const p of r.preemptions) {
      const preemptorCq = r.admissions.find((a) => a.namespace === p.preemptor.namespace && a.name === p.preemptor.name)?.clusterQueue ?? p.clusterQueue;
      preempted.inc([preemptorCq, p.reason]);
      evicted.inc([p.clusterQueue, 'Preempted']);
    }
    for (const e of r.evictions) evicted.inc([e.clusterQueue, e.reason]);
  });

  const cqs = (): (StoredObject & ClusterQueueLike)[] => cache.list(ClusterQueueKind) as (StoredObject & ClusterQueueLike)[];
  metrics.collected('kueue_pending_workloads', 'The number of pending workloads, per cluster_queue and status (active or inadmissible)', ['cluster_queue', 'status'], 'gauge', () => {
    const out: { labels: string[]; value: number }[] = [];
    const pending = new Map<string, { active: number; inadmissible: number }>();
    for (const p of qm.last?.pending ?? []) {
      if (!p.clusterQueue) continue;
      const e = pending.get(p.clusterQueue) ?? { active: 0, inadmissible: 0 };
      // the head that waits for quota is "active"; the rest Kueue parks as inadmissible
      if (p.positionInClusterQueue === 0 || p.reason === 'Pending') e.active++;
      else e.inadmissible++;
      pending.set(p.clusterQueue, e);
    }
    for (const cq of cqs()) {
      const e = pending.get(cq.metadata.name) ?? { active: 0, inadmissible: 0 };
      out.push({ labels: [cq.metadata.name, 'active'], value: e.active }, { labels: [cq.metadata.name, 'inadmissible'], value: e.inadmissible });
    }
    return out;
  });
  const statusGauge = (name: string, help: string, field: 'reservingWorkloads' | 'admittedWorkloads'): void => {
    metrics.collected(name, help, ['cluster_queue'], 'gauge', () => cqs().map((cq) => ({ labels: [cq.metadata.name], value: Number(cq.status?.[field] ?? 0) })));
  };
  statusGauge('kueue_reserving_active_workloads', 'The number of Workloads that are reserving quota, per cluster_queue', 'reservingWorkloads');
  statusGauge('kueue_admitted_active_workloads', 'The number of admitted Workloads that are active (unsuspended and not finished), per cluster_queue', 'admittedWorkloads');
  metrics.collected('kueue_cluster_queue_status', 'Reports the cluster_queue\'s status (pending, active or terminated)', ['cluster_queue', 'status'], 'gauge', () => cqs().flatMap((cq) => {
    const active = (cq.status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === 'Active')?.status === 'True';
    const terminating = !!cq.metadata.deletionTimestamp;
    const now = terminating ? 'terminating' : active ? 'active' : 'pending';
    return ['pending', 'active', 'terminating'].map((s) => ({ labels: [cq.metadata.name, s], value: s === now ? 1 : 0 }));
  }));
  const quota = (name: string, help: string, field: 'nominalQuota' | 'borrowingLimit' | 'lendingLimit'): void => {
    metrics.collected(name, help, ['cohort', 'cluster_queue', 'flavor', 'resource'], 'gauge', () => cqs().flatMap((cq) => {
      const cohort = cq.spec?.cohortName ?? cq.spec?.cohort ?? '';
      const groups: ResourceGroupLike[] = cq.spec?.resourceGroups ?? [];
      return groups.flatMap((g) => g.flavors.flatMap((f) => f.resources.flatMap((r) => {
        const v = r[field];
        if (field !== 'nominalQuota' && (v === undefined || v === null)) return [];
        return [{ labels: [cohort, cq.metadata.name, f.name, r.name], value: number(r.name, v) }];
      })));
    }));
  };
  quota('kueue_cluster_queue_nominal_quota', 'Reports the cluster_queue\'s resource nominal quota within all the flavors', 'nominalQuota');
  quota('kueue_cluster_queue_borrowing_limit', 'Reports the cluster_queue\'s resource borrowing limit within all the flavors', 'borrowingLimit');
  quota('kueue_cluster_queue_lending_limit', 'Reports the cluster_queue\'s resource lending limit within all the flavors', 'lendingLimit');
  const usage = (name: string, help: string, field: 'flavorsReservation' | 'flavorsUsage'): void => {
    metrics.collected(name, help, ['cohort', 'cluster_queue', 'flavor', 'resource'], 'gauge', () => cqs().flatMap((cq) => {
      const cohort = cq.spec?.cohortName ?? cq.spec?.cohort ?? '';
      const list = (cq.status?.[field] ?? []) as FlavorUsage[];
      return list.flatMap((f) => f.resources.map((r) => ({ labels: [cohort, cq.metadata.name, f.name, r.name], value: number(r.name, r.total) })));
    }));
  };
  usage('kueue_cluster_queue_resource_reservation', 'Reports the cluster_queue\'s total resource reservation within all the flavors', 'flavorsReservation');
  usage('kueue_cluster_queue_resource_usage', 'Reports the cluster_queue\'s total admitted resource usage within all the flavors', 'flavorsUsage');
  const lqs = (): StoredObject[] => cache.list(LocalQueueKind);
  metrics.collected('kueue_local_queue_pending_workloads', 'The number of pending workloads, per local_queue and status', ['name', 'namespace', 'status'], 'gauge', () => lqs().map((lq) => ({ labels: [lq.metadata.name, lq.metadata.namespace ?? '', 'active'], value: Number(lq.status?.pendingWorkloads ?? 0) })));
  metrics.collected('kueue_local_queue_reserving_active_workloads', 'The number of Workloads that are reserving quota, per local_queue', ['name', 'namespace'], 'gauge', () => lqs().map((lq) => ({ labels: [lq.metadata.name, lq.metadata.namespace ?? ''], value: Number(lq.status?.reservingWorkloads ?? 0) })));
  metrics.collected('kueue_local_queue_admitted_active_workloads', 'The number of admitted Workloads that are active, per local_queue', ['name', 'namespace'], 'gauge', () => lqs().map((lq) => ({ labels: [lq.metadata.name, lq.metadata.namespace ?? ''], value: Number(lq.status?.admittedWorkloads ?? 0) })));
  metrics.collected('kueue_local_queue_resource_usage', 'Reports the local_queue\'s total admitted resource usage within all the flavors', ['name', 'namespace', 'flavor', 'resource'], 'gauge', () => lqs().flatMap((lq) => {
    const list = (lq.status?.flavorsUsage ?? []) as FlavorUsage[];
    return list.flatMap((f) => f.resources.map((r) => ({ labels: [lq.metadata.name, lq.metadata.namespace ?? '', f.name, r.name], value: number(r.name, r.total) })));
  }));
}
