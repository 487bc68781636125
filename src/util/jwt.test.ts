import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JwtError, keyIdOf, signJwt, verifyJwt } from './jwt.js';
import { newKeyPair } from './x509.js';

describe('JWT (ES256)', () => {
  const key = newKeyPair();
  it('round-trips claims and names its key', () => {
    const t = signJwt({ sub: 'a', exp: 2000 }, key.privateKey);
    assert.deepEqual(verifyJwt(t, key.publicKey, 1000), { sub: 'a', exp: 2000 });
    const header = JSON.parse(Buffer.from(t.split('.')[0] ?? '', 'base64url').toString()) as { alg: string; kid: string };
    assert.deepEqual(header, { alg: 'ES256', kid: keyIdOf(key.publicKey) });
    assert.equal(keyIdOf(key.privateKey), keyIdOf(key.publicKey));
  });
  it('refuses a changed payload, another key, an expired token and alg none', () => {
    const t = signJwt({ sub: 'a', exp: 2000, nbf: 500 }, key.privateKey);
    const [h, , s] = t.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin', exp: 2000 })).toString('base64url')}.${s}`;
    assert.throws(() => verifyJwt(forged, key.publicKey, 1000), (e: unknown) => e instanceof JwtError && /invalid signature/.test(e.message));
    assert.throws(() => verifyJwt(t, newKeyPair().publicKey, 1000), /invalid signature/);
    assert.throws(() => verifyJwt(t, key.publicKey, 2000), /expired/);
    assert.throws(() => verifyJwt(t, key.publicKey, 100), /not valid yet/);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"a"}').toString('base64url')}.`;
    assert.throws(() => verifyJwt(none, key.publicKey), /algorithm "none"/);
    assert.throws(() => verifyJwt('abc', key.publicKey), /compact JWS/);
  });
});
