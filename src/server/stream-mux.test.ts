import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { setRequestUser } from './auth/types.js';
import { presentedToken, streamHeaders } from './stream-mux.js';

/** an upgrade as authentication leaves it: the token's protocol gone from `headers`, still in `rawHeaders` */
function upgrade(headers: Record<string, string>, raw: string[] = []): IncomingMessage {
  return { headers, rawHeaders: raw } as unknown as IncomingMessage;
}

describe('the stream mux\'s identity', () => {
  it('finds the token a browser sent in its WebSocket protocols', () => {
    const t = Buffer.from('alice-token').toString('base64url');
    const req = upgrade({ 'sec-websocket-protocol': 'skiff.streams.v1' }, ['Sec-WebSocket-Protocol', `skiff.streams.v1, base64url.bearer.authorization.k8s.io.${t}`]);
    assert.equal(presentedToken(req), 'alice-token');
    assert.equal(presentedToken(upgrade({ authorization: 'Bearer bob-token' })), 'bob-token');
    assert.equal(presentedToken(upgrade({})), undefined);
  });

  it('single-user: passes on what the page sent, as before', () => {
    const h = streamHeaders(upgrade({ cookie: 'c=1', 'x-other': 'no' }), {});
    assert.deepEqual(h, { accept: 'application/json', cookie: 'c=1' });
  });

  it('tenancy: impersonates the admitted user, never a header the user merely sent', () => {
    const req = upgrade({ 'impersonate-user': 'admin', 'kubeflow-userid': 'admin' });
    setRequestUser(req, { username: 'alice@example.com', uid: '1001', groups: ['team', 'system:authenticated'] });
    const h = streamHeaders(req, { tenancy: true, impersonator: () => 'skiff-own' });
    assert.deepEqual(h, { accept: 'application/json', authorization: 'Bearer skiff-own', 'impersonate-user': 'alice@example.com', 'impersonate-group': ['team', 'system:authenticated'], 'impersonate-uid': '1001' });
  });

  it('tenancy, before Skiff\'s own token exists: the token the user presented', () => {
    const t = Buffer.from('alice-token').toString('base64url');
    const req = upgrade({}, ['sec-websocket-protocol', `skiff.streams.v1,base64url.bearer.authorization.k8s.io.${t}`]);
    assert.equal(streamHeaders(req, { tenancy: true, impersonator: () => undefined }).authorization, 'Bearer alice-token');
  });
});
