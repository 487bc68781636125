// The in-cluster contract a kubelet keeps with every container: the `kubernetes` Service's variables
// (KUBERNETES_SERVICE_HOST/PORT...) and the service-account directory with token, namespace and
// ca.crt, which `config.load_incluster_config()` and client-go's rest.InClusterConfig read. kfp.Client()
// finds KFP's API at its in-cluster Service name (ml-pipeline.kubeflow.svc.cluster.local:8888, in the
// Pod's hosts file) with the Pod's token; only where that name cannot resolve (a process outside a
// sandbox) is it told the address instead (KF_PIPELINES_ENDPOINT).
import { existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { BindMount } from './volumes.js';

/** where the API server's HTTPS endpoint is, as Pods reach it, and the tokens Pods get */
export interface InClusterContract {
  host: string;
  port: number;
  /** PEM of the CA that signed the endpoint's certificate */
  caPem: string;
  /** a token for the Pod's service account (the object, when it exists); a projected volume asks
   *  for its own lifetime and audience */
  token(pod: Pod & StoredObject, serviceAccount?: StoredObject, opts?: { expirationSeconds?: number; audiences?: string[] }): string;
}

export const serviceAccountMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';

/** the variables kubelet derives from the `default/kubernetes` Service, for every container */
export function inClusterEnv(c: Pick<InClusterContract, 'host' | 'port'> | undefined, apiServer: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  if (c) {
    const port = String(c.port);
    const tcp = `tcp://${c.host}:${port}`;
    Object.assign(env, {
      KUBERNETES_SERVICE_HOST: c.host,
      KUBERNETES_SERVICE_PORT: port,
      KUBERNETES_SERVICE_PORT_HTTPS: port,
      KUBERNETES_PORT: tcp,
      [`KUBERNETES_PORT_${port}_TCP`]: tcp,
      [`KUBERNETES_PORT_${port}_TCP_PROTO`]: 'tcp',
      [`KUBERNETES_PORT_${port}_TCP_PORT`]: port,
      [`KUBERNETES_PORT_${port}_TCP_ADDR`]: c.host,
      // kfp.Client(credentials=ServiceAccountTokenVolumeCredentials()) reads the token here: Kubeflow
      // projects one for audience pipelines.kubeflow.org; Skiff's KFP API takes the Pod's own
      KF_PIPELINES_SA_TOKEN_PATH: `${serviceAccountMountPath}/token`,
    });
  }
  // the KFP API is served by the same server, over plain HTTP at the Pods' address: given when the
  // in-cluster name does not resolve (kfp.Client() then sends no token, as with any explicit host)
  if (apiServer) env.KF_PIPELINES_ENDPOINT = apiServer;
  return env;
}

/** whether the Pod gets a token: its own automountServiceAccountToken, else its service account's */
export function automounts(pod: Pod, serviceAccount?: StoredObject): boolean {
  const own = pod.spec.automountServiceAccountToken;
  if (typeof own === 'boolean') return own;
  return (serviceAccount as { automountServiceAccountToken?: boolean } | undefined)?.automountServiceAccountToken !== false;
}

/**
 * The mount point as the sandbox sees it: /var/run is a symlink to /run on most systems, and bwrap
 * mounts over the link's target, so the existing part of the path is resolved first.
 */
export function resolvedMountPath(path: string): string {
  let dir = path;
  while (dir !== '/' && !existsSync(dir)) dir = dirname(dir);
  try {
    return join(realpathSync(dir), relative(dir, path));
  } catch {
    return path;
  }
}

/** where the service-account directory is bound in the sandbox (resolved once) */
let mountTarget: string | undefined;

/** writes token, namespace and ca.crt under the Pod's run directory (once: restarts keep the token)
 *  and returns the read-only bind that shows them at the service-account path */
export function serviceAccountBind(pod: Pod & StoredObject, podDir: string, c: InClusterContract, serviceAccount?: StoredObject): BindMount {
  const dir = join(podDir, 'serviceaccount');
  if (!existsSync(join(dir, 'token'))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ca.crt'), c.caPem, { mode: 0o644 });
    writeFileSync(join(dir, 'namespace'), pod.metadata.namespace ?? 'default', { mode: 0o644 });
    // the token last and by rename: a directory with a token is a finished one
    writeFileSync(join(dir, 'token.tmp'), c.token(pod, serviceAccount), { mode: 0o644 });
    renameSync(join(dir, 'token.tmp'), join(dir, 'token'));
  }
  mountTarget ??= resolvedMountPath(serviceAccountMountPath);
  return { source: dir, target: mountTarget, readOnly: true };
}
