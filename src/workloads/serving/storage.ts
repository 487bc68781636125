// Where a model's files come from. A replica sees its model at `/mnt/models` (KServe's mount path);
// this module turns a `storageUri` into the host path bound there:
//
// - `pvc://<claim>[/<path>]`: the claim's directory (no copy; read-only, with the path as subPath);
// - `file:///abs/path` or `/abs/path` (a pipeline run's artifact URI is such a path): an artifact,
//   found through the artifact store, which gives the path a replica mounts;
// - `http(s)://...`: downloaded once into the model cache under the data dir, shared by every replica
//   and revision naming the same URI; `.tar`, `.tar.gz`/`.tgz` and `.zip` files are unpacked.
// - `s3://bucket/key`: downloaded from the S3 server (the endpoint and credentials KServe's storage
//   initializer would use: s3-credentials.ts) into the artifact store's cache, again only when the
//   objects there change.
// - `model-registry://<model>[/<version>|@<alias>]`: the model artifact's URI in the namespace's Model
//   Registry (model-registry.ts), then fetched as above.
//
// Other schemes (gs, hf, oci, azure, ...) need a network this machine does not reach: they fail
// with a reason the InferenceService's status shows.
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { archiveFormatOf, unpackArchive } from '../../artifacts/archive.js';
import { ArtifactNotFoundError, type ArtifactStore } from '../../artifacts/store.js';
import type { RegistryModelRef } from '../../api/serving-revision.js';
import { parseRegistryUri, registryScheme } from './model-registry.js';

export interface ModelSource {
  kind: 'pvc' | 'host';
  /** pvc: the claim */
  claim?: string;
  /** pvc: the path inside the claim */
  subPath?: string;
  /** host: the file or directory to mount */
  path?: string;
  /** a `model-registry://` URI: what it resolved to */
  registry?: RegistryModelRef;
}

export class StorageError extends Error {
  override readonly name = 'StorageError';
}

const cloudSchemes = ['gs://', 'hf://', 'oci://', 'oci+fetch://', 'oci+native://', 'modelscope://', 'hdfs://', 'webhdfs://'];

/** Parses a storageUri without fetching anything; throws StorageError for what cannot be served here. */
export function parseStorageUri(uri: string): { scheme: 'pvc' | 'file' | 'http' | 's3' | 'model-registry'; claim?: string; subPath?: string; path?: string; url?: string } {
  if (uri.startsWith('pvc://')) {
    const rest = uri.slice('pvc://'.length);
    const i = rest.indexOf('/');
    const claim = i < 0 ? rest : rest.slice(0, i);
    const subPath = i < 0 ? '' : rest.slice(i + 1).replace(/^\/+|\/+$/g, '');
    if (!claim) throw new StorageError(`storageUri ${uri}: no claim name`);
    if (subPath.split('/').includes('..')) throw new StorageError(`storageUri ${uri}: the path may not contain ".."`);
    return { scheme: 'pvc', claim, subPath };
  }
  if (uri.startsWith('file://')) {
    const p = uri.slice('file://'.length);
    if (!p.startsWith('/')) throw new StorageError(`storageUri ${uri}: expected file:///absolute/path`);
    return { scheme: 'file', path: p };
  }
  if (uri.startsWith('/')) return { scheme: 'file', path: uri };
  if (/^https?:\/\//.test(uri)) {
    if (/^https:\/\/[^/]+\.blob\.core\.windows\.net\//.test(uri) || /\.git$/.test(uri)) {
      throw new StorageError(`storageUri ${uri}: Azure Blob and git sources need credentials and a network this machine does not reach`);
    }
    return { scheme: 'http', url: uri };
  }
  if (uri.startsWith('s3://')) {
    if (!/^s3:\/\/[^/]+/.test(uri)) throw new StorageError(`storageUri ${uri}: no bucket`);
    return { scheme: 's3', url: uri };
  }
  if (uri.startsWith(registryScheme)) {
    const ref = parseRegistryUri(uri);
    if (typeof ref === 'string') throw new StorageError(`storageUri ${uri}: ${ref}`);
    return { scheme: 'model-registry' };
  }
  const cloud = cloudSchemes.find((s) => uri.startsWith(s));
  if (cloud) throw new StorageError(`storageUri ${uri}: ${cloud.slice(0, -3)} storage is not reachable from this machine; use pvc://, file:// or http(s)://`);
  throw new StorageError(`Cannot recognize storage type for ${uri}`);
}

/** who asks for a model: the InferenceService's namespace and service account (whose Secrets hold S3 credentials) */
export interface ModelOwner {
  namespace: string;
  serviceAccountName?: string;
}

