// Katib's DB manager, served by Skiff: `report_metrics()` inside a trial's Pod dials
// `katib-db-manager.kubeflow:6789` (the SDK's default) and KatibClient.get_trial_metrics() reads
// back. Skiff listens on port 6789 of a loopback address of its own and puts that address in every
// Pod's hosts file under Katib's Service names, so the default address works unchanged in a Pod;
// from the host, the address is printed by `skiff up`. A separate port (not the API's) because
// grpc's insecure channel speaks HTTP/2 with prior knowledge, which the API's HTTP/1.1 server
// cannot take.
import type { ServerHttp2Session } from 'node:http2';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '../../store/client.js';
import { grpcServer } from './grpc.js';
import { dbManagerMethods, type DbManagerAccess } from './service.js';
import { listenOn } from '../listen.js';

/** Katib's Service for its DB manager: its name, namespace and port, as the SDK's default dials */
export const KatibDbManagerService = { name: 'katib-db-manager', namespace: 'kubeflow', port: 6789 } as const;

export interface KatibDbManager {
  host: string;
  port: number;
  /** `host:port`, what `db_manager_address` takes */
  address: string;
  /** whether Pods reach it at Katib's default address (the port is Katib's) */
  podsUseDefault: boolean;
  close(): Promise<void>;
}

/** addresses to try, best first: the last one used (running Pods' hosts files name it), 127.0.0.2 (where Pods reach the API), then a few of Skiff's own */
function candidates(saved: string | undefined, podHost: string | undefined): string[] {
  // Pods in network namespaces of their own reach the host at its node address only
  if (podHost) return [podHost];
  const random = Array.from({ length: 8 }, () => `127.2.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`);
  return [...new Set([...(saved ? [saved] : []), '127.0.0.2', ...random])];
}

export async function startKatibDbManager(opts: { client: Client; dataDir: string; log?: (m: string) => void; access?: DbManagerAccess; podHost?: string }): Promise<KatibDbManager | undefined> {
  const stateFile = join(opts.dataDir, 'katib-db-manager.json');
  let saved: string | undefined;
  try {
    saved = (JSON.parse(readFileSync(stateFile, 'utf8')) as { host?: string }).host;
  } catch {
    saved = undefined;
  }
  const server = grpcServer(dbManagerMethods(opts.client, opts.access), opts.log);
  let host = '';
  let port: number | undefined;
  for (const h of candidates(saved, opts.podHost)) {
    port = await listenOn(server, h, KatibDbManagerService.port);
    if (port !== undefined) {
      host = h;
      break;
    }
  }
  if (port === undefined) {
    // no 127/8 beyond 127.0.0.1 (not Linux), or every try taken: any port on 127.0.0.1; Pods then
    // need db_manager_address
    host = opts.podHost ?? '127.0.0.1';
    port = await listenOn(server, host, 0);
  }
  if (port === undefined) {
    opts.log?.('katib-db-manager: no address to listen on; report_metrics() cannot reach Skiff');
    return undefined;
  }
  writeFileSync(stateFile, `${JSON.stringify({ host, port })}\n`);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  return {
    host, port, address: `${host}:${port}`, podsUseDefault: port === KatibDbManagerService.port,
    async close() {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
