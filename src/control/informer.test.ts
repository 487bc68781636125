import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kinds, defaultRegistry } from '../api/index.js';
import type { StoredObject } from '../api/meta.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import type { WatchEvent } from '../store/store.js';
import { Manager } from './controller.js';
import { InformerCache } from './informer.js';

async function setup(): Promise<{ client: Client; store: SqliteStore }> {
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  for (const name of ['a', 'b']) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return { client, store };
}

const cm = (ns: string, name: string, labels: Record<string, string> = {}, owner?: StoredObject) => ({
  apiVersion: 'v1', kind: 'ConfigMap',
  metadata: { name, namespace: ns, labels, ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, controller: true }] } : {}) },
});

const names = (objs: StoredObject[]): string[] => objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('informer cache', () => {
  it('holds what existed before it started and follows creates, updates and deletes', async () => {
    const { client, store } = await setup();
    await client.create(cm('a', 'old', { app: 'x' }));
    const cache = new InformerCache(client);
    assert.equal(cache.get(Kinds.ConfigMap, { namespace: 'a', name: 'old' })?.metadata.labels?.['app'], 'x');
    const made = await client.create(cm('b', 'new', { app: 'y' }));
    assert.equal(cache.get(Kinds.ConfigMap, { namespace: 'b', name: 'new' })?.metadata.uid, made.metadata.uid);
    await client.update({ ...made, metadata: { ...made.metadata, labels: { app: 'x' } } });
    assert.deepEqual(names(cache.list(Kinds.ConfigMap, { labelSelector: 'app=x' })), ['a/old', 'b/new']);
    assert.deepEqual(names(cache.list(Kinds.ConfigMap, { labelSelector: 'app=y' })), [], 'the old label is out of the index');
    await client.delete(Kinds.ConfigMap, { namespace: 'a', name: 'old' });
    assert.equal(cache.get(Kinds.ConfigMap, { namespace: 'a', name: 'old' }), undefined);
    assert.deepEqual(names(cache.list(Kinds.ConfigMap, { labelSelector: 'app=x' })), ['b/new']);
    assert.deepEqual(names(cache.list(Kinds.ConfigMap, { namespace: 'a' })), []);
    cache.stop();
    await store.close();
  });

  it('answers lists by namespace, label selector and controlling owner as the store does', async () => {
    const { client, store } = await setup();
    const ownerA = await client.create(cm('a', 'owner'));
    const ownerB = await client.create(cm('b', 'owner'));
    for (let i = 0; i < 30; i++) {
      const ns = i % 2 ? 'a' : 'b';
      await client.create(cm(ns, `c-${i}`, { shard: String(i % 3), ...(i % 5 === 0 ? { five: 'yes' } : {}) }, ns === 'a' ? ownerA : ownerB));
    }
    const cache = new InformerCache(client);
    for (const [namespace, labelSelector] of [['a', 'shard=1'], [undefined, 'shard in (0,2)'], ['b', 'five'], [undefined, 'shard!=1,!five'], ['a', undefined], [undefined, 'shard=1,five=yes']] as const) {
      const want = (await client.listAll(Kinds.ConfigMap, { namespace, labelSelector })).map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
      assert.deepEqual(names(cache.list(Kinds.ConfigMap, { namespace, labelSelector })), want, `${namespace ?? '*'} ${labelSelector ?? ''}`);
    }
    assert.equal(cache.owned(Kinds.ConfigMap, ownerA.metadata.uid).length, 15);
    assert.ok(cache.owned(Kinds.ConfigMap, ownerB.metadata.uid).every((o) => o.metadata.namespace === 'b'));
    // an object that drops its owner leaves the owner index
    const one = cache.owned(Kinds.ConfigMap, ownerA.metadata.uid)[0] as StoredObject;
    await client.update({ ...one, metadata: { ...one.metadata, ownerReferences: [] } });
    assert.equal(cache.owned(Kinds.ConfigMap, ownerA.metadata.uid).length, 14);
    cache.stop();
    await store.close();
  });

  it('shares one watch per kind among a Manager\'s controllers and fans events out to each', async () => {
    const { client, store } = await setup();
    await client.create(cm('a', 'first'));
    let watches = 0;
    const watch = store.watch.bind(store);
    store.watch = (...a: Parameters<SqliteStore['watch']>) => {
      watches++;
      return watch(...a);
    };
    const mgr = new Manager(client);
    const seen: string[][] = [[], []];
    for (const i of [0, 1]) {
      mgr.add({ name: `c${i}`, for: Kinds.ConfigMap, reconcile: async (key) => void seen[i]?.push(key.name) });
    }
    mgr.start();
    await client.create(cm('a', 'second'));
    for (let t = 0; t < 100 && seen.some((s) => s.length < 2); t++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(seen.map((s) => [...new Set(s)].sort()), [['first', 'second'], ['first', 'second']]);
    assert.equal(watches, 1, 'one list+watch of ConfigMaps for both controllers');
    assert.equal(mgr.cache.get(Kinds.ConfigMap, { namespace: 'a', name: 'second' })?.metadata.name, 'second');
    await mgr.stop();
    await store.close();
  });

  it('resync repairs a cache that missed changes and hands every object to the handlers again', async () => {
    const { client, store } = await setup();
    await client.create(cm('a', 'kept'));
    await client.create(cm('a', 'gone'));
    // a watch that can go deaf, as one that dropped events would be
    let deaf = false;
    const watch = store.watch.bind(store);
    store.watch = (res, opts, onEvent) => watch(res, opts, (e) => void (deaf || onEvent(e)));
    const cache = new InformerCache(client);
    const inf = cache.informer(Kinds.ConfigMap);
    const events: string[] = [];
    inf.addHandler((e: WatchEvent) => events.push(`${e.type} ${e.object.metadata.name}`));
    assert.deepEqual(events.sort(), ['ADDED gone', 'ADDED kept']);
    deaf = true;
    await client.delete(Kinds.ConfigMap, { namespace: 'a', name: 'gone' });
    await client.create(cm('a', 'born'));
    const kept = await client.get(Kinds.ConfigMap, { namespace: 'a', name: 'kept' });
    const changed = await client.update({ ...kept, metadata: { ...kept.metadata, labels: { v: '2' } } });
    deaf = false;
    assert.equal(inf.get({ namespace: 'a', name: 'gone' })?.metadata.name, 'gone', 'stale until resync');
    assert.equal(inf.get({ namespace: 'a', name: 'born' }), undefined, 'stale until resync');
    events.length = 0;
    await inf.resync();
    assert.equal(inf.get({ namespace: 'a', name: 'gone' }), undefined);
    assert.equal(inf.get({ namespace: 'a', name: 'born' })?.metadata.name, 'born');
    assert.equal(inf.get({ namespace: 'a', name: 'kept' })?.metadata.resourceVersion, changed.metadata.resourceVersion);
    assert.deepEqual(inf.list({ labelSelector: 'v=2' }).map((o) => o.metadata.name), ['kept']);
    assert.deepEqual(events.sort(), ['ADDED born', 'DELETED gone', 'MODIFIED kept']);
    // a second resync with nothing changed still hands each object over once
    events.length = 0;
    await inf.resync();
    assert.deepEqual(events.sort(), ['MODIFIED born', 'MODIFIED kept']);
    cache.stop();
    await store.close();
  });
});
