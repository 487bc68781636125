// Opening the store on a cluster: read the kubeconfig, check the cluster (reachable, RBAC, CRDs, in
// that order, before anything is written), then list and watch every kind.
import type { KindDef } from '../../api/registry.js';
import { resourceKey } from '../store.js';
import { KubeHttp } from './http.js';
import { inClusterConnection, KubeconfigError, loadKubeconfig } from './kubeconfig.js';
import type { ClusterConnection } from './kubeconfig.js';
import { compareVersions } from './paths.js';
import { ClusterSetupError, installCrds, prepareCluster, registerValidatingWebhook } from './setup.js';
import type { AccessNeed, ClusterInfo, WebhookSetup } from './setup.js';
import { KubeStore } from './store.js';

export { KubeStore } from './store.js';
export { ClusterSetupError } from './setup.js';
export type { WebhookSetup } from './setup.js';

export interface OpenedCluster extends ClusterInfo {
  store: KubeStore;
  server: string;
  source: string;
  /** how the store reaches the API server: for what is not an object (a Pod's logs, exec) */
  connection: ClusterConnection;
  /**
   * with webhooks: registers them (and the CRDs' conversion) at this replica's endpoint again, when
   * another replica has pointed them elsewhere (outside a cluster a URL names one replica: the
   * replica that becomes leader calls this, so that they point at a live one)
   */
  pointWebhooksHere?: () => Promise<void>;
}

/** the version of each kind the store lists and watches: the one its CRD stores (the local store keeps one per group/plural too) */
export function storageKinds(defs: readonly KindDef[]): KindDef[] {
  const byKey = new Map<string, KindDef>();
  for (const d of defs) {
    if (d.conversion) continue;
    const k = resourceKey(d);
    const cur = byKey.get(k);
    if (!cur || compareVersions(d.version, cur.version) < 0) byKey.set(k, d);
  }
  return [...byKey.values()];
}

/** `kubeconfig`: a file, or "in-cluster" for the Pod's own service account. */
export async function openCluster(kubeconfig: string, defs: readonly KindDef[], log: (m: string) => void, context?: string, extraAccess: readonly AccessNeed[] = [], webhooks?: WebhookSetup): Promise<OpenedCluster> {
  let conn: ClusterConnection;
  if (kubeconfig === 'in-cluster') {
    const c = inClusterConnection();
    if (!c) throw new ClusterSetupError('not in a Kubernetes Pod: KUBERNETES_SERVICE_HOST/PORT or the service-account token is missing');
    conn = c;
  } else {
    try {
      conn = loadKubeconfig(kubeconfig, context);
    } catch (e) {
      if (e instanceof KubeconfigError) throw new ClusterSetupError(e.message);
      throw e;
    }
  }
  const http = new KubeHttp(conn);
  let info: ClusterInfo;
  try {
    info = await prepareCluster(http, defs, log, extraAccess, webhooks);
  } finally {
    http.close();
  }
  const store = new KubeStore({ connection: conn, kinds: storageKinds(defs), log });
  try {
    await store.start();
  } catch (e) {
    await store.close();
    throw new ClusterSetupError(`cannot list Skiff's kinds on ${conn.server}: ${(e as Error).message}`);
  }
  const endpoint = info.webhooks;
  return {
    ...info, store, server: conn.server, source: conn.source, connection: conn,
    ...(endpoint ? {
      pointWebhooksHere: async () => {
        const h = new KubeHttp(conn);
        try {
          await installCrds(h, defs, log, 120_000, endpoint);
          await registerValidatingWebhook(h, defs, endpoint, log);
        } finally {
          h.close();
        }
      },
    } : {}),
  };
}
