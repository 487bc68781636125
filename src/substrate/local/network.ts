// Pod networking on one machine. Every Pod gets its own loopback address (127.1.x.y: all of
// 127.0.0.0/8 reaches this host on Linux), and a hosts file mapping the names other Pods and Services
// are known by to those addresses, so `MASTER_ADDR=pi-master-0` resolves inside a sandboxed Pod.
// A small preload library (native/skiff-net.c) narrows wildcard binds to the Pod IP, so two Pods can
// both listen on 0.0.0.0:8080, and sends localhost connections to the Pod's declared ports to its own
// IP, as containers of one Kubernetes Pod share localhost.
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

export class PodAddresses {
  private readonly byPod = new Map<string, string>();
  private readonly taken = new Set<string>();

  /** addresses `<prefix>.x.y` of a /16; `reserved` ones (the node's) are never handed out */
  constructor(private readonly prefix = '127.1', reserved: string[] = []) {
    for (const ip of reserved) this.taken.add(ip);
  }
  // where the search for a free address starts: somewhere random, so that two servers on one machine
  // (each with its own data dir) rarely hand out the same addresses
  private next = Math.floor(Math.random() * 65024);

  /** remembers an address a Pod already had (after a restart) */
  claim(podUid: string, ip: string): void {
    this.byPod.set(podUid, ip);
    this.taken.add(ip);
  }

  allocate(podUid: string): string {
    const existing = this.byPod.get(podUid);
    if (existing) return existing;
    for (let i = 0; i < 65024; i++) {
      const n = (this.next + i) % 65024;
      const ip = `${this.prefix}.${Math.floor(n / 254)}.${(n % 254) + 1}`;
      if (!this.taken.has(ip)) {
        this.next = n + 1;
        this.claim(podUid, ip);
        return ip;
      }
    }
    throw new Error(`no free pod address in ${this.prefix}.0.0/16`);
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
