// The warm Python and its client, for real: build/skiff-pyfork against python/skiff_zygote.py.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launch } from './process.js';
import { PythonZygote, lightweightComponent } from './zygote.js';

const repo = resolve(process.cwd());
const opts = { python: join(repo, '.venv/bin/python'), script: join(repo, 'python/skiff_zygote.py'), client: join(repo, 'build/skiff-pyfork') };

interface Ran { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

function run(args: string[], env: Record<string, string>, onStart?: (pid: number) => void): Promise<Ran> {
  return new Promise((res, rej) => {
    const c = spawn(opts.client, args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, cwd: tmpdir() });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => { stdout += d.toString(); if (onStart && stdout.includes('ready')) { const f = onStart; onStart = undefined; f(c.pid ?? 0); } });
    c.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    c.on('error', rej);
    c.on('close', (code, signal) => res({ code, signal, stdout, stderr }));
  });
}

/** pids whose command line contains `marker` */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

async function until(what: string, f: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

void describe('Python zygote', { skip: !PythonZygote.available(opts) && 'needs .venv and build/skiff-pyfork (scripts/setup.sh)' }, () => {
  let dir: string;
  let z: PythonZygote;
  let env: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-zygote-'));
    z = new PythonZygote({ ...opts, dir, idleSeconds: 20 });
    assert.equal(await z.ensure(), true);
    env = { SKIFF_ZYGOTE: z.socket, SKIFF_PYTHON: opts.python, FOO: 'bar' };
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  void test('runs a forked child with the argv, environment, working directory and exit code asked for', async () => {
    const r = await run(['-c', 'import os, sys; print(sys.argv, os.environ["FOO"], os.getcwd(), os.getppid() != 1); sys.stderr.write("err\\n"); sys.exit(5)', 'a', 'b'], env);
    assert.equal(r.code, 5, r.stderr);
    assert.equal(r.stdout.trim(), `['-c', 'a', 'b'] bar ${tmpdir()} True`);
    assert.equal(r.stderr, 'err\n');
    const boom = await run(['-c', 'raise ValueError("boom")'], env);
    assert.equal(boom.code, 1);
    assert.match(boom.stderr, /ValueError: boom/);
  });

  void test('each child draws its own random numbers', async () => {
    const a = await run(['-c', 'import random; print(random.random())'], env);
    const b = await run(['-c', 'import random; print(random.random())'], env);
    assert.notEqual(a.stdout, b.stdout);
  });

  void test('runs the kfp executor of a lightweight component from a file', async () => {
    const file = z.componentFile('from kfp import dsl\n\ndef add(a: int, b: int) -> int:\n    return a + b\n');
    const out = join(dir, 'out.json');
    const ei = JSON.stringify({ inputs: { parameterValues: { a: 2, b: 3 } }, outputs: { parameters: { Output: { outputFile: join(dir, 'Output') } }, outputFile: out } });
    const r = await run(['-m', 'kfp.dsl.executor_main', '--component_module_path', file, '--executor_input', ei, '--function_to_execute', 'add'], { ...env, _KFP_RUNTIME: 'true' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), { parameterValues: { Output: 5 } });
  });

  void test('forwards SIGTERM to the child, and a killed client takes its child with it', async () => {
    const m1 = `skiff-zygote-test-${process.pid}-term`;
    const termed = await run(['-c', `import sys, time; print("ready", flush=True); time.sleep(60)`, m1], env, (pid) => process.kill(pid, 'SIGTERM'));
    assert.equal(termed.signal, 'SIGTERM');
    await until('the child to be gone after SIGTERM', () => processesWith(m1).length === 0);
    const m2 = `skiff-zygote-test-${process.pid}-kill`;
    const killed = await run(['-c', `import sys, time; print("ready", flush=True); time.sleep(60)`, m2], env, (pid) => process.kill(pid, 'SIGKILL'));
    assert.equal(killed.signal, 'SIGKILL');
    await until('the child to be gone after the client was killed', () => processesWith(m2).length === 0);
  });

  void test('as a container, skiff-pyfork runs inside its shim\'s child (no exec) and behaves as the program', async () => {
    const state = join(dir, 'container');
    const logFile = join(dir, 'container.log');
    const marker = `skiff-zygote-test-${process.pid}-shim`;
    // waiting on a container does not hold the event loop open (a server may exit and leave it running)
    const hold = setInterval(() => undefined, 1000);
    try {
      await containerTask(state, logFile, marker);
    } finally {
      clearInterval(hold);
    }
  });

  async function containerTask(state: string, logFile: string, marker: string): Promise<void> {
    const c = await launch({
      stateDir: state, logFile, cwd: tmpdir(), env: { ...env, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      argv: [opts.client, '-c', 'import os, sys, time; print(sys.argv[1:], os.environ["FOO"], flush=True); sys.stderr.write("err\\n"); sys.stderr.flush(); time.sleep(60)', marker],
    });
    await until('the task to start', () => readFileSync(logFile, 'utf8').includes('err'));
    // the container's process is the shim's forked child running skiff-pyfork's code: no exec
    assert.equal(readlinkSync(`/proc/${c.pid}/exe`), join(repo, 'build/skiff-shim'));
    assert.equal(readFileSync(`/proc/${c.pid}/comm`, 'utf8').trim(), 'skiff-pyfork');
    const log = readFileSync(logFile, 'utf8');
    assert.match(log, /stdout F \['skiff-zygote-test-\d+-shim'\] bar\n/);
    assert.match(log, /stderr F err\n/);
    c.signal('SIGTERM');
    const exit = await c.exited();
    assert.equal(exit.signal, 15);
    await until('the task to be gone after SIGTERM', () => processesWith(marker).length === 0);
    // the exit code of the task is the container's
    const d = await launch({ stateDir: join(dir, 'container-2'), logFile: join(dir, 'container-2.log'), cwd: tmpdir(), env: { ...env, PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, argv: [opts.client, '-c', 'import sys; sys.exit(6)'] });
    assert.equal((await d.exited()).exitCode, 6);
    // without a zygote it runs the interpreter, as the program would
    const e = await launch({ stateDir: join(dir, 'container-3'), logFile: join(dir, 'container-3.log'), cwd: tmpdir(), env: { ...env, PATH: process.env['PATH'] ?? '/usr/bin:/bin', SKIFF_ZYGOTE: join(dir, 'nobody.sock') }, argv: [opts.client, '-c', 'print("plain")'] });
    assert.equal((await e.exited()).exitCode, 0);
    assert.match(readFileSync(join(dir, 'container-3.log'), 'utf8'), /stdout F plain\n/);
  }

  void test('without a zygote the client runs the interpreter itself', async () => {
    const r = await run(['-c', 'import sys; print("plain"); sys.exit(4)'], { ...env, SKIFF_ZYGOTE: join(dir, 'nobody.sock') });
    assert.equal(r.code, 4);
    assert.equal(r.stdout.trim(), 'plain');
  });

  void test('recognises what the kfp SDK compiles a lightweight component to', () => {
    const script = 'program_path=$(mktemp -d)\n\nprintf "%s" "$0" > "$program_path/ephemeral_component.py"\n_KFP_RUNTIME=true python3 -m kfp.dsl.executor_main                         --component_module_path                         "$program_path/ephemeral_component.py"                         "$@"\n';
    assert.deepEqual(lightweightComponent(['sh', '-ec', script, 'SRC'], ['--executor_input', '{}']), { source: 'SRC', args: ['--executor_input', '{}'] });
    assert.equal(lightweightComponent(['sh', '-c', 'python3 train.py', 'x'], []), undefined);
    assert.equal(lightweightComponent(['python3', '-m', 'kfp.dsl.executor_main'], []), undefined);
  });
});
