// Pod volumes made real as directories on this machine; containers see them at their mountPath
// through bind mounts.
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { Container, Pod, Volume } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { ConfigError } from './env.js';

export interface VolumeSources {
  configMap(name: string): Promise<StoredObject | undefined>;
  secret(name: string): Promise<StoredObject | undefined>;
  claim(name: string): Promise<StoredObject | undefined>;
  /** the directory backing a bound claim */
  claimDir(namespace: string, claim: string): string;
}

export interface BindMount {
  source: string;
  target: string;
  readOnly?: boolean;
}

function writeKeys(dir: string, entries: [string, Buffer][], items: { key: string; path: string; mode?: number }[] | undefined, mode: number, what: string, optional: boolean): void {
  mkdirSync(dir, { recursive: true });
  const byKey = new Map(entries);
  const files = items?.length ? items.map((it) => {
    const data = byKey.get(it.key);
    if (data === undefined && !optional) throw new ConfigError(`${what}: key "${it.key}" not found`);
    return [it.path, data ?? Buffer.alloc(0), it.mode ?? mode] as const;
  }) : entries.map(([k, v]) => [k, v, mode] as const);
  for (const [path, data, m] of files) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, data);
    chmodSync(file, m);
  }
}

/** Creates the pod's volume directories; returns the host directory of each volume by name. */
export async function prepareVolumes(pod: Pod, podDir: string, src: VolumeSources): Promise<Map<string, { dir: string; readOnly: boolean }>> {
  const out = new Map<string, { dir: string; readOnly: boolean }>();
  const ns = pod.metadata.namespace ?? 'default';
  for (const v of (pod.spec.volumes ?? []) as Volume[]) {
    const dir = join(podDir, 'volumes', v.name);
    if (v.emptyDir) {
      mkdirSync(dir, { recursive: true });
      out.set(v.name, { dir, readOnly: false });
    } else if (v.hostPath) {
      const p = v.hostPath.path;
      const type = v.hostPath.type ?? '';
      if (type === 'DirectoryOrCreate') mkdirSync(p, { recursive: true });
      else if (type === 'FileOrCreate' && !existsSync(p)) {
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, '');
      } else if (type === 'Directory' && !(existsSync(p) && statSync(p).isDirectory())) throw new ConfigError(`hostPath volume "${v.name}": ${p} is not a directory`);
      else if (type === 'File' && !(existsSync(p) && statSync(p).isFile())) throw new ConfigError(`hostPath volume "${v.name}": ${p} is not a file`);
      else if (!existsSync(p)) mkdirSync(p, { recursive: true });
      out.set(v.name, { dir: p, readOnly: false });
    } else if (v.persistentVolumeClaim) {
      const name = v.persistentVolumeClaim.claimName;
      const claim = await src.claim(name);
      if (!claim) throw new ConfigError(`persistentvolumeclaim "${name}" not found`);
      if (claim.status?.phase !== 'Bound') throw new ConfigError(`persistentvolumeclaim "${name}" is not bound yet`);
      out.set(v.name, { dir: src.claimDir(ns, name), readOnly: v.persistentVolumeClaim.readOnly ?? false });
    } else if (v.configMap) {
      const cm = await src.configMap(v.configMap.name);
      if (!cm && !v.configMap.optional) throw new ConfigError(`configmap "${v.configMap.name}" not found`);
      const entries: [string, Buffer][] = [
        ...Object.entries((cm?.data as Record<string, string>) ?? {}).map(([k, s]) => [k, Buffer.from(s)] as [string, Buffer]),
        ...Object.entries((cm?.binaryData as Record<string, string>) ?? {}).map(([k, s]) => [k, Buffer.from(s, 'base64')] as [string, Buffer]),
      ];
      writeKeys(dir, entries, v.configMap.items, v.configMap.defaultMode ?? 0o644, `configmap "${v.configMap.name}"`, v.configMap.optional ?? false);
      out.set(v.name, { dir, readOnly: true });
    } else if (v.secret) {
      const s = await src.secret(v.secret.secretName);
      if (!s && !v.secret.optional) throw new ConfigError(`secret "${v.secret.secretName}" not found`);
      const entries = Object.entries((s?.data as Record<string, string>) ?? {}).map(([k, d]) => [k, Buffer.from(d, 'base64')] as [string, Buffer]);
      writeKeys(dir, entries, v.secret.items, v.secret.defaultMode ?? 0o644, `secret "${v.secret.secretName}"`, v.secret.optional ?? false);
      out.set(v.name, { dir, readOnly: true });
    }
  }
  return out;
}

/** The bind mounts one container asks for. */
export function containerBinds(container: Container, volumes: Map<string, { dir: string; readOnly: boolean }>): BindMount[] {
  const binds: BindMount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const vol = volumes.get(m.name);
    if (!vol) continue;
    const source = m.subPath ? join(vol.dir, m.subPath) : vol.dir;
    if (m.subPath && !existsSync(source)) mkdirSync(source, { recursive: true });
    binds.push({ source, target: m.mountPath, readOnly: m.readOnly || vol.readOnly });
  }
  // shallower mount points first, as containerd orders a Pod's mounts: a volume at /var/log/katib
  // listed after one at /var/log/katib/checkpoints must not hide it
  const depth = (p: string): number => posix.normalize(`${p}/`).split('/').filter(Boolean).length;
  return binds.sort((a, b) => depth(a.target) - depth(b.target));
}
