// A file a container wrote, read from where this substrate keeps it: the directory backing the volume
// mounted over the path (an emptyDir lives in the Pod's directory after its containers end), so the
// platform can read it without a process in the Pod. Only the substrate knows that layout.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Container, Pod, Volume } from '../../api/core-types.js';
import type { PodFile } from '../substrate.js';

/** what one read returns at most, so a runaway metrics directory cannot exhaust the server */
const maxFiles = 1000;
const maxBytes = 256 * 1024 * 1024;

export interface PodDirs {
  /** the Pod's own directory (its volumes are under `volumes/<name>`) */
  podDir: string;
  /** the directory backing a bound claim */
  claimDir(namespace: string, claim: string): string;
  /** containers see the host's filesystem outside their volumes (no sandbox) */
  hostVisible: boolean;
}

/**
 * Where `path`, as `container` sees it, is on this machine: under the volume mounted over it (the
 * deepest mount wins), else, for a Pod that is not sandboxed, the path itself. Undefined when the
 * path is on the container's private filesystem.
 */
export function hostPathOf(pod: Pod, containerName: string, path: string, dirs: PodDirs): string | undefined {
  const norm = posix.normalize(path);
  const containers: Container[] = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const c = containers.find((x) => x.name === containerName);
  if (!c) throw new Error(`container ${containerName} is not valid for pod ${pod.metadata.name}`);
  let best: { mountPath: string; name: string; subPath?: string } | undefined;
  for (const m of c.volumeMounts ?? []) {
    const mp = posix.normalize(m.mountPath).replace(/\/+$/, '') || '/';
    const inside = norm === mp || norm.startsWith(mp === '/' ? '/' : `${mp}/`);
    if (inside && (!best || mp.length > best.mountPath.length)) best = { mountPath: mp, name: m.name, subPath: m.subPath };
  }
  if (!best) return dirs.hostVisible ? norm : undefined;
  const vol = ((pod.spec.volumes ?? []) as Volume[]).find((v) => v.name === best?.name);
  if (!vol) return undefined;
  let base: string;
  if (vol.hostPath) base = vol.hostPath.path;
  else if (vol.persistentVolumeClaim) base = dirs.claimDir(pod.metadata.namespace ?? 'default', vol.persistentVolumeClaim.claimName);
  else base = join(dirs.podDir, 'volumes', vol.name);
  if (best.subPath) base = join(base, best.subPath);
  const rel = norm.slice(best.mountPath.length).replace(/^\/+/, '');
  return rel ? join(base, rel) : base;
}

/** the file at `hostPath`, or every file under it (depth first, names sorted); [] when absent */
export function readFilesAt(hostPath: string, shownAs: string): PodFile[] {
  if (!existsSync(hostPath)) return [];
  const out: PodFile[] = [];
  let bytes = 0;
  const walk = (host: string, shown: string): void => {
    if (out.length >= maxFiles || bytes >= maxBytes) return;
    const st = statSync(host, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const name of readdirSync(host).sort()) walk(join(host, name), posix.join(shown, name));
    } else if (st.isFile()) {
      const data = readFileSync(host);
      bytes += data.length;
      out.push({ path: shown, data });
    }
  };
  walk(hostPath, posix.normalize(shownAs));
  return out;
}
