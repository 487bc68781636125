// Admission: checks that run on every create after defaulting and validation, before the object is
// stored, whoever writes it (a user through the API server or a controller making Pods). They are a
// list, as kube-apiserver's admission plugins are, so a check is added here and not in the handlers.
import type { Container } from '../api/core-types.js';
import { ApiError, StatusReason } from '../api/errors.js';
import { GpuQuotaName, GpuResource, smallestCardMiB } from '../api/gpu-sharing.js';
import { assignmentAnnotations } from '../api/core.js';
import { queuedAsPod } from '../api/kueue-types.js';
import type { KObject, StoredObject } from '../api/meta.js';
import { parseQuantity } from '../api/quantity.js';
import type { KindDef } from '../api/registry.js';
import {
  ResourceQuotaKind, add, exceeds, hardOf, mask, missingRequests, storageKeyOfResource, usageOf,
} from '../api/resourcequota.js';
import type { ResourceList, ResourceQuotaObject, UsageContext } from '../api/resourcequota.js';
import type { Store } from './store.js';

export interface AdmissionRequest {
  def: KindDef;
  /** defaulted and validated; its name may still be only a generateName */
  obj: KObject;
  store: Store;
  /** the kinds served, by their store key (`group/plural`) */
  kindOf(storageKey: string): KindDef | undefined;
}

export interface AdmissionPlugin {
  name: string;
  /** throws an ApiError to refuse */
  admit(req: AdmissionRequest): Promise<void>;
}

function forbidden(def: KindDef, obj: KObject, message: string): ApiError {
  const resource = def.group ? `${def.plural}.${def.group}` : def.plural;
  const name = obj.metadata.name ?? obj.metadata.generateName ?? '';
  return new ApiError(StatusReason.Forbidden, `${resource} "${name}" is forbidden: ${message}`, { name, group: def.group, kind: def.plural });
}

/** What the namespace's existing objects use of the names in `names`. */
async function namespaceUsage(req: AdmissionRequest, namespace: string, names: Iterable<string>, ctx: UsageContext): Promise<ResourceList> {
  const byKind = new Map<string, string[]>();
  for (const n of names) {
    const key = storageKeyOfResource(n);
    if (key) byKind.set(key, [...(byKind.get(key) ?? []), n]);
  }
  let used: ResourceList = new Map();
  const now = Date.now();
  for (const [key, kindNames] of byKind) {
    const def = req.kindOf(key);
    if (!def) continue;
    const items = await listAll(req.store, def, namespace);
    for (const item of items) used = add(used, mask(usageOf(def, item, now, ctx), kindNames));
  }
  return used;
}

async function listAll(store: Store, def: KindDef, namespace?: string): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  let cont: string | undefined;
  do {
    const page = await store.list(def, { namespace, limit: 1000, continue: cont });
    out.push(...page.items);
    cont = page.continue;
  } while (cont);
  return out;
}

/**
 * kube-apiserver's ResourceQuota admission: an object that would take its namespace over a quota's
 * hard limit is refused 403, naming the quota and the resource; a Pod that leaves cpu or memory
 * unstated while a quota limits it is refused too. Usage is counted from the objects themselves at
 * the moment of the create (the Client runs creates in one namespace one at a time while a quota
 * applies), so two Pods created at once cannot both take the last GPU.
 */
export const resourceQuotaAdmission: AdmissionPlugin = {
  name: 'ResourceQuota',
  async admit(req) {
    const ns = req.obj.metadata.namespace;
    if (!req.def.namespaced || !ns || req.def === ResourceQuotaKind) return;
    const quotas = (await listAll(req.store, ResourceQuotaKind, ns)) as ResourceQuotaObject[];
    if (quotas.length === 0) return;
    const limitsShares = quotas.some((q) => hardOf(q).has(GpuQuotaName.memory));
    const ctx: UsageContext = limitsShares ? { gpuCardMemoryMiB: await smallestCard(req) } : {};
    const requested = usageOf(req.def, req.obj, Date.now(), ctx);
    quotas.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    if (!req.def.group && req.def.kind === 'Pod') {
      for (const q of quotas) {
        const missing = missingRequests(req.obj, hardOf(q));
        if (missing) throw forbidden(req.def, req.obj, `failed quota: ${q.metadata.name ?? ''}: ${missing}`);
      }
    }
    const names = new Set<string>();
    for (const q of quotas) for (const k of hardOf(q).keys()) if (requested.has(k)) names.add(k);
    if (names.size === 0) return;
    const used = await namespaceUsage(req, ns, names, ctx);
    for (const q of quotas) {
      const refusal = exceeds(q, used, requested);
      if (refusal) throw forbidden(req.def, req.obj, refusal);
    }
  },
};

/**
 * The memory of the smallest card any node registered: a share asked as a percentage counts, before it
 * has a card, as that much of the smallest, so admission never refuses what some card could hold (the
 * scheduler checks the exact figure when it picks the card).
 */
async function smallestCard(req: AdmissionRequest): Promise<number> {
  const nodes = req.kindOf('/nodes');
  if (!nodes) return 0;
  return smallestCardMiB(await listAll(req.store, nodes));
}

function limitValue(c: Container, name: string): number | undefined {
  const v = c.resources?.limits?.[name];
  return v === undefined ? undefined : parseQuantity(v);
}

