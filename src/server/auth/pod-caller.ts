// Which Pod a connection comes from, by its source address: on one machine each Pod connects from its
// own IP (native/skiff-net.c binds it), so a caller that presents no token can still be known as
// "some Pod of namespace N". Used where Kubernetes' own answer is the network, not a token: a
// transformer calling its predictor, and Katib's report_metrics() calling the DBManager.
import type { IncomingMessage } from 'node:http';
import type { Pod } from '../../api/core-types.js';
import { Kinds } from '../../api/index.js';
import type { Client } from '../../store/client.js';

/** a socket's peer as a plain IPv4 address when it is an IPv4-mapped IPv6 one */
export function peerAddress(req: Pick<IncomingMessage, 'socket'>): string {
  return (req.socket?.remoteAddress ?? '').replace(/^::ffff:/i, '');
}

/** the namespace of the running Pod at this address; undefined when none (or Pods of several namespaces) have it */
export async function podNamespaceAt(client: Client, peer: string): Promise<string | undefined> {
  if (!peer) return undefined;
  const pods = (await client.listAll<Pod>(Kinds.Pod)).filter((p) => p.status?.podIP === peer && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const namespaces = new Set(pods.map((p) => p.metadata.namespace ?? 'default'));
  return namespaces.size === 1 ? [...namespaces][0] : undefined;
}
