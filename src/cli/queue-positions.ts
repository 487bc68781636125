/**
 * The POSITION column `skiff get workloads` adds to Kueue's own columns: a pending Workload's place
 * in its ClusterQueue (with `-o wide` also in its LocalQueue), counted from 0, as Kueue's visibility
 * API (`visibility.kueue.x-k8s.io/v1beta1`) gives it. Kueue stores no position, so `kubectl get
 * workloads` has no such column and the server's Table keeps Kueue's; the CLI asks the visibility API
 * once per ClusterQueue in the listing, never once per Workload. Admitted and finished Workloads are
 * not pending and get a blank cell.
 */
import type { Client } from './client.js';
import { ApiError } from './errors.js';
import type { ResourceInfo } from './discovery.js';
import type { Table } from './printers.js';
import type { ServerColumn, ServerTable } from './server-table.js';
import type { KList, KObject } from './types.js';

const KUEUE_GROUP = 'kueue.x-k8s.io';
const VISIBILITY = '/apis/visibility.kueue.x-k8s.io/v1beta1';
/** the visibility API's own default page */
const PAGE = 1000;

export const POSITION_HEADER = 'POSITION';
export const LOCAL_POSITION_HEADER = 'POSITION IN LOCALQUEUE';

export function isKueueWorkloads(r: ResourceInfo): boolean {
  return r.group === KUEUE_GROUP && r.plural === 'workloads';
}

/** a listed Workload and the LocalQueue it names */
export interface WorkloadRef {
  namespace: string;
  name: string;
  queue?: string;
}

export interface QueuePosition {
  inClusterQueue: number;
  inLocalQueue: number;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The Workloads behind a server Table's rows, in row order; the LocalQueue from the `Queue` column. */
export function workloadRefs(t: ServerTable, columns: ServerColumn[]): (WorkloadRef | undefined)[] {
  const nameAt = columns.findIndex((c) => c.format === 'name');
  const queueAt = columns.findIndex((c) => c.name.toLowerCase() === 'queue');
  return t.rows.map((row) => {
    const meta = row.object?.metadata;
    const name = meta?.name ?? (nameAt >= 0 ? row.cells[nameAt] : undefined);
    const spec = row.object?.spec as { queueName?: unknown } | undefined;
    const queue = spec?.queueName ?? (queueAt >= 0 ? row.cells[queueAt] : undefined);
    if (!meta?.namespace || typeof name !== 'string') return undefined;
    return { namespace: meta.namespace, name, queue: typeof queue === 'string' && queue ? queue : undefined };
  });
}

interface PendingWorkload {
  metadata?: { name?: string; namespace?: string };
  localQueueName?: string;
  positionInClusterQueue?: number;
  positionInLocalQueue?: number;
}

interface PendingWorkloadsSummary {
  items?: PendingWorkload[] | null;
}

const forbiddenOrMissing = (err: unknown): boolean => err instanceof ApiError && (err.code === 403 || err.code === 404);

/**
 * Each LocalQueue's ClusterQueue (`ns/lq` → cq), from the LocalQueues of the namespaces listed:
 * one list per namespace, or one across namespaces when several are (per namespace again when the
 * caller may not list across them).
 */
async function clusterQueuesOf(client: Client, version: string, namespaces: string[], signal?: AbortSignal): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const add = (items: KObject[] | undefined): void => {
    for (const lq of items ?? []) {
      const cq = (lq.spec as { clusterQueue?: unknown } | undefined)?.clusterQueue;
      if (lq.metadata?.namespace && lq.metadata.name && typeof cq === 'string') out.set(key(lq.metadata.namespace, lq.metadata.name), cq);
    }
  };
  const base = `/apis/${KUEUE_GROUP}/${version}`;
  if (namespaces.length > 1) {
    try {
      add((await client.list(`${base}/localqueues`, {}, signal)).items);
      return out;
    } catch (err) {
      if (!forbiddenOrMissing(err)) throw err;
    }
  }
  for (const ns of namespaces) add((await client.get<KList & { items?: KObject[] }>(`${base}/namespaces/${encodeURIComponent(ns)}/localqueues`, undefined, signal)).items);
  return out;
}

