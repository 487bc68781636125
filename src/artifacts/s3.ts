// The artifact store on S3 (AWS S3, MinIO, anything that speaks its API): objects are S3 objects and
// prefixes are key prefixes ending in `/`. A URI is `s3://bucket/key` or `minio://bucket/key`, KFP's
// two spellings of the same thing (KFP's launcher reads `minio://` from the MinIO it deploys); which
// endpoint and credentials serve them is this store's configuration, never part of the URI.
//
// Pods write to their own machine's disk, so what a Pod reads or writes goes through a directory on
// this machine: `prepareOutputs` gives the places to write (under `stagingDir`, laid out as KFP's
// launcher lays out `/s3/<bucket>/<key>` and `/minio/<bucket>/<key>`), and `localPath` downloads an
// object or prefix into `cacheDir` once per version of it (serving's /mnt/models).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand,
  S3Client, S3ServiceException, type _Object,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { parseS3Uri, s3Schemes, type Location, type S3Credentials, type S3Scheme, type S3Settings } from './s3-uri.js';
import { ArtifactNotFoundError, ArtifactStoreError, type ArtifactStore, type ObjectInfo } from './store.js';
import { LocalArtifactStore } from './local.js';
import { copyObjects, safeSegments } from './transfer.js';

export interface S3StoreOptions {
  /** `http(s)://host:port`; absent: AWS's own endpoint for the region */
  endpoint?: string;
  /** default us-east-1 (MinIO's) */
  region?: string;
  credentials: S3Credentials;
  /** bucket in the path, not the host name: what MinIO and most S3 servers other than AWS need (default true) */
  forcePathStyle?: boolean;
  /** the URI schemes this store holds (default both) */
  schemes?: S3Scheme[];
  /** the default pipeline root, e.g. `minio://mlpipeline/v2/artifacts` */
  root: string;
  /** where prepareOutputs gives Pods their places to write */
  stagingDir: string;
  /** where localPath downloads to */
  cacheDir: string;
  /** attempts per request, the first included (default 3) */
  maxAttempts?: number;
  /** multipart uploads' part size in bytes (default 8 MiB, S3's minimum is 5 MiB) */
  partSize?: number;
}

/** The endpoint refused the credentials: names the endpoint and the access key id, never the secret. */
export class S3CredentialsError extends ArtifactStoreError {
  override name = 'S3CredentialsError';
}

/** S3's largest single CopyObject; larger objects are streamed through instead */
const maxCopyBytes = 5 * 1024 ** 3;
/** DeleteObjects takes at most this many keys */
const deleteBatch = 1000;

export class S3ArtifactStore implements ArtifactStore {
  readonly root: string;
  readonly endpoint: string;
  readonly accessKeyId: string;
  private readonly client: S3Client;
  private readonly schemes: S3Scheme[];
  private readonly partSize: number;
  private readonly downloads = new Map<string, Promise<string>>();