/** the store of an s3:// model, with the credentials and endpoint its owner's Secrets give */
export type S3ModelStores = (owner: ModelOwner, uri: string) => Promise<ArtifactStore>;

/** a `model-registry://` URI looked up in the owner's namespace: what it names, or why it names nothing */
export type RegistryLookup = (namespace: string, uri: string, pinnedVersionId?: string) => Promise<RegistryModelRef | string>;

export class ModelStore {
  private readonly inflight = new Map<string, Promise<string>>();

  constructor(private readonly cacheDir: string, readonly claimDir: (namespace: string, claim: string) => string, private readonly artifacts: ArtifactStore, private readonly s3?: S3ModelStores, private readonly registry?: RegistryLookup) {}

  /**
   * The source a replica mounts at /mnt/models; downloads http(s) and s3 models first (once per
   * version). `pinnedVersionId`: the registry version an alias URI's revision resolved the alias to.
   */
  async resolve(uri: string, owner: ModelOwner = { namespace: 'default' }, pinnedVersionId?: string): Promise<ModelSource> {
    const p = parseStorageUri(uri);
    if (p.scheme === 'model-registry') {
      if (!this.registry) throw new StorageError(`storageUri ${uri}: no model registry to look it up in`);
      const found = await this.registry(owner.namespace, uri, pinnedVersionId);
      if (typeof found === 'string') throw new StorageError(`storageUri ${uri}: ${found}`);
      try {
        return { ...(await this.resolve(found.uri, owner)), registry: found };
      } catch (e) {
        // the message names both: the registry's entry and where its files were looked for
        if (e instanceof StorageError) throw new StorageError(`storageUri ${uri} (model artifact ${found.modelArtifactId}): ${e.message}`);
        throw e;
      }
    }
    if (p.scheme === 'pvc') return { kind: 'pvc', claim: p.claim as string, subPath: p.subPath ?? '' };
    if (p.scheme === 's3') {
      if (!this.s3) throw new StorageError(`storageUri ${uri}: Skiff has no S3 server configured (artifacts.s3 in its config)`);
      try {
        return { kind: 'host', path: await (await this.s3(owner, uri)).localPath(uri) };
      } catch (e) {
        if (e instanceof ArtifactNotFoundError) throw new StorageError(`storageUri ${uri}: no object or prefix of that name`);
        throw new StorageError(`storageUri ${uri}: ${(e as Error).message}`);
      }
    }
    if (p.scheme === 'file') {
      if (!this.artifacts.handles(uri)) throw new StorageError(`storageUri ${uri}: the artifact store does not hold this URI`);
      try {
        return { kind: 'host', path: await this.artifacts.localPath(uri) };
      } catch (e) {
        if (e instanceof ArtifactNotFoundError) throw new StorageError(`storageUri ${uri}: ${p.path as string} does not exist`);
        throw e;
      }
    }
    return { kind: 'host', path: await this.download(p.url as string) };
  }

  /** The cache directory of a URL: the same URL is fetched once, whatever asks for it. */
  private download(url: string): Promise<string> {
    let p = this.inflight.get(url);
    if (!p) {
      p = this.fetchOnce(url).finally(() => this.inflight.delete(url));
      this.inflight.set(url, p);
    }
    return p;
  }

  private async fetchOnce(url: string): Promise<string> {
    const dir = join(this.cacheDir, createHash('sha256').update(url).digest('hex').slice(0, 20));
    const done = join(dir, '.skiff-complete');
    const content = join(dir, 'model');
    if (existsSync(done)) return content;
    const tmp = `${dir}.partial-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(join(tmp, 'model'), { recursive: true });
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw new StorageError(`downloading ${url}: ${(e as Error).message}`);
    }
    if (!res.ok || !res.body) {
      rmSync(tmp, { recursive: true, force: true });
      throw new StorageError(`downloading ${url}: HTTP ${res.status}`);
    }
    const name = basename(new URL(url).pathname) || 'model';
    const file = join(tmp, 'model', name);
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(file));
    const type = res.headers.get('content-type') ?? '';
    try {
      await unpack(file, join(tmp, 'model'), type);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw new StorageError(`unpacking ${url}: ${(e as Error).message}`);
    }
    writeFileSync(join(tmp, '.skiff-complete'), url);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return content;
  }
}

/** Unpacks an archive in place of itself (as KServe's storage initializer does); other files stay. */
async function unpack(file: string, into: string, contentType: string): Promise<void> {
  const format = archiveFormatOf(file, contentType);
  if (!format) return;
  await unpackArchive(file, into, format);
  rmSync(file, { force: true });
}
