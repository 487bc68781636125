// Where a node keeps what lives only as long as its processes do: each Pod's service-account files
// (token, ca.crt, namespace), its record (pod.json: its address and start) and its containers' run
// state (the shim's pid and exit files, meta.json). A kubelet mounts projected volumes on a tmpfs
// and a container runtime keeps its state under /run; Skiff does the same, on a tmpfs when the
// machine has one. The mounted service-account token never reaches the disk, nor do the secret and
// projected volumes a Pod declares (volumes.ts writes them here), and starting a container costs no file-system
// journal writes: on an ext4 data directory they were about a third of the server's CPU time per
// task, and grew with the disk's churn.
//
// The directory survives a server's restart (the containers it describes do too) but not a reboot
// (nor do they): after one, a container whose state is gone reads as lost (exit 137, as a kubelet
// reports a container it lost), and the next run's number follows its log's.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statfsSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** statfs(2)'s f_type of a tmpfs */
const TMPFS_MAGIC = 0x01021994;
/** the file in a runtime directory naming the data directory it belongs to */
const OWNER_FILE = 'data-dir';
/** the link in a data directory to its runtime directory */
const RUNTIME_LINK = 'run';

function isTmpfs(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return statfsSync(dir).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/** the tmpfs to keep runtime directories in: SKIFF_RUNTIME_ROOT (empty: none), else /dev/shm or
 *  $XDG_RUNTIME_DIR when they are a tmpfs this user may write; undefined when there is none (the
 *  data directory then). /dev/shm comes first: a sandbox gets its own, so no Pod sees the others' */
export function runtimeRoot(): string | undefined {
  const given = process.env.SKIFF_RUNTIME_ROOT;
  if (given !== undefined) return given === '' ? undefined : resolve(given);
  for (const d of ['/dev/shm', process.env.XDG_RUNTIME_DIR]) if (d && isTmpfs(d)) return d;
  return undefined;
}

const prefix = (): string => `skiff-${process.getuid?.() ?? 0}-`;

/**
 * The runtime directory of a data directory: `<root>/skiff-<uid>-<hash of the data directory>`, made
 * with the data directory's own permissions and linked from it as `run`, or `<data dir>/run` itself
 * where there is no tmpfs (root null). Also removes the runtime directories of data directories that are gone.
 */
export function runtimeDirFor(dataDir: string, root: string | null = runtimeRoot() ?? null): string {
  const data = realpathSync(dataDir);
  const link = join(data, RUNTIME_LINK);
  if (!root) {
    dropLink(link);
    mkdirSync(link, { recursive: true });
    return link;
  }
  // a directory there is from a run without a tmpfs: its containers' state stays where it is
  if (existsSync(link) && !lstatSync(link).isSymbolicLink()) return link;
  sweep(root);
  const dir = join(root, prefix() + createHash('sha256').update(data).digest('hex').slice(0, 16));
  mkdirSync(dir, { recursive: true, mode: statSync(data).mode & 0o777 });
  writeFileSync(join(dir, OWNER_FILE), data);
  let current: string | undefined;
  try {
    current = readlinkSync(link);
  } catch {
    // no link yet
  }
  if (current !== dir) {
    dropLink(link);
    symlinkSync(dir, link);
  }
  return dir;
}

/** a data directory's `run` link, if it is one (a directory there is left as it is) */
function dropLink(link: string): void {
  try {
    if (lstatSync(link).isSymbolicLink()) unlinkSync(link);
  } catch {
    // nothing there
  }
}

/** removes this user's runtime directories whose data directory no longer exists */
function sweep(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(prefix()));
  } catch {
    return;
  }
  for (const n of names) {
    const dir = join(root, n);
    try {
      const owner = readFileSync(join(dir, OWNER_FILE), 'utf8');
      if (!existsSync(owner)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // not one of ours, or being made right now
    }
  }
}

/** removes a data directory's runtime directory (what removing the data directory leaves behind) */
export function removeRuntimeDir(dataDir: string): void {
  try {
    const target = readlinkSync(join(dataDir, RUNTIME_LINK));
    rmSync(target, { recursive: true, force: true });
  } catch {
    // no link: nothing outside the data directory
  }
}
