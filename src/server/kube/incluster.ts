// What lets code reach Skiff as it reaches a cluster: the HTTPS endpoint Pods use (an in-cluster
// client insists on https://KUBERNETES_SERVICE_HOST:PORT verified against ca.crt), the tokens Pods
// get, and the kubeconfig `skiff up` writes for users (`skiff kubeconfig`).
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { loadPki, type Pki } from './pki.js';
import { ServiceAccountTokens } from './tokens.js';

/** the loopback address Pods reach the server at (see native/skiff-net.c and src/server/main.ts) */
export const podFacingHost = '127.0.0.2';
/** kube-apiserver's secure port: tried first, so a Pod's KUBERNETES_SERVICE_PORT looks familiar */
const securePort = 6443;

export interface InCluster {
  host: string;
  port: number;
  pki: Pki;
  tokens: ServiceAccountTokens;
  /** `https://host:port` */
  url: string;
  /** the token the kubeconfig's user carries */
  adminToken: string;
  /** what the local substrate needs (src/substrate/local/serviceaccount.ts) */
  contract: { host: string; port: number; caPem: string; token(pod: Pod & StoredObject, serviceAccount?: StoredObject, opts?: { expirationSeconds?: number; audiences?: string[] }): string };
  close(): Promise<void>;
}

function listen(server: HttpsServer, host: string, ports: number[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    const next = (i: number): void => {
      const p = ports[i];
      if (p === undefined) return resolve(undefined);
      const onError = (): void => next(i + 1);
      server.once('error', onError);
      server.listen(p, host, () => {
        server.off('error', onError);
        resolve((server.address() as AddressInfo).port);
      });
    };
    next(0);
  });
}

/**
 * Starts the HTTPS endpoint beside the plain one: the same request handler, and the same upgrade
 * handlers (exec, attach, port-forward) as whatever the plain server has registered, so a WebSocket
 * works on both. The port is kept in the data dir and tried again at the next start, since running
 * Pods keep the KUBERNETES_SERVICE_PORT they were started with.
 */
export async function startInCluster(opts: { dataDir: string; handler: RequestListener; upgrades: Server; log?: (m: string) => void; podHost?: string }): Promise<InCluster | undefined> {
  const facing = opts.podHost ?? podFacingHost;
  const stateFile = join(opts.dataDir, 'incluster.json');
  let saved: number | undefined;
  try {
    saved = (JSON.parse(readFileSync(stateFile, 'utf8')) as { port?: number }).port;
  } catch {
    saved = undefined;
  }
  const pki = loadPki(opts.dataDir, [facing, '127.0.0.1']);
  const server = createHttpsServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, opts.handler as (req: IncomingMessage, res: ServerResponse) => void);
  server.keepAliveTimeout = 5000;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (opts.upgrades.listenerCount('upgrade') === 0) return void socket.destroy();
    opts.upgrades.emit('upgrade', req, socket, head);
  });
  const candidates = [...new Set([...(saved ? [saved] : []), securePort, 0])];
  let host = facing;
  let port = await listen(server, host, candidates);
  if (port === undefined) {
    // no 127.0.0.2 on this machine (only Linux routes all of 127/8 to loopback)
    host = '127.0.0.1';
    port = await listen(server, host, candidates);
  }
  if (port === undefined) {
    opts.log?.('in-cluster endpoint: no address to listen on; Pods get no KUBERNETES_SERVICE_HOST');
    return undefined;
  }
  writeFileSync(stateFile, `${JSON.stringify({ host, port })}\n`);
  const tokens = new ServiceAccountTokens(pki.tokenKey);
  return {
    host, port, pki, tokens, url: `https://${host}:${port}`,
    adminToken: tokens.issueUser('skiff-admin', ['system:masters']),
    contract: {
      host, port, caPem: pki.caPem,
      token: (pod, sa, opts) => tokens.issue({
        namespace: pod.metadata.namespace ?? 'default', serviceAccount: pod.spec.serviceAccountName ?? 'default', ...(sa ? { serviceAccountUid: sa.metadata.uid } : {}),
        pod: { name: pod.metadata.name, uid: pod.metadata.uid }, ...(pod.spec.nodeName ? { node: pod.spec.nodeName } : {}),
        ...(opts?.expirationSeconds ? { expirationSeconds: opts.expirationSeconds } : {}), ...(opts?.audiences?.length ? { audiences: opts.audiences } : {}),
      }),
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** where `skiff up` writes its kubeconfig (and `skiff kubeconfig --path` finds it) */
export function kubeconfigPath(dataDir: string): string {
  return join(dataDir, 'kubeconfig');
}

/**
 * The kubeconfig for users: context `skiff` is the server's own URL; context `skiff-https` is the
 * endpoint Pods use, with the CA, for clients that want TLS (and the current one with tenancy on,
 * `preferHttps`). Both use the namespace `default`.
 */
export function kubeconfig(url: string, inCluster: InCluster | undefined, token: string | undefined, opts: { preferHttps?: boolean } = {}): string {
  const user = token ? { token } : {};
  const clusters: unknown[] = [{ name: 'skiff', cluster: { server: url } }];
  const contexts: unknown[] = [{ name: 'skiff', context: { cluster: 'skiff', user: 'skiff', namespace: 'default' } }];
  if (inCluster) {
    clusters.push({ name: 'skiff-https', cluster: { server: inCluster.url, 'certificate-authority-data': Buffer.from(inCluster.pki.caPem).toString('base64') } });
    contexts.push({ name: 'skiff-https', context: { cluster: 'skiff-https', user: 'skiff', namespace: 'default' } });
  }
  // kubectl sends a bearer token only over TLS: where the server asks for one, the HTTPS context is the current one
  const current = opts.preferHttps && inCluster ? 'skiff-https' : 'skiff';
  return YAML.stringify({ apiVersion: 'v1', kind: 'Config', preferences: {}, clusters, users: [{ name: 'skiff', user }], contexts, 'current-context': current });
}

export function writeKubeconfig(dataDir: string, text: string): string {
  const file = kubeconfigPath(dataDir);
  // it carries a token: readable by its owner only, as ~/.kube/config is
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}
