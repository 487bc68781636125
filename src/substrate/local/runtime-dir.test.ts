import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadContainer, logFile, runDir } from './runtime.js';
import { removeRuntimeDir, runtimeDirFor, runtimeRoot } from './runtime-dir.js';

const made: string[] = [];
const tmp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
};

describe('the runtime directory', () => {
  after(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  it('is under the root given, linked from the data directory as run, with the data directory\'s permissions', () => {
    const root = tmp('skiff-rtroot-');
    const data = tmp('skiff-rtdata-');
    const dir = runtimeDirFor(data, root);
    assert.ok(dir.startsWith(`${root}/skiff-`), dir);
    assert.ok(lstatSync(join(data, 'run')).isSymbolicLink());
    assert.equal(readlinkSync(join(data, 'run')), dir);
    assert.equal(statSync(dir).mode & 0o777, statSync(data).mode & 0o777);
    assert.equal(readFileSync(join(dir, 'data-dir'), 'utf8'), realpathSync(data));
    // the same data directory gets the same one again (a restarted server finds its containers' state)
    assert.equal(runtimeDirFor(data, root), dir);
    removeRuntimeDir(data);
    assert.equal(existsSync(dir), false);
  });

  it('removes the runtime directories of data directories that are gone, and no others', () => {
    const root = tmp('skiff-rtroot-');
    const gone = tmp('skiff-rtdata-');
    const kept = tmp('skiff-rtdata-');
    const orphan = runtimeDirFor(gone, root);
    const other = runtimeDirFor(kept, root);
    const foreign = join(root, 'skiff-something-else');
    mkdirSync(foreign);
    rmSync(gone, { recursive: true });
    runtimeDirFor(tmp('skiff-rtdata-'), root);
    assert.equal(existsSync(orphan), false);
    assert.equal(existsSync(other), true);
    assert.equal(existsSync(foreign), true);
  });

  it('is the data directory\'s own run folder where there is no tmpfs, and stays there once it is', () => {
    const data = tmp('skiff-rtdata-');
    const dir = runtimeDirFor(data, null);
    assert.equal(dir, join(realpathSync(data), 'run'));
    assert.ok(statSync(dir).isDirectory() && !lstatSync(dir).isSymbolicLink());
    // containers' state is in it: a later start with a tmpfs keeps using it
    assert.equal(runtimeDirFor(data, tmp('skiff-rtroot-')), dir);
  });

  it('picks /dev/shm when it is a tmpfs, and none when SKIFF_RUNTIME_ROOT is empty', () => {
    const saved = process.env.SKIFF_RUNTIME_ROOT;
    try {
      process.env.SKIFF_RUNTIME_ROOT = '';
      assert.equal(runtimeRoot(), undefined);
      process.env.SKIFF_RUNTIME_ROOT = '/some/where';
      assert.equal(runtimeRoot(), '/some/where');
      delete process.env.SKIFF_RUNTIME_ROOT;
      const root = runtimeRoot();
      if (root !== undefined) assert.ok(root === '/dev/shm' || root === process.env.XDG_RUNTIME_DIR, root);
    } finally {
      if (saved === undefined) delete process.env.SKIFF_RUNTIME_ROOT;
      else process.env.SKIFF_RUNTIME_ROOT = saved;
    }
  });

  it('a run whose state a reboot took reads as lost, and the next run\'s number follows its log', () => {
    const dirs = { pod: tmp('skiff-rtpod-'), state: tmp('skiff-rtstate-') };
    // run 0 finished with its state; run 1's state is gone (the tmpfs emptied), its log is on disk
    mkdirSync(runDir(dirs.state, 'main', 0), { recursive: true });
    writeFileSync(join(runDir(dirs.state, 'main', 0), 'exit'), JSON.stringify({ exitCode: 0, signal: 0, finishedAt: '2026-01-01T00:00:00Z' }));
    mkdirSync(join(dirs.pod, 'containers', 'main'), { recursive: true });
    writeFileSync(logFile(dirs.pod, 'main', 0), '');
    writeFileSync(logFile(dirs.pod, 'main', 1), '');
    const c = loadContainer(dirs, 'main', false);
    assert.equal(c.current?.n, 1);
    assert.equal(c.current?.exit?.exitCode, 137);
    assert.equal(c.last?.n, 0);
    assert.equal(c.last?.exit?.exitCode, 0);
  });

  it('adopts a run a server from before the runtime directory started, where it left its state', () => {
    const dirs = { pod: tmp('skiff-rtpod-'), state: tmp('skiff-rtstate-') };
    mkdirSync(runDir(dirs.pod, 'main', 0), { recursive: true });
    writeFileSync(join(runDir(dirs.pod, 'main', 0), 'exit'), JSON.stringify({ exitCode: 3, signal: 0, finishedAt: '2026-01-01T00:00:00Z' }));
    writeFileSync(logFile(dirs.pod, 'main', 0), '');
    const c = loadContainer(dirs, 'main', false);
    assert.equal(c.current?.n, 0);
    assert.equal(c.current?.exit?.exitCode, 3);
  });
});
