// Compact JSON Web Tokens signed with ES256 (RFC 7515/7519), the form of Kubernetes' service-account
// tokens: a token can then be checked with the signing key alone, without a lookup.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

const b64url = (b: Buffer): string => b.toString('base64url');

// a key's id is asked for at every signing (one per Pod): exporting the key each time is not free
const keyIds = new WeakMap<KeyObject, string>();

/** the `kid` of a public key, as kube-apiserver derives it: SHA-256 over its SubjectPublicKeyInfo */
export function keyIdOf(key: KeyObject): string {
  let kid = keyIds.get(key);
  if (kid === undefined) {
    const pub = key.type === 'private' ? createPublicKey(key) : key;
    kid = b64url(createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest());
    keyIds.set(key, kid);
  }
  return kid;
}

export function signJwt(claims: Record<string, unknown>, privateKey: KeyObject): string {
  const header = { alg: 'ES256', kid: keyIdOf(privateKey) };
  const input = `${b64url(Buffer.from(JSON.stringify(header)))}.${b64url(Buffer.from(JSON.stringify(claims)))}`;
  // JOSE wants the raw r||s pair, not the DER structure X.509 uses
  const sig = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(sig)}`;
}

export class JwtError extends Error {
  override readonly name = 'JwtError';
}

/** the claims of a token signed by `publicKey`; throws JwtError naming what is wrong */
export function verifyJwt(token: string, publicKey: KeyObject, nowSeconds = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('not a compact JWS (want header.payload.signature)');
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: unknown };
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: unknown };
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new JwtError('header or payload is not base64url-encoded JSON');
  }
  if (header.alg !== 'ES256') throw new JwtError(`unexpected signing algorithm ${JSON.stringify(header.alg)} (want ES256)`);
  const ok = verify('sha256', Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
  if (!ok) throw new JwtError('invalid signature');
  if (typeof claims.exp === 'number' && nowSeconds >= claims.exp) throw new JwtError('token has expired');
  if (typeof claims.nbf === 'number' && nowSeconds < claims.nbf) throw new JwtError('token is not valid yet');
  return claims;
}
