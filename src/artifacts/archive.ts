// The one archive unpacker: model archives fetched by serving's storage initializer and pipeline
// packages uploaded to the KFP API are both tar (plain or gzip) or zip. It runs in process with
// `tar` and `yauzl`, so no host `tar`/`unzip`/`python3` is needed, and it refuses entries whose
// names would land outside the target (absolute paths, `..`), as an archive from the network may
// carry them on purpose.
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, realpath, rm, symlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';

export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';
}

export type ArchiveFormat = 'tar' | 'tar.gz' | 'zip';

export interface ArchiveEntry {
  /** the entry's name inside the archive, `/`-separated and relative (checked) */
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** symlink: where it points, as written in the archive */
  linkTarget?: string;
  /** permission bits, where the archive records them */
  mode?: number;
  /** the entry's bytes (files); read it or leave it, not both later */
  body: Readable;
}

/** The format a file name (and, for downloads, a Content-Type) says, as KServe's storage initializer decides it. */
export function archiveFormatOf(name: string, contentType = ''): ArchiveFormat | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('.tar.gz') || lower.endsWith('.tgz') || (contentType.includes('gzip') && lower.endsWith('.gz'))) return 'tar.gz';
  if (lower.endsWith('.tar')) return 'tar';
  if (lower.endsWith('.zip')) return 'zip';
  return undefined;
}

/** The format the first bytes show (gzip is taken to hold a tar); undefined for anything else. */
export function sniffArchive(head: Buffer): ArchiveFormat | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  if (head.length >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  return undefined;
}

/** An entry name made safe to join under a directory, or an ArchiveError naming it. */
export function checkEntryPath(name: string): string {
  const p = name.replace(/\\/g, '/');
  if (p === '' || p.startsWith('/') || /^[a-zA-Z]:/.test(p)) throw new ArchiveError(`entry ${JSON.stringify(name)}: absolute paths are refused`);
  if (p.split('/').includes('..')) throw new ArchiveError(`entry ${JSON.stringify(name)}: ".." would leave the target directory`);
  const clean = posix.normalize(p).replace(/\/+$/, '');
  return clean === '.' ? '' : clean;
}

type Source = { file: string } | { data: Buffer };

/**
 * Calls `visit` for each entry in order, each after the previous one's promise settled; `visit`
 * returning false stops the walk. An entry whose name is unsafe ends the walk with an ArchiveError.
 */
export async function forEachEntry(source: Source, format: ArchiveFormat, visit: (e: ArchiveEntry) => Promise<boolean | void>): Promise<void> {
  if (format === 'zip') return forEachZipEntry(source, visit);
  return forEachTarEntry(source, visit);
}

