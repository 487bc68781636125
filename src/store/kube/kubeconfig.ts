// Where a cluster's API server is and how to sign in to it: a kubeconfig file's current context (or
// the in-cluster contract of a Pod), resolved into what an HTTPS request needs. Only what Skiff's
// store uses is read: server, CA, bearer token (or token file), client certificate and key.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { isPlainObject } from '../../util/objects.js';

export interface ClusterConnection {
  /** `https://host:port`, without a trailing slash */
  server: string;
  /** PEM of the CA that signs the server's certificate; absent: the system's CAs */
  ca?: string;
  insecureSkipTlsVerify?: boolean;
  token?: string;
  /** PEM client certificate and key, for a user that signs in with one */
  cert?: string;
  key?: string;
  /** where this came from, for messages: `kubeconfig /path (context local)` */
  source: string;
}

/** A kubeconfig that cannot be used, with the file and the field that says why. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

type Named = { name?: unknown; [k: string]: unknown };

function entry(list: unknown, name: string, field: string, where: string): Record<string, unknown> {
  const found = Array.isArray(list) ? (list as Named[]).find((e) => isPlainObject(e) && e.name === name) : undefined;
  const inner = found?.[field];
  if (!isPlainObject(inner)) throw new KubeconfigError(`${where}: no ${field} named "${name}"`);
  return inner;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Reads a kubeconfig file; `context` overrides its current-context. */
export function loadKubeconfig(file: string, context?: string): ClusterConnection {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${file} is not YAML: ${(e as Error).message}`);
  }
  if (!isPlainObject(doc)) throw new KubeconfigError(`kubeconfig ${file} is empty or not a mapping`);
  const ctxName = context ?? str(doc['current-context']);
  if (!ctxName) throw new KubeconfigError(`kubeconfig ${file} has no current-context`);
  const where = `kubeconfig ${file}`;
  const ctx = entry(doc.contexts, ctxName, 'context', where);
  const clusterName = str(ctx.cluster);
  if (!clusterName) throw new KubeconfigError(`${where}: context "${ctxName}" names no cluster`);
  const cluster = entry(doc.clusters, clusterName, 'cluster', where);
  const userName = str(ctx.user);
  const user = userName ? entry(doc.users, userName, 'user', where) : {};
  const server = str(cluster.server);
  if (!server) throw new KubeconfigError(`${where}: cluster "${clusterName}" has no server`);
  // relative paths in a kubeconfig are relative to the file, as kubectl reads them
  const base = dirname(resolve(file));
  const readPath = (p: unknown, what: string): string | undefined => {
    const path = str(p);
    if (!path) return undefined;
    const full = isAbsolute(path) ? path : resolve(base, path);
    try {
      return readFileSync(full, 'utf8');
    } catch (e) {
      throw new KubeconfigError(`${where}: cannot read ${what} ${full}: ${(e as Error).message}`);
    }
  };
  const data = (v: unknown): string | undefined => (str(v) ? Buffer.from(str(v) as string, 'base64').toString('utf8') : undefined);
  if (isPlainObject(user.exec) || isPlainObject(user['auth-provider'])) {
    throw new KubeconfigError(`${where}: user "${userName ?? ''}" signs in with an exec or auth-provider plugin, which Skiff does not run; use a token or a client certificate`);
  }
  const conn: ClusterConnection = { server: server.replace(/\/+$/, ''), source: `kubeconfig ${file} (context ${ctxName})` };
  const ca = data(cluster['certificate-authority-data']) ?? readPath(cluster['certificate-authority'], 'certificate-authority');
  if (ca) conn.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) conn.insecureSkipTlsVerify = true;
  const token = str(user.token) ?? readPath(user.tokenFile, 'tokenFile')?.trim();
  if (token) conn.token = token;
  const cert = data(user['client-certificate-data']) ?? readPath(user['client-certificate'], 'client-certificate');
  const key = data(user['client-key-data']) ?? readPath(user['client-key'], 'client-key');
  if (cert) conn.cert = cert;
  if (key) conn.key = key;
  return conn;
}

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The namespace of the Pod this process runs in, as client-go's in-cluster config reads it; undefined outside a Pod. */
export function podNamespace(env: NodeJS.ProcessEnv = process.env, dir = serviceAccountDir): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  if (!env.KUBERNETES_SERVICE_HOST) return undefined;
  try {
    return readFileSync(`${dir}/namespace`, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The connection a Pod has to its own cluster, or undefined outside one. */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env, dir = serviceAccountDir): ClusterConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) return undefined;
  try {
    return {
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      ca: readFileSync(`${dir}/ca.crt`, 'utf8'),
      token: readFileSync(`${dir}/token`, 'utf8').trim(),
      source: 'the in-cluster service account',
    };
  } catch {
    return undefined;
  }
}
