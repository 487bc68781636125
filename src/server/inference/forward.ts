// A standby's inference requests go to the leader. With leader election (README "Two (or more)
// replicas, one leader") only the replica holding the Lease runs the serving controllers, which set
// its gateway's routes, replicas and in-process models; a standby's gateway knows none of them. Both
// replicas sit behind one Service, so a standby passes each inference request on to the address the
// leader publishes on the Lease, streaming the body both ways, as a reverse proxy does: method, path,
// headers (less the hop-by-hop ones), status and body as they are, with X-Forwarded-For and Via
// (both ways) added.
//
// A request is forwarded at most once: the forwarded copy carries `forwardedHeader`, and a replica
// that gets one without holding the Lease answers 503 instead of passing it on again (two replicas
// that each believe the other leads cannot bounce a request between them).
import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endToEnd, relay } from '../http-relay.js';

/** the Lease annotation where the leader publishes the address it serves at */
export const leaderAddressAnnotation = 'skiff.dev/leader-address';

/** set on a request a standby forwarded (its value: the standby's identity) */
export const forwardedHeader = 'x-skiff-forwarded-by';

/**
 * Where this replica serves, for the Lease: in a Pod its IP (`$POD_IP`, from the downward API) and
 * the port it listens on; elsewhere the address it listens on, with 127.0.0.1 for a wildcard bind.
 */
export function servingAddress(addr: AddressInfo, podIp: string | undefined): string {
  const wildcard = addr.address === '0.0.0.0' || addr.address === '::';
  const ip = podIp || (wildcard ? '127.0.0.1' : addr.address);
  return `http://${ip.includes(':') ? `[${ip}]` : ip}:${addr.port}`;
}

export interface LeaderForwarderOptions {
  /** the Lease (`namespace/name`), named in every refusal */
  lease: string;
  /** this replica's identity among the candidates */
  identity: string;
  /** the Lease's holder as last read ('' or undefined: nobody), and the address it publishes */
  leader(): { identity: string | undefined; address: string | undefined };
  /** how long connecting to the leader may take before the request is refused (default 5 s) */
  connectTimeoutMs?: number;
}

/** An answer to send instead of the leader's: the gateway words it in the request's protocol. */
export type Refuse = (status: number, message: string) => void;

export class LeaderForwarder {
  // connections to the leader are reused: most inference requests are small and many
  private readonly agent = new Agent({ keepAlive: true });
  private readonly connectTimeoutMs: number;

  constructor(private readonly opts: LeaderForwarderOptions) {
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  }

  get lease(): string {
    return this.opts.lease;
  }

  stop(): void {
    this.agent.destroy();
  }

  /** Passes the request on to the leader and its answer back, or refuses it with 503 saying why. */
  forward(req: IncomingMessage, res: ServerResponse, refuse: Refuse): void {
    const lease = this.opts.lease;
    const refuseNow = (status: number, message: string): void => {
      // the body is not wanted; reading it lets the connection be used again
      req.resume();
      refuse(status, message);
    };
    const via = req.headers[forwardedHeader];
    if (via !== undefined) {
      refuseNow(503, `this replica does not hold Lease ${lease}, and the request was already forwarded once (by ${String(via)}): the leader is changing; try again in a few seconds`);
      return;
    }
    const { identity: holder, address } = this.opts.leader();
    if (!holder) {
      refuseNow(503, `no replica holds Lease ${lease} now, so no replica serves inference: a leader is being elected; try again in a few seconds`);
      return;
    }
    let target: URL;
    try {
      if (!address) throw new Error('no address');
      target = new URL(address);
      if (target.protocol !== 'http:') throw new Error(`${target.protocol} is not http:`);
    } catch (e) {
      refuseNow(503, `the leader of Lease ${lease} (${holder}) publishes no usable address (annotation ${leaderAddressAnnotation}: ${address ?? 'absent'}; ${(e as Error).message})`);
      return;
    }
    const headers = endToEnd(req.headers);
    const from = req.socket.remoteAddress;
    if (from) headers['x-forwarded-for'] = req.headers['x-forwarded-for'] ? `${String(req.headers['x-forwarded-for'])}, ${from}` : from;
    const hop = `1.1 ${this.opts.identity}`;
    headers.via = req.headers.via ? `${String(req.headers.via)}, ${hop}` : hop;
    headers[forwardedHeader] = this.opts.identity;
    let connectTimer: NodeJS.Timeout | undefined;
    relay(req, res, { agent: this.agent, host: target.hostname, port: Number(target.port || 80), path: req.url ?? '/', headers }, {
      started: (up) => up.on('socket', (socket) => {
        // a reused connection is already connected; a new one gets connectTimeoutMs (never a hang on an
        // address that drops packets)
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => up.destroy(new Error(`no connection within ${this.connectTimeoutMs / 1000}s`)), this.connectTimeoutMs);
        socket.once('connect', () => clearTimeout(connectTimer));
      }),
      answerHeaders: (back, answer) => {
        clearTimeout(connectTimer);
        back.via = answer.headers.via ? `${answer.headers.via}, ${hop}` : hop;
      },
      failed: (e) => {
        clearTimeout(connectTimer);
        refuseNow(503, `the leader of Lease ${lease} (${holder}) at ${target.origin} did not answer: ${e.message}`);
      },
    });
  }
}