/**
 * HAMi's mutating webhook: a container that names a share's memory or compute in its limits but no
 * card count gets `nvidia.com/gpu: 1`; one that takes a whole card's memory and states no compute gets
 * `nvidia.com/gpucores: 100`, the card to itself. A memory percentage outside 0..100 is refused. The
 * Pod is stored with what it will be placed by, so quotas, `kubectl describe` and the node's counts
 * all see the same numbers.
 */
export const gpuSharingAdmission: AdmissionPlugin = {
  name: 'GpuSharing',
  async admit(req) {
    if (req.def.group || req.def.kind !== 'Pod') return;
    // an assignment is the scheduler's to write: one a new Pod brings along would reach cards it was
    // not given, or hide its shares from quota
    const annotations = req.obj.metadata.annotations;
    if (annotations) for (const k of assignmentAnnotations) delete annotations[k];
    const spec = req.obj.spec as { containers?: Container[]; initContainers?: Container[] } | undefined;
    for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
      if (!c || typeof c !== 'object') continue;
      const pct = limitValue(c, GpuResource.memoryPercentage) ?? parseQuantity(c.resources?.requests?.[GpuResource.memoryPercentage]);
      if (pct !== undefined && (pct < 0 || pct > 100 || !Number.isInteger(pct))) {
        throw forbidden(req.def, req.obj, `invalid ${GpuResource.memoryPercentage} value ${String(c.resources?.limits?.[GpuResource.memoryPercentage] ?? c.resources?.requests?.[GpuResource.memoryPercentage])} in container ${c.name}: must be an integer between 0 and 100`);
      }
      const has = (name: string): boolean => c.resources?.limits?.[name] !== undefined || c.resources?.requests?.[name] !== undefined;
      const limits = { ...(c.resources?.limits ?? {}) };
      let changed = false;
      if (!has(GpuResource.count) && [GpuResource.memory, GpuResource.memoryPercentage, GpuResource.cores].some((n) => limits[n] !== undefined)) {
        limits[GpuResource.count] = '1';
        changed = true;
      }
      if ((limits[GpuResource.count] !== undefined || has(GpuResource.count)) && !has(GpuResource.cores)) {
        const exclusive = pct !== undefined ? pct === 100 : !has(GpuResource.memory);
        if (exclusive) {
          limits[GpuResource.cores] = '100';
          changed = true;
        }
      }
      if (changed) c.resources = { ...c.resources, limits };
    }
  },
};

const QueueLabel = 'kueue.x-k8s.io/queue-name';
const DefaultLocalQueue = 'default';
const AdmissionGate = 'kueue.x-k8s.io/admission';

/** the Kubeflow training kinds Kueue integrates, suspended through spec.runPolicy.suspend */
const TrainingKinds = new Set(['PyTorchJob', 'TFJob', 'XGBoostJob', 'PaddleJob', 'JAXJob', 'MPIJob']);

/**
 * Kueue's mutating webhooks for batch Jobs and training jobs: a job that names a LocalQueue is created
 * suspended, so that it runs only once its Workload is admitted. With LocalQueueDefaulting, a job
 * without the label in a namespace that has a LocalQueue named "default" is given that queue. The
 * label alone decides.
 */
export const queueSuspendAdmission: AdmissionPlugin = {
  name: 'KueueJobSuspend',
  async admit(req) {
    const batchJob = req.def.group === 'batch' && req.def.kind === 'Job';
    const training = req.def.group === 'kubeflow.org' && TrainingKinds.has(req.def.kind);
    // a Pod of its own: no owner, or one Kueue has no integration for (a Notebook, a pipeline Run);
    // a Job's or training job's Pods are queued through their owner
    const pod = req.def.group === '' && req.def.kind === 'Pod' && queuedAsPod(req.obj.metadata);
    if (pod) {
      if (req.obj.metadata.labels?.[QueueLabel] === undefined) return;
      const spec = (req.obj as KObject & { spec: { schedulingGates?: { name: string }[] } }).spec;
      if (!spec.schedulingGates?.some((g: { name: string }) => g.name === AdmissionGate)) spec.schedulingGates = [...(spec.schedulingGates ?? []), { name: AdmissionGate }];
      return;
    }
    if (!batchJob && !training) return;
    const meta = req.obj.metadata;
    if (meta.labels?.[QueueLabel] === undefined && meta.namespace) {
      const lqDef = req.kindOf('kueue.x-k8s.io/localqueues');
      if (!lqDef) return;
      try {
        await req.store.get(lqDef, { namespace: meta.namespace, name: DefaultLocalQueue });
      } catch (e) {
        if (e instanceof ApiError && e.reason === StatusReason.NotFound) return;
        throw e;
      }
      meta.labels = { ...meta.labels, [QueueLabel]: DefaultLocalQueue };
    }
    const spec = (req.obj as KObject & { spec: { suspend?: boolean; runPolicy?: { suspend?: boolean } } }).spec;
    if (batchJob) spec.suspend = true;
    else spec.runPolicy = { ...spec.runPolicy, suspend: true };
  },
};

export const defaultAdmission: readonly AdmissionPlugin[] = [queueSuspendAdmission, gpuSharingAdmission, resourceQuotaAdmission];
