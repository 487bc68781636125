import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { aliasNameProblem } from '../../api/model-registry.js';
import { isAliasUri, parseRegistryUri } from './model-registry.js';
import { ModelStore, parseStorageUri, StorageError } from './storage.js';

describe('model-registry:// URIs', () => {
  it('names a model, a version, and ignores a registry part (the namespace decides)', () => {
    assert.deepEqual(parseRegistryUri('model-registry://iris'), { model: 'iris' });
    assert.deepEqual(parseRegistryUri('model-registry://iris/v1'), { model: 'iris', version: 'v1' });
    assert.deepEqual(parseRegistryUri('model-registry://mr.example.com:8080/iris/v1'), { model: 'iris', version: 'v1' });
    for (const bad of ['model-registry://', 'model-registry://iris/', 'model-registry://a/b/c/d', 'model-registry:///v1']) {
      assert.equal(typeof parseRegistryUri(bad), 'string', bad);
      assert.throws(() => parseStorageUri(bad), StorageError, bad);
    }
    assert.equal(parseStorageUri('model-registry://iris/v1').scheme, 'model-registry');
  });

  it('names a version by an alias: <model>@<alias>, <registry>/<model>@<alias>, @latest', () => {
    assert.deepEqual(parseRegistryUri('model-registry://iris@production'), { model: 'iris', alias: 'production' });
    assert.deepEqual(parseRegistryUri('model-registry://mr.example.com:8080/iris@canary.2'), { model: 'iris', alias: 'canary.2' });
    assert.deepEqual(parseRegistryUri('model-registry://iris@latest'), { model: 'iris', alias: 'latest' });
    assert.ok(isAliasUri('model-registry://iris@production'));
    assert.ok(isAliasUri('model-registry://iris@latest'));
    assert.ok(!isAliasUri('model-registry://iris/v1'));
    assert.ok(!isAliasUri('s3://bucket/iris@production'));
    for (const bad of ['model-registry://iris@', 'model-registry://@prod', 'model-registry://iris@prod/v1', 'model-registry://a/b/iris@prod',
      'model-registry://reg@x/iris', 'model-registry://iris@Prod', 'model-registry://iris@-prod', 'model-registry://iris@pro@d']) {
      assert.equal(typeof parseRegistryUri(bad), 'string', bad);
      assert.throws(() => parseStorageUri(bad), StorageError, bad);
      assert.ok(!isAliasUri(bad), bad);
    }
    assert.match(parseRegistryUri('model-registry://iris@Prod') as string, /alias "Prod" must be lower-case/);
  });

  it('alias names: 1 to 63 of [a-z0-9-_.], alphanumeric at both ends, never "latest"', () => {
    for (const ok of ['production', 'a', 'v1.2', 'blue_green', 'x-9', '0', 'a'.repeat(63)]) assert.equal(aliasNameProblem(ok), undefined, ok);
    const bad: [string, RegExp][] = [
      ['latest', /reserved/], ['', /1 to 63/], ['a'.repeat(64), /1 to 63/], ['Prod', /lower-case/], ['-a', /lower-case/], ['a-', /lower-case/],
      ['a.', /lower-case/], ['_a', /lower-case/], ['a/b', /lower-case/], ['a@b', /lower-case/], ['a b', /lower-case/], ['a:b', /lower-case/],
    ];
    for (const [name, why] of bad) assert.match(aliasNameProblem(name) ?? '', why, JSON.stringify(name));
  });

  const dir = mkdtempSync(join(tmpdir(), 'skiff-mr-storage-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('resolves to the model artifact\'s URI, then fetches that; says what is missing otherwise', async () => {
    const artifacts = new LocalArtifactStore(dir);
    mkdirSync(join(dir, 'iris'), { recursive: true });
    const ref = { registeredModelId: '1', modelVersionId: '2', modelArtifactId: '3', uri: `file://${join(dir, 'iris')}` };
    const asked: string[] = [];
    const store = new ModelStore(join(dir, 'cache'), (ns, c) => join(dir, ns, c), artifacts, undefined, async (ns, uri) => {
      asked.push(`${ns} ${uri}`);
      return uri.endsWith('/v1') ? ref : 'registered model "iris" has no version "v9"';
    });
    const src = await store.resolve('model-registry://iris/v1', { namespace: 'team-a' });
    assert.deepEqual(src.registry, ref);
    assert.equal(src.kind, 'host');
    assert.deepEqual(asked, ['team-a model-registry://iris/v1']);
    await assert.rejects(store.resolve('model-registry://iris/v9'), /storageUri model-registry:\/\/iris\/v9: registered model "iris" has no version "v9"/);
    // an artifact whose files are not there: both the registry entry and the path are named
    const missing = new ModelStore(join(dir, 'cache'), (ns, c) => join(dir, ns, c), artifacts, undefined, async () => ({ ...ref, uri: `file://${join(dir, 'gone')}` }));
    await assert.rejects(missing.resolve('model-registry://iris/v1'), /model-registry:\/\/iris\/v1 \(model artifact 3\): .*gone does not exist/);
    const none = new ModelStore(join(dir, 'cache'), (ns, c) => join(dir, ns, c), artifacts);
    await assert.rejects(none.resolve('model-registry://iris/v1'), StorageError);
  });
});
