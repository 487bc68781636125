// Pod volumes made real as directories on this machine; containers see them at their mountPath
// through bind mounts.
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { Container, DownwardAPIVolumeFile, Pod, Volume } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { ConfigError, fieldRef, resourceRef } from './env.js';
import { writeTokenFile, type IssuedToken, type TokenSource } from './projected-tokens.js';

export interface VolumeSources {
  configMap(name: string): Promise<StoredObject | undefined>;
  secret(name: string): Promise<StoredObject | undefined>;
  claim(name: string): Promise<StoredObject | undefined>;
  /** the directory backing a bound claim */
  claimDir(namespace: string, claim: string): string;
  /** on a cluster: the directory of the PersistentVolume a claim is bound to, instead of claimDir */
  claimVolumeDir?(claim: StoredObject): Promise<string>;
  /** a token for the Pod's service account (a projected volume's serviceAccountToken); without
   *  one such a source is refused */
  serviceAccountToken?: TokenSource;
  /** a token file was written: the caller keeps it fresh */
  onToken?(t: { file: string; issued: IssuedToken; ask: { audience?: string; expirationSeconds: number }; mode: number }): void;
}

/** what the ServiceAccount admission plugin asks for, and the kubelet's default for a projected token */
const defaultTokenSeconds = 3600;

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

/** a downward API file's content: one field, a resource, or labels/annotations as key="value" lines */
function downwardValue(pod: Pod, item: DownwardAPIVolumeFile, what: string): string {
  if (item.fieldRef) {
    const path = item.fieldRef.fieldPath;
    if (path === 'metadata.labels' || path === 'metadata.annotations') {
      const map = (path === 'metadata.labels' ? pod.metadata.labels : pod.metadata.annotations) ?? {};
      return Object.keys(map).sort().map((k) => `${k}=${JSON.stringify(map[k])}`).join('\n');
    }
    try {
      return fieldRef(pod, path);
    } catch (e) {
      throw new ConfigError(`${what}: ${(e as Error).message}`);
    }
  }
  if (item.resourceFieldRef) {
    const name = item.resourceFieldRef.containerName;
    const c = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((x) => x.name === name);
    if (!c) throw new ConfigError(`${what}: resourceFieldRef.containerName ${JSON.stringify(name ?? '')} names no container of the Pod`);
    return resourceRef(pod, c, item.resourceFieldRef);
  }
  throw new ConfigError(`${what}: item "${item.path}" has neither fieldRef nor resourceFieldRef`);
}

function writeDownward(dir: string, pod: Pod, items: DownwardAPIVolumeFile[] | undefined, mode: number, what: string): void {
  mkdirSync(dir, { recursive: true });
  for (const item of items ?? []) {
    const file = join(dir, item.path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, downwardValue(pod, item, what));
    chmodSync(file, item.mode ?? mode);
  }
}

function configMapEntries(cm: StoredObject | undefined): [string, Buffer][] {
  return [
    ...Object.entries((cm?.data as Record<string, string>) ?? {}).map(([k, s]) => [k, Buffer.from(s)] as [string, Buffer]),
    ...Object.entries((cm?.binaryData as Record<string, string>) ?? {}).map(([k, s]) => [k, Buffer.from(s, 'base64')] as [string, Buffer]),
  ];
}

const secretEntries = (s: StoredObject | undefined): [string, Buffer][] =>
  Object.entries((s?.data as Record<string, string>) ?? {}).map(([k, d]) => [k, Buffer.from(d, 'base64')] as [string, Buffer]);

