// Pod networking on one machine. Every Pod gets its own loopback address (127.1.x.y, or on a
// cluster an address from its Node's podCIDR, such as 127.64.3.0/24: all of 127.0.0.0/8 reaches this
// host on Linux; a routable podCIDR such as 10.244.3.0/24 is made local the same way, makeRangeLocal), and a hosts file mapping the names other Pods and Services are known by to those
// addresses, so `MASTER_ADDR=pi-master-0` resolves inside a sandboxed Pod, also when pi-master-0 runs
// on another node agent of this machine.
// A small preload library (native/skiff-net.c) narrows wildcard binds to the Pod IP, so two Pods can
// both listen on 0.0.0.0:8080, and sends localhost connections to the Pod's declared ports to its own
// IP, as containers of one Kubernetes Pod share localhost.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../../api/core-types.js';

/** where every Pod's address comes from (PodAddresses) */
export const podNetwork = '127.1.0.0/16';

let preload: string | undefined | null = null;

/** build/skiff-net.so, when it was built */
export function netPreloadPath(): string | undefined {
  if (preload === null) {
    const path = process.env.SKIFF_NET_PRELOAD ?? fileURLToPath(new URL('../../../../build/skiff-net.so', import.meta.url));
    preload = existsSync(path) ? path : undefined;
  }
  return preload;
}

/** where a sandboxed container sees the library: in bwrap's own /dev, which no volume can hide */
export const sandboxPreloadPath = '/dev/skiff-net.so';

/** the variables that give a container its Pod's network identity */
export function podNetworkEnv(pod: Pod, ip: string, inherited: string | undefined, sandboxed: boolean, ownNetwork = false): Record<string, string> {
  const ports = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
  const env: Record<string, string> = { POD_IP: ip, SKIFF_POD_IP: ip, SKIFF_POD_PORTS: [...new Set(ports)].join(',') };
  // a Pod with a network namespace of its own binds and connects as any container does
  const lib = ownNetwork ? undefined : netPreloadPath();
  if (lib) {
    const seen = sandboxed ? sandboxPreloadPath : lib;
    env.LD_PRELOAD = inherited ? `${seen}:${inherited}` : seen;
  }
  return env;
}

/** An IPv4 CIDR as its first address (a 32-bit number) and prefix length; throws on anything else. */
export function parseIpv4Cidr(cidr: string): { base: number; bits: number } {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const bits = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || bits > 30 || bits < 8) throw new Error(`"${cidr}" is not an IPv4 CIDR from /8 to /30`);
  const ip = octets.reduce((n, o) => n * 256 + o, 0);
  const size = 2 ** (32 - bits);
  return { base: ip - (ip % size), bits };
}

const dotted = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** whether an IPv4 CIDR lies within 127.0.0.0/8, where every address reaches this host */
export function isLoopbackCidr(cidr: string): boolean {
  return parseIpv4Cidr(cidr).base >>> 24 === 127;
}

/** the `ip route` arguments that make every address of a range local to this machine, as 127.0.0.0/8 is */
export function localRouteArgs(cidr: string, verb: 'replace' | 'del'): string[] {
  const { base, bits } = parseIpv4Cidr(cidr);
  return ['route', verb, 'local', `${dotted(base)}/${bits}`, 'dev', 'lo', 'table', 'local'];
}

/**
 * Makes every address of a routable range local to this machine (a `local` route on lo, Linux's
 * AnyIP), so that Pods in this machine's network namespace take addresses from it: addresses that,
 * unlike 127.0.0.0/8, a Service's endpoints may hold and other machines may route to. Needs
 * CAP_NET_ADMIN. Returns why it could not, or undefined when the route is in place.
 */
export function makeRangeLocal(cidr: string): string | undefined {
  const r = spawnSync('ip', localRouteArgs(cidr, 'replace'), { encoding: 'utf8' });
  if (r.error) return `ip: ${r.error.message}`;
  return r.status === 0 ? undefined : `ip ${localRouteArgs(cidr, 'replace').join(' ')}: ${(r.stderr || `exit ${r.status}`).trim()}`;
}

/** Takes a range made local by makeRangeLocal back (nothing when it is not there). */
export function removeLocalRange(cidr: string): void {
  spawnSync('ip', localRouteArgs(cidr, 'del'), { stdio: 'ignore' });
}

export class PodAddresses {
  private readonly byPod = new Map<string, string>();
  private readonly taken = new Set<string>();
  private readonly base: number;
  /** how many addresses the range hands out: none ending in .0 or .255 */
  private readonly count: number;
  private readonly blocks: boolean;

