// Network namespaces for Pods (tenancy's isolation). Each Pod gets a named namespace
// (/run/netns/skiff-<pod uid>) with `lo` and `eth0`, one end of a veth pair whose other end stays on
// the host. The Pod's address is a /32 on eth0 with a default route through 169.254.1.1, which the
// host end answers by proxy ARP; the host routes each Pod's /32 to its veth. So all traffic between
// Pods passes the host's forward hook, where nftables enforces NetworkPolicies, and traffic to the
// host (the node address, on `lo`) passes its input hook. No bridge, no NAT: a Pod's packets carry
// its own address, which is how Skiff knows a caller's Pod by its address.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

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
      // the namespace and the host side in one batch, the Pod's side in another (inside its namespace)
      await run('ip', ['-batch', '-'], [
        `netns add ${netns}`,
        `link add ${hostIf} type veth peer name eth0 netns ${netns}`,
        `link set ${hostIf} up`,
        `route replace ${ip}/32 dev ${hostIf}`,
      ].join('\n') + '\n');
      for (const [key, value] of [['proxy_arp', '1'], ['rp_filter', '1']]) writeFileSync(`/proc/sys/net/ipv4/conf/${hostIf}/${key}`, `${value}\n`);
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

/** Loads an nftables ruleset (a whole table, replaced atomically: see network-policy.ts). */
export async function applyRuleset(ruleset: string): Promise<void> {
  await run('nft', ['-f', '-'], ruleset);
}

/** Whether this machine can make Pod networks: root, iproute2, and veth links allowed. */
export async function podNetworksAvailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'the server does not run as root';
  try {
    await run('ip', ['-V']);
  } catch {
    return 'iproute2 (`ip`) is not installed';
  }
  try {
    await run('nft', ['--version']);
  } catch {
    return 'nftables (`nft`), which enforces NetworkPolicies, is not installed';
  }
  return undefined;
}

/** where running servers note which Pod network is theirs */
const claimsDir = '/run/skiff/pod-networks';

/**
 * A Pod network for a server whose config names none: 10.N.0.0/16, N from the data dir (so a
 * restarted server gets its own again, and its adopted Pods keep their addresses), moving on when a
 * live server with another data dir has claimed it. Each claim is a file naming the data dir and pid.
 */
export function claimPodNetwork(dataDir: string): string {
  mkdirSync(claimsDir, { recursive: true });
  const start = createHash('sha256').update(dataDir).digest().readUInt32BE(0);
  for (let i = 0; i < 160; i++) {
    const n = 64 + ((start + i) % 160);
    const file = `${claimsDir}/10.${n}.json`;
    let owner: { dataDir?: string; pid?: number } | undefined;
    try { owner = JSON.parse(readFileSync(file, 'utf8')) as typeof owner; } catch { owner = undefined; }
    const taken = owner && owner.dataDir !== dataDir && typeof owner.pid === 'number' && alive(owner.pid);
    if (taken) continue;
    writeFileSync(file, JSON.stringify({ dataDir, pid: process.pid }) + '\n');
    return `10.${n}.0.0/16`;
  }
  throw new Error('no free Pod network in 10.64.0.0/10: name one with podNetwork');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
