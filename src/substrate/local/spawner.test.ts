import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Spawner, SpawnError, spawnerPath } from './spawner.js';

const built = existsSync(spawnerPath());

describe('skiff-spawner', { skip: built ? false : 'build/skiff-spawner is not built (scripts/build-native.sh)' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-spawner-'));
  const spawner = new Spawner();
  // waiting for an exit does not hold the process open (as for a child_process that is unref'd)
  const alive = setInterval(() => {}, 1000);
  after(() => {
    clearInterval(alive);
    spawner.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a program with exactly the environment and working directory it is given', async () => {
    const out = join(dir, 'out');
    const s = await spawner.spawn(['/bin/sh', '-c', `echo "$SKIFF_X $PWD $HOME" > ${out}`], { SKIFF_X: 'hello' }, dir);
    assert.ok(s.pid > 0);
    await s.exited;
    // HOME is not passed on from the server: the program sees only what it was given
    assert.equal(readFileSync(out, 'utf8'), `hello ${dir} \n`);
  });

  it('reports exec and chdir failures as SpawnErrors, and nothing runs', async () => {
    await assert.rejects(spawner.spawn([join(dir, 'missing')], {}, dir), (e: unknown) => e instanceof SpawnError && e.errno === 2 && /ENOENT/.test(e.message));
    await assert.rejects(spawner.spawn(['/bin/true'], {}, join(dir, 'no-such-dir')), (e: unknown) => e instanceof SpawnError && e.errno === 2);
    await assert.rejects(spawner.spawn(['/bin/true'], { A: 'x\0y' }, dir), TypeError);
  });

  it('starts many at once and tells each one\'s end apart', async () => {
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => spawner.spawn(['/bin/sh', '-c', `sleep 0.0${i % 5}; echo ${i} > ${join(dir, `n${i}`)}`], {}, dir)));
    assert.equal(new Set(all.map((s) => s.pid)).size, 20);
    await Promise.all(all.map((s) => s.exited));
    for (let i = 0; i < 20; i++) assert.equal(readFileSync(join(dir, `n${i}`), 'utf8'), `${i}\n`);
  });

  it('when the spawner is gone, what it started runs on and waiters are released; the next spawn starts a new one', async () => {
    const flag = join(dir, 'survivor');
    const s = await spawner.spawn(['/bin/sh', '-c', `sleep 0.5; touch ${flag}`], {}, dir);
    const own = (spawner as unknown as { proc?: { pid: number } }).proc;
    assert.ok(own?.pid);
    process.kill(own.pid, 'SIGKILL');
    await s.exited;
    const again = await spawner.spawn(['/bin/true'], {}, dir);
    await again.exited;
    const deadline = Date.now() + 10_000;
    while (!existsSync(flag) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(existsSync(flag), 'the program outlived its spawner');
  });
});
