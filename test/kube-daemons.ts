// What the tests against a real control plane share: waiting for a condition, and `skiff up` and
// `skiff node` run as the daemons they are, stopped by their pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { skiffBin } from './harness.js';
import { removeRuntimeDir } from '../src/substrate/local/runtime-dir.js';

export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface Daemon { proc: ChildProcess; output: () => string; ready: Promise<string>; exited: Promise<number | null> }

/** a `skiff` command that runs until stopped; `ready` resolves once its output matches, with the
 *  pattern's first group (or the whole match) */
export function skiffDaemon(args: string[], readyPattern: RegExp): Daemon {
  let out = '';
  // a test file the runner kills at its timeout takes its daemons with it
  const proc = spawn(process.execPath, [skiffBin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SKIFF_STOP_WITH_PARENT: '1' } });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`skiff ${args[0]} did not start:\n${out}`)), 150_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = readyPattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] ?? m[0]);
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`skiff ${args[0]} exited with ${code}:\n${out}`));
    });
  });
  void ready.catch(() => undefined);
  return { proc, output: () => out, ready, exited };
}

export async function stopDaemon(d: Daemon | undefined): Promise<void> {
  if (!d || d.proc.exitCode !== null || d.proc.signalCode !== null) return;
  d.proc.kill('SIGTERM');
  await d.exited;
}

/**
 * Removes a daemon's data directory once the daemon is stopped. A node agent's containers outlive the
 * agent, as a kubelet's do (restarted, it adopts them), so those still running from it are stopped
 * first: every process whose command line names the directory (the containers' shims, each leading a
 * process group of its own with the container in it, and the agent's Python zygote).
 */
export function removeDataDir(dir: string): void {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number)) {
    if (pid === process.pid) continue;
    let argv: string;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone
    }
    if (!argv.split('\0').some((a) => a === dir || a.startsWith(`${dir}/`))) continue;
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // not a group leader, or gone
      }
    }
  }
  removeRuntimeDir(dir);
  rmSync(dir, { recursive: true, force: true });
}
