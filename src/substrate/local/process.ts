// The process layer of the local substrate: starts a container as a process tree under a small
// monitor (native/skiff-shim.c, like conmon), optionally inside bubblewrap, and re-attaches to
// containers started by an earlier server process.
//
// Each container *run* has its own state directory. The shim writes there `claim` (first, and only
// if no one has: see adopt()), `pid` (the container's pid), `exec-error` (why exec failed) and `exit`
// (its exit status, once it has exited); this module adds `meta.json`, which is what adopt() needs to
// find and verify the processes again.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, every, type Timer } from '../../util/timers.js';
import { Spawner, SpawnError } from './spawner.js';

export interface BindMount { source: string; target: string; readOnly?: boolean }
export interface Sandbox {
  /** extra bind mounts at their target path (mount points are created as needed) */
  binds: BindMount[];
  /** --unshare-uts --hostname */
  hostname?: string;
  /** bind-mounted read-only at /etc/hosts */
  hostsFile?: string;
  /** isolation (tenancy): the host is seen read-only, these stay hidden, the workload runs as `user`
   *  in the network namespace at `netns` with its own IPC namespace, and `tmpDir` is its /tmp */
  isolation?: SandboxIsolation;
}
export interface SandboxIsolation {
  user: { uid: number; gid: number; groups: number[] };
  /** a named network namespace (/run/netns/NAME) the container joins */
  netns?: string;
  /** directories (covered by an empty tmpfs) and files (covered by /dev/null) the container must not see */
  hide: string[];
  /** host directories seen read-only again inside a hidden one (a Python environment in the data dir) */
  reveal: string[];
  /** the same, read-write (the namespace's part of the pipeline root) */
  revealWritable?: string[];
  /** a host directory (mode 1777) bound at /tmp and /var/tmp, so Pods share no scratch space */
  tmpDir: string;
}
export interface LaunchSpec {
  /** created if missing; one per container *run* (each restart gets a new one) */
  stateDir: string;
  /** CRI-format log written by the shim (appended to) */
  logFile: string;
  /** already expanded command + args; argv[0] is looked up on env.PATH (the server's PATH if env has none) */
  argv: string[];
  /** the complete environment (process.env is not inherited) */
  env: Record<string, string>;
  /** working directory; defaults to "/" as for a container image without a WORKDIR */
  cwd?: string;
  /** when given and bwrap is available, the process runs under bubblewrap */
  sandbox?: Sandbox;
}
export interface ExitInfo {
  exitCode: number;
  signal: number;
  finishedAt: string;
  reason: 'Completed' | 'Error' | 'StartError' | 'OOMKilled' | 'Unknown';
  message?: string;
  /** adopt(): no process ever ran for this run, and none will (the adopter claimed it first): the
   *  server that made it died before its shim started, so the container is started again */
  neverStarted?: true;
}
export interface ContainerProcess {
  /** the container's main process (the child of the shim; with bwrap: bwrap's pid); 0 if it never started */
  readonly pid: number;
  /** RFC3339 */
  readonly startedAt: string;
  readonly stateDir: string;
  /** resolves once the container has exited and the shim wrote STATE_DIR/exit. Waiting does not
   *  keep the event loop alive (a server must be able to exit and leave its containers running). */
  exited(): Promise<ExitInfo>;
  /** sends sig to the container's whole process group (the tree); no-op once exited */
  signal(sig: NodeJS.Signals): void;
}

/** Exit code reported when a container vanished without its shim recording an exit status (the shim
 *  was killed, or the machine rebooted). 137 is what the kubelet reports for a container it lost
 *  (reason ContainerStatusUnknown), and SIGKILL is the likeliest way for both processes to vanish. */
export const UNKNOWN_EXIT_CODE = 137;

/** Exit code of a container whose command could not be executed (as a shell reports "not found"). */
export const START_ERROR_EXIT_CODE = 127;

/** Signals the shim catches and forwards to the container's process group. Anything else (SIGKILL,
 *  SIGSTOP, ...) is sent to the group directly. */
const FORWARDED = new Set<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']);

/** PATH used when neither the container's env nor the server has one (the usual image default). */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** What adopt() needs, written to STATE_DIR/meta.json by launch(). */
interface Meta {
  shimPid: number;
  /** /proc/<pid>/stat field 22 (start time in clock ticks since boot), to tell a reused pid apart */
  shimStartTime: string | null;
  pid: number;
  pidStartTime: string | null;
  startedAt: string;
  sandboxed: boolean;
  logFile: string;
  /** size of the log file when this run started: where to look for bwrap's own setup errors */
  logOffset: number;
  /** the container's working directory (as the container sees it) */
  cwd?: string;
}