  constructor(private readonly opts: S3StoreOptions) {
    this.schemes = opts.schemes ?? ['s3', 'minio'];
    const root = parseS3Uri(opts.root);
    if (!root || !this.schemes.includes(root.scheme)) throw new ArtifactStoreError(`S3 artifact store: root ${JSON.stringify(opts.root)} must be ${this.schemes.map((s) => `${s}://bucket/path`).join(' or ')}`);
    if (!opts.credentials.accessKeyId || !opts.credentials.secretAccessKey) throw new ArtifactStoreError(`S3 artifact store for ${opts.endpoint ?? 'AWS'}: an access key id and a secret access key are needed`);
    this.root = opts.root.replace(/\?.*$/, '').replace(/\/+$/, '');
    this.endpoint = opts.endpoint ?? `AWS S3 (${opts.region ?? 'us-east-1'})`;
    this.accessKeyId = opts.credentials.accessKeyId;
    this.partSize = Math.max(5 * 1024 ** 2, opts.partSize ?? 8 * 1024 ** 2);
    // Skiff runs on Node 20 (package.json's engines); the SDK's notice about its own future releases is not its users' concern
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client({
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      region: opts.region ?? 'us-east-1',
      credentials: { accessKeyId: opts.credentials.accessKeyId, secretAccessKey: opts.credentials.secretAccessKey },
      forcePathStyle: opts.forcePathStyle ?? true,
      maxAttempts: opts.maxAttempts ?? 3,
      // a dead endpoint fails in seconds, not after the operating system's TCP timeout
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
    });
  }

  /** closes the client's connections */
  destroy(): void {
    this.client.destroy();
  }

  handles(uri: string): boolean {
    const loc = parseS3Uri(uri);
    return loc !== undefined && this.schemes.includes(loc.scheme);
  }

  private locate(uri: string): Location {
    const loc = parseS3Uri(uri);
    if (!loc || !this.schemes.includes(loc.scheme)) {
      throw new ArtifactStoreError(`artifact URI ${JSON.stringify(uri)}: the S3 artifact store at ${this.endpoint} holds ${this.schemes.map((s) => `${s}://bucket/key`).join(' and ')} URIs only`);
    }
    return loc;
  }

  /** The error a failed request becomes: refused credentials and unreachable endpoints said plainly. */
  private fail(e: unknown, what: string): Error {
    if (e instanceof ArtifactStoreError) return e;
    const name = (e as { name?: string }).name ?? '';
    const status = (e as S3ServiceException).$metadata?.httpStatusCode;
    if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'InvalidToken', 'ExpiredToken'].includes(name) || (status === 403 && e instanceof S3ServiceException)) {
      // a HEAD request's refusal has no body, so no error code: its status says it
      const why = name && name !== 'Unknown' && name !== 'Forbidden' ? name : `HTTP ${status ?? 403}`;
      return new S3CredentialsError(`S3 endpoint ${this.endpoint} refused the credentials of access key id "${this.accessKeyId}" (${why}) ${what}`);
    }
    if (name === 'NoSuchBucket') return new ArtifactStoreError(`${what}: the bucket does not exist at S3 endpoint ${this.endpoint}`);
    const code = (e as NodeJS.ErrnoException).code;
    if (code && /^E[A-Z]+$/.test(code)) return new ArtifactStoreError(`S3 endpoint ${this.endpoint} cannot be reached ${what}: ${code}`);
    if (name === 'TimeoutError' || name === 'RequestTimeout') return new ArtifactStoreError(`S3 endpoint ${this.endpoint} did not answer ${what}`);
    return new ArtifactStoreError(`S3 endpoint ${this.endpoint}: ${what} failed: ${name ? `${name}: ` : ''}${(e as Error).message}`);
  }

