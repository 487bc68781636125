import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Kinds, defaultRegistry } from '../api/index.js';
import { ApiError } from '../api/errors.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { Manager } from './controller.js';
import { addServiceAccountController } from './serviceaccounts.js';

async function until<T>(fn: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
}

it('every Namespace gets a default ServiceAccount, made again when it is deleted', async () => {
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  const mgr = new Manager(client);
  addServiceAccountController(mgr, client);
  mgr.start();
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    const first = await until(() => client.find(Kinds.ServiceAccount, { namespace: 'team-a', name: 'default' }));
    await client.delete(Kinds.ServiceAccount, { namespace: 'team-a', name: 'default' });
    const again = await until(async () => {
      const sa = await client.find(Kinds.ServiceAccount, { namespace: 'team-a', name: 'default' });
      return sa && sa.metadata.uid !== first.metadata.uid ? sa : undefined;
    });
    assert.equal(again.metadata.name, 'default');
  } finally {
    await mgr.stop();
    await store.close();
  }
});

it('a ServiceAccount is validated as kube-apiserver does: field paths in the causes', async () => {
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } });
  try {
    await assert.rejects(client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x', namespace: 'ns' }, automountServiceAccountToken: 'no', secrets: [{ name: 3 }] }), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      const fields = (e.details?.causes ?? []).map((c) => c.field);
      assert.deepEqual(fields.sort(), ['automountServiceAccountToken', 'secrets[0].name']);
      return true;
    });
    const ok = await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'runner', namespace: 'ns' }, automountServiceAccountToken: false, secrets: [{ kind: 'Secret', name: 's' }] });
    assert.equal(ok.automountServiceAccountToken, false);
  } finally {
    await store.close();
  }
});

it('every Namespace gets the kube-root-ca.crt ConfigMap with the CA, put back when changed or deleted', async () => {
  const store = new SqliteStore({ file: ':memory:' });
  const client = new Client(store, defaultRegistry());
  const mgr = new Manager(client);
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  addServiceAccountController(mgr, client, () => pem);
  mgr.start();
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
    const key = { namespace: 'team-b', name: 'kube-root-ca.crt' };
    const cm = await until(() => client.find(Kinds.ConfigMap, key));
    assert.equal((cm.data as Record<string, string>)['ca.crt'], pem);
    await client.update({ ...cm, data: { 'ca.crt': 'tampered' } });
    await until(async () => ((await client.find(Kinds.ConfigMap, key))?.data as Record<string, string> | undefined)?.['ca.crt'] === pem || undefined);
    await client.delete(Kinds.ConfigMap, key);
    const again = await until(async () => {
      const c = await client.find(Kinds.ConfigMap, key);
      return c && c.metadata.uid !== cm.metadata.uid ? c : undefined;
    });
    assert.equal((again.data as Record<string, string>)['ca.crt'], pem);
  } finally {
    await mgr.stop();
    await store.close();
  }
});
