/**
 * The bearer token the CLI sends: `--token`, else `SKIFF_TOKEN`, else the kubeconfig's user for this
 * server, else, inside a Pod talking to the server its kubelet named (SKIFF_SERVER), the Pod's
 * service-account token, as kubectl in a Pod uses it.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { quickYamlDocuments, yamlLibrary } from '../util/yaml.js';

interface Kubeconfig {
  'current-context'?: string;
  clusters?: { name?: string; cluster?: { server?: string } }[];
  users?: { name?: string; user?: { token?: string } }[];
  contexts?: { name?: string; context?: { cluster?: string; user?: string } }[];
}

const sameServer = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * The token of a kubeconfig's user for `server`: the current context's when it points there, else
 * the first context's that does. A token is only ever sent to the server its kubeconfig names.
 */
export function kubeconfigToken(text: string, server: string): string | undefined {
  let doc: Kubeconfig;
  try {
    doc = ((quickYamlDocuments(text)?.[0] ?? yamlLibrary().parse(text)) ?? {}) as Kubeconfig;
  } catch {
    return undefined;
  }
  const contexts = [...(doc.contexts ?? [])].sort((x, y) => Number(y.name === doc['current-context']) - Number(x.name === doc['current-context']));
  for (const c of contexts) {
    const cluster = doc.clusters?.find((k) => k.name === c.context?.cluster)?.cluster;
    if (!cluster?.server || !sameServer(cluster.server, server)) continue;
    const token = doc.users?.find((u) => u.name === c.context?.user)?.user?.token;
    if (token) return token;
  }
  return undefined;
}

/** the kubeconfigs the CLI reads: $KUBECONFIG's, else the one `skiff up` writes in its data dir */
function kubeconfigFiles(env: Record<string, string | undefined>, cwd: string): string[] {
  if (env.KUBECONFIG) return env.KUBECONFIG.split(delimiter).filter((f) => f !== '').map((f) => resolve(cwd, f));
  const dataDir = env.SKIFF_DATA_DIR ?? join(env.HOME ?? homedir(), '.skiff');
  return [join(resolve(cwd, dataDir), 'kubeconfig')];
}

/** where a Pod's service-account token is mounted (src/substrate/local/serviceaccount.ts) */
export const podTokenFile = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export function resolveToken(flag: string | undefined, env: Record<string, string | undefined>, cwd: string, server: string, tokenFile = podTokenFile): string | undefined {
  if (flag) return flag;
  if (env.SKIFF_TOKEN) return env.SKIFF_TOKEN;
  for (const f of kubeconfigFiles(env, cwd)) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const t = kubeconfigToken(text, server);
    if (t) return t;
  }
  // only to the server the Pod was given: the token is the Pod's identity, not for anyone else
  if (env.SKIFF_SERVER && sameServer(env.SKIFF_SERVER, server)) {
    try {
      return readFileSync(tokenFile, 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
