// A long-lived Python process spoken to in JSON lines: one request per line on its stdin, one
// answer per line on its stdout, in order. Optuna's samplers (optuna_worker.py) and the SVM's
// cross-validation (svm_worker.py) run this way, so that Python starts and imports once per run
// instead of once per trial.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** the repository root, from dist/bench/tuning/ */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const venvPython = join(repoRoot, '.venv', 'bin', 'python');
/** the Python scripts stay in the source tree (tsc copies only TypeScript to dist/) */
export const scriptDir = join(repoRoot, 'bench', 'tuning');

interface Waiting {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class JsonLinesWorker {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly waiting: Waiting[] = [];
  private buffer = '';
  private stderr = '';
  private exited: string | undefined;

  constructor(readonly script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    if (!existsSync(venvPython)) throw new Error(`no ${venvPython}: run npm run setup`);
    this.proc = spawn(venvPython, [join(scriptDir, script), ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (;;) {
        const nl = this.buffer.indexOf('\n');
        if (nl < 0) break;
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const w = this.waiting.shift();
        if (!w) continue;
        try {
          const msg = JSON.parse(line) as { error?: string };
          if (typeof msg.error === 'string') w.reject(new Error(`${script}: ${msg.error}`));
          else w.resolve(msg);
        } catch {
          w.reject(new Error(`${script} answered a line that is not JSON: ${line.slice(0, 200)}`));
        }
      }
    });
    // keep the end of stderr for the message when the process fails
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    this.proc.on('exit', (code, signal) => {
      this.exited = `${script} exited (${signal ?? code})${this.stderr ? `:\n${this.stderr}` : ''}`;
      for (const w of this.waiting.splice(0)) w.reject(new Error(this.exited));
    });
    this.proc.stdin.on('error', () => {
      // the exit handler reports it
    });
  }

  request<T>(msg: Record<string, unknown>): Promise<T> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve: resolve as (v: unknown) => void, reject });
      this.proc.stdin.write(`${JSON.stringify(msg)}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((r) => this.proc.once('exit', r));
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}