export function shimPath(): string {
  const fromEnv = process.env.SKIFF_SHIM;
  if (fromEnv) return fromEnv;
  // dist/src/substrate/local/process.js -> <repo>/build/skiff-shim
  return fileURLToPath(new URL('../../../../build/skiff-shim', import.meta.url));
}

let bwrapPath: string | null | undefined;

/** Cached probe: can bubblewrap set up the sandbox we use here (namespaces, /proc, /dev)? Set
 *  SKIFF_NO_BWRAP=1 to run sandboxed containers without it. */
export function bwrapAvailable(): boolean {
  if (process.env.SKIFF_NO_BWRAP === '1') return false;
  if (bwrapPath === undefined) {
    bwrapPath = null;
    const found = lookPath('bwrap', process.env.PATH ?? DEFAULT_PATH, process.cwd(), (p) => p);
    if (found) {
      // The probe uses the same namespaces and mounts as bwrapArgv, so an environment that allows
      // `bwrap --ro-bind / / true` but not a new /proc (e.g. unprivileged inside a container) says no.
      // Tried up to three times: binding the host's root races with a mount point vanishing under it
      // (another Pod's network namespace), and one lost race must not leave a server without sandboxes.
      for (let attempt = 0; attempt < 3 && bwrapPath === null; attempt++) {
        const probe = spawnSync(found, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid',
          '--unshare-uts', '--die-with-parent', '--', 'true'], { stdio: 'ignore', timeout: 10_000 });
        if (probe.status === 0) bwrapPath = found;
      }
    }
  }
  return bwrapPath !== null;
}

/** Starts a container run under skiff-shim and resolves once the shim has forked it (a few ms). A
 *  command that cannot be started (not found, missing cwd, failed exec, bwrap setup error) is not
 *  an exception: exited() reports it as reason 'StartError' with the message (pid is 0 when no
 *  process was started). Rejects only when the shim itself cannot be run. */
export async function launch(spec: LaunchSpec): Promise<ContainerProcess> {
  if (spec.argv.length === 0) throw new Error('launch: empty argv');
  const stateDir = path.resolve(spec.stateDir);
  // off the event loop: a task start makes several directories and files, and on a busy disk each
  // synchronous call would hold every other controller up for as long as it waits
  if ((await fs.promises.mkdir(stateDir, { recursive: true })) === undefined) {
    // A reused directory: stale files would be mistaken for this run's.
    for (const f of ['pid', 'exit', 'exec-error', 'meta.json', 'claim']) fs.rmSync(path.join(stateDir, f), { force: true });
  }
  const logFile = path.resolve(spec.logFile);
  // the log is kept apart from the run state (which may be on a tmpfs), and its folder made here too
  await fs.promises.mkdir(path.dirname(logFile), { recursive: true });
  const startedAt = new Date().toISOString();
  const sandboxed = spec.sandbox !== undefined && bwrapAvailable();
  const cwd = path.resolve('/', spec.cwd ?? '/');
  const mounts = sandboxed && spec.sandbox ? sandboxMounts(spec.sandbox) : [];
  const toHost = (p: string) => hostPath(p, mounts).host;

  // Check here what the shim or bwrap would only find out after forking: a clear StartError, and no
  // process (bwrap would report a missing command as an ordinary exit code 1).
  if (!isDir(toHost(cwd))) {
    return startFailed(stateDir, logFile, startedAt, `chdir to cwd (${JSON.stringify(cwd)}) failed: no such directory`);
  }
  const argv0 = spec.argv[0] ?? '';
  const resolved = lookPath(argv0, spec.env.PATH ?? process.env.PATH ?? DEFAULT_PATH, cwd, toHost);
  if (!resolved) {
    const what = argv0.includes('/') ? 'no such file or executable' : 'executable file not found in $PATH';
    return startFailed(stateDir, logFile, startedAt, `exec: ${JSON.stringify(argv0)}: ${what}`);
  }
  // argv[0] stays as given (programs see it, ps shows it) when execvp will find the same file: it
  // searches env.PATH, or the shim's cwd / bwrap's --chdir for a relative path. Without env.PATH it
  // would search its own default instead of the server's PATH used above, so pass what we found.
  const argv = spec.env.PATH !== undefined || argv0.includes('/') ? spec.argv : [resolved, ...spec.argv.slice(1)];

  let logOffset = 0;
  if (sandboxed) {
    try { logOffset = fs.statSync(logFile).size; } catch { /* not there yet */ }
  }
  // the loader's preload list is for the container: bwrap itself starts before the sandbox's
  // mounts exist, so it must not try to load a library from a path only the sandbox has
  const { LD_PRELOAD: preload, ...outerEnv } = spec.env;
  const iso = sandboxed ? spec.sandbox?.isolation : undefined;
  // the network namespace is joined before bwrap starts (nsenter execs it: the same process)
  const enter = iso?.netns ? ['nsenter', `--net=${iso.netns}`, '--'] : [];
  const shimArgs = sandboxed && spec.sandbox
    ? ['--spare-child', stateDir, logFile, '--', ...enter, ...bwrapArgv(spec.sandbox, mounts, cwd, argv, preload)]
    : [stateDir, logFile, '--', ...argv];
  const waiter = pidWaiter(stateDir);
  let shim: Shim;
  try {
    shim = await startShim(shimArgs, sandboxed && spec.sandbox ? outerEnv : spec.env, sandboxed ? '/' : cwd);
  } catch (e) {
    waiter.cancel();
    throw e;
  }

  const pid = await waiter.wait(shim.exited);
  if (pid === null) {
    // The shim could not even set up (its reason is in exec-error), or it is not there at all.
    const spawnError = shim.error();
    if (spawnError) throw new Error(`cannot run ${shimPath()} (build it with scripts/build-native.sh): ${spawnError.message}`);
    await shim.exited;
    const exit = readExit(stateDir, null);
    if (exit) return new Exited(stateDir, startedAt, exit);
    throw new Error(`skiff-shim exited without starting the container (state in ${stateDir})`);
  }
  const shimExit = shim.exited;
  const meta: Meta = {
    shimPid: shim.pid,
    shimStartTime: procStat(shim.pid)?.startTime ?? null,
    pid,
    pidStartTime: procStat(pid)?.startTime ?? null,
    startedAt,
    sandboxed,
    logFile,
    logOffset,
    cwd,
  };
  await writeAtomicAsync(path.join(stateDir, 'meta.json'), JSON.stringify(meta) + '\n');

  const exitInfo = (async () => {
    await shimExit;
    // No exit file after the shim is gone: it was killed. The container may outlive it.
    return readExit(stateDir, meta) ?? watchExit(stateDir, meta);
  })();
  return new Running(stateDir, meta, exitInfo);
}

