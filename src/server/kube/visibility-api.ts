// Kueue's visibility API, visibility.kueue.x-k8s.io/v1beta1, as Kueue's aggregated API server serves
// it: the pending Workloads of a ClusterQueue or of a LocalQueue, in the order they would be admitted,
// with positionInClusterQueue and positionInLocalQueue (from 0), `limit` (default 1000) and `offset`.
// Read off the queue manager's engine on each request; nothing is stored.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import { WorkloadKind } from '../../api/kueue.js';
import type { Client } from '../../store/client.js';
import type { PendingPosition } from '../../workloads/queues/engine/index.js';
import { send } from '../body.js';
import type { ExtraGroupVersion } from './discovery.js';
import { q } from './query.js';

export const visibilityGroupName = 'visibility.kueue.x-k8s.io';
const version = 'v1beta1';
const apiVersion = `${visibilityGroupName}/${version}`;

export interface VisibilityDeps {
  client: Client;
  /** each ClusterQueue's pending Workloads in order; undefined while the queue manager is not running */
  positions(): Record<string, PendingPosition[]> | undefined;
}

function count(url: URL, name: string, dflt: number): number {
  const v = q(url, name);
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new ApiError(StatusReason.BadRequest, `${name}: Invalid value: "${v}": must be a non-negative integer`);
  return n;
}

const notFound = (): ApiError => new ApiError(StatusReason.NotFound, 'the server could not find the requested resource');

export function visibilityGroup(deps: VisibilityDeps): ExtraGroupVersion {
  const summary = async (res: ServerResponse, req: IncomingMessage, url: URL, entries: PendingPosition[]): Promise<void> => {
    const offset = count(url, 'offset', 0);
    const limit = count(url, 'limit', 1000);
    const items = [];
    for (const e of entries.slice(offset, offset + limit)) {
      const w = await deps.client.find(WorkloadKind, { namespace: e.namespace, name: e.name });
      items.push({
        metadata: { name: e.name, namespace: e.namespace, creationTimestamp: w?.metadata.creationTimestamp ?? null, ...(w?.metadata.ownerReferences ? { ownerReferences: w.metadata.ownerReferences } : {}) },
        priority: e.priority,
        localQueueName: e.localQueue,
        positionInClusterQueue: e.positionInClusterQueue,
        positionInLocalQueue: e.positionInLocalQueue,
      });
    }
    send(res, 200, { kind: 'PendingWorkloadsSummary', apiVersion, metadata: { creationTimestamp: null }, items }, req.headers.accept);
  };
  return {
    group: visibilityGroupName,
    version,
    resources: [
      { resource: 'clusterqueues', singular: 'clusterqueue', namespaced: false, kind: 'ClusterQueue', verbs: ['get'] },
      { resource: 'clusterqueues/pendingworkloads', singular: '', namespaced: false, kind: 'PendingWorkloadsSummary', verbs: ['get'] },
      { resource: 'localqueues', singular: 'localqueue', namespaced: true, kind: 'LocalQueue', verbs: ['get'] },
      { resource: 'localqueues/pendingworkloads', singular: '', namespaced: true, kind: 'PendingWorkloadsSummary', verbs: ['get'] },
    ],
    async handle(req, res, url, rest) {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError(StatusReason.MethodNotAllowed, 'the server does not allow this method on the requested resource');
      const segs = rest.filter(Boolean).map(decodeURIComponent);
      const all = deps.positions();
      if (!all) throw new ApiError(StatusReason.ServiceUnavailable, 'the queue manager is not running');
      if (segs.length === 3 && segs[0] === 'clusterqueues' && segs[2] === 'pendingworkloads') {
        return summary(res, req, url, all[segs[1] ?? ''] ?? []);
      }
      if (segs.length === 5 && segs[0] === 'namespaces' && segs[2] === 'localqueues' && segs[4] === 'pendingworkloads') {
        const [, ns, , lq] = segs;
        const entries = Object.values(all).flat().filter((e) => e.namespace === ns && e.localQueue === lq).sort((a, b) => a.positionInLocalQueue - b.positionInLocalQueue);
        return summary(res, req, url, entries);
      }
      throw notFound();
    },
  };
}
