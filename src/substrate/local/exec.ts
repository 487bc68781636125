// `skiff exec`: runs a command inside a running container, as `kubectl exec` does: with the
// container's environment and working directory and, when the Pod is sandboxed, inside its mount,
// PID and UTS namespaces (nsenter; the server runs as root there). The command is a child of the
// server, in a process group of its own, so a dropped connection can take it down with everything it
// started; inside the Pod's PID namespace it also dies with the container.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ExecTarget } from './process.js';
import { processEnv, setprivPath } from './process.js';
import { onTerminal, terminalsAvailable } from './tty.js';

export interface ExecSpec {
  command: string[];
  /** give the command a stdin pipe (otherwise it reads /dev/null) */
  stdin: boolean;
  /** on a pseudo-terminal (see tty.ts): stdin is then always a pipe, the terminal's input */
  tty?: boolean;
}

let nsenterPath: string | null | undefined;

/** nsenter, when this machine has it and the server may use it (entering namespaces needs root) */
export function nsenterAvailable(): boolean {
  if (nsenterPath === undefined) {
    nsenterPath = null;
    if (process.getuid?.() === 0) {
      const probe = spawnSync('nsenter', ['--version'], { stdio: 'ignore', timeout: 5000 });
      if (probe.status === 0) nsenterPath = 'nsenter';
    }
  }
  return nsenterPath !== null;
}

export class ExecError extends Error {
  override readonly name = 'ExecError';
}

/** Starts the command in the container. Throws ExecError when it cannot be entered. */
export function execIn(target: ExecTarget, spec: ExecSpec): ChildProcess {
  if (spec.command.length === 0) throw new ExecError('no command given');
  const env = processEnv(target.envPid);
  if (Object.keys(env).length === 0) throw new ExecError('the container\'s environment cannot be read (it may have just exited)');
  if (spec.tty && !terminalsAvailable()) throw new ExecError('a terminal (tty) needs util-linux `script` on the node, and it is not installed');
  const stdio: ['pipe' | 'ignore', 'pipe', 'pipe'] = [spec.stdin || spec.tty ? 'pipe' : 'ignore', 'pipe', 'pipe'];
  if (!target.sandboxed) {
    if (spec.tty) {
      const t = onTerminal(spec.command, env);
      return spawn(t.argv[0] ?? '', t.argv.slice(1), { env: t.env, cwd: target.cwd, stdio, detached: true });
    }
    return spawn(spec.command[0] ?? '', spec.command.slice(1), { env, cwd: target.cwd, stdio, detached: true });
  }
  if (!nsenterAvailable()) throw new ExecError('entering a sandboxed container needs nsenter and a server running as root');
  // The loader's preload list is the container's (it names a path inside the sandbox); nsenter itself
  // runs before the namespaces are entered, and the command gets it back from the environment.
  const { LD_PRELOAD: preload, ...outer } = env;
  const withPreload = preload === undefined ? spec.command : ['env', `LD_PRELOAD=${preload}`, ...spec.command];
  // as the container's own user, when it runs as one (tenancy's isolation): same ids and groups, no
  // capabilities; and in its network and IPC namespaces (for a container without its own, those are
  // the host's, and entering them changes nothing)
  const user = processUser(target.envPid);
  const command = user && user.uid !== 0
    ? [setprivPath(), `--reuid=${user.uid}`, `--regid=${user.gid}`, user.groups.length ? `--groups=${user.groups.join(',')}` : '--clear-groups',
      '--no-new-privs', '--bounding-set=-all', '--inh-caps=-all', '--', ...withPreload]
    : withPreload;
  const enter = ['nsenter', '-t', String(target.nsPid), '-m', '-p', '-u', '-n', '-i', `--wd=${target.cwd}`, '--'];
  if (spec.tty) {
    // the terminal is made inside, from the sandbox's own /dev/pts, so the command can name it (tty)
    const t = onTerminal(command, outer);
    return spawn('nsenter', [...enter.slice(1), ...t.argv], { env: t.env, stdio, detached: true });
  }
  const entered = [...enter, ...command];
  return spawn(entered[0] ?? '', entered.slice(1), { env: outer, stdio, detached: true });
}

/** The real uid, gid and supplementary groups of a process (from /proc/PID/status); undefined when it is gone. */
export function processUser(pid: number): { uid: number; gid: number; groups: number[] } | undefined {
  let status: string;
  try { status = readFileSync(`/proc/${pid}/status`, 'utf8'); } catch { return undefined; }
  const field = (name: string): number[] => (new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1] ?? '').trim().split(/\s+/).filter(Boolean).map(Number).filter((n) => Number.isInteger(n));
  const uid = field('Uid')[0];
  const gid = field('Gid')[0];
  if (uid === undefined || gid === undefined) return undefined;
  return { uid, gid, groups: field('Groups') };
}

/** Kills the command and whatever it started (its process group). On a terminal the command runs
 *  under `script` (and nsenter) as the leader of a session of its own: the groups of those
 *  descendants go too, and what an interactive shell put in other groups gets the hangup of the
 *  closed terminal. */
export function killExec(child: ChildProcess): void {
  if (!child.pid) return;
  const all: number[] = [];
  const walk = (pid: number, depth: number): void => {
    all.push(pid);
    if (depth > 0) for (const c of childrenOf(pid)) walk(c, depth - 1);
  };
  walk(child.pid, 3);
  for (const pid of all) {
    try { process.kill(-pid, 'SIGKILL'); } catch { /* not a group leader, or gone */ }
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