/** A started skiff-shim: its pid, when it has ended, and why it could not run (if it could not). */
interface Shim {
  pid: number;
  exited: Promise<void>;
  error(): Error | undefined;
}

const spawner = new Spawner();
/** SKIFF_SPAWNER=off: fork the shims from the server itself, as without the spawner binary */
const useSpawner = process.env.SKIFF_SPAWNER !== 'off' && spawner.available();

/** Starts the shim through the spawner (no fork of the server), or with child_process where the
 *  spawner is not built or has gone away. */
async function startShim(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<Shim> {
  if (useSpawner) {
    try {
      const s = await spawner.spawn([shimPath(), ...args], env, cwd);
      return { pid: s.pid, exited: s.exited, error: () => undefined };
    } catch (e) {
      if (e instanceof SpawnError) {
        const err = e;
        return { pid: 0, exited: Promise.resolve(), error: () => err };
      }
      if (e instanceof TypeError) throw e;
      // the spawner itself is gone: this once, fork as before (the next launch starts a new spawner)
    }
  }
  // not detached (a session of its own): the shim makes its own process group (see skiff-shim.c)
  const child = spawn(shimPath(), args, { stdio: 'ignore', env, cwd });
  child.unref();
  let spawnError: Error | undefined;
  child.once('error', (e) => { spawnError = e; });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { pid: child.pid ?? 0, exited, error: () => spawnError };
}

/** For a server that restarts: re-attaches to a container run started by an earlier server process.
 *  Returns a ContainerProcess while the shim or the container is still alive (checked against the
 *  pid start times in meta.json, so a reused pid does not count), the recorded ExitInfo once it has
 *  finished, or reason 'Unknown' with exitCode UNKNOWN_EXIT_CODE (137) when it vanished without an
 *  exit file (or there is no record of it at all). A run no process was started for (the server died
 *  first) is claimed, so that a shim asked for too late cannot start one, and reads `neverStarted`. */
export function adopt(stateDir: string): ContainerProcess | ExitInfo {
  stateDir = path.resolve(stateDir);
  let meta = readMeta(stateDir);
  const exit = readExit(stateDir, meta);
  if (exit) return exit;
  if (!meta) {
    // The server died between starting the shim and writing meta.json: all we know is the pid.
    let pid = readPid(stateDir);
    if (pid === null) {
      // No shim had claimed the run: claiming it here means none ever runs the command.
      const claim = claimRun(stateDir);
      if (claim === 'missing') return unknownExit('no record of the container process');
      if (claim === 'claimed') return { ...unknownExit('the server stopped before the container process started'), neverStarted: true };
      // A shim claimed it: it writes its pid right after its fork.
      pid = awaitPid(stateDir);
      const exit = readExit(stateDir, null);
      if (exit) return exit;
    }
    if (pid === null || !procStat(pid)) return unknownExit('no record of the container process');
    const st = procStat(pid);
    meta = { shimPid: 0, shimStartTime: null, pid, pidStartTime: st?.startTime ?? null,
      startedAt: new Date().toISOString(), sandboxed: false, logFile: '', logOffset: 0 };
  }
  if (!alive(meta)) {
    // It may have finished between our two looks.
    return readExit(stateDir, meta) ?? unknownExit('the container and its monitor vanished without recording an exit status');
  }
  return new Running(stateDir, meta, watchExit(stateDir, meta));
}

/** Where to run a command "inside" a running container (`skiff exec`): the process whose namespaces
 *  to enter (with bubblewrap: the sandbox's init, pid 1 of its PID namespace), the process whose
 *  environment the container has (the workload itself), and its working directory. */
export interface ExecTarget {
  sandboxed: boolean;
  /** a process inside the container's namespaces (for nsenter -t) */
  nsPid: number;
  /** the container's main process, as it was exec'd: its /proc/PID/environ is the container's environment */
  envPid: number;
  cwd: string;
}

/** The exec target of a container run that is still alive; null when it is not running. */
export function execTarget(stateDir: string): ExecTarget | null {
  const meta = readMeta(path.resolve(stateDir));
  if (!meta || meta.pid <= 0 || !isSame(meta.pid, meta.pidStartTime)) return null;
  const cwd = meta.cwd ?? '/';
  if (!meta.sandboxed) return { sandboxed: false, nsPid: meta.pid, envPid: meta.pid, cwd };
  // bwrap (meta.pid, outside) -> bwrap as pid 1 of the new namespaces -> the container's command.
  // bwrap forks the command only once the sandbox's mounts are made: before that, pid 1's root is
  // still being built (no `sh` in it), so the container is not there to exec into yet
  const init = childrenOf(meta.pid)[0];
  if (init === undefined) return null;
  const workload = childrenOf(init)[0];
  if (workload === undefined) return null;
  return { sandboxed: true, nsPid: init, envPid: workload, cwd };
}

/** The container's environment, as its main process was started with it. */
export function processEnv(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  let raw: string;
  try { raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8'); } catch { return env; }
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** The live children of a process, oldest first (by a scan of /proc: not every kernel has .../children). */
function childrenOf(pid: number): number[] {
  const out: { pid: number; start: number }[] = [];
  let entries: string[] = [];
  try { entries = fs.readdirSync('/proc'); } catch { return []; }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const raw = readText(`/proc/${e}/stat`);
    if (raw === null) continue;
    const rest = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[1]) === pid && rest[0] !== 'Z') out.push({ pid: Number(e), start: Number(rest[19] ?? 0) });
  }
  return out.sort((a, b) => a.start - b.start || a.pid - b.pid).map((c) => c.pid);
}

