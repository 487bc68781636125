// KFP's API Service as Pods reach it on Kubeflow: `ml-pipeline.kubeflow.svc.cluster.local:8888`.
// kfp.Client() with no host, inside a Pod (a notebook), finds the in-cluster config and dials that
// name with the Pod's service-account token (ServiceAccountTokenVolumeCredentials); it never reads
// an endpoint from anywhere else. Skiff listens on port 8888 of an address Pods reach (the node
// address with isolation, else a loopback address of its own) and the kubelet puts that address in
// every Pod's hosts file under the Service's names, so the unchanged client works as on Kubeflow.
// Only KFP's REST API (`/apis/...`) is answered there, as ml-pipeline's HTTP port answers it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOn } from '../listen.js';

/** KFP's API Service: its name, namespace and HTTP port, as kfp.Client's in-cluster default dials */
export const KfpApiService = { name: 'ml-pipeline', namespace: 'kubeflow', port: 8888 } as const;

export interface KfpInClusterService {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** whether a request is for KFP's REST API (what ml-pipeline's port 8888 serves) */
export function isKfpApiPath(url: string | undefined): boolean {
  return /^\/apis\/v(1beta1|2beta1)(\/|\?|$)/.test(url ?? '');
}

/**
 * Listens on KFP's port at the first of `hosts` where it is free and hands KFP's API requests to
 * `handler` (the server's own, so that authentication and authorization are the API's). Undefined
 * when the port is taken at every host: Pods then get KF_PIPELINES_ENDPOINT instead.
 */
export async function startKfpInClusterService(opts: { handler: (req: IncomingMessage, res: ServerResponse) => void; hosts: string[] }): Promise<KfpInClusterService | undefined> {
  const server = createServer((req, res) => {
    if (isKfpApiPath(req.url)) {
      opts.handler(req, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `${req.url ?? ''} is not part of KFP's API`, code: 5, message: `${req.url ?? ''} is not part of KFP's API` }));
  });
  server.keepAliveTimeout = 5000;
  for (const host of opts.hosts) {
    const port = await listenOn(server, host, KfpApiService.port);
    if (port === undefined) continue;
    return {
      host, port,
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  return undefined;
}
