// Every Namespace has a `default` ServiceAccount, as kube-controller-manager's serviceaccounts
// controller keeps it: made when the Namespace appears, made again if deleted. Pods that name no
// service account run as it. Every Namespace also has the `kube-root-ca.crt` ConfigMap with the CA
// that signed the API server's certificate, as the root-ca-cert-publisher keeps it (what a projected
// service-account volume and in-cluster tools read).
import { isConflict } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { ObjectKey } from '../api/meta.js';
import type { Client } from '../store/client.js';
import type { Controller, Manager, Result } from './controller.js';

export const rootCAConfigMap = 'kube-root-ca.crt';

/** `rootCA` gives the CA's PEM once the API server has one (none: no ConfigMap is kept) */
export function addServiceAccountController(mgr: Manager, client: Client, rootCA: () => string | undefined = () => undefined): Controller {
  async function reconcile(key: ObjectKey): Promise<Result> {
    const ns = await client.find(Kinds.Namespace, key);
    if (!ns || ns.metadata.deletionTimestamp) return {};
    try {
      if (!(await client.find(Kinds.ServiceAccount, { namespace: key.name, name: 'default' }))) {
        await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: key.name } });
      }
      const pem = rootCA();
      if (pem) {
        const cm = await client.find(Kinds.ConfigMap, { namespace: key.name, name: rootCAConfigMap });
        const data = { 'ca.crt': pem };
        const annotations = { 'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.' };
        if (!cm) await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: rootCAConfigMap, namespace: key.name, annotations }, data });
        else if ((cm.data as Record<string, string> | undefined)?.['ca.crt'] !== pem) await client.update({ ...cm, data });
      }
    } catch (e) {
      if (!isConflict(e)) throw e;
      return { requeueAfter: 100 };
    }
    return {};
  }
  return mgr.add({
    name: 'serviceaccount',
    for: Kinds.Namespace,
    watches: [
      { kind: Kinds.ServiceAccount, map: (sa) => (sa.metadata.name === 'default' ? [{ name: sa.metadata.namespace ?? '' }] : []) },
      { kind: Kinds.ConfigMap, map: (cm) => (cm.metadata.name === rootCAConfigMap ? [{ name: cm.metadata.namespace ?? '' }] : []) },
    ],
    reconcile,
  });
}
