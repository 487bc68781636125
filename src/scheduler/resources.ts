// Pod resource requests as Kubernetes computes them: the larger of the sum over containers and the
// largest init container; limits stand in for missing requests.
import type { Pod } from '../api/core-types.js';
import { parseQuantity } from '../api/quantity.js';

export type ResourceList = Record<string, number>;

export const GPU = 'nvidia.com/gpu';

function requestsOf(c: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }): ResourceList {
  const out: ResourceList = {};
  const limits = c.resources?.limits ?? {};
  const requests = c.resources?.requests ?? {};
  for (const [k, v] of Object.entries(limits)) out[k] = parseQuantity(v) ?? 0;
  for (const [k, v] of Object.entries(requests)) out[k] = parseQuantity(v) ?? 0;
  return out;
}

export function podRequests(pod: Pod): ResourceList {
  const sum: ResourceList = {};
  for (const c of pod.spec.containers ?? []) for (const [k, v] of Object.entries(requestsOf(c))) sum[k] = (sum[k] ?? 0) + v;
  for (const c of pod.spec.initContainers ?? []) for (const [k, v] of Object.entries(requestsOf(c))) sum[k] = Math.max(sum[k] ?? 0, v);
  return sum;
}

export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}
