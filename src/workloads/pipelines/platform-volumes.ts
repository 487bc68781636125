// The kfp-kubernetes settings that add volumes to a task's Pod: PVC mounts, secrets and ConfigMaps
// as volumes, empty dirs, generic ephemeral volumes (an empty dir here) and shared memory. Each
// asks for its volumes in `c.volumes`; placeVolumes then names them (as upstream does, reusing a
// volume with the same source) and mounts them in the main container.
import type { Volume, VolumeMount } from '../../api/core-types.js';
import { deepEqual } from '../../api/meta.js';
import { isDns1123Label } from '../../api/validation.js';
import { isPlainObject } from '../../util/objects.js';
import type { Change, PlatformContext, VolumeRequest, VolumeSource } from './platform-fields.js';
import { asName, entry, fail, labelFrom, list, mountPathOf, nameFrom, optBool, optString, quantity, reqString, skipped, stringList, stringMap } from './platform-fields.js';

/** pvcMount: a claim by name (a parameter, a constant, an upstream output or a pipeline input), with an optional subPath. */
export function pvcMounts(c: PlatformContext): void {
  list(c.config, 'pvcMount').forEach((x, i) => {
    const f = `pvcMount[${i}]`;
    const e = entry(x, f);
    const mountPath = mountPathOf(e, f, c.notes);
    let claim: string | undefined;
    if (e['pvcNameParameter'] !== undefined && e['pvcNameParameter'] !== null) {
      claim = asName(c.resolve(e['pvcNameParameter'], `${f}.pvcNameParameter`), `${f}.pvcNameParameter`);
    } else if (e['constant'] !== undefined && e['constant'] !== null) {
      claim = reqString(e, 'constant', f);
    } else if (isPlainObject(e['taskOutputParameter'])) {
      claim = asName(c.resolve({ taskOutputParameter: e['taskOutputParameter'] }, `${f}.taskOutputParameter`), `${f}.taskOutputParameter`);
    } else if (typeof e['componentInputParameter'] === 'string') {
      claim = asName(c.resolve({ componentInputParameter: e['componentInputParameter'] }, `${f}.componentInputParameter`), `${f}.componentInputParameter`);
    } else {
      fail(f, 'the claim name is required: pvcNameParameter (or constant, taskOutputParameter, componentInputParameter)');
    }
    if (claim === undefined) return skipped(c, f, 'claim name');
    const subPath = optString(e, 'subPath', f);
    if (subPath !== undefined && (subPath.startsWith('/') || subPath.split('/').includes('..'))) fail(f, `subPath ${JSON.stringify(subPath)} must be a relative path without '..'`);
    c.pvcNames.add(claim);
    c.volumes.push({ field: f, hint: claim, source: { persistentVolumeClaim: { claimName: claim } }, mount: { mountPath, ...(subPath ? { subPath } : {}) } });
  });
}

/** secretAsVolume: a Secret mounted as files. */
export function secretVolumes(c: PlatformContext): void {
  list(c.config, 'secretAsVolume').forEach((x, i) => {
    const f = `secretAsVolume[${i}]`;
    const e = entry(x, f);
    const mountPath = mountPathOf(e, f, c.notes);
    const name = nameFrom(c.resolve, e, 'secretNameParameter', 'secretName', f);
    if (name === undefined) return skipped(c, f, 'secret name');
    const optional = optBool(e, 'optional', f) ?? false;
    c.volumes.push({ field: f, hint: name, source: { secret: { secretName: name, optional } }, mount: { mountPath } });
  });
}

/** configMapAsVolume: a ConfigMap mounted as files. */
export function configMapVolumes(c: PlatformContext): void {
  list(c.config, 'configMapAsVolume').forEach((x, i) => {
    const f = `configMapAsVolume[${i}]`;
    const e = entry(x, f);
    const mountPath = mountPathOf(e, f, c.notes);
    const name = nameFrom(c.resolve, e, 'configMapNameParameter', 'configMapName', f);
    if (name === undefined) return skipped(c, f, 'ConfigMap name');
    const optional = optBool(e, 'optional', f) ?? false;
    c.volumes.push({ field: f, hint: name, source: { configMap: { name, optional } }, mount: { mountPath } });
  });
}

/** emptyDirMounts: a named scratch directory; a memory medium and a size limit are noted, not enforced. */
export function emptyDirs(c: PlatformContext): void {
  list(c.config, 'emptyDirMounts').forEach((x, i) => {
    const f = `emptyDirMounts[${i}]`;
    const e = entry(x, f);
    const volumeName = reqString(e, 'volumeName', f);
    const mountPath = mountPathOf(e, f, c.notes);
    const medium = optString(e, 'medium', f);
    if (medium !== undefined && medium !== 'Memory' && !/^HugePages(-.+)?$/.test(medium)) fail(f, `medium must be "" or Memory, got ${JSON.stringify(medium)}`);
    const sizeLimit = e['sizeLimit'] === undefined || e['sizeLimit'] === null || e['sizeLimit'] === '' ? undefined : quantity(e['sizeLimit'], `${f}.sizeLimit`);
    const emptyDir: { medium?: string; sizeLimit?: string } = {};
    if (medium) emptyDir.medium = medium;
    if (sizeLimit) emptyDir.sizeLimit = sizeLimit;
    if (medium) c.notes.add(`emptyDir volume ${volumeName} asks for medium ${medium}; on this machine it is a directory on disk`);
    if (sizeLimit) c.notes.add(`emptyDir volume ${volumeName}: its sizeLimit ${sizeLimit} is not enforced on this machine`);
    c.volumes.push({ field: f, explicit: volumeName, hint: volumeName, source: { emptyDir }, mount: { mountPath } });
  });
}

