// What the node agent knows about a Pod's containers: rebuilt from the run directories on disk, so a
// restarted server picks up exactly where the last one was.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PodNetwork } from './podnet.js';
import type { ContainerProcess, ExitInfo } from './process.js';
import { adopt } from './process.js';

export interface Run {
  n: number;
  startedAt: string;
  exit?: ExitInfo;
}

export interface ContainerRuntime {
  name: string;
  init: boolean;
  /** the latest run, if any */
  current?: Run;
  /** the run before it */
  last?: Run;
  proc?: ContainerProcess;
  /** no restart before this time (crash-loop back-off) */
  backoffUntil?: number;
  /** the delay this restart waits, and the one the next will wait */
  backoffWaitMs?: number;
  backoffMs?: number;
  waiting?: { reason: string; message?: string };
  /** the GPU cards its current run was given and each share's compute (not kept on disk: a container
   *  adopted by a restarted server has none, and its card's use is split equally) */
  gpuShares?: { uuid: string; cores: number }[];
  /** terminationMessagePolicy FallbackToLogsOnError: a failed run's log tail is its termination message */
  fallbackToLogs?: boolean;
  /** what current and last were before the current run started, and how many starts in a row
   *  bubblewrap could not set the sandbox up for (kubelet.ts: retrySandboxSetup) */
  beforeStart?: { current?: Run; last?: Run };
  sandboxRetries?: number;
  /** its Python environment (the local image pull): being built, ready, or failed */
  preparing?: { state: 'pending' | 'ready' | 'failed'; binDir?: string; message?: string };
}

export interface PodRuntime {
  uid: string;
  namespace: string;
  name: string;
  /** on disk: logs, the scratch directory, volumes, its record */
  dir: string;
  /** in the runtime directory: service-account files and the containers' run state */
  stateDir: string;
  ip: string;
  containers: Map<string, ContainerRuntime>;
  volumes?: Map<string, { dir: string; readOnly: boolean }>;
  hostsFile: string;
  /** whether a container runs in a sandbox, which mounts hostsFile as /etc/hosts: only then is the
   *  file written and kept current (a task forked by the zygote sees the machine's own) */
  usesHosts?: boolean;
  /** its network namespace, with tenancy's isolation (podnet.ts) */
  net?: PodNetwork;
  /** the write of its record (pod.json), which a restarted server reads its address and start from */
  recorded?: Promise<void>;
  /** set once the Pod is being stopped (deleted, or past its activeDeadlineSeconds) */
  termination?: { deadline: number; signalled: boolean; killed: boolean; reason?: string; message?: string };
  /** why the Pod failed before a container could start (its Python environment could not be made) */
  failure?: { phase: 'Failed'; reason: string; message: string };
  startTime: string;
}

/** a Pod's directories: `pod` on disk (logs, scratch, volumes) and `state` in the node's
 *  runtime directory (runtime-dir.ts: service-account files, containers' run state, pod.json) */
export interface PodDirs {
  pod: string;
  state: string;
}

/** a container run's state directory, under the Pod's `state` directory */
export function runDir(stateDir: string, container: string, n: number): string {
  return join(stateDir, 'containers', container, String(n));
}

export function logFile(podDir: string, container: string, n: number): string {
  return join(podDir, 'containers', container, `${n}.log`);
}

/** the Pod's record, off the event loop: the kubelet awaits it before the Pod's first container starts */
export async function writePodRecordAsync(dir: string, rec: { uid: string; namespace: string; name: string; ip: string; startTime: string }): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'pod.json'), JSON.stringify(rec));
}

export function readPodRecord(dir: string): { uid: string; namespace: string; name: string; ip: string; startTime: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'pod.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** the container's runs: their state directories, and their logs (a run whose state a reboot took
 *  still has its log, and reads as lost) */
function runNumbers(dirs: PodDirs, container: string): number[] {
  const found = new Set<number>();
  const list = (dir: string, pattern: RegExp): void => {
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir)) {
      const m = pattern.exec(f);
      if (m) found.add(Number(m[1]));
    }
  };
  list(join(dirs.state, 'containers', container), /^(\d+)$/);
  list(join(dirs.pod, 'containers', container), /^(\d+)(\.log)?$/);
  return [...found].sort((a, b) => a - b);
}

function startedAtOf(stateDir: string): string {
  try {
    return (JSON.parse(readFileSync(join(stateDir, 'meta.json'), 'utf8')) as { startedAt?: string }).startedAt ?? '';
  } catch {
    return '';
  }
}

/** a run's state directory: in the runtime directory, or beside its log where a server from before
 *  the runtime directory started it (that container may still be running: it is adopted there) */
function stateDirOf(dirs: PodDirs, container: string, n: number): string {
  const state = runDir(dirs.state, container, n);
  if (existsSync(state)) return state;
  const legacy = runDir(dirs.pod, container, n);
  return existsSync(legacy) ? legacy : state;
}

/** Re-attaches to a container's runs as the disk records them. */
export function loadContainer(dirs: PodDirs, name: string, init: boolean): ContainerRuntime {
  const rt: ContainerRuntime = { name, init };
  const runs = runNumbers(dirs, name);
  const latest = runs[runs.length - 1];
  if (latest === undefined) return rt;
  const stateDir = stateDirOf(dirs, name, latest);
  const found = adopt(stateDir);
  if (!('exited' in found) && found.neverStarted) {
    // the server stopped while starting it: nothing ran, so the run is undone and made again (as a
    // kubelet starts a container its runtime has no record of, whatever the restart policy)
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    rmSync(logFile(dirs.pod, name, latest), { force: true });
    return loadContainer(dirs, name, init);
  }
  const startedAt = startedAtOf(stateDir);
  if ('exited' in found) {
    rt.proc = found;
    rt.current = { n: latest, startedAt: found.startedAt || startedAt };
  } else {
    rt.current = { n: latest, startedAt, exit: found };
  }
  const prev = runs[runs.length - 2];
  if (prev !== undefined) {
    const prevDir = stateDirOf(dirs, name, prev);
    const p = adopt(prevDir);
    rt.last = { n: prev, startedAt: startedAtOf(prevDir), exit: 'exited' in p ? undefined : p };
    if ('exited' in p) p.signal('SIGKILL'); // an older run still alive is a leak: only the latest may run
  }
  return rt;
}
