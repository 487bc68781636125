// The warm Python that starts lightweight components (python/skiff_zygote.py): one per interpreter,
// started by the server, detached so that tasks it forked outlive a server crash like every other
// container. A task Pod runs build/skiff-pyfork, which asks the zygote for a forked child and falls
// back to the real interpreter when the zygote is not there.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { sleep } from '../../util/timers.js';

export interface ZygoteOptions {
  python: string;
  /** python/skiff_zygote.py */
  script: string;
  /** build/skiff-pyfork */
  client: string;
  /** where the socket and the component sources go */
  dir: string;
  /** the zygote exits after this long with nothing to do (it is started again on demand) */
  idleSeconds?: number;
}

function canConnect(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export class PythonZygote {
  readonly socket: string;
  private starting?: Promise<boolean>;
  private lastCheck = 0;
  private up = false;
  private pid?: number;

  constructor(private readonly opts: ZygoteOptions) {
    const id = createHash('sha256').update(opts.python).digest('hex').slice(0, 12);
    const inDir = join(opts.dir, `zygote-${id}.sock`);
    // a Unix socket path has at most 107 bytes
    this.socket = Buffer.byteLength(inDir) < 100 ? inDir : `/tmp/skiff-zygote-${createHash('sha256').update(inDir).digest('hex').slice(0, 16)}.sock`;
  }

  static available(opts: Pick<ZygoteOptions, 'python' | 'script' | 'client'>): boolean {
    return [opts.python, opts.script, opts.client].every((p) => existsSync(p));
  }

  get client(): string {
    return this.opts.client;
  }

  get python(): string {
    return this.opts.python;
  }

  /** Starts the zygote unless one answers on the socket; true when one is up. Cheap when it is. */
  ensure(): Promise<boolean> {
    if (this.up && Date.now() - this.lastCheck < 2000 && existsSync(this.socket)) return Promise.resolve(true);
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<boolean> {
    this.lastCheck = Date.now();
    if (await canConnect(this.socket)) return (this.up = true);
    mkdirSync(this.opts.dir, { recursive: true });
    const child = spawn(this.opts.python, [this.opts.script, this.socket, String(this.opts.idleSeconds ?? 300)], {
      detached: true, stdio: 'ignore', env: { ...process.env, _KFP_RUNTIME: 'true', PYTHONDONTWRITEBYTECODE: '1' },
    });
    child.unref();
    this.pid = child.pid;
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    child.once('error', () => {
      exited = true;
    });
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !exited) {
      if (existsSync(this.socket) && (await canConnect(this.socket))) {
        this.lastCheck = Date.now();
        return (this.up = true);
      }
      await sleep(25);
    }
    return (this.up = false);
  }

  /** Asks a zygote this object started to drain: no new tasks, exit once the running ones end. */
  stop(): void {
    if (this.pid === undefined) return;
    try {
      process.kill(this.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    this.pid = undefined;
    this.up = false;
  }

  /** The component's source as a file the executor can import: one per distinct source. */
  componentFile(source: string): string {
    const dir = join(this.opts.dir, 'components', createHash('sha256').update(source).digest('hex').slice(0, 24));
    const file = join(dir, 'ephemeral_component.py');
    try {
      if (statSync(file).size === Buffer.byteLength(source)) return file;
    } catch {
      // not written yet
    }
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, source);
    // renamed into place: a concurrent reader never sees half a file
    renameSync(tmp, file);
    return file;
  }
}

/**
 * `sh -c 'program_path=$(mktemp -d) ... python3 -m kfp.dsl.executor_main --component_module_path ...' SOURCE ARGS`
 * (what the kfp SDK compiles a lightweight component to, once the pip step is gone) → its source and args.
 */
export function lightweightComponent(command: string[], args: string[]): { source: string; args: string[] } | undefined {
  if (command.length !== 4 || command[0] !== 'sh' || !/^-e?c$/.test(command[1] ?? '')) return undefined;
  const script = command[2] ?? '';
  if (!/_KFP_RUNTIME=true\s+python3\s+-m\s+kfp\.dsl\.executor_main\s+--component_module_path\s+"\$program_path\/ephemeral_component\.py"\s+"\$@"/.test(script)) return undefined;
  if (!/printf\s+"%s"\s+"\$0"\s+>\s+"\$program_path\/ephemeral_component\.py"/.test(script)) return undefined;
  return { source: command[3] ?? '', args: [...args] };
}
