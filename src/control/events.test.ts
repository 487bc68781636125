import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kinds, defaultRegistry } from '../api/index.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { EventRecorder, SpamFilter, sweepEvents } from './events.js';

describe('events', () => {
  it('counts repeats on one Event and sweeps old ones', async () => {
    const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    const cm = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } });
    const rec = new EventRecorder(client, 'test');
    rec.event(cm, 'Warning', 'BackOff', 'again');
    rec.event(cm, 'Warning', 'BackOff', 'again');
    rec.event(cm, 'Normal', 'Other', 'once');
    await rec.flush();
    const events = (await client.list(Kinds.Event, { namespace: 'default' })).items;
    assert.deepEqual(events.map((e) => `${e.reason}:${e.count}`).sort(), ['BackOff:2', 'Other:1']);
    assert.equal((events[0]?.involvedObject as { uid?: string } | undefined)?.uid, cm.metadata.uid);
    assert.equal(await sweepEvents(client, 60_000), 0);
    assert.equal(await sweepEvents(client, 60_000, Date.now() + 120_000), 2);
    assert.equal((await client.list(Kinds.Event)).items.length, 0);
  });

  it("drops an object's events past the spam filter's burst, as Kubernetes does, and refills with time", async () => {
    const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    const a = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
    const b = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'default' } });
    let t = 1_000_000;
    const rec = new EventRecorder(client, 'test', () => t);
    for (let i = 0; i < SpamFilter.burst + 5; i++) rec.event(a, 'Normal', 'TaskStarted', `task ${i} started`);
    rec.event(b, 'Normal', 'TaskStarted', 'another object has a bucket of its own');
    t += SpamFilter.refillMs;
    rec.event(a, 'Normal', 'TaskStarted', 'one more after the refill');
    await rec.flush();
    const events = (await client.list(Kinds.Event, { namespace: 'default' })).items;
    const of = (o: { metadata: { uid?: string } }): string[] => events.filter((e) => (e.involvedObject as { uid?: string }).uid === o.metadata.uid).map((e) => String(e.message));
    assert.equal(of(a).length, SpamFilter.burst + 1);
    assert.ok(of(a).includes('one more after the refill'));
    assert.ok(!of(a).includes(`task ${SpamFilter.burst} started`));
    assert.deepEqual(of(b), ['another object has a bucket of its own']);
  });
});
