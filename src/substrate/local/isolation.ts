// Isolation of Pods on one machine, for tenancy: who a Pod's processes run as, and what of the
// host they may see. The kernel does the enforcing: a container runs under bubblewrap as an
// unprivileged user (its securityContext's, else one uid per namespace), sees the host read-only
// with the data directory, the token file and Skiff's keys hidden, gets its own /tmp, and lives in a
// network namespace of its Pod (podnet.ts) where NetworkPolicies are enforced (network-policy.ts).
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Container, Pod } from '../../api/core-types.js';
import { ConfigError } from './env.js';

export interface IsolationOptions {
  /** host paths no container may see (directories and files): the data dir, the token file, keys */
  hide: string[];
  /** the Pod network (an IPv4 /16), e.g. 10.89.0.0/16: its first address is the node's */
  podCidr: string;
}

/** the first uid handed to a namespace: far above any login user's, as OpenShift's ranges are */
export const firstNamespaceUid = 200_000;

/**
 * One uid per namespace, kept in a file in the data directory so that a Pod's files in a volume stay
 * its namespace's across server restarts. A namespace's uid is never handed to another one.
 */
export class NamespaceUids {
  private readonly byNs = new Map<string, number>();
  private next = firstNamespaceUid;

  constructor(private readonly file: string) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
      for (const [ns, uid] of Object.entries(saved)) {
        if (!Number.isInteger(uid)) continue;
        this.byNs.set(ns, uid);
        this.next = Math.max(this.next, uid + 1);
      }
    } catch { /* none yet */ }
  }

  uidFor(namespace: string): number {
    const known = this.byNs.get(namespace);
    if (known !== undefined) return known;
    const uid = this.next++;
    this.byNs.set(namespace, uid);
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.byNs), null, 1) + '\n');
    renameSync(tmp, this.file);
    return uid;
  }
}

export interface PodUser { uid: number; gid: number; groups: number[] }

/**
 * Who a container runs as: its securityContext's runAsUser/runAsGroup over the Pod's, else the
 * namespace's uid (and that as the group); the Pod's fsGroup and supplementalGroups as extra groups.
 * Root is refused: with tenancy on, no Pod's code runs with the server's privileges.
 */
export function containerUser(pod: Pod, container: Container, namespaceUid: number): PodUser {
  const psc = pod.spec.securityContext ?? {};
  const csc = (container as { securityContext?: { runAsUser?: number; runAsGroup?: number } }).securityContext ?? {};
  const uid = csc.runAsUser ?? psc.runAsUser ?? namespaceUid;
  const gid = csc.runAsGroup ?? psc.runAsGroup ?? (csc.runAsUser ?? psc.runAsUser ?? namespaceUid);
  if (uid === 0) {
    throw new ConfigError(`container ${container.name}: runAsUser 0 (root) is not allowed: with tenancy on, Pods run as unprivileged users (leave runAsUser out for the namespace's own uid)`);
  }
  if (gid === 0) throw new ConfigError(`container ${container.name}: runAsGroup 0 (root) is not allowed with tenancy on`);
  const groups = new Set<number>();
  if (typeof psc.fsGroup === 'number') groups.add(psc.fsGroup);
  for (const g of psc.supplementalGroups ?? []) if (Number.isInteger(g)) groups.add(g);
  groups.delete(0);
  return { uid, gid, groups: [...groups].sort((a, b) => a - b) };
}

/**
 * Makes a writable volume (or scratch directory) the Pod's: owned by the user of its first container
 * and, with an fsGroup, group-owned by it with the setgid bit so new files inherit the group (as the
 * kubelet's volume ownership does). A volume that already has the right owner at its root is left
 * alone (kube's OnRootMismatch): a large PVC is not walked at every start.
 */
export function ownVolume(dir: string, user: PodUser, fsGroup: number | undefined): void {
  const gid = fsGroup ?? user.gid;
  let st;
  try { st = lstatSync(dir); } catch { return; }
  if (!st.isDirectory()) return;
  const mode = fsGroup !== undefined ? 0o2775 : 0o755;
  if (st.uid === user.uid && st.gid === gid && (st.mode & 0o7777) === mode) return;
  const walk = (p: string): void => {
    const s = lstatSync(p);
    if (s.isSymbolicLink()) return;
    chownSync(p, user.uid, gid);
    if (s.isDirectory()) {
      for (const e of readdirSync(p)) walk(join(p, e));
    }
  };
  walk(dir);
  chmodSync(dir, mode);
}

/** the Pod's private /tmp on the host: world-writable with the sticky bit, as /tmp is */
export function podTmpDir(podDir: string): string {
  const dir = join(podDir, 'tmp');
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o1777);
  return dir;
}