// --- container objects -------------------------------------------------------------------------

class Running implements ContainerProcess {
  readonly pid: number;
  readonly startedAt: string;
  private done = false;
  private readonly exit: Promise<ExitInfo>;

  constructor(readonly stateDir: string, private readonly meta: Meta, exit: Promise<ExitInfo>) {
    this.pid = meta.pid;
    this.startedAt = meta.startedAt;
    this.exit = exit.then((info) => { this.done = true; return info; });
  }

  exited(): Promise<ExitInfo> {
    return this.exit;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.done) return;
    const { shimPid, shimStartTime, pid, pidStartTime } = this.meta;
    // Through the shim where we can: under bwrap it spares bwrap itself, which would die of the signal
    // (and take the sandbox with it) instead of letting the workload exit on its own terms.
    if (FORWARDED.has(sig) && shimPid > 0 && isSame(shimPid, shimStartTime)) {
      tryKill(shimPid, sig);
      return;
    }
    // The group outlives its leader, so only require that the leader's pid was not reused meanwhile.
    const st = procStat(pid);
    if (st && pidStartTime !== null && st.startTime !== pidStartTime) return;
    tryKill(-pid, sig);
  }
}

/** A container that is already over: it never started, or launch() found it finished. */
class Exited implements ContainerProcess {
  readonly pid = 0;
  constructor(readonly stateDir: string, readonly startedAt: string, private readonly info: ExitInfo) {}
  exited(): Promise<ExitInfo> { return Promise.resolve(this.info); }
  signal(): void { /* nothing left to signal */ }
}

