// What the Queues pages show, from Kueue's objects as the queue controllers write them: each
// ClusterQueue's quota against its usage per flavor and resource, and where each Workload stands.
// Pure, so the pages and their tests share one reckoning.
import { parseQuantity } from '../../../../src/api/quantity';
import type { ClusterQueue, Condition, LocalQueue, Workload } from '../../api/types';

export type { ClusterQueue, LocalQueue, Workload };

export interface PendingItem {
  metadata: { name: string; namespace: string; creationTimestamp?: string | null; ownerReferences?: { kind: string; name: string; apiVersion?: string }[] };
  priority?: number;
  localQueueName?: string;
  positionInClusterQueue: number;
  positionInLocalQueue: number;
}

export interface QuotaRow {
  flavor: string;
  resource: string;
  nominal: number;
  /** undefined: no limit (borrow anything the cohort lends) */
  borrowingLimit?: number;
  lendingLimit?: number;
  /** admitted workloads' usage, of which `borrowed` is over nominal */
  used: number;
  borrowed: number;
  /** quota reserved (admitted or waiting on admission checks) */
  reserved: number;
}

const num = (q: string | number | undefined): number | undefined => {
  if (q === undefined || q === null) return undefined;
  try {
    return parseQuantity(String(q));
  } catch {
    return undefined;
  }
};

/** one row per flavor and resource the ClusterQueue names, in its spec's order */
export function quotaRows(cq: ClusterQueue): QuotaRow[] {
  type Usage = NonNullable<ClusterQueue['status']>['flavorsUsage'];
  const find = (list: Usage, flavor: string, res: string) => list?.find((f) => f.name === flavor)?.resources.find((r) => r.name === res);
  const rows: QuotaRow[] = [];
  for (const g of cq.spec?.resourceGroups ?? []) {
    for (const f of g.flavors) {
      for (const r of f.resources) {
        const u = find(cq.status?.flavorsUsage, f.name, r.name);
        const v = find(cq.status?.flavorsReservation, f.name, r.name);
        const bl = num(r.borrowingLimit);
        const ll = num(r.lendingLimit);
        rows.push({
          flavor: f.name,
          resource: r.name,
          nominal: num(r.nominalQuota) ?? 0,
          ...(bl !== undefined ? { borrowingLimit: bl } : {}),
          ...(ll !== undefined ? { lendingLimit: ll } : {}),
          used: num(u?.total) ?? 0,
          borrowed: num(u?.borrowed) ?? 0,
          reserved: num(v?.total) ?? 0,
        });
      }
    }
  }
  return rows;
}

const cond = (o: { status?: { conditions?: Condition[] } }, type: string): Condition | undefined => o.status?.conditions?.find((c) => c.type === type);

/** Active, or the reason it is not (Stopped, FlavorNotFound, ...) */
export function queueState(q: { status?: { conditions?: Condition[] } }): string {
  const a = cond(q, 'Active');
  if (!a) return 'Unknown';
  return a.status === 'True' ? 'Active' : a.reason || 'Inactive';
}

/** Finished, Evicted, Admitted, QuotaReserved, Inactive or Pending, as `kubectl get workloads` reads */
export function workloadState(w: Workload): string {
  const on = (t: string): boolean => cond(w, t)?.status === 'True';
  if (on('Finished')) return cond(w, 'Finished')?.reason === 'Failed' ? 'Failed' : 'Finished';
  if (w.spec?.active === false) return 'Inactive';
  if (on('Evicted')) return 'Evicted';
  if (on('Admitted')) return 'Admitted';
  if (on('QuotaReserved')) return 'QuotaReserved';
  return 'Pending';
}

/** why a Workload waits: its QuotaReserved condition's message while it is not reserved */
export function pendingReason(w: Workload | undefined): string | undefined {
  const c = w ? cond(w, 'QuotaReserved') : undefined;
  return c && c.status !== 'True' ? c.message || c.reason : undefined;
}

export interface OwnerLink {
  kind: string;
  name: string;
  plural: string;
}

/** the kinds whose Workloads Kueue makes, to the plural of their dashboard page */
const OWNER_PLURALS: Record<string, string> = {
  Job: 'jobs',
  Pod: 'pods',
  JobSet: 'jobsets',
  PyTorchJob: 'pytorchjobs',
  TFJob: 'tfjobs',
  XGBoostJob: 'xgboostjobs',
  PaddleJob: 'paddlejobs',
  JAXJob: 'jaxjobs',
  MPIJob: 'mpijobs',
  TrainJob: 'trainjobs',
  RayJob: 'rayjobs',
  RayCluster: 'rayclusters',
  Notebook: 'notebooks',
};

export function ownerOf(o: { metadata?: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] } }): OwnerLink | undefined {
  const refs = o.metadata?.ownerReferences ?? [];
  const r = refs.find((x) => x.controller) ?? refs[0];
  if (!r) return undefined;
  return { kind: r.kind, name: r.name, plural: OWNER_PLURALS[r.kind] ?? `${r.kind.toLowerCase()}s` };
}

