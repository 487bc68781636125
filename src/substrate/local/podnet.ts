// Network namespaces for Pods (tenancy's isolation). Each Pod gets a named namespace
// (/run/netns/skiff-<pod uid>) with `lo` and `eth0`, one end of a veth pair whose other end stays on
// the host. The Pod's address is a /32 on eth0 with a default route through 169.254.1.1, which the
// host end answers by proxy ARP; the host routes each Pod's /32 to its veth. So all traffic between
// Pods passes the host's forward hook, where nftables enforces NetworkPolicies, and traffic to the
// host (the node address, on `lo`) passes its input hook. No bridge, no NAT: a Pod's packets carry
// its own address, which is how Skiff knows a caller's Pod by its address.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** the gateway address every Pod routes through (the host end of its veth answers for it) */
const gateway = '169.254.1.1';

export interface PodNetwork {
  /** the namespace's path, for nsenter --net= */
  netns: string;
  /** the host end of the veth */
  hostIf: string;
  ip: string;
}

/** the first address of an IPv4 /16 (or any prefix): 10.89.0.0/16 -> 10.89.0.1 */
export function nodeAddress(cidr: string): string {
  const [base] = cidr.split('/');
  const parts = (base ?? '').split('.').map(Number);
  if (parts.length !== 4 || parts.some((n) => !Number.isInteger(n) || n < 0 || n > 255)) throw new Error(`pod network ${cidr}: not an IPv4 CIDR`);
  return `${parts[0]}.${parts[1]}.${parts[2]}.${(parts[3] ?? 0) + 1}`;
}

/** names derived from the Pod's uid: interface names have at most 15 characters */
export function podNetNames(podUid: string): { netns: string; hostIf: string } {
  const hex = podUid.replace(/[^0-9a-f]/gi, '').toLowerCase();
  return { netns: `skiff-${podUid}`, hostIf: `skv${hex.slice(0, 12)}` };
}

function run(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${(stderr || err.message).trim()}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

export class PodNetworks {
  readonly nodeIp: string;

  constructor(readonly podCidr: string) {
    this.nodeIp = nodeAddress(podCidr);
  }

  /** The host's side, once per server start: the node address on `lo`, and forwarding on. */
  async setUpHost(): Promise<void> {
    const addrs = await run('ip', ['-4', '-o', 'addr', 'show', 'dev', 'lo']);
    if (!addrs.includes(` ${this.nodeIp}/`)) await run('ip', ['addr', 'add', `${this.nodeIp}/32`, 'dev', 'lo']);
    const forward = '/proc/sys/net/ipv4/ip_forward';
    if (readFileSync(forward, 'utf8').trim() !== '1') writeFileSync(forward, '1\n');
  }

  exists(podUid: string): boolean {
    return existsSync(`/run/netns/${podNetNames(podUid).netns}`);
  }

  /** Creates the Pod's namespace and link (idempotent: an existing one is kept as it is). */
  async create(podUid: string, ip: string): Promise<PodNetwork> {
    const { netns, hostIf } = podNetNames(podUid);
    const path = `/run/netns/${netns}`;
    if (existsSync(path)) return { netns: path, hostIf, ip };
    try {
      await run('ip', ['netns', 'add', netns]);
      // host side in one batch, the Pod's side in another (inside its namespace)
      await run('ip', ['-batch', '-'], [
        `link add ${hostIf} type veth peer name eth0 netns ${netns}`,
        `link set ${hostIf} up`,
        `route replace ${ip}/32 dev ${hostIf}`,
      ].join('\n') + '\n');
      await run('sysctl', ['-q', '-w', `net.ipv4.conf.${hostIf}.proxy_arp=1`, `net.ipv4.conf.${hostIf}.rp_filter=1`]);
      await run('ip', ['-n', netns, '-batch', '-'], [
        'link set lo up',
        `addr add ${ip}/32 dev eth0`,
        'link set eth0 up',
        `route add ${gateway} dev eth0 scope link`,
        `route add default via ${gateway} dev eth0`,
      ].join('\n') + '\n');
    } catch (e) {
      await this.remove(podUid);
      throw e;
    }
    return { netns: path, hostIf, ip };
  }

  /** Deletes the namespace; its veth goes with it, and the route with the veth. */
  async remove(podUid: string): Promise<void> {
    const { netns, hostIf } = podNetNames(podUid);
    if (existsSync(`/run/netns/${netns}`)) await run('ip', ['netns', 'delete', netns]).catch(() => undefined);
    // a veth whose namespace was lost some other way
    if (existsSync(`/sys/class/net/${hostIf}`)) await run('ip', ['link', 'delete', hostIf]).catch(() => undefined);
  }
}

/** Whether this machine can make Pod networks: root, iproute2, and veth links allowed. */
export async function podNetworksAvailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'the server does not run as root';
  try {
    await run('ip', ['-V']);
  } catch {
    return 'iproute2 (`ip`) is not installed';
  }
  return undefined;
}