function startFailed(stateDir: string, logFile: string, startedAt: string, message: string): ContainerProcess {
  const finishedAt = new Date().toISOString();
  // The same files the shim would have written, so adopt() reports it too.
  const meta: Meta = { shimPid: 0, shimStartTime: null, pid: 0, pidStartTime: null, startedAt, sandboxed: false,
    logFile, logOffset: 0 };
  writeAtomic(path.join(stateDir, 'meta.json'), JSON.stringify(meta) + '\n');
  writeAtomic(path.join(stateDir, 'exec-error'), message + '\n');
  writeAtomic(path.join(stateDir, 'exit'), JSON.stringify({ exitCode: START_ERROR_EXIT_CODE, signal: 0, finishedAt }) + '\n');
  return new Exited(stateDir, startedAt, { exitCode: START_ERROR_EXIT_CODE, signal: 0, finishedAt, reason: 'StartError', message });
}

// --- waiting -----------------------------------------------------------------------------------

/** Waits for STATE_DIR/pid, which the shim writes right after fork(). wait() gives null if the shim
 *  went away (or could not be run) without writing it. */
function pidWaiter(stateDir: string): { wait(shimExited: Promise<void>): Promise<number | null>; cancel(): void } {
  // Polled, not watched: the shim writes the pid a millisecond or two after it starts, and an inotify
  // watch made and removed for each container cost more than the polls (removing one waits for the
  // kernel's RCU grace period: about a millisecond a container on a busy machine, on the event loop).
  let cancelled = false;
  let timer: Timer | undefined;
  const cancel = () => {
    cancelled = true;
    timer?.clear();
  };
  const wait = (shimExited: Promise<void>) => new Promise<number | null>((resolve, reject) => {
    let gone = false;
    let settled = false;
    const started = Date.now();
    const finish = (pid: number | null, err?: Error) => {
      settled = true;
      cancel();
      if (err) reject(err); else resolve(pid);
    };
    const check = (): boolean => {
      if (settled) return true;
      const pid = readPid(stateDir);
      if (pid !== null || gone) finish(pid);
      else if (Date.now() - started > 30_000) finish(null, new Error(`skiff-shim did not start the container within 30s (state in ${stateDir})`));
      else return false;
      return true;
    };
    void shimExited.then(() => { if (!settled) { gone = true; check(); } });
    if (check()) return;
    let step = 0;
    const poll = () => {
      const delay = pidPollDelays[step++] ?? 50;
      timer = after(delay, () => { if (!cancelled && !check()) poll(); });
    };
    poll();
  });
  return { wait, cancel };
}

/** how long pidWaiter waits before each look (ms), then 50 ms between looks */
const pidPollDelays = [1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32];

/** For a container whose shim is not our child: wait for the exit file (fs.watch, with polling as a
 *  fallback), or for both the shim and the container to be gone without one. */
function watchExit(stateDir: string, meta: Meta): Promise<ExitInfo> {
  return new Promise((resolve) => {
    let watcher: fs.FSWatcher | undefined;
    let settled = false;
    const check = () => {
      if (settled) return;
      let info = readExit(stateDir, meta);
      if (!info && !alive(meta)) {
        info = readExit(stateDir, meta) ?? unknownExit('the container and its monitor vanished without recording an exit status');
      }
      if (!info) return;
      settled = true;
      timer.clear();
      watcher?.close();
      resolve(info);
    };
    const timer = every(200, check).unref();
    try {
      watcher = fs.watch(stateDir, { persistent: false }, check);
      watcher.on('error', () => watcher?.close());
    } catch { /* polling alone will do */ }
    check();
  });
}

// --- state files -------------------------------------------------------------------------------

