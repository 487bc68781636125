// A notebook server's token. Kubeflow's Jupyter images start the server with an empty token and
// leave it to Istio to keep everyone else off the Pod; here Pods share the host's network, so with
// tenancy on any code that reaches the Pod's address and port would drive the server. So with
// tenancy on the controller keeps a random token in a Secret the Notebook owns, the server container
// gets it as JUPYTER_TOKEN by reference (Kubeflow's view role reads Pods but not Secrets, so a viewer
// never learns it), and the proxy and culling send it as `Authorization: token <t>`, which Jupyter
// Server takes as it takes `?token=`. Only those who may use the proxy (editors) reach the server.
import { randomBytes } from 'node:crypto';
import type { Container, EnvVar, Pod } from '../../api/core-types.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { ownerRefTo } from '../../api/meta.js';
import { NotebookNames } from '../../api/notebooks.js';
import type { Client } from '../../store/client.js';

/** the variable Jupyter Server reads its token from, and the start command of the images passes on */
export const tokenEnv = 'JUPYTER_TOKEN';
/** the Secret's key holding the token */
export const tokenKey = 'token';

/** the Secret the controller keeps for a Notebook's server */
export function tokenSecretName(notebook: string): string {
  return `${notebook}-notebook-token`;
}

/** 32 random bytes, base64url: fit for a header and a URL as they are */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** the Secret with a new token, owned by the Notebook so that it goes with it */
export function renderTokenSecret(nb: StoredObject, token = newToken()): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: tokenSecretName(nb.metadata.name), namespace: nb.metadata.namespace, ownerReferences: [ownerRefTo(nb)] },
    type: 'Opaque',
    data: { [tokenKey]: Buffer.from(token).toString('base64') },
  };
}

/** the server container's JUPYTER_TOKEN, from the Notebook's Secret */
export function tokenEnvVar(notebook: string): EnvVar {
  return { name: tokenEnv, valueFrom: { secretKeyRef: { name: tokenSecretName(notebook), key: tokenKey } } };
}

/**
 * The container's own JUPYTER_TOKEN entry, when it sets one that gives a token: a reference, or a
 * value that is not empty. An empty value asks for a server without a token, which is no token.
 * A later entry of a name wins over an earlier one, as the kubelet builds the environment.
 */
export function ownTokenEntry(c: Container): EnvVar | undefined {
  const e = c.env?.filter((v) => v.name === tokenEnv).at(-1);
  return e && (e.valueFrom !== undefined || (e.value ?? '') !== '') ? e : undefined;
}

/** whether the container's JUPYTER_TOKEN comes from the Notebook's own Secret */
export function usesTokenSecret(c: Container, notebook: string): boolean {
  return ownTokenEntry(c)?.valueFrom?.secretKeyRef?.name === tokenSecretName(notebook);
}

function unavailable(pod: Pod, why: string): ApiError {
  const nb = pod.metadata.labels?.[NotebookNames.nameLabel] ?? pod.metadata.name ?? '';
  return new ApiError(StatusReason.ServiceUnavailable, `notebook ${pod.metadata.namespace ?? 'default'}/${nb}: ${why}`);
}

/**
 * The token the Pod's server got, read as the kubelet gave it: the server container's last
 * JUPYTER_TOKEN entry (a value, or a key of a Secret or ConfigMap of the namespace), else the last of
 * its envFrom sources that has the variable. undefined: the Pod has none, and its server takes
 * requests without one (single-user mode, as Kubeflow's images run). A reference to a Secret or key
 * that is gone throws ServiceUnavailable: the server cannot be asked for anything without it.
 */
export async function serverToken(client: Client, pod: Pod): Promise<string | undefined> {
  const c = pod.spec.containers[0];
  if (!c) return undefined;
  const namespace = pod.metadata.namespace ?? 'default';
  // a key of a Secret (base64 in data) or a ConfigMap (as written), and whether the object was there
  const read = async (kind: 'Secret' | 'ConfigMap', name: string, key: string): Promise<{ found: boolean; value?: string }> => {
    const obj = await client.find(kind === 'Secret' ? Kinds.Secret : Kinds.ConfigMap, { namespace, name });
    const data = obj?.data as Record<string, string> | undefined;
    const raw = data?.[key];
    if (raw === undefined) return { found: obj !== undefined };
    return { found: true, value: kind === 'Secret' ? Buffer.from(raw, 'base64').toString('utf8') : raw };
  };
  const e = c.env?.filter((v) => v.name === tokenEnv).at(-1);
  if (e) {
    const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
    if (!ref) return e.value || undefined;
    const kind = e.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
    const got = await read(kind, ref.name, ref.key);
    if (got.value !== undefined) return got.value || undefined;
    if (ref.optional) return undefined;
    throw unavailable(pod, got.found
      ? `${kind} "${ref.name}" has no key "${ref.key}" for the server's token`
      : `the server's token is in ${kind} "${ref.name}", which is missing; the server cannot be reached without it`);
  }
  let token: string | undefined;
  for (const from of c.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    const source = from.secretRef ? { kind: 'Secret' as const, name: from.secretRef.name } : from.configMapRef ? { kind: 'ConfigMap' as const, name: from.configMapRef.name } : undefined;
    if (!source || !tokenEnv.startsWith(prefix)) continue;
    const got = await read(source.kind, source.name, tokenEnv.slice(prefix.length));
    if (got.value !== undefined) token = got.value || undefined;
  }
  return token;
}