/** a projected volume: secrets, ConfigMaps, downward API fields and service-account tokens in one directory */
async function writeProjected(v: Volume, dir: string, pod: Pod, src: VolumeSources): Promise<void> {
  const proj = v.projected ?? {};
  const mode = proj.defaultMode ?? 0o644;
  mkdirSync(dir, { recursive: true });
  for (const [i, s] of (proj.sources ?? []).entries()) {
    const what = `projected volume "${v.name}" source ${i}`;
    if (s.secret) {
      const secret = await src.secret(s.secret.name);
      if (!secret && !s.secret.optional) throw new ConfigError(`secret "${s.secret.name}" not found`);
      if (secret) writeKeys(dir, secretEntries(secret), s.secret.items, mode, `secret "${s.secret.name}"`, s.secret.optional ?? false);
    } else if (s.configMap) {
      const cm = await src.configMap(s.configMap.name);
      if (!cm && !s.configMap.optional) throw new ConfigError(`configmap "${s.configMap.name}" not found`);
      if (cm) writeKeys(dir, configMapEntries(cm), s.configMap.items, mode, `configmap "${s.configMap.name}"`, s.configMap.optional ?? false);
    } else if (s.downwardAPI) {
      writeDownward(dir, pod, s.downwardAPI.items, mode, what);
    } else if (s.serviceAccountToken) {
      const t = s.serviceAccountToken;
      if (!t.path) throw new ConfigError(`${what}: serviceAccountToken.path is required`);
      if (!src.serviceAccountToken) throw new ConfigError(`${what}: this node cannot issue service-account tokens`);
      const ask = { ...(t.audience ? { audience: t.audience } : {}), expirationSeconds: t.expirationSeconds ?? defaultTokenSeconds };
      let issued: IssuedToken;
      try {
        issued = await src.serviceAccountToken(ask);
      } catch (e) {
        throw new ConfigError(`failed to fetch token: ${(e as Error).message}`);
      }
      const file = join(dir, t.path);
      mkdirSync(dirname(file), { recursive: true });
      writeTokenFile(file, issued.token, mode);
      src.onToken?.({ file, issued, ask, mode });
    } else {
      const kind = Object.keys(s)[0] ?? 'an empty source';
      throw new ConfigError(`${what}: ${kind} is not supported on this node`);
    }
  }
}

/**
 * Creates the pod's volume directories; returns the host directory of each volume by name. With
 * `memoryDir` (the Pod's part of the runtime directory, on a tmpfs), secret and projected volumes
 * are written there, as a kubelet backs them with memory: their keys and service-account tokens
 * never reach the disk. One already on disk (written by a server from before) stays where it is.
 */
export async function prepareVolumes(pod: Pod, podDir: string, src: VolumeSources, memoryDir?: string): Promise<Map<string, { dir: string; readOnly: boolean }>> {
  const out = new Map<string, { dir: string; readOnly: boolean }>();
  const ns = pod.metadata.namespace ?? 'default';
  for (const v of (pod.spec.volumes ?? []) as Volume[]) {
    const onDisk = join(podDir, 'volumes', v.name);
    const inMemory = memoryDir !== undefined && (v.secret !== undefined || v.projected !== undefined) && !existsSync(onDisk);
    const dir = inMemory ? join(memoryDir, 'volumes', v.name) : onDisk;
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
      let claimDir: string;
      try {
        claimDir = src.claimVolumeDir ? await src.claimVolumeDir(claim) : src.claimDir(ns, name);
      } catch (e) {
        if (e instanceof ConfigError) throw e;
        throw new ConfigError(`persistentvolumeclaim "${name}": ${(e as Error).message}`);
      }
      out.set(v.name, { dir: claimDir, readOnly: v.persistentVolumeClaim.readOnly ?? false });
    } else if (v.configMap) {
      const cm = await src.configMap(v.configMap.name);
      if (!cm && !v.configMap.optional) throw new ConfigError(`configmap "${v.configMap.name}" not found`);
      writeKeys(dir, configMapEntries(cm), v.configMap.items, v.configMap.defaultMode ?? 0o644, `configmap "${v.configMap.name}"`, v.configMap.optional ?? false);
      out.set(v.name, { dir, readOnly: true });
    } else if (v.secret) {
      const s = await src.secret(v.secret.secretName);
      if (!s && !v.secret.optional) throw new ConfigError(`secret "${v.secret.secretName}" not found`);
      writeKeys(dir, secretEntries(s), v.secret.items, v.secret.defaultMode ?? 0o644, `secret "${v.secret.secretName}"`, v.secret.optional ?? false);
      out.set(v.name, { dir, readOnly: true });
    } else if (v.downwardAPI) {
      writeDownward(dir, pod, v.downwardAPI.items, v.downwardAPI.defaultMode ?? 0o644, `downwardAPI volume "${v.name}"`);
      out.set(v.name, { dir, readOnly: true });
    } else if (v.projected) {
      await writeProjected(v, dir, pod, src);
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
