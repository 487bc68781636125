// `skiff up` with SKIFF_STOP_WITH_PARENT=1 stops once the process that started it is gone, as the test
// harness starts every server: a test file killed at its timeout does not leave its servers running.
// Without the variable a server outlives its parent, as a daemon should.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { skiffBin } from './harness.js';
import { removeRuntimeDir } from '../src/substrate/local/runtime-dir.js';

const dirs: string[] = [];
const pids: number[] = [];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** starts `skiff up` from a parent shell that prints the server's pid and then waits; returns both pids
 *  once the server says it is ready */
async function serverUnderParent(env: Record<string, string>): Promise<{ parent: number; server: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-parent-'));
  dirs.push(dir);
  const script = `"${process.execPath}" "${skiffBin}" up --port 0 --data-dir "${dir}" >"${dir}/out" 2>&1 & echo $!; wait`;
  const parent = spawn('bash', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  const server = await new Promise<number>((resolve, reject) => {
    parent.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    parent.once('exit', () => reject(new Error('the parent shell ended first')));
  });
  pids.push(server);
  // ready: it answers on the address it printed
  for (let i = 0; i < 300; i++) {
    let out = '';
    try {
      out = readFileSync(join(dir, 'out'), 'utf8');
    } catch {
      // not written yet
    }
    if (/Skiff is ready at/.test(out)) return { parent: parent.pid as number, server };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not get ready');
}

async function gone(pid: number, ms: number): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms;) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

describe('a server started for a test', () => {
  after(() => {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (const d of dirs) {
      removeRuntimeDir(d);
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('stops when the process that started it is killed, with SKIFF_STOP_WITH_PARENT=1', async () => {
    const { parent, server } = await serverUnderParent({ SKIFF_STOP_WITH_PARENT: '1' });
    process.kill(parent, 'SIGKILL');
    assert.ok(await gone(server, 30_000), 'the server is still running after its parent was killed');
  });

  it('outlives its parent without it', async () => {
    const { parent, server } = await serverUnderParent({ SKIFF_STOP_WITH_PARENT: '' });
    process.kill(parent, 'SIGKILL');
    assert.equal(await gone(server, 3_000), false, 'the server stopped with its parent');
    process.kill(server, 'SIGTERM');
    assert.ok(await gone(server, 30_000));
  });
});
