import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from '../../api/core-types.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import { defaultRegistry } from '../../api/index.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { renderPod } from './render.js';
import { makeNotebook } from './testing.js';
import { renderTokenSecret, serverToken } from './token.js';

async function setup(): Promise<Client> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  await client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mine', namespace: 'team-a' }, data: { t: Buffer.from('from-secret').toString('base64'), JUPYTER_TOKEN: Buffer.from('from-envfrom').toString('base64') } });
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'team-a' }, data: { t: 'from-configmap', TOKEN: 'prefixed' } });
  return client;
}

/** the server's Pod with the server container's env set as given */
function podWith(c: Partial<Container>): Pod {
  const pod = renderPod(makeNotebook('nb', 'team-a').stored());
  Object.assign(pod.spec.containers[0] ?? {}, c);
  return pod;
}

describe('the token a notebook server got', () => {
  it('is read from the Notebook\'s Secret, as the kubelet gives it', async () => {
    const client = await setup();
    const nb = makeNotebook('nb', 'team-a').stored();
    await client.create(renderTokenSecret(nb, 'abc'));
    assert.equal(await serverToken(client, renderPod(nb, { tenancy: true })), 'abc');
  });

  it('is none for a server started without one', async () => {
    const client = await setup();
    assert.equal(await serverToken(client, renderPod(makeNotebook('nb', 'team-a').stored())), undefined);
    assert.equal(await serverToken(client, podWith({ env: [{ name: 'JUPYTER_TOKEN', value: '' }] })), undefined);
  });

  it('follows the user\'s own setting: a value, a Secret\'s or ConfigMap\'s key, envFrom, the last entry winning', async () => {
    const client = await setup();
    assert.equal(await serverToken(client, podWith({ env: [{ name: 'JUPYTER_TOKEN', value: 'literal' }] })), 'literal');
    assert.equal(await serverToken(client, podWith({ env: [{ name: 'JUPYTER_TOKEN', value: 'first' }, { name: 'JUPYTER_TOKEN', valueFrom: { secretKeyRef: { name: 'mine', key: 't' } } }] })), 'from-secret');
    assert.equal(await serverToken(client, podWith({ env: [{ name: 'JUPYTER_TOKEN', valueFrom: { configMapKeyRef: { name: 'cm', key: 't' } } }] })), 'from-configmap');
    assert.equal(await serverToken(client, podWith({ envFrom: [{ secretRef: { name: 'mine' } }] })), 'from-envfrom');
    assert.equal(await serverToken(client, podWith({ envFrom: [{ secretRef: { name: 'mine' } }, { prefix: 'JUPYTER_', configMapRef: { name: 'cm' } }] })), 'prefixed');
    assert.equal(await serverToken(client, podWith({ envFrom: [{ secretRef: { name: 'mine' } }], env: [{ name: 'JUPYTER_TOKEN', value: 'env wins' }] })), 'env wins');
    assert.equal(await serverToken(client, podWith({ env: [{ name: 'JUPYTER_TOKEN', valueFrom: { secretKeyRef: { name: 'gone', key: 't', optional: true } } }] })), undefined);
  });

  it('is a 503 that says why when its Secret or key is missing', async () => {
    const client = await setup();
    const refused = (why: RegExp) => (e: unknown): boolean => e instanceof ApiError && e.reason === StatusReason.ServiceUnavailable && why.test(e.message);
    await assert.rejects(serverToken(client, renderPod(makeNotebook('nb', 'team-a').stored(), { tenancy: true })),
      refused(/^notebook team-a\/nb: the server's token is in Secret "nb-notebook-token", which is missing/));
    await assert.rejects(serverToken(client, podWith({ env: [{ name: 'JUPYTER_TOKEN', valueFrom: { secretKeyRef: { name: 'mine', key: 'nope' } } }] })),
      refused(/Secret "mine" has no key "nope"/));
  });
});
