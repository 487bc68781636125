// Skiff's Python model server (python/skiff_model_server.py), for real: its unittest file starts
// servers for scikit-learn, XGBoost and TorchScript models and checks every answer, and the launcher
// that scripts/setup.sh links into the environment starts the same program.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';

const repo = resolve(process.cwd());
const python = join(repo, '.venv/bin/python');
const launcher = join(repo, '.venv/bin/skiff-model-server');

interface Ran { code: number | null; signal: NodeJS.Signals | null; output: string; stderr: string }

function run(cmd: string, args: string[], timeoutMs: number): Promise<Ran> {
  return new Promise((res, rej) => {
    const c = spawn(cmd, args, { cwd: repo, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: timeoutMs });
    let output = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    c.stderr.on('data', (d: Buffer) => { output += d.toString(); stderr += d.toString(); });
    c.on('error', rej);
    c.on('close', (code, signal) => res({ code, signal, output, stderr }));
  });
}

void describe('skiff-model-server', { skip: !existsSync(python) && 'no .venv (run scripts/setup.sh)' }, () => {
  void test('python/tests/test_model_server.py passes', async () => {
    const r = await run(python, ['-m', 'unittest', 'python/tests/test_model_server.py'], 120_000);
    assert.equal(r.code, 0, `unittest failed (${r.signal ?? r.code}):\n${r.output}`);
    assert.match(r.output, /\nOK/);
  });

  void test('the launcher in .venv/bin starts it', { skip: !existsSync(launcher) && 'no .venv/bin/skiff-model-server (run scripts/setup.sh)' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-model-server-'));
    try {
      const r = await run(launcher, ['--model_name', 'm', '--model_dir', dir, '--http_port', '0'], 30_000);
      assert.equal(r.code, 1, r.output);
      assert.match(r.stderr, /^skiff-model-server: failed to load model: LoadError: Could not find any model file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
