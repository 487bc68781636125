import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kinds, defaultRegistry } from '../api/index.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { EventRecorder, sweepEvents } from './events.js';

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
});
