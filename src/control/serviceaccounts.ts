// Every Namespace has a `default` ServiceAccount, as kube-controller-manager's serviceaccounts
// controller keeps it: made when the Namespace appears, made again if deleted. Pods that name no
// service account run as it.
import { isConflict } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { ObjectKey } from '../api/meta.js';
import type { Client } from '../store/client.js';
import type { Controller, Manager, Result } from './controller.js';

export function addServiceAccountController(mgr: Manager, client: Client): Controller {
  async function reconcile(key: ObjectKey): Promise<Result> {
    const ns = await client.find(Kinds.Namespace, key);
    if (!ns || ns.metadata.deletionTimestamp) return {};
    if (await client.find(Kinds.ServiceAccount, { namespace: key.name, name: 'default' })) return {};
    try {
      await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: key.name } });
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
    return {};
  }
  return mgr.add({
    name: 'serviceaccount',
    for: Kinds.Namespace,
    watches: [{ kind: Kinds.ServiceAccount, map: (sa) => (sa.metadata.name === 'default' ? [{ name: sa.metadata.namespace ?? '' }] : []) }],
    reconcile,
  });
}