  /** addresses of an IPv4 range (a /16 on one machine, a Node's podCIDR on a cluster); `reserved`
   *  ones (the node's) are never handed out */
  constructor(readonly cidr = podNetwork, reserved: string[] = []) {
    const { base, bits } = parseIpv4Cidr(cidr);
    this.base = base;
    // a /24 or wider: 254 of every 256 (x.y.z.0 and x.y.z.255 look like network and broadcast
    // addresses to some programs); a narrower range: its addresses but the first and the last
    this.blocks = bits <= 24;
    this.count = this.blocks ? 2 ** (24 - bits) * 254 : 2 ** (32 - bits) - 2;
    for (const ip of reserved) this.taken.add(ip);
    // where the search for a free address starts: somewhere random, so that two servers on one
    // machine sharing a range (each with its own data dir) rarely hand out the same addresses
    this.next = Math.floor(Math.random() * this.count);
  }

  private next: number;

  private address(n: number): string {
    return dotted(this.base + (this.blocks ? Math.floor(n / 254) * 256 + (n % 254) + 1 : n + 1));
  }

  /** remembers an address a Pod already had (after a restart) */
  claim(podUid: string, ip: string): void {
    this.byPod.set(podUid, ip);
    this.taken.add(ip);
  }

  allocate(podUid: string): string {
    const existing = this.byPod.get(podUid);
    if (existing) return existing;
    for (let i = 0; i < this.count; i++) {
      const n = (this.next + i) % this.count;
      const ip = this.address(n);
      if (!this.taken.has(ip)) {
        this.next = n + 1;
        this.claim(podUid, ip);
        return ip;
      }
    }
    throw new Error(`no free pod address in ${this.cidr}`);
  }

  release(podUid: string): void {
    const ip = this.byPod.get(podUid);
    if (ip) this.taken.delete(ip);
    this.byPod.delete(podUid);
  }
}

export interface ServiceView {
  name: string;
  namespace: string;
  ips: string[];
}

/** Names for a Pod, as cluster DNS would answer them. */
export function podNames(pod: Pod): string[] {
  const ns = pod.metadata.namespace ?? 'default';
  const names = [pod.metadata.name ?? ''];
  if (pod.spec.hostname) {
    names.push(pod.spec.hostname);
    if (pod.spec.subdomain) {
      names.push(`${pod.spec.hostname}.${pod.spec.subdomain}`, `${pod.spec.hostname}.${pod.spec.subdomain}.${ns}`, `${pod.spec.hostname}.${pod.spec.subdomain}.${ns}.svc`, `${pod.spec.hostname}.${pod.spec.subdomain}.${ns}.svc.cluster.local`);
    }
  }
  return [...new Set(names.filter(Boolean))];
}

/** The hosts file of one Pod: itself, the Pods and Services of its namespace, and fully qualified names of all. */
export function hostsFile(self: Pod, pods: Pod[], services: ServiceView[]): string {
  const ns = self.metadata.namespace ?? 'default';
  const lines = ['# written by skiff: pod and service names on this machine', '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];
  const selfIp = self.status?.podIP;
  if (selfIp) lines.push(`${selfIp}\t${podNames(self).join(' ')}`);
  for (const p of pods) {
    const ip = p.status?.podIP;
    if (!ip || p.metadata.uid === self.metadata.uid) continue;
    const names = podNames(p).filter((n) => n.includes('.') || (p.metadata.namespace ?? 'default') === ns);
    if (names.length) lines.push(`${ip}\t${names.join(' ')}`);
  }
  for (const s of services) {
    const ip = s.ips[0];
    if (!ip) continue;
    const names = [`${s.name}.${s.namespace}`, `${s.name}.${s.namespace}.svc`, `${s.name}.${s.namespace}.svc.cluster.local`];
    if (s.namespace === ns) names.unshift(s.name);
    lines.push(`${ip}\t${names.join(' ')}`);
  }
  return lines.join('\n') + '\n';
}

/** Rewrites a hosts file in place: a bind-mounted file must keep its inode to show new content. It
 *  is never truncated first (a lookup in that moment would find no names at all): the new content is
 *  written over the old, then the file is cut to its length; an unchanged file is not touched. */
export function writeHosts(file: string, content: string): void {
  const next = Buffer.from(content);
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch {
    writeFileSync(file, next);
    return;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === next.length) {
      const cur = Buffer.alloc(size);
      if (readSync(fd, cur, 0, size, 0) === size && cur.equals(next)) return;
    }
    writeSync(fd, next, 0, next.length, 0);
    if (size > next.length) ftruncateSync(fd, next.length);
  } finally {
    closeSync(fd);
  }
}
