// What every ArtifactStore does, as tests any implementation runs against itself: the local directory
// (src/artifacts/local.test.ts) and S3 on a real MinIO (src/artifacts/s3.test.ts).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { it } from 'node:test';
import { ArtifactNotFoundError, type ArtifactStore } from '../artifacts/store.js';

export interface ContractSubject {
  store: ArtifactStore;
  /** the URI of `rel` (a/b.txt) under a place of its own for these tests, in the store's spelling */
  at(rel: string): string;
  /** a URI of a form the store does not hold */
  foreign: string;
}

/** The shared behaviours, as `it`s: call inside a `describe`; `subject` is read when the tests run. */
export function artifactStoreContract(subject: () => ContractSubject): void {
  it('holds its own URIs and no others', () => {
    const { store, at, foreign } = subject();
    assert.equal(store.handles(at('x')), true);
    assert.equal(store.handles(foreign), false);
  });

  it('reads, writes, stats and tells what does not exist', async () => {
    const { store, at } = subject();
    const uri = at('r/out.bin');
    assert.equal(await store.exists(uri), false);
    assert.equal(await store.stat(uri), undefined);
    assert.equal(await store.readIfExists(uri), undefined);
    await assert.rejects(store.read(uri), (e: Error) => e instanceof ArtifactNotFoundError && e.message === `artifact ${uri} does not exist`);
    await store.write(uri, Buffer.from([9, 8, 7]));
    assert.equal(await store.exists(uri), true);
    const st = await store.stat(uri);
    assert.equal(st?.size, 3);
    assert.equal(st?.directory, false);
    assert.ok(st?.modified instanceof Date);
    assert.deepEqual([...(await store.read(uri))], [9, 8, 7]);
    // what holds objects is a directory, and has no bytes of its own
    const dir = await store.stat(at('r'));
    assert.equal(dir?.directory, true);
    assert.equal(dir?.size, 0);
    await assert.rejects(store.read(at('r')), /is a directory/);
    await assert.rejects(store.openRead(at('r')), /is a directory/);
    // a write replaces the object whole
    await store.write(uri, 'v2');
    assert.equal((await store.read(uri)).toString(), 'v2');
    assert.deepEqual((await store.list(at('r'))).map((o) => o.uri), [uri]);
  });

  it('streams objects in and out, and a failed stream leaves nothing', async () => {
    const { store, at } = subject();
    const uri = at('s/big.txt');
    // larger than a multipart upload's part, so a store that uploads in parts does
    const body = 'line\n'.repeat(2_000_000);
    await store.writeFrom(uri, Readable.from([body.slice(0, 1000), body.slice(1000)]));
    assert.equal((await store.stat(uri))?.size, body.length);
    assert.equal(await text(await store.openRead(uri)), body);
    await assert.rejects(store.openRead(at('s/none')), ArtifactNotFoundError);
    let sent = 0;
    const failing = new Readable({
      read() {
        if (sent++ < 3) this.push(Buffer.alloc(64 * 1024, 1));
        else this.destroy(new Error('upstream broke'));
      },
    });
    await assert.rejects(store.writeFrom(at('s/broken.txt'), failing), /upstream broke/);
    assert.equal(await store.exists(at('s/broken.txt')), false);
    assert.deepEqual((await store.list(at('s'))).map((o) => o.uri), [uri]);
  });

  it('lists every object under a prefix, recursively and sorted', async () => {
    const { store, at } = subject();
    await store.write(at('l/b.txt'), 'bb');
    await store.write(at('l/a/x.txt'), 'x');
    await store.write(at('l/a/y/z.txt'), 'zzz');
    const listed = await store.list(`${at('l')}/`);
    assert.deepEqual(listed.map((o) => [o.uri, o.size, o.directory]), [[at('l/a/x.txt'), 1, false], [at('l/a/y/z.txt'), 3, false], [at('l/b.txt'), 2, false]]);
    assert.deepEqual((await store.list(at('l/b.txt'))).map((o) => o.uri), [at('l/b.txt')]);
    assert.deepEqual(await store.list(at('l/none')), []);
    // a prefix is its whole name: l/a does not hold l/ab.txt
    await store.write(at('l/ab.txt'), 'ab');
    assert.deepEqual((await store.list(at('l/a'))).map((o) => o.uri), [at('l/a/x.txt'), at('l/a/y/z.txt')]);
  });

  it('copies an object or a whole prefix, and removes', async () => {
    const { store, at } = subject();
    await store.write(at('c0/b.txt'), 'bb');
    await store.write(at('c0/a/x.txt'), 'x');
    await store.copy(at('c0/b.txt'), at('c/one/b.txt'));
    assert.equal((await store.read(at('c/one/b.txt'))).toString(), 'bb');
    await store.copy(at('c0'), at('c/tree'));
    assert.deepEqual((await store.list(at('c/tree'))).map((o) => o.uri.slice(`${at('c/tree')}/`.length)), ['a/x.txt', 'b.txt']);
    await assert.rejects(store.copy(at('nothing'), at('c/x')), ArtifactNotFoundError);
    await store.remove(at('c'));
    assert.equal(await store.exists(at('c/one/b.txt')), false);
    assert.equal(await store.exists(at('c')), false);
    // removing what is not there is no error
    await store.remove(at('c'));
    // an object's removal leaves its neighbours
    await store.remove(at('c0/b.txt'));
    assert.deepEqual((await store.list(at('c0'))).map((o) => o.uri), [at('c0/a/x.txt')]);
  });

  it('tells whether a URI lies under a prefix', async () => {
    const { store, at } = subject();
    await store.write(at('run/task/model.pkl'), 'm');
    await store.write(at('runner.txt'), 'r');
    assert.equal(await store.contains(at('run'), at('run/task/model.pkl')), true);
    assert.equal(await store.contains(at('run'), at('run')), true);
    assert.equal(await store.contains(at('run/task'), at('run')), false);
    assert.equal(await store.contains(at('run'), at('runner.txt')), false);
    assert.equal(await store.contains(at('run'), at('run/missing')), false);
    assert.equal(await store.contains(at('run'), at('run/../runner.txt')), false);
  });

  it('gives a Pod its places to write outputs, and a local path to read what exists', async () => {
    const { store, at } = subject();
    const places = store.prepareOutputs([at('task1/output_metadata.json'), at('task1/model')]);
    assert.equal(places.length, 2);
    for (const p of places) assert.equal(statSync(join(p, '..')).isDirectory(), true);
    // the outputs themselves are the Pod's to write
    assert.equal(existsSync(places[1] as string), false);
    await store.write(at('models/m1/model.joblib'), 'weights');
    await store.write(at('models/m1/meta/info.json'), '{}');
    const dir = await store.localPath(at('models/m1'));
    assert.equal(readFileSync(join(dir, 'model.joblib'), 'utf8'), 'weights');
    assert.equal(readFileSync(join(dir, 'meta', 'info.json'), 'utf8'), '{}');
    const file = await store.localPath(at('models/m1/model.joblib'));
    assert.equal(readFileSync(file, 'utf8'), 'weights');
    await assert.rejects(store.localPath(at('models/none')), ArtifactNotFoundError);
  });
}