async function forEachTarEntry(source: Source, visit: (e: ArchiveEntry) => Promise<boolean | void>): Promise<void> {
  // Entries are visited one at a time from a queue: the parser holds back an entry whose body is
  // not read yet (and so pauses the file it reads), so the queue stays short and memory bounded.
  const parser = new Parser({ strict: true });
  const queue: ReadEntry[] = [];
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const poke = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  parser.on('entry', (entry: ReadEntry) => {
    queue.push(entry);
    poke();
  });
  parser.on('error', (e: Error) => {
    failure ??= new ArchiveError(`not a valid tar archive: ${e.message}`);
    poke();
  });
  parser.on('close', () => {
    ended = true;
    poke();
  });
  const file = 'file' in source ? source.file : undefined;
  const input = file !== undefined ? createReadStream(file) : undefined;
  if (input) {
    input.on('error', (e) => {
      failure ??= new ArchiveError(`reading ${file as string}: ${e.message}`);
      poke();
    });
    input.pipe(parser as unknown as NodeJS.WritableStream);
  } else parser.end((source as { data: Buffer }).data);
  try {
    for (;;) {
      if (failure !== undefined) throw failure;
      const entry = queue.shift();
      if (!entry) {
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      const e: ArchiveEntry = {
        path: checkEntryPath(entry.path), type: tarType(entry.type), body: Readable.from(entry),
        ...(entry.linkpath ? { linkTarget: entry.linkpath } : {}), ...(entry.mode !== undefined ? { mode: entry.mode } : {}),
      };
      const more = await visit(e);
      // what the visit left unread is drained, so the parser moves on to the next entry
      entry.resume();
      if (more === false) return;
    }
  } finally {
    input?.destroy();
  }
}

function tarType(t: string): ArchiveEntry['type'] {
  if (t === 'File' || t === 'OldFile' || t === 'ContiguousFile') return 'file';
  if (t === 'Directory') return 'directory';
  if (t === 'SymbolicLink') return 'symlink';
  return 'other';
}

async function forEachZipEntry(source: Source, visit: (e: ArchiveEntry) => Promise<boolean | void>): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) => {
    const cb = (err: Error | null, z?: yauzl.ZipFile): void => (err || !z ? rej(new ArchiveError(`not a valid zip archive: ${err?.message ?? 'unreadable'}`)) : res(z));
    if ('data' in source) yauzl.fromBuffer(source.data, { lazyEntries: true }, cb);
    else yauzl.open(source.file, { lazyEntries: true, autoClose: true }, cb);
  });
  try {
    await new Promise<void>((res, rej) => {
      zip.on('error', (e: Error) => rej(e instanceof ArchiveError ? e : new ArchiveError(`zip archive: ${e.message}`)));
      zip.on('end', () => res());
      zip.on('entry', (entry: yauzl.Entry) => {
        void (async () => {
          const path = checkEntryPath(entry.fileName);
          const unixMode = (entry.externalFileAttributes >>> 16) & 0xffff;
          if (entry.fileName.endsWith('/')) {
            const r = await visit({ path, type: 'directory', body: emptyBody(), ...(unixMode ? { mode: unixMode & 0o7777 } : {}) });
            return r !== false;
          }
          const body = await new Promise<Readable>((ok, bad) => zip.openReadStream(entry, (err, s) => (err || !s ? bad(err ?? new Error('no stream')) : ok(s))));
          // a zip's symlinks are files holding the target; Python's zipfile writes them so too
          const r = await visit({ path, type: 'file', body, ...(unixMode ? { mode: unixMode & 0o7777 } : {}) });
          body.resume();
          return r !== false;
        })().then(
          (more) => (more ? zip.readEntry() : res()),
          (err: unknown) => rej(err),
        );
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

function emptyBody(): Readable {
  const p = new PassThrough();
  p.end();
  return p;
}

/**
 * Unpacks `file` into the directory `into` (made if missing) and returns the paths written,
 * relative to it. Symlinks are kept when they point inside `into`; one that points outside, and
 * any entry whose name leaves `into` (also by way of a link unpacked before it), fails the whole
 * unpack with an ArchiveError.
 */
export async function unpackArchive(file: string, into: string, format: ArchiveFormat): Promise<string[]> {
  await mkdir(into, { recursive: true });
  const root = await realpath(into);
  const inside = (p: string): boolean => {
    const rel = relative(root, p);
    return rel === '' || (!isAbsolute(rel) && rel.split(sep)[0] !== '..');
  };
  // the real directory an entry lands in: links unpacked earlier are followed, so a chain of
  // links that each look harmless cannot carry a later entry out of `into`
  const realParent = async (target: string, name: string): Promise<string> => {
    for (let p = dirname(target); ; p = dirname(p)) {
      const real = await realpath(p).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
      if (real === undefined) continue;
      if (!inside(real)) throw new ArchiveError(`entry ${JSON.stringify(name)}: a link on its path leads out of the target directory`);
      await mkdir(dirname(target), { recursive: true });
      return realpath(dirname(target));
    }
  };
  const written: string[] = [];
  await forEachEntry({ file }, format, async (e) => {
    if (e.path === '' || e.type === 'other') return;
    const target = join(root, e.path);
    const parent = await realParent(target, e.path);
    const at = join(parent, basename(target));
    if (e.type === 'directory') {
      await mkdir(at, { recursive: true });
      if (!inside(await realpath(at))) throw new ArchiveError(`entry ${JSON.stringify(e.path)}: a link on its path leads out of the target directory`);
      return;
    }
    // an entry replaces what an earlier one left there, never writes through it
    const old = await lstat(at).catch(() => undefined);
    if (old && !old.isDirectory()) await rm(at, { force: true });
    if (e.type === 'symlink') {
      const to = e.linkTarget ?? '';
      if (isAbsolute(to) || !inside(resolve(parent, to))) throw new ArchiveError(`entry ${JSON.stringify(e.path)}: a link to ${JSON.stringify(to)} would leave the target directory`);
      await symlink(to, at);
    } else {
      await pipeline(e.body, createWriteStream(at, { flags: 'wx', mode: e.mode !== undefined && e.mode & 0o700 ? e.mode & 0o777 : 0o644 }));
    }
    written.push(e.path);
  });
  return written;
}

/** The first regular file in an archive held in memory that `wanted` accepts, with its bytes. */
export async function findInArchive(data: Buffer, format: ArchiveFormat, wanted: (path: string) => boolean): Promise<{ path: string; data: Buffer } | undefined> {
  let found: { path: string; data: Buffer } | undefined;
  await forEachEntry({ data }, format, async (e) => {
    if (e.type !== 'file' || !wanted(e.path)) return;
    const chunks: Buffer[] = [];
    for await (const c of e.body) chunks.push(c as Buffer);
    found = { path: e.path, data: Buffer.concat(chunks) };
    return false;
  });
  return found;
}
