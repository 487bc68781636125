// pods/eviction: `kubectl drain` and the eviction API. A policy/v1 Eviction deletes the Pod with the
// Eviction's delete options, after marking it with the DisruptionTarget condition, as kube-apiserver
// does. The 429 a cluster answers when an eviction would break a PodDisruptionBudget never comes:
// Skiff serves no PodDisruptionBudgets, so every eviction is allowed.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import { now } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import type { Client } from '../../store/client.js';
import type { DeleteOptions } from '../../store/store.js';

interface EvictionBody {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  deleteOptions?: {
    gracePeriodSeconds?: number;
    propagationPolicy?: string;
    orphanDependents?: boolean;
    preconditions?: { uid?: string; resourceVersion?: string };
    dryRun?: string[];
  };
}

const DISRUPTION = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' };

/** The Status a successful eviction answers (HTTP 201, as for any create). */
export function evictedStatus(): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}

/** Evicts the Pod `name`; `queryDryRun` is the request's own dryRun parameter. */
export async function evictPod(client: Client, def: KindDef, namespace: string | undefined, name: string, body: unknown, queryDryRun: string[]): Promise<Record<string, unknown>> {
  const ev = body as EvictionBody;
  if (ev === null || typeof ev !== 'object' || Array.isArray(ev) || (ev.kind !== undefined && ev.kind !== 'Eviction')
    || (ev.apiVersion !== undefined && !['policy/v1', 'policy/v1beta1'].includes(ev.apiVersion))) {
    throw new ApiError(StatusReason.BadRequest, `not a Eviction object: ${ev && typeof ev === 'object' && !Array.isArray(ev) ? `${ev.apiVersion ?? ''}/${ev.kind ?? ''}` : typeof ev}`);
  }
  if ((ev.metadata?.name ?? '') !== name) throw new ApiError(StatusReason.BadRequest, 'name in URL does not match name in Eviction object');
  const d = ev.deleteOptions ?? {};
  const bodyDryRun = d.dryRun ?? [];
  if (bodyDryRun.length && queryDryRun.length && bodyDryRun.join(',') !== queryDryRun.join(',')) {
    throw new ApiError(StatusReason.InternalError, `Non-matching dry-run options in request and content: [${queryDryRun.join(' ')}] and [${bodyDryRun.join(' ')}]`);
  }
  const dryRun = (bodyDryRun.length ? bodyDryRun : queryDryRun).includes('All');
  const opts: DeleteOptions = {};
  if (d.gracePeriodSeconds !== undefined) opts.gracePeriodSeconds = Number(d.gracePeriodSeconds);
  if (d.propagationPolicy !== undefined) {
    if (!['Background', 'Foreground', 'Orphan'].includes(d.propagationPolicy)) throw new ApiError(StatusReason.BadRequest, `propagationPolicy ${JSON.stringify(d.propagationPolicy)} is not one of Background, Foreground, Orphan`);
    opts.propagationPolicy = d.propagationPolicy as DeleteOptions['propagationPolicy'];
  }
  if (d.orphanDependents === true) opts.propagationPolicy = 'Orphan';
  const key = { namespace, name };
  const pre = d.preconditions ?? {};
  let marked: StoredObject | undefined;
  // the kubelet writes the Pod's status too: a conflict on the condition is retried, as upstream does
  for (let attempt = 0; !marked; attempt++) {
    const pod = await client.get(def, key);
    if (pre.uid && pre.uid !== pod.metadata.uid) {
      throw new ApiError(StatusReason.Conflict, `Operation cannot be fulfilled on Pod "${name}": the UID in the precondition (${pre.uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== pod.metadata.resourceVersion) {
      throw new ApiError(StatusReason.Conflict, `Operation cannot be fulfilled on Pod "${name}": the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`);
    }
    if (dryRun) return evictedStatus();
    try {
      marked = await markDisrupted(client, pod);
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.Conflict) || attempt >= 4 || pre.resourceVersion) throw e;
    }
  }
  if (pre.uid) opts.uid = pre.uid;
  // the condition just written moved the resourceVersion the caller's precondition was checked against
  if (pre.resourceVersion) opts.resourceVersion = marked.metadata.resourceVersion;
  await client.delete(def, key, opts);
  return evictedStatus();
}

async function markDisrupted(client: Client, pod: StoredObject): Promise<StoredObject> {
  const status = (pod.status ?? {}) as { conditions?: Record<string, unknown>[] };
  const conditions = [...(status.conditions ?? [])];
  const i = conditions.findIndex((c) => c.type === DISRUPTION.type);
  const prev = i >= 0 ? conditions[i] : undefined;
  const changed = !prev || prev.status !== DISRUPTION.status;
  const next = { ...DISRUPTION, lastProbeTime: null, lastTransitionTime: changed ? now() : prev?.lastTransitionTime };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
  return client.updateStatus({ ...pod, status: { ...status, conditions } });
}
