// A container's standard input (`stdin: true`) and terminal (`tty: true`), for `kubectl attach -i`
// and `kubectl run -i`. skiff-shim gives a container /dev/null; such a container instead starts
// through a small `sh` step that takes its stdin from a FIFO in the run's state directory, which
// attach sessions write to, and for `tty: true` runs the command on a terminal (tty.ts).
//
//   stdin (stdinOnce false): the container opens the FIFO read-write, so it holds a writer itself
//     and never reads end-of-file: attach sessions come and go, as on a cluster.
//   stdinOnce: the container opens the FIFO read-only, which waits for the first attach; when that
//     session ends the program reads end-of-file, and later sessions get no stdin. Unlike a
//     cluster, the program starts once someone attaches (`kubectl run -i` attaches at once).
import { spawnSync } from 'node:child_process';
import { constants, mkdirSync, openSync, closeSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { onTerminal, terminalsAvailable } from './tty.js';

export interface ContainerIO {
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

/** where a container run's stdin FIFO lives */
export function stdinFifo(stateDir: string): string {
  return join(stateDir, 'stdin');
}

/** true when the container spec asks for a stdin or a terminal */
export function needsStdin(io: ContainerIO): boolean {
  return Boolean(io.stdin || io.tty);
}

/** Makes the FIFO (kept if there) and the argv and environment that read it. */
export function withStdin(argv: string[], env: Record<string, string>, stateDir: string, io: ContainerIO): { argv: string[]; env: Record<string, string> } {
  if (io.tty && !terminalsAvailable()) throw new Error('a terminal (tty: true) needs util-linux `script` on the node, and it is not installed');
  mkdirSync(stateDir, { recursive: true });
  const fifo = stdinFifo(stateDir);
  let exists = false;
  try {
    exists = statSync(fifo).isFIFO();
  } catch { /* not yet */ }
  if (!exists) {
    const r = spawnSync('mkfifo', ['-m', '0600', fifo], { stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`cannot make the stdin FIFO ${fifo} (mkfifo)`);
  }
  const inner = io.tty ? onTerminal(argv, env) : { argv, env };
  const open = io.stdin && io.stdinOnce ? '0<"$0"' : '0<>"$0"';
  return { argv: ['sh', '-c', `exec ${open} && exec "$@"`, fifo, ...inner.argv], env: inner.env };
}

/**
 * A writer to the container's stdin FIFO; undefined when the container has no reader on it (it
 * has exited). Non-blocking, so a container that does not read holds back the writer, not a thread.
 */
export function openStdin(stateDir: string): Writable | undefined {
  let fd: number;
  try {
    fd = openSync(stdinFifo(stateDir), constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return new Socket({ fd, readable: false, writable: true });
  } catch {
    closeSync(fd);
    return undefined;
  }
}