  /** Checks the endpoint, the credentials and the root's bucket with one request: for a clear error at start-up. */
  async check(): Promise<void> {
    const root = this.locate(this.root);
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: root.bucket }));
    } catch (e) {
      if (isNotFound(e)) throw new ArtifactStoreError(`the bucket ${root.bucket} of pipeline root ${this.root} does not exist at S3 endpoint ${this.endpoint}`);
      throw this.fail(e, `checking the bucket ${root.bucket}`);
    }
  }

  async stat(uri: string): Promise<ObjectInfo | undefined> {
    const loc = this.locate(uri);
    if (loc.key === '') {
      try {
        await this.client.send(new HeadBucketCommand({ Bucket: loc.bucket }));
        return { uri, size: 0, directory: true, modified: new Date(0) };
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw this.fail(e, `reading ${uri}`);
      }
    }
    try {
      const h = await this.client.send(new HeadObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
      return { uri, size: h.ContentLength ?? 0, directory: false, modified: h.LastModified ?? new Date(0) };
    } catch (e) {
      if (!isNotFound(e)) throw this.fail(e, `reading ${uri}`);
    }
    const first = await this.listPage(loc, `${loc.key}/`, undefined, 1);
    const o = first.objects[0];
    return o ? { uri, size: 0, directory: true, modified: o.LastModified ?? new Date(0) } : undefined;
  }

  async exists(uri: string): Promise<boolean> {
    return (await this.stat(uri)) !== undefined;
  }

  async read(uri: string): Promise<Buffer> {
    const b = await this.readIfExists(uri);
    if (b === undefined) throw new ArtifactNotFoundError(uri);
    return b;
  }

  async readIfExists(uri: string): Promise<Buffer | undefined> {
    const body = await this.get(uri);
    if (!body) return undefined;
    const chunks: Buffer[] = [];
    try {
      for await (const c of body as AsyncIterable<Buffer>) chunks.push(c);
    } catch (e) {
      throw this.fail(e, `reading ${uri}`);
    }
    return Buffer.concat(chunks);
  }

  async openRead(uri: string): Promise<Readable> {
    const body = await this.get(uri);
    if (!body) throw new ArtifactNotFoundError(uri);
    return body;
  }

  /** the object's body; undefined when there is none; an error for a prefix, which has no bytes */
  private async get(uri: string): Promise<Readable | undefined> {
    const loc = this.locate(uri);
    if (loc.key === '') throw new ArtifactStoreError(`artifact ${uri} is a directory, not an object`);
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
      return r.Body as Readable;
    } catch (e) {
      if (!isNotFound(e)) throw this.fail(e, `reading ${uri}`);
    }
    if ((await this.listPage(loc, `${loc.key}/`, undefined, 1)).objects.length) throw new ArtifactStoreError(`artifact ${uri} is a directory, not an object`);
    return undefined;
  }

  async write(uri: string, data: Buffer | string): Promise<void> {
    const loc = this.objectLocation(uri);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: loc.bucket, Key: loc.key, Body: typeof data === 'string' ? Buffer.from(data) : data }));
    } catch (e) {
      throw this.fail(e, `writing ${uri}`);
    }
  }

  async writeFrom(uri: string, source: Readable): Promise<void> {
    const loc = this.objectLocation(uri);
    // one PUT for what fits in a part, a multipart upload for the rest; S3 shows the object only once
    // the upload completes, and an upload that fails is aborted, so readers never see half of it
    const upload = new Upload({ client: this.client, params: { Bucket: loc.bucket, Key: loc.key, Body: source }, partSize: this.partSize, queueSize: 2 });
    // the source's own failure is the error to report; the SDK would see only a stream that ended short
    let sourceError: unknown;
    const onError = (e: unknown): void => {
      sourceError ??= e;
      void upload.abort().catch(() => undefined);
    };
    source.once('error', onError);
    try {
      await upload.done();
    } catch (e) {
      throw sourceError !== undefined ? sourceError : this.fail(e, `writing ${uri}`);
    } finally {
      source.off('error', onError);
    }
    if (sourceError !== undefined) throw sourceError;
  }

  private objectLocation(uri: string): Location {
    const loc = this.locate(uri);
    if (loc.key === '') throw new ArtifactStoreError(`artifact ${uri} names a bucket, not an object`);
    return loc;
  }

  private async listPage(loc: Location, prefix: string, token: string | undefined, max?: number): Promise<{ objects: _Object[]; next?: string }> {
    try {
      const r = await this.client.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}), ...(max ? { MaxKeys: max } : {}) }));
      return { objects: r.Contents ?? [], ...(r.IsTruncated && r.NextContinuationToken ? { next: r.NextContinuationToken } : {}) };
    } catch (e) {
      if (isNotFound(e)) return { objects: [] };
      throw this.fail(e, `listing ${loc.scheme}://${loc.bucket}/${prefix}`);
    }
  }

  /** every object under a key prefix (the prefix included in their keys), folder markers left out */
  private async listAll(loc: Location, prefix: string): Promise<_Object[]> {
    const out: _Object[] = [];
    let token: string | undefined;
    do {
      const page = await this.listPage(loc, prefix, token);
      for (const o of page.objects) if (o.Key && !o.Key.endsWith('/')) out.push(o);
      token = page.next;
    } while (token);
    return out;
  }

  async list(uri: string): Promise<ObjectInfo[]> {
    const loc = this.locate(uri);
    const base = uri.replace(/\?.*$/, '').replace(/\/+$/, '');
    const prefix = loc.key === '' ? '' : `${loc.key}/`;
    const under = await this.listAll(loc, prefix);
    if (under.length === 0) {
      if (loc.key === '') return [];
      const top = await this.stat(uri);
      return top && !top.directory ? [top] : [];
    }
    return under
      .map((o) => ({ uri: `${base}/${(o.Key as string).slice(prefix.length)}`, size: o.Size ?? 0, directory: false, modified: o.LastModified ?? new Date(0) }))
      .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  }

  async copy(from: string, to: string): Promise<void> {
    const src = this.locate(from);
    const dst = this.locate(to);
    const top = await this.stat(from);
    if (!top) throw new ArtifactNotFoundError(from);
    if (!top.directory) return this.copyObject(src, top.size, dst);
    const prefix = src.key === '' ? '' : `${src.key}/`;
    for (const o of await this.listAll(src, prefix)) {
      const rel = (o.Key as string).slice(prefix.length);
      await this.copyObject({ ...src, key: o.Key as string }, o.Size ?? 0, { ...dst, key: dst.key === '' ? rel : `${dst.key}/${rel}` });
    }
  }

  private async copyObject(src: Location, size: number, dst: Location): Promise<void> {
    const what = `copying ${src.scheme}://${src.bucket}/${src.key} to ${dst.scheme}://${dst.bucket}/${dst.key}`;
    if (dst.key === '') throw new ArtifactStoreError(`${what}: the target names a bucket, not an object`);
    if (size > maxCopyBytes) {
      await this.writeFrom(`${dst.scheme}://${dst.bucket}/${dst.key}`, await this.openRead(`${src.scheme}://${src.bucket}/${src.key}`));
      return;
    }
    try {
      await this.client.send(new CopyObjectCommand({ Bucket: dst.bucket, Key: dst.key, CopySource: `${src.bucket}/${src.key.split('/').map(encodeURIComponent).join('/')}` }));
    } catch (e) {
      throw this.fail(e, what);
    }
  }

  async remove(uri: string): Promise<void> {
    const loc = this.locate(uri);
    const keys = (await this.listAll(loc, loc.key === '' ? '' : `${loc.key}/`)).map((o) => o.Key as string);
    if (loc.key !== '') keys.push(loc.key);
    for (let i = 0; i < keys.length; i += deleteBatch) {
      try {
        // Quiet: only failures come back; a key that is not there is no failure
        const r = await this.client.send(new DeleteObjectsCommand({ Bucket: loc.bucket, Delete: { Objects: keys.slice(i, i + deleteBatch).map((Key) => ({ Key })), Quiet: true } }));
        const err = r.Errors?.[0];
        if (err) throw new ArtifactStoreError(`S3 endpoint ${this.endpoint}: removing ${loc.scheme}://${loc.bucket}/${err.Key ?? ''} failed: ${err.Code ?? ''} ${err.Message ?? ''}`);
      } catch (e) {
        if (isNotFound(e)) return;
        throw this.fail(e, `removing ${uri}`);
      }
    }
  }

  async contains(prefix: string, uri: string): Promise<boolean> {
    const p = this.locate(prefix);
    const u = this.locate(uri);
    // S3 has no links, but a key may spell `..`: such a URI is never taken to be inside anything
    const dotted = (key: string): boolean => key.split('/').some((s) => s === '..' || s === '.');
    if (p.scheme !== u.scheme || p.bucket !== u.bucket || dotted(p.key) || dotted(u.key)) return false;
    if (!(p.key === '' || u.key === p.key || u.key.startsWith(`${p.key}/`))) return false;
    return (await this.exists(prefix)) && (await this.exists(uri));
  }

  /** Where a Pod on this machine finds or writes `uri`: KFP's `/s3/<bucket>/<key>` layout under `dir`. */
  private stagedPath(dir: string, uri: string): string {
    const loc = this.locate(uri);
    return join(dir, s3Schemes[loc.scheme], loc.bucket, ...safeSegments(loc.key));
  }

  /** The places under the staging directory; the launcher (src/artifacts/transfer.ts) uploads them after the Pod. */
  prepareOutputs(uris: string[]): string[] {
    return uris.map((uri) => {
      const path = this.stagedPath(this.opts.stagingDir, uri);
      mkdirSync(dirname(path), { recursive: true });
      return path;
    });
  }

  async localPath(uri: string): Promise<string> {
    let p = this.downloads.get(uri);
    if (!p) {
      p = this.download(uri).finally(() => this.downloads.delete(uri));
      this.downloads.set(uri, p);
    }
    return p;
  }

  /** Downloads the object or prefix into the cache, again only when what the listing shows has changed. */
  private async download(uri: string): Promise<string> {
    const objects = await this.list(uri);
    if (objects.length === 0) throw new ArtifactNotFoundError(uri);
    const dir = join(this.opts.cacheDir, createHash('sha256').update(`${this.endpoint}|${uri}`).digest('hex').slice(0, 20));
    const version = JSON.stringify(objects.map((o) => [o.uri, o.size, o.modified.toISOString()]));
    const marker = join(dir, '.skiff-version');
    // a single object keeps its name (a model file), a prefix becomes a directory
    const name = uri.replace(/\?.*$/, '').replace(/\/+$/, '').split('/').pop() || 'content';
    const content = join(dir, name);
    if (existsSync(marker) && readFileSync(marker, 'utf8') === version) return content;
    const tmp = `${dir}.partial-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    try {
      await copyObjects(this, uri, objects, new LocalArtifactStore(tmp), join(tmp, name));
      writeFileSync(join(tmp, '.skiff-version'), version);
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
    return content;
  }
}

/**
 * The S3 stores of one configuration: one per root, endpoint and credentials, made on first use and
 * kept (each holds a client with its connections). Credentials come from who asks (a namespace's
 * Secret) or else from the configuration.
 */
export class S3Stores {
  private readonly stores = new Map<string, S3ArtifactStore>();

  constructor(readonly settings: S3Settings, private readonly dirs: { stagingDir: string; cacheDir: string }) {}

  get endpointName(): string {
    return this.settings.endpoint ?? `AWS S3 (${this.settings.region ?? 'us-east-1'})`;
  }

  /**
   * The store for `root`: `credentials` when given, else the configured ones; `missing` says where
   * credentials could have come from, for the error when there are none.
   */
  get(root: string, opts: { credentials?: S3Credentials | undefined; endpoint?: string | undefined; region?: string | undefined; missing?: string } = {}): S3ArtifactStore {
    const credentials = opts.credentials ?? this.settings.credentials;
    const endpoint = opts.endpoint ?? this.settings.endpoint;
    const region = opts.region ?? this.settings.region;
    if (!credentials) throw new ArtifactStoreError(`no credentials for S3 endpoint ${endpoint ?? this.endpointName}: ${opts.missing ?? 'set artifacts.s3.accessKey and secretKey in Skiff\'s config'}`);
    const key = JSON.stringify([root, endpoint, region, credentials.accessKeyId, createHash('sha256').update(credentials.secretAccessKey).digest('hex')]);
    let store = this.stores.get(key);
    if (!store) {
      store = new S3ArtifactStore({
        ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}), ...(this.settings.forcePathStyle !== undefined ? { forcePathStyle: this.settings.forcePathStyle } : {}),
        credentials, root, stagingDir: this.dirs.stagingDir, cacheDir: this.dirs.cacheDir,
      });
      this.stores.set(key, store);
    }
    return store;
  }

  destroy(): void {
    for (const s of this.stores.values()) s.destroy();
    this.stores.clear();
  }
}

function isNotFound(e: unknown): boolean {
  const name = (e as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket' || (e instanceof S3ServiceException && e.$metadata?.httpStatusCode === 404);
}
