// The default artifact store: a directory on this machine (the data dir's pipeline-root). Objects
// are files and prefixes are directories; a URI is `file:///absolute/path` or the absolute path
// itself (KFP's local pipeline roots), wherever on the disk it points, since a Run may name its
// own pipeline root and a component may write an artifact anywhere with `Artifact.set_path`.
import { chmodSync, chownSync, createReadStream, createWriteStream, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { cp, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ArtifactNotFoundError, ArtifactStoreError, type ArtifactStore, type ObjectInfo } from './store.js';

const notFound = (e: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '');

let tmpSeq = 0;

export class LocalArtifactStore implements ArtifactStore {
  readonly root: string;

  /** `root`: the directory of the default pipeline root (made if missing) */
  constructor(root: string) {
    if (!isAbsolute(root)) throw new ArtifactStoreError(`local artifact store: root ${JSON.stringify(root)} must be an absolute path`);
    mkdirSync(root, { recursive: true });
    this.root = root;
  }

  handles(uri: string): boolean {
    return uri.startsWith('file:///') || uri.startsWith('/');
  }

  /** The file a URI names; an ArtifactStoreError for URIs this store does not hold. */
  pathOf(uri: string): string {
    if (uri.startsWith('file://')) {
      const p = uri.slice('file://'.length);
      if (!p.startsWith('/')) throw new ArtifactStoreError(`artifact URI ${JSON.stringify(uri)}: expected file:///absolute/path`);
      return p;
    }
    if (uri.startsWith('/')) return uri;
    throw new ArtifactStoreError(`artifact URI ${JSON.stringify(uri)}: the local artifact store holds file:// URIs and absolute paths only`);
  }

  async stat(uri: string): Promise<ObjectInfo | undefined> {
    try {
      const s = await stat(this.pathOf(uri));
      return { uri, size: s.isDirectory() ? 0 : s.size, directory: s.isDirectory(), modified: s.mtime };
    } catch (e) {
      if (notFound(e)) return undefined;
      throw e;
    }
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
    try {
      return await readFile(this.pathOf(uri));
    } catch (e) {
      if (notFound(e)) return undefined;
      if ((e as NodeJS.ErrnoException).code === 'EISDIR') throw new ArtifactStoreError(`artifact ${uri} is a directory, not an object`);
      throw e;
    }
  }

  async openRead(uri: string): Promise<Readable> {
    const path = this.pathOf(uri);
    const s = await this.stat(uri);
    if (!s) throw new ArtifactNotFoundError(uri);
    if (s.directory) throw new ArtifactStoreError(`artifact ${uri} is a directory, not an object`);
    return createReadStream(path);
  }

  async write(uri: string, data: Buffer | string): Promise<void> {
    const path = this.pathOf(uri);
    makeDirs(dirname(path));
    const tmp = this.tmpFor(path);
    await writeFile(tmp, data);
    await rename(tmp, path);
    ownLikeParent(path);
  }

  async writeFrom(uri: string, source: Readable): Promise<void> {
    const path = this.pathOf(uri);
    makeDirs(dirname(path));
    // readers never see half an object: the stream lands beside it and is renamed over it
    const tmp = this.tmpFor(path);
    try {
      await pipeline(source, createWriteStream(tmp));
      await rename(tmp, path);
      ownLikeParent(path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async list(uri: string): Promise<ObjectInfo[]> {
    const base = this.pathOf(uri).replace(/\/+$/, '') || '/';
    const top = await this.stat(uri);
    if (!top) return [];
    if (!top.directory) return [top];
    const out: ObjectInfo[] = [];
    const prefix = uri.replace(/\/+$/, '');
    for (const rel of (await readdir(base, { recursive: true })).sort()) {
      const s = await stat(join(base, rel)).catch((e: unknown) => (notFound(e) ? undefined : Promise.reject(e)));
      if (s && !s.isDirectory()) out.push({ uri: `${prefix}/${rel.split(sep).join('/')}`, size: s.size, directory: false, modified: s.mtime });
    }
    return out;
  }

  async copy(from: string, to: string): Promise<void> {
    const src = this.pathOf(from);
    const dst = this.pathOf(to);
    if (!(await this.exists(from))) throw new ArtifactNotFoundError(from);
    makeDirs(dirname(dst));
    await cp(src, dst, { recursive: true, force: true });
    ownLikeParent(dst);
  }

  async remove(uri: string): Promise<void> {
    await rm(this.pathOf(uri), { recursive: true, force: true });
  }

  async contains(prefix: string, uri: string): Promise<boolean> {
    const real = async (p: string): Promise<string | undefined> => realpath(p).catch((e: unknown) => (notFound(e) ? undefined : Promise.reject(e)));
    const root = await real(this.pathOf(prefix));
    const target = await real(this.pathOf(uri));
    if (root === undefined || target === undefined) return false;
    const rel = relative(root, target);
    return rel === '' || (!isAbsolute(rel) && rel.split(sep)[0] !== '..');
  }

  prepareOutputs(uris: string[]): string[] {
    return uris.map((uri) => {
      const path = this.pathOf(uri);
      makeDirs(dirname(path));
      return path;
    });
  }

  async localPath(uri: string): Promise<string> {
    if (!(await this.exists(uri))) throw new ArtifactNotFoundError(uri);
    return this.pathOf(uri);
  }

  private tmpFor(path: string): string {
    return `${path}.skiff-tmp-${process.pid}-${++tmpSeq}`;
  }
}

// With tenancy, a namespace's part of the root belongs to the namespace's user (its Pods run as it, see
// src/substrate/local/isolation.ts): what Skiff makes in there for them takes the owner, group and
// directory mode of where it is made, so the task that writes an output may write it.

/** mkdir -p, each new directory owned and moded like its parent when the parent is not ours */
function makeDirs(dir: string): void {
  makeDir(dir);
}

interface Owner { uid: number; gid: number; mode: number }

/**
 * One level of makeDirs: tries the mkdir first and walks up only when the parent is missing (a task's
 * output folders are new, their parents mostly not), and hands the owner it gave a directory down to
 * the next, so each level costs a mkdir and only the first new one a stat. Returns the owner a new
 * directory took, or undefined when it was there already.
 */
function makeDir(dir: string): Owner | undefined {
  let parent: Owner | undefined;
  try {
    mkdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return undefined;
    if (code !== 'ENOENT' || dirname(dir) === dir) throw e;
    parent = makeDir(dirname(dir));
    try {
      mkdirSync(dir);
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw e2;
    }
  }
  const owner = parent ?? statSync(dirname(dir));
  if (owner.uid !== process.getuid?.()) {
    chownSync(dir, owner.uid, owner.gid);
    chmodSync(dir, owner.mode & 0o7777);
  }
  return { uid: owner.uid, gid: owner.gid, mode: owner.mode };
}

/** a file (or tree) Skiff wrote takes the owner of the directory it is in, when that is not ours */
function ownLikeParent(path: string): void {
  const parent = statSync(dirname(path));
  if (parent.uid === process.getuid?.()) return;
  const walk = (p: string): void => {
    const st = lstatSync(p);
    if (!st.isSymbolicLink()) chownSync(p, parent.uid, parent.gid);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(path);
}
