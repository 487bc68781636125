// A filtered watch sees objects enter and leave its selection, live and when it resumes from a
// version; continue tokens and list versions as kube-apiserver answers them.
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

async function setup(file = ':memory:', historySize?: number): Promise<Client> {
  const client = new Client(new SqliteStore({ file, historySize }), defaultRegistry());
  if (!(await client.find(Kinds.Namespace, { name: 'default' }))) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return client;
}

const cm = (name: string, app: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels: { app } } });
const relabel = (c: Client, name: string, app: string) => c.patch(Kinds.ConfigMap, { namespace: 'default', name }, { metadata: { labels: { app } } }, 'merge');
const seen = (events: WatchEvent[]): string[] => events.map((e) => `${e.type} ${e.object.metadata.name}`);

describe('watch selection', () => {
  it('live: an object that leaves the selection is DELETED, one that enters it ADDED', async () => {
    const c = await setup();
    await c.create(cm('a', 'x'));
    await c.create(cm('b', 'y'));
    const events: WatchEvent[] = [];
    const w = c.watch(Kinds.ConfigMap, { labelSelector: 'app=x' }, (e) => events.push(e));
    await relabel(c, 'a', 'y');
    await relabel(c, 'b', 'x');
    await relabel(c, 'b', 'x2');
    w.stop();
    assert.deepEqual(seen(events), ['ADDED a', 'DELETED a', 'ADDED b', 'DELETED b']);
  });

  it('resumed from a version: the same events, what an object was before read from the log', async () => {
    const c = await setup();
    await c.create(cm('a', 'x'));
    await c.create(cm('b', 'y'));
    await c.create(cm('other', 'z'));
    const from = c.store.resourceVersion();
    await relabel(c, 'a', 'y');
    await relabel(c, 'b', 'x');
    await relabel(c, 'other', 'zz');
    await relabel(c, 'b', 'x2');
    const events: WatchEvent[] = [];
    c.watch(Kinds.ConfigMap, { labelSelector: 'app=x', resourceVersion: from }, (e) => events.push(e)).stop();
    assert.deepEqual(seen(events), ['DELETED a', 'ADDED b', 'DELETED b']);
  });

  it('a data file from before changes named their object still opens and replays', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-store-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'db');
    const db = new Database(file);
    db.exec('CREATE TABLE changes (rv INTEGER PRIMARY KEY, res TEXT NOT NULL, ns TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)');
    db.close();
    const c = await setup(file);
    await c.create(cm('a', 'x'));
    const from = c.store.resourceVersion();
    await relabel(c, 'a', 'y');
    const events: WatchEvent[] = [];
    c.watch(Kinds.ConfigMap, { labelSelector: 'app=x', resourceVersion: from }, (e) => events.push(e)).stop();
    assert.deepEqual(seen(events), ['DELETED a']);
  });

  it('pages carry the first page\'s version; an expired token is a 410 with a token to go on from', async () => {
    const c = await setup(':memory:', 10);
    for (const n of ['a', 'b', 'c']) await c.create(cm(n, 'x'));
    const first = await c.list(Kinds.ConfigMap, { namespace: 'default', limit: 1 });
    const token = JSON.parse(Buffer.from(first.continue ?? '', 'base64url').toString());
    assert.deepEqual(token, { v: 'meta.k8s.io/v1', rv: Number(first.resourceVersion), start: 'default/a\u0000' });
    const second = await c.list(Kinds.ConfigMap, { namespace: 'default', limit: 1, continue: first.continue });
    assert.deepEqual(second.items.map((o) => o.metadata.name), ['b']);
    assert.equal(JSON.parse(Buffer.from(second.continue ?? '', 'base64url').toString()).rv, token.rv);
    for (let i = 0; i < 30; i++) await c.create(cm(`f${i}`, 'y'));
    await assert.rejects(c.list(Kinds.ConfigMap, { namespace: 'default', limit: 1, continue: second.continue }), (e) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.code, 410);
      assert.ok(e.continueToken);
      assert.equal(JSON.parse(Buffer.from(e.continueToken, 'base64url').toString()).rv, -1);
      return true;
    });
  });
});
