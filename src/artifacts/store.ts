// The artifact store: where pipeline artifacts, task output files and models live, named by URI.
// Controllers and the API read and move task outputs only through it (as KFP's launcher uploads
// a task's outputs to the pipeline root), never from the host disk, so a store backed by S3 or
// MinIO can stand in for the local directory when Pods run on other machines.
import type { Readable } from 'node:stream';

/** What a URI names: an object (a file), or a prefix that holds objects (a directory). */
export interface ObjectInfo {
  uri: string;
  /** bytes; 0 for a prefix */
  size: number;
  directory: boolean;
  modified: Date;
}

export class ArtifactStoreError extends Error {
  override name = 'ArtifactStoreError';
}

/** The URI names nothing in the store. */
export class ArtifactNotFoundError extends ArtifactStoreError {
  override name = 'ArtifactNotFoundError';
  constructor(readonly uri: string) {
    super(`artifact ${uri} does not exist`);
  }
}

export interface ArtifactStore {
  /** the default pipeline root, a URI this store holds */
  readonly root: string;
  /** whether this store holds URIs of this form (scheme, and for buckets the bucket) */
  handles(uri: string): boolean;

  /** undefined when nothing is there */
  stat(uri: string): Promise<ObjectInfo | undefined>;
  exists(uri: string): Promise<boolean>;
  /** the object's bytes; ArtifactNotFoundError when it does not exist */
  read(uri: string): Promise<Buffer>;
  /** the object's bytes, or undefined when it does not exist (an optional output, not an error) */
  readIfExists(uri: string): Promise<Buffer | undefined>;
  /** a stream of the object's bytes, for objects too large to hold (model files, datasets) */
  openRead(uri: string): Promise<Readable>;
  write(uri: string, data: Buffer | string): Promise<void>;
  /** writes a stream to the object at `uri`, replacing it only once the stream has ended */
  writeFrom(uri: string, source: Readable): Promise<void>;
  /** the objects at or under `uri`, recursively, sorted by URI (not the prefixes themselves) */
  list(uri: string): Promise<ObjectInfo[]>;
  /** copies one object, or every object under a prefix, to `to` */
  copy(from: string, to: string): Promise<void>;
  remove(uri: string): Promise<void>;
  /** whether `uri` is `prefix` or lies under it, once any links on the way are followed */
  contains(prefix: string, uri: string): Promise<boolean>;

  /**
   * Gives a Pod on this machine its places to write the outputs named by `uris` (output files and
   * artifact URIs) and returns those places, in order. The Pod writes to its own machine's disk, so
   * this is a local step for every store (KFP's launcher makes these folders inside the Pod before
   * the component runs); a remote store stages them there and takes them in after the Pod.
   */
  prepareOutputs(uris: string[]): string[];
  /**
   * A path on this machine that holds the object or prefix, for a Pod to mount (serving's
   * /mnt/models): the local store's own path; a remote store's download into a cache.
   */
  localPath(uri: string): Promise<string>;
}
