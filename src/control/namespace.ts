// Namespace lifecycle: a deleted Namespace turns Terminating, everything in it is deleted, and when
// nothing is left its `kubernetes` finalizer is cleared so it goes too.
import { Kinds } from '../api/index.js';
import type { ObjectKey } from '../api/meta.js';
import type { KindRegistry } from '../api/registry.js';
import type { Client } from '../store/client.js';
import type { Controller, Manager, Result } from './controller.js';
import { isNotFound } from '../api/errors.js';

export function addNamespaceController(mgr: Manager, client: Client, registry: KindRegistry): Controller {
  async function reconcile(key: ObjectKey): Promise<Result> {
    const ns = await client.find(Kinds.Namespace, key);
    if (!ns || !ns.metadata.deletionTimestamp) return {};
    if (ns.status?.phase !== 'Terminating') {
      ns.status = { ...ns.status, phase: 'Terminating' };
      await client.updateStatus(ns);
      return { requeueAfter: 1 };
    }
    let remaining = 0;
    for (const def of registry.all().filter((d) => d.namespaced)) {
      for (const obj of await client.listAll(def, { namespace: key.name })) {
        remaining++;
        if (obj.metadata.deletionTimestamp) continue;
        try {
          await client.delete(def, { namespace: key.name, name: obj.metadata.name });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }
    if (remaining > 0) return { requeueAfter: 200 };
    await client.update({ ...ns, spec: { ...ns.spec, finalizers: [] } });
    return {};
  }
  return mgr.add({ name: 'namespace', for: Kinds.Namespace, reconcile });
}
