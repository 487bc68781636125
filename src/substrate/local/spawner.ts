// Starting a program without forking the server: build/skiff-spawner (native/skiff-spawner.c) is one
// long-lived child that forks and execs on request. A fork of the server itself blocks its only
// thread for milliseconds per container (more on a busy machine), which is most of what starting a
// container costs the server when many start at once, as the tasks of a ParallelFor do.
import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A program the spawner started. */
export interface Spawned {
  readonly pid: number;
  /** resolves once the program has ended, or once the spawner can no longer say (it went away) */
  readonly exited: Promise<void>;
}

/** The program could not be started: `errno` as exec or chdir reported it. */
export class SpawnError extends Error {
  constructor(readonly errno: number, file: string) {
    super(`cannot run ${file}: ${errnoName(errno)}`);
  }
}

const ERRNO: Record<number, string> = { 1: 'EPERM', 2: 'ENOENT', 7: 'E2BIG', 8: 'ENOEXEC', 11: 'EAGAIN', 12: 'ENOMEM', 13: 'EACCES', 20: 'ENOTDIR', 26: 'ETXTBSY' };
const errnoName = (n: number): string => ERRNO[n] ?? `errno ${n}`;

interface Pending {
  file: string;
  resolve: (s: Spawned) => void;
  reject: (e: Error) => void;
}

export function spawnerPath(): string {
  // dist/src/substrate/local/spawner.js -> <repo>/build/skiff-spawner
  return process.env.SKIFF_SPAWNER ?? fileURLToPath(new URL('../../../../build/skiff-spawner', import.meta.url));
}

export class Spawner {
  private proc?: ChildProcess;
  private nextId = 1;
  private readonly starting = new Map<number, Pending>();
  private readonly running = new Map<number, () => void>();
  private buf = '';

  constructor(private readonly path = spawnerPath()) {}

  /** whether the spawner binary is there (else callers fork as before) */
  available(): boolean {
    return existsSync(this.path);
  }

  /** Starts `argv` (argv[0] a path) in `cwd` with exactly `env`, stdio on /dev/null. Rejects with a
   *  SpawnError when exec or chdir fails, and with an Error when the spawner itself is gone. */
  spawn(argv: string[], env: Record<string, string | undefined>, cwd: string): Promise<Spawned> {
    const envList = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
    const bad = [cwd, ...argv, ...envList].find((f) => f.includes('\0'));
    // as child_process.spawn refuses them: the fields are NUL-separated
    if (bad !== undefined) return Promise.reject(new TypeError(`an argument, the environment or the working directory contains a null byte: ${JSON.stringify(bad.slice(0, 80))}`));
    const proc = this.ensure();
    const id = this.nextId++;
    const fields = [String(id), cwd, String(argv.length), ...argv, String(envList.length), ...envList];
    const body = Buffer.from(fields.map((f) => `${f}\0`).join(''));
    const frame = Buffer.alloc(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, 4);
    return new Promise<Spawned>((resolve, reject) => {
      this.starting.set(id, { file: argv[0] ?? '', resolve, reject });
      // an answer is awaited: the process stays up for it (an exit, like a child's, does not hold it)
      this.holdOpen(true);
      proc.stdin?.write(frame);
    });
  }

  /** Ends the spawner; programs it started keep running. */
  stop(): void {
    this.proc?.stdin?.end();
    this.proc = undefined;
  }

  private holdOpen(hold: boolean): void {
    const out = this.proc?.stdout as unknown as { ref?: () => void; unref?: () => void } | undefined;
    if (hold) out?.ref?.();
    else out?.unref?.();
  }

  private ensure(): ChildProcess {
    if (this.proc) return this.proc;
    const proc = spawnChild(this.path, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.proc = proc;
    // it must not keep the server (or a test) alive on its own, as the containers' monitors never did
    proc.unref();
    (proc.stdin as unknown as { unref?: () => void }).unref?.();
    (proc.stdout as unknown as { unref?: () => void }).unref?.();
    proc.stdin?.on('error', () => { /* gone: handled on exit */ });
    proc.stdout?.setEncoding('utf8');
    proc.stdout?.on('data', (chunk: string) => this.read(chunk));
    const gone = (): void => this.gone(proc);
    proc.once('exit', gone);
    proc.once('error', gone);
    return proc;
  }

  private read(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      const [kind, idText, value] = line.split(' ');
      const id = Number(idText);
      if (kind === 'S') {
        const p = this.starting.get(id);
        this.starting.delete(id);
        let done!: () => void;
        const exited = new Promise<void>((r) => (done = r));
        this.running.set(id, done);
        p?.resolve({ pid: Number(value), exited });
      } else if (kind === 'F') {
        const p = this.starting.get(id);
        this.starting.delete(id);
        p?.reject(new SpawnError(Number(value), p.file));
      }
      if ((kind === 'S' || kind === 'F') && this.starting.size === 0) this.holdOpen(false); else if (kind === 'X') {
        this.running.get(id)?.();
        this.running.delete(id);
      }
    }
  }

  /** The spawner ended (killed, or never started): what waits on it learns so; the next spawn starts
   *  another. The programs it started run on: their exits are found by other means (state files). */
  private gone(proc: ChildProcess): void {
    if (this.proc === proc) this.proc = undefined;
    for (const p of this.starting.values()) p.reject(new Error(`skiff-spawner (${this.path}) is gone`));
    this.starting.clear();
    for (const done of this.running.values()) done();
    this.running.clear();
    this.buf = '';
  }
}