/** genericEphemeralVolume: a per-Pod claim upstream; an empty directory on this machine. */
export function genericEphemeralVolumes(c: PlatformContext): void {
  list(c.config, 'genericEphemeralVolume').forEach((x, i) => {
    const f = `genericEphemeralVolume[${i}]`;
    const e = entry(x, f);
    const volumeName = reqString(e, 'volumeName', f);
    const mountPath = mountPathOf(e, f, c.notes);
    const size = e['size'] === undefined || e['size'] === null || e['size'] === '' ? undefined : quantity(e['size'], `${f}.size`);
    const modes = stringList(e, 'accessModes', f) ?? [];
    for (const m of modes) if (!['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'].includes(m)) fail(`${f}.accessModes`, `unsupported access mode ${JSON.stringify(m)}`);
    const storageClass = optBool(e, 'defaultStorageClass', f) ? 'the default storage class' : optString(e, 'storageClassName', f) ? `storage class ${optString(e, 'storageClassName', f) ?? ''}` : undefined;
    if (e['metadata'] !== undefined && e['metadata'] !== null) {
      const md = entry(e['metadata'], `${f}.metadata`);
      stringMap(md['labels'], `${f}.metadata.labels`);
      stringMap(md['annotations'], `${f}.metadata.annotations`);
    }
    const asked = [size, modes.join('/'), storageClass].filter(Boolean).join(', ');
    c.notes.add(`generic ephemeral volume ${volumeName}${asked ? ` (${asked})` : ''} is backed by an empty directory on this machine (an emptyDir volume); no claim is created and its size is not enforced`);
    c.volumes.push({ field: f, explicit: volumeName, hint: volumeName, source: { emptyDir: {} }, mount: { mountPath } });
  });
}

/** enabledSharedMemory: a memory-backed volume at /dev/shm; a directory on disk here. */
export function sharedMemory(c: PlatformContext): void {
  if (c.config['enabledSharedMemory'] !== undefined && c.config['enabledSharedMemory'] !== null) {
    const f = 'enabledSharedMemory';
    const e = entry(c.config['enabledSharedMemory'], f);
    const volumeName = optString(e, 'volumeName', f) ?? 'shm';
    const size = e['size'] === undefined || e['size'] === null || e['size'] === '' ? undefined : quantity(e['size'], `${f}.size`);
    c.notes.add(`shared memory volume ${volumeName} at /dev/shm is a directory on disk on this machine${size ? `; its size ${size} is not enforced` : ''}`);
    c.volumes.push({ field: f, explicit: volumeName, hint: volumeName, source: { emptyDir: { medium: 'Memory', ...(size ? { sizeLimit: size } : {}) } }, mount: { mountPath: '/dev/shm' } });
  }
}

/**
 * Names the volumes: a name the config gives is kept (same name and same source is one volume
 * mounted twice; same name for different sources is an error), derived names get a `-2`, `-3`...
 * suffix when taken; a volume with the same source as one already there is reused.
 */
function nameVolumes(existing: Volume[], reqs: VolumeRequest[]): Map<string, string> {
  const taken = new Map<string, VolumeSource>(existing.map((v) => {
    const { name, ...src } = v;
    return [name, src];
  }));
  const aliases = new Map<string, string>();
  const sameSource = (src: VolumeSource): string | undefined => [...taken].find(([, s]) => deepEqual(s, src))?.[0];
  for (const r of reqs.filter((q) => q.explicit !== undefined)) {
    const want = r.explicit as string;
    if (!isDns1123Label(want)) fail(r.field, `volumeName ${JSON.stringify(want)} must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)`);
    const there = taken.get(want);
    if (there && !deepEqual(there, r.source)) fail(r.field, `volumeName ${JSON.stringify(want)} is already used by another volume of this Pod`);
    taken.set(want, r.source);
    r.name = want;
    aliases.set(want, want);
  }
  for (const r of reqs.filter((q) => q.explicit === undefined)) {
    let name = sameSource(r.source);
    if (name === undefined) {
      const base = labelFrom(r.hint);
      name = base;
      for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 63 - String(i).length - 1).replace(/-+$/, '')}-${i}`;
      taken.set(name, r.source);
    }
    r.name = name;
    if (!aliases.has(r.hint)) aliases.set(r.hint, name);
  }
  return aliases;
}

/**
 * Names the volumes the settings asked for and mounts them in the main container; a mount path used
 * twice is an error naming both. Sets `c.aliases`, by which init containers refer to the volumes.
 */
export function placeVolumes(c: PlatformContext): Change | void {
  const existingVolumes = c.spec.volumes ?? [];
  const aliases = nameVolumes(existingVolumes, c.volumes);
  for (const v of existingVolumes) aliases.set(v.name, v.name);
  const newVolumes: Volume[] = [];
  const mounts: VolumeMount[] = [];
  const usedPaths = new Map<string, string>((c.main.volumeMounts ?? []).map((m) => [m.mountPath, `the volume ${m.name}`]));
  for (const r of c.volumes) {
    const name = r.name as string;
    if (!existingVolumes.some((v) => v.name === name) && !newVolumes.some((v) => v.name === name)) newVolumes.push({ name, ...r.source });
    if (!r.mount) continue;
    const clash = usedPaths.get(r.mount.mountPath);
    if (clash) fail(r.field, `mountPath ${r.mount.mountPath} is already used by ${clash}`);
    usedPaths.set(r.mount.mountPath, r.field);
    mounts.push({ name, ...r.mount });
  }
  c.aliases = aliases;
  if (!newVolumes.length && !mounts.length) return;
  return () => {
    if (newVolumes.length) c.spec.volumes = [...existingVolumes, ...newVolumes];
    if (mounts.length) c.main.volumeMounts = [...(c.main.volumeMounts ?? []), ...mounts];
  };
}
