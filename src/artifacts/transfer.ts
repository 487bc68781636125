// Moving artifacts from one store to another, object by object as streams: an S3 object downloaded
// into a directory on this machine for a Pod to read, what a Pod wrote uploaded to S3 after it (as
// KFP's launcher does inside the Pod), a local file copied to an S3 URI.
import type { ArtifactStore, ObjectInfo } from './store.js';

/** a key's or path's segments, without the empty ones and without `.`/`..`, which would leave the target */
export function safeSegments(path: string): string[] {
  return path.split('/').filter((s) => s !== '' && s !== '.' && s !== '..');
}

const bare = (uri: string): string => uri.replace(/\?.*$/, '').replace(/\/+$/, '');

/**
 * Copies the object at `fromUri` to `toUri`, or every object under the prefix `fromUri` to the same
 * relative place under `toUri`. Returns how many objects were copied: 0 when nothing is there.
 * `signal` stops the copy between objects.
 */
export async function copyAcross(from: ArtifactStore, fromUri: string, to: ArtifactStore, toUri: string, signal?: AbortSignal): Promise<number> {
  return copyObjects(from, fromUri, await from.list(fromUri), to, toUri, signal);
}

/** copyAcross for objects already listed (`objects` is `from.list(fromUri)`) */
export async function copyObjects(from: ArtifactStore, fromUri: string, objects: ObjectInfo[], to: ArtifactStore, toUri: string, signal?: AbortSignal): Promise<number> {
  const base = bare(fromUri);
  const target = bare(toUri);
  for (const o of objects) {
    signal?.throwIfAborted();
    const rel = o.uri === base ? [] : safeSegments(o.uri.slice(base.length + 1));
    await to.writeFrom(rel.length ? `${target}/${rel.join('/')}` : target, await from.openRead(o.uri));
  }
  return objects.length;
}
