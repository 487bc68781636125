import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ApiError } from '../../api/errors.js';
import { Kinds, defaultRegistry } from '../../api/index.js';
import { Client } from '../client.js';
import type { WatchEvent } from '../store.js';
import { SqliteStore } from './store.js';

async function setup(historySize?: number): Promise<{ store: SqliteStore; client: Client }> {
  const store = new SqliteStore({ file: ':memory:', historySize });
  const client = new Client(store, defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return { store, client };
}

const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels }, data,
});

function reason(e: unknown): string {
  return e instanceof ApiError ? `${e.code} ${e.reason}` : String(e);
}

describe('sqlite store', () => {
  it('moves a data file of the older layout (objects WITHOUT ROWID) over when it opens it, losing nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-store-layout-'));
    try {
      const file = join(dir, 'skiff.db');
      const { store, client } = await (async () => {
        const st = new SqliteStore({ file });
        const c = new Client(st, defaultRegistry());
        await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
        await c.create(cm('kept', { app: 'x' }, { k: 'v' }));
        return { store: st, client: c };
      })();
      const kept = await client.get(Kinds.ConfigMap, { namespace: 'default', name: 'kept' });
      await store.close();
      // the layout a data file of an older Skiff has: the same rows in a WITHOUT ROWID table
      const raw = new Database(file);
      raw.exec(`
        CREATE TABLE old_objects (
          res TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, rv INTEGER NOT NULL, data TEXT NOT NULL,
          PRIMARY KEY (res, ns, name)) WITHOUT ROWID;
        INSERT INTO old_objects SELECT res, ns, name, uid, rv, data FROM objects;
        DROP TABLE objects;
        ALTER TABLE old_objects RENAME TO objects;
        CREATE UNIQUE INDEX objects_uid ON objects (uid);
      `);
      raw.close();
      const reopened = new SqliteStore({ file });
      const c2 = new Client(reopened, defaultRegistry());
      const again = await c2.get(Kinds.ConfigMap, { namespace: 'default', name: 'kept' });
      assert.deepEqual(again, kept);
      await c2.create(cm('new'));
      assert.deepEqual((await c2.list(Kinds.ConfigMap, { namespace: 'default' })).items.map((o) => o.metadata.name), ['kept', 'new']);
      await reopened.close();
      const check = new Database(file, { readonly: true });
      const sql = (check.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'objects'").get() as { sql: string }).sql;
      check.close();
      assert.doesNotMatch(sql, /WITHOUT ROWID/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('creates with uid, resourceVersion, generation and creationTimestamp, and rejects duplicates', async () => {
    const { client } = await setup();
    const a = await client.create(cm('a'));
    assert.match(a.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.equal(a.metadata.generation, 1);
    assert.ok(Number(a.metadata.resourceVersion) > 0);
    assert.ok(a.metadata.creationTimestamp);
    await assert.rejects(client.create(cm('a')), (e) => reason(e) === '409 AlreadyExists');
  });

  it('generates names from generateName', async () => {
    const { client } = await setup();
    const a = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'job-', namespace: 'default' } });
    assert.match(a.metadata.name, /^job-[a-z0-9]{5}$/);
  });

  it('compare-and-swap: a stale resourceVersion gets 409 Conflict and nothing is written', async () => {
    const { client } = await setup();
    const a = await client.create(cm('a', {}, { k: '1' }));
    const b = await client.update({ ...a, data: { k: '2' } });
    assert.notEqual(b.metadata.resourceVersion, a.metadata.resourceVersion);
    await assert.rejects(client.update({ ...a, data: { k: '3' } }), (e) => reason(e) === '409 Conflict');
    assert.deepEqual((await client.get(Kinds.ConfigMap, { namespace: 'default', name: 'a' })).data, { k: '2' });
  });

  it('bumps generation on spec changes only, and keeps status apart from spec', async () => {
    const { client } = await setup();
    const pod = await client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x', command: ['true'] }] } });
    const withStatus = await client.updateStatus({ ...pod, status: { phase: 'Running' } });
    assert.equal(withStatus.metadata.generation, 1);
    // a spec write cannot change status
    const relabeled = await client.update({ ...withStatus, metadata: { ...withStatus.metadata, labels: { a: 'b' } }, status: { phase: 'Failed' } });
    assert.equal(relabeled.status.phase, 'Running');
    assert.equal(relabeled.metadata.generation, 1);
    // a status write cannot change spec
    const again = await client.updateStatus({ ...relabeled, spec: { ...relabeled.spec, activeDeadlineSeconds: 5 } });
    assert.equal(again.spec.activeDeadlineSeconds, undefined);
    const img = await client.update({ ...again, spec: { ...again.spec, containers: [{ ...again.spec.containers[0], image: 'y' }] } });
    assert.equal(img.metadata.generation, 2);
  });

  it('a binding writes the node and the status together, in one version', async () => {
    const { client } = await setup();
    const pod = await client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x', command: ['true'] }] } });
    const bound = await client.bind({ ...pod, spec: { ...pod.spec, nodeName: 'local' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] } });
    assert.equal(Number(bound.metadata.resourceVersion), Number(pod.metadata.resourceVersion) + 1);
    const stored = await client.get(Kinds.Pod, { namespace: 'default', name: 'p' });
    assert.equal(stored.spec.nodeName, 'local');
    assert.deepEqual(stored.status.conditions, [{ type: 'PodScheduled', status: 'True' }]);
    // a stale binding (the Pod changed since it was read) is a conflict
    await assert.rejects(client.bind({ ...pod, spec: { ...pod.spec, nodeName: 'local' } }), (e) => reason(e) === '409 Conflict');
  });

  it('lists with label and field selectors and pages with limit/continue', async () => {
    const { client } = await setup();
    for (let i = 0; i < 25; i++) await client.create(cm(`cm-${String(i).padStart(2, '0')}`, { tier: i % 2 ? 'odd' : 'even' }));
    const odd = await client.list(Kinds.ConfigMap, { namespace: 'default', labelSelector: 'tier=odd' });
    assert.equal(odd.items.length, 12);
    const notEven = await client.list(Kinds.ConfigMap, { namespace: 'default', labelSelector: 'tier notin (even)' });
    assert.equal(notEven.items.length, 12);
    const byName = await client.list(Kinds.ConfigMap, { fieldSelector: 'metadata.name=cm-03,metadata.namespace=default' });
    assert.deepEqual(byName.items.map((o) => o.metadata.name), ['cm-03']);
    // by name in one namespace: one row read, the other selectors still applied
    const one = await client.list(Kinds.ConfigMap, { namespace: 'default', fieldSelector: 'metadata.name=cm-04' });
    assert.deepEqual(one.items.map((o) => o.metadata.name), ['cm-04']);
    assert.equal(one.continue, undefined);
    assert.deepEqual((await client.list(Kinds.ConfigMap, { namespace: 'default', fieldSelector: 'metadata.name=cm-04', labelSelector: 'tier=odd' })).items, []);
    assert.deepEqual((await client.list(Kinds.ConfigMap, { namespace: 'default', fieldSelector: 'metadata.name=cm-04,metadata.namespace!=default' })).items, []);
    assert.deepEqual((await client.list(Kinds.ConfigMap, { namespace: 'default', fieldSelector: 'metadata.name=nope' })).items, []);
    assert.deepEqual((await client.list(Kinds.ConfigMap, { namespace: 'other', fieldSelector: 'metadata.name=cm-04' })).items, []);
    const seen: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await client.list(Kinds.ConfigMap, { namespace: 'default', limit: 10, continue: cont });
      seen.push(...page.items.map((o) => o.metadata.name));
      cont = page.continue;
      pages++;
    } while (cont);
    assert.equal(pages, 3);
    assert.equal(seen.length, 25);
    assert.equal(new Set(seen).size, 25);
    await assert.rejects(client.list(Kinds.ConfigMap, { continue: 'garbage!' }), (e) => reason(e) === '400 BadRequest');
    await assert.rejects(client.list(Kinds.ConfigMap, { labelSelector: 'a in (b' }), (e) => reason(e) === '400 BadRequest');
  });

  it('holds deletion while finalizers remain, then deletes when the last one goes', async () => {
    const { client } = await setup();
    await client.create({ ...cm('f'), metadata: { ...cm('f').metadata, finalizers: ['example.com/hold'] } });
    const marked = await client.delete(Kinds.ConfigMap, { namespace: 'default', name: 'f' });
    assert.ok(marked.metadata.deletionTimestamp);
    const live = await client.get(Kinds.ConfigMap, { namespace: 'default', name: 'f' });
    await assert.rejects(client.update({ ...live, metadata: { ...live.metadata, finalizers: ['example.com/hold', 'new'] } }), /no new finalizers/);
    await client.update({ ...live, metadata: { ...live.metadata, finalizers: [] } });
    assert.equal(await client.find(Kinds.ConfigMap, { namespace: 'default', name: 'f' }), undefined);
  });

  it('watches from a resourceVersion, replaying what happened after it', async () => {
    const { client } = await setup();
    const a = await client.create(cm('a'));
    const rv = a.metadata.resourceVersion;
    await client.update({ ...a, data: { x: '1' } });
    await client.create(cm('b'));
    await client.delete(Kinds.ConfigMap, { namespace: 'default', name: 'a' });
    const events: WatchEvent[] = [];
    const w = client.watch(Kinds.ConfigMap, { namespace: 'default', resourceVersion: rv }, (e) => events.push(e));
    await client.create(cm('c'));
    w.stop();
    await client.create(cm('d'));
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['MODIFIED a', 'ADDED b', 'DELETED a', 'ADDED c']);
  });

  it('a watch without a version starts with every current object', async () => {
    const { client } = await setup();
    await client.create(cm('a', { app: 'x' }));
    await client.create(cm('b', { app: 'y' }));
    const events: WatchEvent[] = [];
    const w = client.watch(Kinds.ConfigMap, { labelSelector: 'app=x' }, (e) => events.push(e));
    w.stop();
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a']);
  });

  it('answers 410 Gone for a version older than the kept history', async () => {
    const { client } = await setup(10);
    const first = await client.create(cm('first'));
    for (let i = 0; i < 1100; i++) await client.create(cm(`n${i}`));
    assert.throws(() => client.watch(Kinds.ConfigMap, { resourceVersion: first.metadata.resourceVersion }, () => undefined), (e) => reason(e) === '410 Expired');
  });

  it('never reuses a version after reopening, even when the newest changes were deletions past a trim', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-store-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'db');
    const s1 = new SqliteStore({ file, historySize: 2 });
    for (let i = 0; i < 1005; i++) await s1.create(Kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `n${i}` } });
    for (let i = 0; i < 3; i++) await s1.delete(Kinds.Namespace, { name: `n${1004 - i}` });
    const rv = s1.resourceVersion();
    await s1.close();
    const s2 = new SqliteStore({ file, historySize: 2 });
    assert.equal(s2.resourceVersion(), rv);
    const next = await s2.create(Kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after' } });
    assert.equal(Number(next.metadata.resourceVersion), Number(rv) + 1);
    await s2.close();
  });

  it('survives reopening the file: objects, versions and history persist', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-store-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'db');
    const s1 = new SqliteStore({ file });
    const c1 = new Client(s1, defaultRegistry());
    await c1.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    const a = await c1.create(cm('a'));
    const rv = s1.resourceVersion();
    await s1.close();
    const s2 = new SqliteStore({ file });
    const c2 = new Client(s2, defaultRegistry());
    assert.equal(s2.resourceVersion(), rv);
    assert.equal((await c2.get(Kinds.ConfigMap, { namespace: 'default', name: 'a' })).metadata.uid, a.metadata.uid);
    const b = await c2.create(cm('b'));
    assert.ok(Number(b.metadata.resourceVersion) > Number(rv));
    await s2.close();
  });

  it('indexes owner references for cascading deletion', async () => {
    const { client, store } = await setup();
    const owner = await client.create(cm('owner'));
    await client.create({ ...cm('dep'), metadata: { ...cm('dep').metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] } });
    assert.deepEqual(await store.dependents(owner.metadata.uid), [{ resource: '/configmaps', namespace: 'default', name: 'dep' }]);
  });
});
