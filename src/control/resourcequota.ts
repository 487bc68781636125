// The ResourceQuota controller, as kube-controller-manager's keeps it: status.hard mirrors spec.hard
// and status.used is what the namespace's objects use of each of those names, recounted whenever a
// Pod or PersistentVolumeClaim in the namespace changes. Admission does not read status.used (it
// counts the objects themselves, src/store/admission.ts); status is what `kubectl describe quota` shows.
import { GpuQuotaName, smallestCardMiB } from '../api/gpu-sharing.js';
import { Kinds } from '../api/index.js';
import type { KObject, ObjectKey } from '../api/meta.js';
import { deepEqual } from '../api/meta.js';
import type { KindDef, KindRegistry } from '../api/registry.js';
import { add, formatList, hardOf, mask, storageKeyOfResource, usageOf } from '../api/resourcequota.js';
import type { ResourceList, ResourceQuotaObject, UsageContext } from '../api/resourcequota.js';
import type { Client } from '../store/client.js';
import type { Controller, Manager, Result } from './controller.js';

/** how often a quota counting other kinds (count/jobs.batch…) is recounted: only Pods and claims are watched */
const recountMs = 10_000;

export function addResourceQuotaController(mgr: Manager, client: Client, registry: KindRegistry): Controller {
  const cache = mgr.cache;
  const quotasIn = (obj: KObject): ObjectKey[] =>
    cache.list(Kinds.ResourceQuota, { namespace: obj.metadata.namespace }).map((q) => ({ namespace: q.metadata.namespace, name: q.metadata.name }));

  async function objectsOf(def: KindDef, namespace: string): Promise<KObject[]> {
    if (def === Kinds.Pod || def === Kinds.PersistentVolumeClaim) return cache.list(def, { namespace });
    return client.listAll(def, { namespace });
  }

  /** as admission counts a share asked as a percentage before it has a card: on the smallest card */
  function smallestCard(): number {
    return smallestCardMiB(cache.list(Kinds.Node));
  }

  async function reconcile(key: ObjectKey): Promise<Result> {
    const quota = await client.find<ResourceQuotaObject>(Kinds.ResourceQuota, key);
    if (!quota || quota.metadata.deletionTimestamp) return {};
    const hard = hardOf(quota);
    const byKind = new Map<string, string[]>();
    for (const name of hard.keys()) {
      const k = storageKeyOfResource(name);
      if (k) byKind.set(k, [...(byKind.get(k) ?? []), name]);
    }
    // every limited name shows a use, 0 when nothing uses it
    let used: ResourceList = new Map([...hard.keys()].map((k) => [k, 0]));
    let others = false;
    const now = Date.now();
    const ctx: UsageContext = hard.has(GpuQuotaName.memory) ? { gpuCardMemoryMiB: smallestCard() } : {};
    for (const [storageKey, names] of byKind) {
      const def = registry.forStorageKey(storageKey);
      if (!def) continue;
      if (def !== Kinds.Pod && def !== Kinds.PersistentVolumeClaim) others = true;
      for (const obj of await objectsOf(def, key.namespace ?? '')) used = add(used, mask(usageOf(def, obj, now, ctx), names));
    }
    const spec = quota.spec?.hard ?? {};
    const status = { hard: formatList(hard, spec), used: formatList(used, spec) };
    if (!deepEqual(quota.status ?? {}, status)) await client.updateStatus({ ...quota, status });
    return others ? { requeueAfter: recountMs } : {};
  }

  return mgr.add({
    name: 'resourcequota',
    for: Kinds.ResourceQuota,
    watches: [
      { kind: Kinds.Pod, map: quotasIn },
      { kind: Kinds.PersistentVolumeClaim, map: quotasIn },
    ],
    reconcile,
  });
}