function readExit(stateDir: string, meta: Meta | null): ExitInfo | null {
  const raw = readText(path.join(stateDir, 'exit'));
  if (raw === null) return null;
  let parsed: { exitCode?: unknown; signal?: unknown; finishedAt?: unknown };
  try { parsed = JSON.parse(raw) as typeof parsed; } catch { return null; }
  const exitCode = typeof parsed.exitCode === 'number' ? parsed.exitCode : UNKNOWN_EXIT_CODE;
  const signal = typeof parsed.signal === 'number' ? parsed.signal : 0;
  const finishedAt = typeof parsed.finishedAt === 'string' && parsed.finishedAt !== '' ? parsed.finishedAt : new Date().toISOString();
  const execError = readText(path.join(stateDir, 'exec-error'))?.trim();
  if (execError) return { exitCode, signal, finishedAt, reason: 'StartError', message: execError };
  if (exitCode === 1 && meta?.sandboxed) {
    const msg = bwrapSetupError(meta);
    if (msg) return { exitCode, signal, finishedAt, reason: 'StartError', message: msg };
  }
  const message = exitCode === 0 ? null : readText(path.join(stateDir, terminationMessageFile));
  return { exitCode, signal, finishedAt, reason: exitCode === 0 ? 'Completed' : 'Error', ...(message ? { message } : {}) };
}

/** where a failed run's termination message is kept (terminationMessagePolicy FallbackToLogsOnError),
 *  beside its exit, so a restarted server reports it too */
const terminationMessageFile = 'termination-message';

/** keeps a failed run's termination message with its exit */
export function recordTerminationMessage(stateDir: string, message: string): void {
  writeAtomic(path.join(stateDir, terminationMessageFile), message);
}

/** bwrap reports a failed mount or exec as "bwrap: ..." on stderr and exit code 1, before the
 *  workload ran; when that is the first thing this run logged, it is a start error. */