/** every pending Workload of a visibility path, page by page until the ones wanted are all seen */
async function pendingAt(client: Client, path: string, wanted: Set<string>, into: Map<string, QueuePosition>, signal?: AbortSignal): Promise<void> {
  for (let offset = 0; ; offset += PAGE) {
    const summary = await client.get<PendingWorkloadsSummary>(path, { limit: PAGE, offset }, signal);
    const items = summary.items ?? [];
    for (const p of items) {
      const ns = p.metadata?.namespace;
      const name = p.metadata?.name;
      if (!ns || !name || typeof p.positionInClusterQueue !== 'number') continue;
      into.set(key(ns, name), { inClusterQueue: p.positionInClusterQueue, inLocalQueue: p.positionInLocalQueue ?? p.positionInClusterQueue });
    }
    if (items.length < PAGE || [...wanted].every((k) => into.has(k))) return;
  }
}

/**
 * The positions of the listed Workloads that are pending, by `namespace/name`. A ClusterQueue's
 * pending list may be closed to the caller (Kueue gives batch users only their LocalQueues'): then
 * the LocalQueues of that ClusterQueue that the listing names are asked instead.
 */
export async function readPositions(client: Client, version: string, refs: (WorkloadRef | undefined)[], signal?: AbortSignal): Promise<Map<string, QueuePosition>> {
  const queued = refs.filter((r): r is WorkloadRef & { queue: string } => r?.queue !== undefined);
  const positions = new Map<string, QueuePosition>();
  if (!queued.length) return positions;
  const namespaces = [...new Set(queued.map((r) => r.namespace))].sort();
  const cqOf = await clusterQueuesOf(client, version, namespaces, signal);
  // the listed Workloads of each ClusterQueue, and the LocalQueues that feed it
  const byCq = new Map<string, { wanted: Set<string>; localQueues: Set<string> }>();
  for (const r of queued) {
    const cq = cqOf.get(key(r.namespace, r.queue));
    if (cq === undefined) continue;
    const entry = byCq.get(cq) ?? { wanted: new Set<string>(), localQueues: new Set<string>() };
    entry.wanted.add(key(r.namespace, r.name));
    entry.localQueues.add(key(r.namespace, r.queue));
    byCq.set(cq, entry);
  }
  for (const [cq, { wanted, localQueues }] of byCq) {
    try {
      await pendingAt(client, `${VISIBILITY}/clusterqueues/${encodeURIComponent(cq)}/pendingworkloads`, wanted, positions, signal);
    } catch (err) {
      if (!forbiddenOrMissing(err)) throw err;
      for (const lq of localQueues) {
        const [ns = '', name = ''] = lq.split('/');
        await pendingAt(client, `${VISIBILITY}/namespaces/${encodeURIComponent(ns)}/localqueues/${encodeURIComponent(name)}/pendingworkloads`, wanted, positions, signal);
      }
    }
  }
  return positions;
}

/**
 * The table with POSITION (and with `wide`, POSITION IN LOCALQUEUE) before AGE, as kubectl keeps
 * AGE last; `refs` are the rows' Workloads, in order.
 */
export function withPositions(t: Table, refs: (WorkloadRef | undefined)[], positions: Map<string, QueuePosition>, wide: boolean): Table {
  const ageAt = t.headers.lastIndexOf('AGE');
  const at = ageAt >= 0 ? ageAt : t.headers.length - (t.headers[t.headers.length - 1] === 'LABELS' ? 1 : 0);
  const added = wide ? [POSITION_HEADER, LOCAL_POSITION_HEADER] : [POSITION_HEADER];
  const headers = [...t.headers.slice(0, at), ...added, ...t.headers.slice(at)];
  const rows = t.rows.map((row, i) => {
    const ref = refs[i];
    const p = ref ? positions.get(key(ref.namespace, ref.name)) : undefined;
    const cells = p ? (wide ? [String(p.inClusterQueue), String(p.inLocalQueue)] : [String(p.inClusterQueue)]) : added.map(() => '');
    return [...row.slice(0, at), ...cells, ...row.slice(at)];
  });
  return { headers, rows };
}
