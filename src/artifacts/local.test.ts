import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, describe, it } from 'node:test';
import { LocalArtifactStore } from './local.js';
import { ArtifactNotFoundError, ArtifactStoreError } from './store.js';
import { artifactStoreContract } from '../testing/artifact-store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-artifacts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('local artifact store', () => {
  const root = join(dir, 'pipeline-root');
  const store = new LocalArtifactStore(root);

  it('makes its root and names objects by file:// URI or absolute path', async () => {
    assert.equal(statSync(root).isDirectory(), true);
    assert.equal(store.root, root);
    assert.equal(store.handles(`file://${root}/a`), true);
    assert.equal(store.handles(`${root}/a`), true);
    assert.equal(store.handles('s3://bucket/a'), false);
    assert.equal(store.handles('relative/a'), false);
    await store.write(`file://${root}/p/one.txt`, 'one');
    assert.equal((await store.read(`${root}/p/one.txt`)).toString(), 'one');
    await assert.rejects(store.read('s3://bucket/a'), (e: Error) => e instanceof ArtifactStoreError && /s3:\/\/bucket\/a.*file:\/\/ URIs and absolute paths/.test(e.message));
    await assert.rejects(store.read('file://host/a'), /expected file:\/\/\/absolute\/path/);
    assert.throws(() => new LocalArtifactStore('relative/root'), /must be an absolute path/);
  });

  it('reads, writes, stats and tells what does not exist', async () => {
    const uri = `${root}/r/out.bin`;
    assert.equal(await store.exists(uri), false);
    assert.equal(await store.stat(uri), undefined);
    assert.equal(await store.readIfExists(uri), undefined);
    await assert.rejects(store.read(uri), (e: Error) => e instanceof ArtifactNotFoundError && e.message === `artifact ${uri} does not exist`);
    await store.write(uri, Buffer.from([9, 8, 7]));
    assert.equal(await store.exists(uri), true);
    const st = await store.stat(uri);
    assert.equal(st?.size, 3);
    assert.equal(st?.directory, false);
    assert.deepEqual([...(await store.read(uri))], [9, 8, 7]);
    assert.equal((await store.stat(`${root}/r`))?.directory, true);
    await assert.rejects(store.read(`${root}/r`), /is a directory/);
    // a write replaces the object whole, and leaves no temporary file beside it
    await store.write(uri, 'v2');
    assert.equal((await store.read(uri)).toString(), 'v2');
    assert.deepEqual(readdirSync(join(root, 'r')), ['out.bin']);
  });

  it('streams objects in and out', async () => {
    const uri = `file://${root}/s/big.txt`;
    const body = 'line\n'.repeat(100_000);
    await store.writeFrom(uri, Readable.from([body.slice(0, 1000), body.slice(1000)]));
    assert.equal((await store.stat(uri))?.size, body.length);
    assert.equal(await text(await store.openRead(uri)), body);
    await assert.rejects(store.openRead(`${root}/s/none`), ArtifactNotFoundError);
    // a stream that fails leaves neither the object nor a temporary file
    const failing = new Readable({ read() { this.destroy(new Error('upstream broke')); } });
    await assert.rejects(store.writeFrom(`${root}/s/broken.txt`, failing), /upstream broke/);
    assert.deepEqual(readdirSync(join(root, 's')), ['big.txt']);
  });

  it('lists every object under a prefix, recursively and sorted', async () => {
    await store.write(`${root}/l/b.txt`, 'bb');
    await store.write(`${root}/l/a/x.txt`, 'x');
    await store.write(`${root}/l/a/y/z.txt`, 'zzz');
    const listed = await store.list(`file://${root}/l/`);
    assert.deepEqual(listed.map((o) => [o.uri, o.size]), [[`file://${root}/l/a/x.txt`, 1], [`file://${root}/l/a/y/z.txt`, 3], [`file://${root}/l/b.txt`, 2]]);
    assert.deepEqual((await store.list(`${root}/l/b.txt`)).map((o) => o.uri), [`${root}/l/b.txt`]);
    assert.deepEqual(await store.list(`${root}/l/none`), []);
  });

  it('copies an object or a whole prefix, and removes', async () => {
    await store.copy(`${root}/l/b.txt`, `${root}/c/one/b.txt`);
    assert.equal((await store.read(`${root}/c/one/b.txt`)).toString(), 'bb');
    await store.copy(`file://${root}/l`, `${root}/c/tree`);
    assert.deepEqual((await store.list(`${root}/c/tree`)).map((o) => o.uri.slice(`${root}/c/tree/`.length)), ['a/x.txt', 'a/y/z.txt', 'b.txt']);
    await assert.rejects(store.copy(`${root}/nothing`, `${root}/c/x`), ArtifactNotFoundError);
    await store.remove(`${root}/c`);
    assert.equal(await store.exists(`${root}/c/one/b.txt`), false);
    await store.remove(`${root}/c`);
  });

  it('tells whether a URI lies under a prefix, following links', async () => {
    await store.write(`${root}/run/task/model.pkl`, 'm');
    assert.equal(await store.contains(root, `${root}/run/task/model.pkl`), true);
    assert.equal(await store.contains(`file://${root}`, `file://${root}/run`), true);
    assert.equal(await store.contains(`${root}/run`, `${root}/run`), true);
    assert.equal(await store.contains(`${root}/run/task`, `${root}/run`), false);
    const outside = join(dir, 'outside.txt');
    writeFileSync(outside, 'secret');
    assert.equal(await store.contains(root, outside), false);
    symlinkSync(outside, join(root, 'run', 'sneaky'));
    assert.equal(await store.contains(root, `${root}/run/sneaky`), false);
    assert.equal(await store.contains(root, `${root}/run/../../outside.txt`), false);
    assert.equal(await store.contains(root, `${root}/run/missing`), false);
  });

  it('gives a Pod its places to write outputs: their folders made, the paths returned', () => {
    const places = store.prepareOutputs([`file://${root}/task1/output_metadata.json`, `${root}/task1/output_parameters/p`, `${root}/task1/model`]);
    assert.deepEqual(places, [`${root}/task1/output_metadata.json`, `${root}/task1/output_parameters/p`, `${root}/task1/model`]);
    assert.equal(statSync(join(root, 'task1', 'output_parameters')).isDirectory(), true);
    // the outputs themselves are the Pod's to write
    assert.equal(existsSync(join(root, 'task1', 'model')), false);
    assert.throws(() => store.prepareOutputs(['gs://bucket/x']), /gs:\/\/bucket\/x/);
  });

  it('hands a local path for what exists, for mounting', async () => {
    mkdirSync(join(root, 'models', 'm1'), { recursive: true });
    assert.equal(await store.localPath(`file://${root}/models/m1`), `${root}/models/m1`);
    await assert.rejects(store.localPath(`${root}/models/none`), ArtifactNotFoundError);
  });
});

describe('local artifact store: what every store does', () => {
  const root = join(dir, 'contract-root');
  const store = new LocalArtifactStore(root);
  artifactStoreContract(() => ({ store, at: (rel) => `${root}/c/${rel}`, foreign: 's3://bucket/a' }));
});
