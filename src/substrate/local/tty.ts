// Pseudo-terminals for `kubectl exec -t`, without a native pty module: util-linux `script` opens the
// terminal pair, makes the slave the controlling terminal of a new session and relays between the
// master and its own stdin/stdout, so the command sees a terminal (isatty, job control, line
// editing, ^C as SIGINT) while the server talks to plain pipes. The size is set from outside with
// `stty -F` on the slave, which `script` holds open (reached through /proc, which also finds a
// sandbox's terminal); the kernel then sends SIGWINCH to the terminal's foreground process group,
// as a resize on a real terminal does.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { TerminalSize } from '../substrate.js';
import { after } from '../../util/timers.js';

let scriptFound: boolean | undefined;

/** util-linux `script` is on this machine (where it is missing, a terminal cannot be made) */
export function terminalsAvailable(): boolean {
  scriptFound ??= spawnSync('script', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0;
  return scriptFound;
}

/** POSIX shell single quoting */
export function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * The argv and environment that run `argv` on a new pseudo-terminal. `script -c` hands its string
 * to $SHELL, so SHELL is /bin/sh for `script` and the command gets the container's own back. TERM
 * is xterm unless the container sets it, as container runtimes do for a terminal exec.
 */
export function onTerminal(argv: string[], env: Record<string, string>): { argv: string[]; env: Record<string, string> } {
  const shell = env.SHELL;
  const restore = shell === undefined ? 'unset SHELL; exec' : `SHELL=${shellQuote(shell)} exec`;
  const line = `${restore} ${argv.map(shellQuote).join(' ')}`;
  return {
    argv: ['script', '--quiet', '--return', '--command', line, '/dev/null'],
    env: { ...env, SHELL: '/bin/sh', TERM: env.TERM ?? 'xterm' },
  };
}

/**
 * A path that opens the terminal's slave, found among the fds of `pid` and its descendants (in a
 * sandbox `script` runs under nsenter). It is the /proc link, not /dev/pts/N: a sandbox has a
 * /dev/pts of its own, which the server's /dev does not show.
 */
export function slaveOf(pid: number, depth = 4): string | undefined {
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch { /* gone, or not ours */ }
  for (const fd of fds) {
    try {
      if (/^\/dev\/pts\/\d+$/.test(readlinkSync(`/proc/${pid}/fd/${fd}`))) return `/proc/${pid}/fd/${fd}`;
    } catch { /* closed meanwhile */ }
  }
  if (depth === 0) return undefined;
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean);
  } catch { /* gone */ }
  for (const c of children) {
    const found = slaveOf(Number(c), depth - 1);
    if (found) return found;
  }
  return undefined;
}

const FIND_TRIES = 50;
const FIND_RETRY_MS = 20;

/** what is sized: a process running `script`, or one whose descendant does */
export interface TerminalHolder {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
}

/**
 * Sets the terminal size of a `script` child, or of a container that runs one. Sizes are applied
 * in order and only the newest of those waiting is kept (a window dragged wider sends many); one
 * that arrives before `script` has opened its terminal waits for it.
 */
export class TerminalSizer {
  private pending?: TerminalSize;
  private busy = false;
  private waiting: (() => void)[] = [];

  constructor(private readonly child: TerminalHolder) {}

  /** resolves once the terminal has this size, a newer one, or cannot be sized (it is gone) */
  resize(size: TerminalSize): Promise<void> {
    if (!Number.isInteger(size.width) || !Number.isInteger(size.height) || size.width < 0 || size.height < 0) return Promise.resolve();
    this.pending = { width: Math.min(size.width, 65535), height: Math.min(size.height, 65535) };
    const applied = new Promise<void>((resolve) => this.waiting.push(resolve));
    if (!this.busy) this.next(0);
    return applied;
  }

  private idle(): void {
    this.busy = false;
    this.pending = undefined;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  private next(tries: number): void {
    const size = this.pending;
    const pid = this.child.pid;
    if (!size || pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) {
      this.idle();
      return;
    }
    this.busy = true;
    const slave = slaveOf(pid);
    if (!slave) {
      if (tries >= FIND_TRIES) {
        this.idle();
        return;
      }
      after(FIND_RETRY_MS, () => this.next(tries + 1));
      return;
    }
    this.pending = undefined;
    const stty = spawn('stty', ['-F', slave, 'rows', String(size.height), 'cols', String(size.width)], { stdio: 'ignore' });
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      this.next(0);
    };
    stty.once('error', done);
    stty.once('exit', done);
  }
}
