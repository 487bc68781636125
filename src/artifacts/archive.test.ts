import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ArchiveError, archiveFormatOf, checkEntryPath, findInArchive, sniffArchive, unpackArchive } from './archive.js';
import { makeTar, makeZip, type TestEntry } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-archive-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;

/** writes `bytes` as an archive file and unpacks it into a fresh directory (inside a fresh parent) */
async function unpack(bytes: Buffer, format: 'tar' | 'tar.gz' | 'zip'): Promise<{ into: string; parent: string; written: string[] }> {
  const parent = join(dir, `case-${++seq}`);
  const into = join(parent, 'out');
  const file = join(dir, `archive-${seq}`);
  writeFileSync(file, bytes);
  const written = await unpackArchive(file, into, format);
  return { into, parent, written };
}

const model: TestEntry[] = [
  { name: 'model/' },
  { name: 'model/weights.bin', body: Buffer.from([0, 1, 2, 255]) },
  { name: 'model/config.json', body: '{"layers": 3}' },
  { name: 'model/run.sh', body: '#!/bin/sh\n', mode: 0o755 },
  { name: 'README', body: 'a model' },
];

describe('archive unpacker', () => {
  it('unpacks a tar.gz with its folders, bytes and modes', async () => {
    const { into, written } = await unpack(makeTar(model, true), 'tar.gz');
    assert.deepEqual(written.sort(), ['README', 'model/config.json', 'model/run.sh', 'model/weights.bin']);
    assert.deepEqual([...readFileSync(join(into, 'model/weights.bin'))], [0, 1, 2, 255]);
    assert.equal(readFileSync(join(into, 'model/config.json'), 'utf8'), '{"layers": 3}');
    assert.equal(statSync(join(into, 'model/run.sh')).mode & 0o777, 0o755);
    assert.equal(readFileSync(join(into, 'README'), 'utf8'), 'a model');
  });

  it('unpacks a plain tar and a zip to the same files', async () => {
    for (const [bytes, format] of [[makeTar(model), 'tar'], [makeZip(model), 'zip']] as const) {
      const { into, written } = await unpack(bytes, format);
      assert.deepEqual(written.sort(), ['README', 'model/config.json', 'model/run.sh', 'model/weights.bin'], format);
      assert.deepEqual([...readFileSync(join(into, 'model/weights.bin'))], [0, 1, 2, 255], format);
      assert.equal(readFileSync(join(into, 'model/config.json'), 'utf8'), '{"layers": 3}', format);
    }
  });

  it('unpacks a large entry intact', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
    for (const [bytes, format] of [[makeTar([{ name: 'big.bin', body: big }], true), 'tar.gz'], [makeZip([{ name: 'big.bin', body: big }]), 'zip']] as const) {
      const { into } = await unpack(bytes, format);
      assert.ok(readFileSync(join(into, 'big.bin')).equals(big), format);
    }
  });

  it('keeps a symlink that stays inside', async () => {
    const { into } = await unpack(makeTar([{ name: 'v1/model.bin', body: 'w' }, { name: 'latest', link: 'v1' }]), 'tar');
    assert.equal(readlinkSync(join(into, 'latest')), 'v1');
    assert.equal(readFileSync(join(into, 'latest/model.bin'), 'utf8'), 'w');
  });

  for (const [what, entries] of [
    ['a ".." entry', [{ name: 'ok.txt', body: 'fine' }, { name: '../escaped.txt', body: 'x' }]],
    ['a nested ".." entry', [{ name: 'a/../../escaped.txt', body: 'x' }]],
    ['an absolute entry', [{ name: '/tmp/escaped.txt', body: 'x' }]],
  ] as [string, TestEntry[]][]) {
    it(`refuses ${what} in tar and zip, writing nothing outside`, async () => {
      for (const [bytes, format] of [[makeTar(entries, true), 'tar.gz'], [makeZip(entries), 'zip']] as const) {
        const parent = join(dir, `case-${seq + 1}`);
        await assert.rejects(unpack(bytes, format), (e: Error) => {
          assert.ok(e instanceof ArchiveError, `${format}: ${e.name}: ${e.message}`);
          assert.match(e.message, /escaped\.txt/);
          return true;
        });
        assert.equal(existsSync(join(parent, 'escaped.txt')), false, format);
        assert.equal(existsSync('/tmp/escaped.txt') && readFileSync('/tmp/escaped.txt', 'utf8') === 'x', false, format);
      }
    });
  }

  it('refuses a symlink that points outside', async () => {
    await assert.rejects(unpack(makeTar([{ name: 'evil', link: '../../etc' }]), 'tar'), /entry "evil": a link to "\.\.\/\.\.\/etc" would leave/);
    await assert.rejects(unpack(makeTar([{ name: 'evil', link: '/etc' }]), 'tar'), /a link to "\/etc" would leave/);
  });

  it('refuses an entry carried out by a chain of links that each look inside', async () => {
    // `c` → `.`, then `c/l` → `..` reads as the target itself, but really is its parent
    const parentOf = join(dir, `case-${seq + 1}`);
    await assert.rejects(
      unpack(makeTar([{ name: 'c', link: '.' }, { name: 'c/l', link: '..' }, { name: 'c/l/escaped.txt', body: 'x' }]), 'tar'),
      ArchiveError,
    );
    assert.equal(existsSync(join(parentOf, 'escaped.txt')), false);
  });

  it('replaces a link with a later file of the same name instead of writing through it', async () => {
    const { into, parent } = await unpack(makeTar([{ name: 'target.txt', body: 'keep' }, { name: 'x', link: 'target.txt' }, { name: 'x', body: 'new' }]), 'tar');
    assert.equal(readFileSync(join(into, 'target.txt'), 'utf8'), 'keep');
    assert.equal(lstatSync(join(into, 'x')).isFile(), true);
    assert.equal(existsSync(join(parent, 'x')), false);
  });

  it('fails on a file that is not the archive it claims to be', async () => {
    await assert.rejects(unpack(Buffer.from('just text, not a zip'), 'zip'), /not a valid zip archive/);
    await assert.rejects(unpack(Buffer.from('just text, not gzip at all'.repeat(40)), 'tar.gz'), ArchiveError);
  });

  it('leaves a plain file alone: no format, nothing to unpack', () => {
    assert.equal(archiveFormatOf('model.joblib'), undefined);
    assert.equal(archiveFormatOf('model.onnx', 'application/octet-stream'), undefined);
    assert.equal(archiveFormatOf('m.tar.gz'), 'tar.gz');
    assert.equal(archiveFormatOf('m.TGZ'), 'tar.gz');
    assert.equal(archiveFormatOf('m.gz', 'application/gzip'), 'tar.gz');
    assert.equal(archiveFormatOf('m.gz'), undefined);
    assert.equal(archiveFormatOf('m.tar'), 'tar');
    assert.equal(archiveFormatOf('m.zip'), 'zip');
    assert.equal(sniffArchive(Buffer.from('pipelineInfo:\n  name: x\n')), undefined);
    assert.equal(sniffArchive(makeTar(model, true)), 'tar.gz');
    assert.equal(sniffArchive(makeTar(model)), 'tar');
    assert.equal(sniffArchive(makeZip(model)), 'zip');
  });

  it('checks entry names', () => {
    assert.equal(checkEntryPath('a/b/'), 'a/b');
    assert.equal(checkEntryPath('./a//b'), 'a/b');
    assert.equal(checkEntryPath('a\\b'), 'a/b');
    assert.throws(() => checkEntryPath('C:/x'), /absolute/);
    assert.throws(() => checkEntryPath('a\\..\\..\\x'), /"\.\."/);
  });

  it('finds the first wanted file in an archive in memory, and stops there', async () => {
    const bytes = makeTar([{ name: 'a.txt', body: 'a' }, { name: 'b.yaml', body: 'first' }, { name: 'c.yaml', body: 'second' }, { name: '../bad.yaml', body: 'x' }], true);
    assert.deepEqual(await findInArchive(bytes, 'tar.gz', (p) => p.endsWith('.yaml')), { path: 'b.yaml', data: Buffer.from('first') });
    assert.equal(await findInArchive(makeZip(model), 'zip', (p) => p.endsWith('.yaml')), undefined);
  });
});
