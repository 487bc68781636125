// `GET /skiff/v1/nodes/<node>/gpus`: a node's GPU cards, the shares placed on each (which Pod and
// container, how much memory and compute) and, on real cards, their measured use, for the dashboard's
// Cluster page. Reading it is reading the Node: whoever may `get nodes/<node>` may see it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pod } from '../api/core-types.js';
import { ApiError, StatusReason } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { NodeGpuUsage } from '../api/usage.js';
import { nodeGpuUsage } from '../scheduler/gpu-shares.js';
import type { Client } from '../store/client.js';
import type { PodMetricsSource } from '../substrate/substrate.js';
import type { ResourceAttributes } from './auth/types.js';
import { send } from './body.js';

const GPUS_PATH = /^\/skiff\/v1\/nodes\/([^/]+)\/gpus$/;

export function isGpuUsagePath(path: string): boolean {
  return GPUS_PATH.test(path);
}

/** what the request reads, in RBAC's terms: the Node */
export function gpuUsageAttributes(method: string, path: string): ResourceAttributes | undefined {
  const m = GPUS_PATH.exec(path);
  if (!m) return undefined;
  let name = m[1] ?? '';
  try {
    name = decodeURIComponent(name);
  } catch {
    // a malformed escape names no node a role could name either
  }
  return { verb: method === 'GET' || method === 'HEAD' ? 'get' : method.toLowerCase(), apiGroup: '', resource: 'nodes', name };
}

export async function serveGpuUsage(client: Client, usage: PodMetricsSource | undefined, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if ((req.method ?? 'GET') !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, `${req.method} is not allowed on ${path}; use GET`);
  const name = decodeURIComponent(GPUS_PATH.exec(path)?.[1] ?? '');
  const node = await client.get(Kinds.Node, { name });
  const pods = (await client.listAll<Pod>(Kinds.Pod)).filter((p) => p.spec.nodeName === name);
  const out: NodeGpuUsage = nodeGpuUsage(node, pods);
  const measured = usage?.nodeUsage();
  if (measured?.name === name) {
    for (const s of measured.gpus ?? []) {
      const card = out.cards.find((c) => c.index === s.index);
      if (card) card.utilization = { gpuPercent: s.gpuPercent, memoryUsedMiB: s.memoryUsedMiB };
    }
  }
  send(res, 200, out);
}
