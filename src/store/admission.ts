// Admission: checks that run on every create after defaulting and validation, before the object is
// stored, whoever writes it (a user through the API server or a controller making Pods). They are a
// list, as kube-apiserver's admission plugins are, so a check is added here and not in the handlers.
import { ApiError, StatusReason } from '../api/errors.js';
import type { KObject, StoredObject } from '../api/meta.js';
import type { KindDef } from '../api/registry.js';
import {
  ResourceQuotaKind, add, exceeds, hardOf, mask, missingRequests, storageKeyOfResource, usageOf,
} from '../api/resourcequota.js';
import type { ResourceList, ResourceQuotaObject } from '../api/resourcequota.js';
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
async function namespaceUsage(req: AdmissionRequest, namespace: string, names: Iterable<string>): Promise<ResourceList> {
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
    for (const item of items) used = add(used, mask(usageOf(def, item, now), kindNames));
  }
  return used;
}

async function listAll(store: Store, def: KindDef, namespace: string): Promise<StoredObject[]> {
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
    const requested = usageOf(req.def, req.obj);
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
    const used = await namespaceUsage(req, ns, names);
    for (const q of quotas) {
      const refusal = exceeds(q, used, requested);
      if (refusal) throw forbidden(req.def, req.obj, refusal);
    }
  },
};

export const defaultAdmission: readonly AdmissionPlugin[] = [resourceQuotaAdmission];