function bwrapSetupError(meta: Meta): string | null {
  let fd: number | undefined;
  try {
    fd = fs.openSync(meta.logFile, 'r');
    const buf = Buffer.alloc(4096);
    const n = fs.readSync(fd, buf, 0, buf.length, meta.logOffset);
    const first = buf.subarray(0, n).toString('utf8').split('\n', 1)[0] ?? '';
    const m = /^\S+ stderr [FP] (bwrap: .*)$/.exec(first);
    return m?.[1] ?? null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function readMeta(stateDir: string): Meta | null {
  const raw = readText(path.join(stateDir, 'meta.json'));
  if (raw === null) return null;
  try { return JSON.parse(raw) as Meta; } catch { return null; }
}

function readPid(stateDir: string): number | null {
  const raw = readText(path.join(stateDir, 'pid'));
  const pid = raw === null ? NaN : Number.parseInt(raw, 10);
  return pid > 0 ? pid : null;
}

/** Takes the run's claim (STATE_DIR/claim, made exclusively, as the shim makes it before it forks):
 *  'shim' when a shim has it, 'missing' when the run has no state directory. */
function claimRun(stateDir: string): 'claimed' | 'shim' | 'missing' {
  try {
    fs.writeFileSync(path.join(stateDir, 'claim'), `server ${process.pid}\n`, { flag: 'wx' });
    return 'claimed';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return 'shim';
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw e;
  }
}

/** The pid a shim that claimed the run writes after its fork: waited for (at most 2 s) while the
 *  shim is alive. Only a server adopting a run its predecessor left mid-start waits here. */
function awaitPid(stateDir: string): number | null {
  const claim = /^shim (\d+)/.exec(readText(path.join(stateDir, 'claim')) ?? '');
  const shim = claim ? Number(claim[1]) : 0;
  const until = Date.now() + 2000;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const pid = readPid(stateDir);
    if (pid !== null || Date.now() >= until) return pid;
    const st = procStat(shim);
    if (!st || st.state === 'Z') return readPid(stateDir);
    Atomics.wait(nap, 0, 0, 10);
  }
}

function unknownExit(message: string): ExitInfo {
  return { exitCode: UNKNOWN_EXIT_CODE, signal: 0, finishedAt: new Date().toISOString(), reason: 'Unknown', message };
}

function readText(file: string): string | null {
  try { return fs.readFileSync(file, 'utf8'); } catch { return null; }
}

async function writeAtomicAsync(file: string, content: string): Promise<void> {
  const tmp = `${path.dirname(file)}/.${path.basename(file)}.${process.pid}.tmp`;
  await fs.promises.writeFile(tmp, content);
  await fs.promises.rename(tmp, file);
}

function writeAtomic(file: string, content: string): void {
  const tmp = `${path.dirname(file)}/.${path.basename(file)}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

// --- processes ---------------------------------------------------------------------------------

interface ProcStat { state: string; startTime: string }

function procStat(pid: number): ProcStat | null {
  if (pid <= 0) return null;
  const raw = readText(`/proc/${pid}/stat`);
  if (raw === null) return null;
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' are
  // field 3 (state) onwards, so field 22 (starttime) is at index 19.
  const rest = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0] ?? '', startTime: rest[19] ?? '' };
}

/** The process with this pid is the one we recorded (not a reused pid), and is not a zombie. */
function isSame(pid: number, startTime: string | null): boolean {
  const st = procStat(pid);
  return st !== null && st.state !== 'Z' && (startTime === null || st.startTime === startTime);
}

function alive(meta: Meta): boolean {
  return isSame(meta.shimPid, meta.shimStartTime) || isSame(meta.pid, meta.pidStartTime);
}

function tryKill(pid: number, sig: NodeJS.Signals): void {
  // 0, 1, -1 would hit our own group, init, or everything: never what a (corrupt) record means.
  if (Math.abs(pid) <= 1) return;
  try { process.kill(pid, sig); } catch { /* already gone */ }
}

// throwIfNoEntry: a miss is the common case on a PATH search, and exceptions cost time at launch.
function isDir(p: string): boolean {
  try { return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true; } catch { return false; }
}

function isExecutable(p: string): boolean {
  try {
    if (fs.statSync(p, { throwIfNoEntry: false })?.isFile() !== true) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** execvp's search, done up front: the absolute path of the command as the container will see it.
 *  toHost maps a path in the sandbox to where it is on this machine. */
function lookPath(name: string, searchPath: string, cwd: string, toHost: (p: string) => string): string | null {
  if (name === '') return null;
  if (name.includes('/')) {
    const p = path.resolve(cwd, name);
    return isExecutable(toHost(p)) ? p : null;
  }
  for (const dir of searchPath.split(':')) {
    const p = path.resolve(cwd, dir, name);
    if (isExecutable(toHost(p))) return p;
  }
  return null;
}

// --- bubblewrap --------------------------------------------------------------------------------

interface Mount { source: string; target: string; readOnly: boolean }

function sandboxMounts(sb: Sandbox): Mount[] {
  const mounts: Mount[] = [];
  const iso = sb.isolation;
  if (iso) {
    for (const target of ['/tmp', '/var/tmp']) mounts.push({ source: path.resolve(iso.tmpDir), target, readOnly: false });
    for (const dir of iso.reveal) mounts.push({ source: path.resolve(dir), target: path.resolve(dir), readOnly: true });
    for (const dir of iso.revealWritable ?? []) mounts.push({ source: path.resolve(dir), target: path.resolve(dir), readOnly: false });
  }
  if (sb.hostsFile) mounts.push({ source: path.resolve(sb.hostsFile), target: '/etc/hosts', readOnly: true });
  for (const b of sb.binds) {
    mounts.push({ source: path.resolve(b.source), target: path.resolve('/', b.target), readOnly: b.readOnly === true });
  }
  return mounts;
}

/** Where a path in the sandbox lives on this machine, given the mounts (the last, deepest one wins). */
function hostPath(p: string, mounts: Mount[]): { host: string; viaMount: boolean } {
  let best: Mount | undefined;
  for (const m of mounts) {
    if (isWithin(p, m.target) && (!best || m.target.length >= best.target.length)) best = m;
  }
  if (!best) return { host: p, viaMount: false };
  return { host: path.join(best.source, path.relative(best.target, p)), viaMount: true };
}

function isWithin(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');
}

let setpriv: string | undefined;

/** util-linux's setpriv, by absolute path: the container's PATH need not have it */
export function setprivPath(): string {
  return (setpriv ??= lookPath('setpriv', process.env.PATH ?? DEFAULT_PATH, '/', (p) => p) ?? '/usr/bin/setpriv');
}

let devicesCache: string[] | undefined;

/** GPU device nodes, passed through so a sandboxed process sees what an unsandboxed one does
 *  (--dev gives a minimal /dev, and ordinary binds are nodev). */
function gpuDevices(): string[] {
  if (devicesCache === undefined) {
    devicesCache = [];
    try {
      for (const name of fs.readdirSync('/dev')) {
        if (/^(nvidia|dri$|kfd$)/.test(name)) devicesCache.push('/dev/' + name);
      }
    } catch { /* no /dev? then nothing to pass */ }
  }
  return devicesCache;
}

/**
 * The bwrap command line. The sandbox sees the whole host filesystem (`--bind / /`), with its own
 * pid namespace, /proc, minimal /dev and a private, world-writable /dev/shm, plus the mounts.
 *
 * bwrap creates a missing mount point inside the bound host root, i.e. on the host itself (which
 * also fails for a non-root user, e.g. under /mnt). So for a mount point that does not exist on the
 * host, its deepest existing ancestor is "mirrored" instead: a tmpfs over it, holding binds of its
 * host entries, in which bwrap can create the mount point. Writes directly into a mirrored directory
 * stay in the sandbox.
 */
function bwrapArgv(sb: Sandbox, mounts: Mount[], cwd: string, argv: string[], preload?: string): string[] {
  const iso = sb.isolation;
  const hidden = (iso?.hide ?? []).map((h) => path.resolve(h));
  const hiddenDirs = hidden.filter((h) => isDir(h));
  // inside a hidden directory only what is mounted exists: bwrap makes mount points in its tmpfs
  const inHidden = (p: string): boolean => hiddenDirs.some((h) => isWithin(p, h));
  const mirror = new Set<string>();
  mounts.forEach((m, i) => {
    // /dev is a fresh tmpfs of bwrap's own: it makes mount points there itself
    if (m.target.startsWith('/dev/') || inHidden(m.target)) return;
    if (hostPath(m.target, mounts.slice(0, i)).viaMount || fs.existsSync(m.target)) return;
    let dir = path.dirname(m.target);
    while (dir !== '/' && !fs.existsSync(dir)) dir = path.dirname(dir);
    mirror.add(dir);
  });
  const mirrorDir = (dir: string, skip: Set<string>): string[] => {
    const args: string[] = [];
    let entries: fs.Dirent[] = [];
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { /* unreadable: mirror it empty */ }
    for (const e of entries) {
      if (skip.has(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isSymbolicLink()) {
        try { args.push('--symlink', fs.readlinkSync(p), p); } catch { /* vanished */ }
      } else {
        args.push(iso ? '--ro-bind-try' : '--bind-try', p, p);
      }
    }
    return args;
  };

  const args = [bwrapPath ?? 'bwrap', '--die-with-parent', '--unshare-pid'];
  if (sb.hostname) args.push('--unshare-uts', '--hostname', sb.hostname);
  // shared memory segments and semaphores of other Pods are out of sight too
  if (iso) args.push('--unshare-ipc');
  // /proc and /dev are made fresh below; binding the host's first would only cost time.
  args.push(...(mirror.has('/') ? mirrorDir('/', new Set(['proc', 'dev'])) : [iso ? '--ro-bind' : '--bind', '/', '/']));
  args.push('--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/dev/shm');
  for (const d of gpuDevices()) args.push('--dev-bind-try', d, d);
  for (const h of hidden) {
    if (hiddenDirs.includes(h)) args.push('--perms', '0755', '--tmpfs', h);
    else if (fs.existsSync(h)) args.push('--ro-bind', '/dev/null', h);
  }
  // Parents before children, so a nested mirror lands on the outer one.
  for (const dir of [...mirror].filter((d) => d !== '/').sort((a, b) => a.length - b.length)) {
    let mode = 0o755;
    try { mode = fs.statSync(dir).mode & 0o7777; } catch { /* keep the default */ }
    args.push('--perms', mode.toString(8).padStart(4, '0'), '--tmpfs', dir, ...mirrorDir(dir, new Set()));
  }
  // bwrap would make missing parents of a mount point 0700; a workload running as another user
  // could not get through them.
  const made = new Set<string>();
  mounts.forEach((m, i) => {
    const missing: string[] = [];
    for (let dir = path.dirname(m.target); dir !== '/' && dir !== '/dev' && !made.has(dir); dir = path.dirname(dir)) {
      const seen = hostPath(dir, mounts.slice(0, i));
      if ((seen.viaMount || !inHidden(dir) || hiddenDirs.includes(dir)) && fs.existsSync(seen.host)) break;
      missing.unshift(dir);
    }
    for (const dir of missing) {
      args.push('--perms', '0755', '--dir', dir);
      made.add(dir);
    }
    args.push(m.readOnly ? '--ro-bind' : '--bind', m.source, m.target);
  });
  if (preload) args.push('--setenv', 'LD_PRELOAD', preload);
  args.push('--chdir', cwd, '--');
  if (iso) {
    // bwrap runs as root; the workload does not: its own ids, no capabilities, no way back up
    // through a setuid program
    const { uid, gid, groups } = iso.user;
    args.push(setprivPath(), `--reuid=${uid}`, `--regid=${gid}`, groups.length ? `--groups=${groups.join(',')}` : '--clear-groups',
      '--no-new-privs', '--bounding-set=-all', '--inh-caps=-all', '--');
  }
  args.push(...argv);
  return args;
}
