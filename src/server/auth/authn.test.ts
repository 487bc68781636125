import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { AddressSet, Authenticator, cookiePath, cookieValue, isOpenPath, parseCsv, parseTokenFile, type AuthnResult } from './authn.js';
import { ServiceAccountTokens } from '../kube/tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-authn-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** a request as the authenticator sees one */
function req(headers: Record<string, string>, remoteAddress = '127.0.0.1', localAddress = '127.0.0.1', url = '/api/v1/pods'): IncomingMessage {
  return { url, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), socket: { remoteAddress, localAddress } } as unknown as IncomingMessage;
}

function userOf(r: AuthnResult): string {
  if ('failure' in r) return `failure: ${r.failure}`;
  return r.user.username;
}

describe('token file', () => {
  it('reads CSV as Go does: quotes, doubled quotes, commas and newlines in quotes, blank lines, CRLF', () => {
    assert.deepEqual(parseCsv('a,b,c\r\n\n"x,y","he said ""hi""","two\nlines"\n'), [['a', 'b', 'c'], ['x,y', 'he said "hi"', 'two\nlines']]);
    assert.deepEqual(parseCsv('a,,c'), [['a', '', 'c']]);
    assert.throws(() => parseCsv('a,b"c,d'), /bare "/);
    assert.throws(() => parseCsv('"abc'), /not closed/);
    assert.throws(() => parseCsv('"a"b,c'), /extraneous/);
  });

  it('parses token,user,uid,"groups" records as kube-apiserver does', () => {
    const { users, warnings } = parseTokenFile([
      'tok-alice,alice,uid-1,"team-a,ml"',
      'tok-bob,bob,uid-2',
      ',nobody,uid-3',
      'tok-carol,carol,,admins',
      'tok-bob,bob2,uid-4',
    ].join('\n'), 'users.csv');
    assert.deepEqual(users.get('tok-alice'), { username: 'alice', uid: 'uid-1', groups: ['team-a', 'ml'] });
    assert.deepEqual(users.get('tok-carol'), { username: 'carol', groups: ['admins'] });
    // the last of a repeated token wins, with a warning, as kube's
    assert.equal(users.get('tok-bob')?.username, 'bob2');
    assert.equal(users.size, 3);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0] as string, /empty token .* record number '3'/);
    assert.throws(() => parseTokenFile('tok,alice\n', 'f.csv'), /token file 'f.csv' must have at least 3 columns \(token, user name, user uid\), found 2/);
  });

  it('authenticates a token of the file, adding system:authenticated; another token fails, no token is anonymous', async () => {
    const file = join(dir, 'tokens.csv');
    writeFileSync(file, 'tok-alice,alice,uid-1,"team-a,ml"\n');
    const a = new Authenticator({ tokenAuthFile: file });
    const ok = await a.authenticate(req({ authorization: 'Bearer tok-alice' }));
    assert.deepEqual('user' in ok && ok.user, { username: 'alice', uid: 'uid-1', groups: ['team-a', 'ml', 'system:authenticated'] });
    assert.match(userOf(await a.authenticate(req({ authorization: 'Bearer tok-mallory' }))), /^failure/);
    // not a bearer token: no credentials at all, as kube's bearertoken authenticator reads it
    assert.equal(userOf(await a.authenticate(req({ authorization: 'Basic YWxpY2U6eA==' }))), 'system:anonymous');
    assert.equal(userOf(await a.authenticate(req({ authorization: 'Bearer' }))), 'system:anonymous');
    assert.equal(userOf(await a.authenticate(req({}))), 'system:anonymous');
    // a WebSocket client's token in its subprotocols, taken out of them
    const ws = req({ upgrade: 'websocket', 'sec-websocket-protocol': `v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${Buffer.from('tok-alice').toString('base64url')}` });
    assert.equal(userOf(await a.authenticate(ws)), 'alice');
    assert.equal(ws.headers['sec-websocket-protocol'], 'v5.channel.k8s.io');
  });

  it('accepts Skiff\'s own service-account and kubeconfig tokens, not one for another audience', async () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const sa = new ServiceAccountTokens(key);
    const a = new Authenticator({});
    a.serviceAccounts = sa;
    const pod = await a.authenticate(req({ authorization: `Bearer ${sa.issue({ namespace: 'team-a', serviceAccount: 'default-editor', pod: { name: 'p', uid: 'u1' } })}` }));
    assert.ok('user' in pod);
    assert.equal(pod.user.username, 'system:serviceaccount:team-a:default-editor');
    assert.deepEqual(pod.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated']);
    assert.deepEqual(pod.user.extra?.['authentication.kubernetes.io/pod-name'], ['p']);
    const admin = await a.authenticate(req({ authorization: `Bearer ${sa.issueUser('skiff-admin', ['system:masters'])}` }));
    assert.ok('user' in admin);
    assert.deepEqual(admin.user.groups, ['system:masters', 'system:authenticated']);
    assert.match(userOf(await a.authenticate(req({ authorization: `Bearer ${sa.issue({ namespace: 'x', serviceAccount: 'y', audiences: ['vault'] })}` }))), /audiences/);
    // signed by another key
    const other = new ServiceAccountTokens(generateKeyPairSync('ec', { namedCurve: 'P-256' }));
    assert.match(userOf(await a.authenticate(req({ authorization: `Bearer ${other.issueUser('skiff-admin', ['system:masters'])}` }))), /signature/);
    // expired
    const old = sa.issue({ namespace: 'x', serviceAccount: 'y', expirationSeconds: 60 }, Math.floor(Date.now() / 1000) - 3600);
    assert.match(userOf(await a.authenticate(req({ authorization: `Bearer ${old}` }))), /expired/);
  });
});

describe('OIDC', async () => {
  const issuer = 'https://issuer.example.com';
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const jwksFile = join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [jwk] }));
  const stranger = await generateKeyPair('RS256');

  const token = async (claims: Record<string, unknown>, o: { key?: CryptoKey; iss?: string; aud?: string; exp?: number } = {}): Promise<string> =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(o.iss ?? issuer).setAudience(o.aud ?? 'skiff')
      .setIssuedAt().setExpirationTime(o.exp ?? Math.floor(Date.now() / 1000) + 600).sign(o.key ?? privateKey);
  const authn = (extra: Record<string, string> = {}): Authenticator => new Authenticator({ oidc: { issuerUrl: issuer, clientId: 'skiff', jwksFile, ...extra } });
  const as = async (a: Authenticator, t: string): Promise<AuthnResult> => a.authenticate(req({ authorization: `Bearer ${t}` }));

  it('names the user by sub with the issuer# prefix, by email without one, with groups and their prefix', async () => {
    const bySub = await as(authn(), await token({ sub: 'u-123', email: 'alice@example.com' }));
    assert.ok('user' in bySub);
    assert.deepEqual(bySub.user, { username: 'https://issuer.example.com#u-123', groups: ['system:authenticated'] });
    const byEmail = await as(authn({ usernameClaim: 'email', groupsClaim: 'groups', groupsPrefix: 'oidc:' }), await token({ sub: 'u', email: 'alice@example.com', email_verified: true, groups: ['team-a', 'ml'] }));
    assert.ok('user' in byEmail);
    assert.deepEqual(byEmail.user, { username: 'alice@example.com', groups: ['oidc:team-a', 'oidc:ml', 'system:authenticated'] });
    assert.equal(userOf(await as(authn({ usernamePrefix: 'dex:' }), await token({ sub: 'u' }))), 'dex:u');
    assert.equal(userOf(await as(authn({ usernamePrefix: '-' }), await token({ sub: 'u' }))), 'u');
    assert.match(userOf(await as(authn({ usernameClaim: 'email' }), await token({ email: 'a@b.c', email_verified: false }))), /not verified/);
  });

  it('refuses a wrong issuer, an expired token, a wrong audience and a bad signature', async () => {
    const a = authn();
    assert.match(userOf(await as(a, await token({ sub: 'u' }, { iss: 'https://evil.example.com' }))), /^failure/);
    assert.match(userOf(await as(a, await token({ sub: 'u' }, { exp: Math.floor(Date.now() / 1000) - 60 }))), /^failure: .*exp/);
    assert.match(userOf(await as(a, await token({ sub: 'u' }, { aud: 'someone-else' }))), /^failure: .*aud/);
    assert.match(userOf(await as(a, await token({ sub: 'u' }, { key: stranger.privateKey }))), /^failure: .*signature/);
    // a token whose payload was changed after signing
    const t = (await token({ sub: 'u' })).split('.');
    const forged = [t[0], Buffer.from(JSON.stringify({ sub: 'admin', iss: issuer, aud: 'skiff', exp: 9e9 })).toString('base64url'), t[2]].join('.');
    assert.match(userOf(await as(a, forged)), /^failure: .*signature/);
  });

  it('insists on https to fetch keys', () => {
    assert.throws(() => new Authenticator({ oidc: { issuerUrl: 'http://issuer', clientId: 'x' } }), /https/);
  });
});

describe('trusted proxies', () => {
  const a = new Authenticator({ trustedProxies: ['10.0.0.0/8', '::1'], userIdPrefix: 'accounts.google.com:', fromPod: (r) => r.socket.localAddress === '127.0.0.2' });
  const header = { 'kubeflow-userid': 'accounts.google.com:alice@example.com', 'kubeflow-groups': 'team-a, ml' };

  it('believes the header from a trusted address only', async () => {
    const ok = await a.authenticate(req(header, '10.1.2.3'));
    assert.ok('user' in ok);
    assert.deepEqual(ok.user, { username: 'alice@example.com', groups: ['team-a', 'ml', 'system:authenticated'] });
    assert.equal(userOf(await a.authenticate(req(header, '::ffff:10.9.9.9'))), 'alice@example.com');
    assert.equal(userOf(await a.authenticate(req(header, '::1'))), 'alice@example.com');
    assert.equal(userOf(await a.authenticate(req(header, '192.168.1.1'))), 'system:anonymous');
    assert.equal(userOf(await a.authenticate(req(header, '11.0.0.1'))), 'system:anonymous');
    // without the prefix the value names nobody
    assert.equal(userOf(await a.authenticate(req({ 'kubeflow-userid': 'alice@example.com' }, '10.1.2.3'))), 'system:anonymous');
  });

  it('never believes a Pod, even where its address is trusted', async () => {
    const wide = new Authenticator({ trustedProxies: ['127.0.0.0/8'] });
    assert.equal(userOf(await wide.authenticate(req(header, '127.1.4.7'))), 'system:anonymous');
    assert.equal(userOf(await a.authenticate(req(header, '10.1.2.3', '127.0.0.2'))), 'system:anonymous');
  });

  it('reads CIDRs strictly', () => {
    assert.ok(new AddressSet(['192.168.0.0/16']).has('192.168.7.1'));
    assert.ok(!new AddressSet(['192.168.0.0/16']).has('192.169.0.1'));
    assert.ok(!new AddressSet(['192.168.0.0/16']).has(undefined));
    assert.throws(() => new AddressSet(['10.0.0.0/33']), /prefix/);
    assert.throws(() => new AddressSet(['example.com']), /not an address/);
    assert.throws(() => new Authenticator({ trustedProxies: ['10.0.0.0/x'] }), /--trusted-proxy/);
  });
});

describe('open paths', () => {
  it('are health, version and the dashboard\'s files', () => {
    for (const p of ['/healthz', '/readyz', '/livez', '/version', '/healthz/ping', '/ui/', '/ui/assets/x.js', '/', '/pipeline', '/pipeline/']) assert.ok(isOpenPath(p), p);
    for (const p of ['/metrics', '/api/v1/pods', '/apis/v2beta1/runs', '/openapi/v2', '/serving/a/b', '/healthzz', '/pipeline/apis/v2beta1/runs', '/pipelines']) assert.ok(!isOpenPath(p), p);
  });
});

describe('the notebook cookie', () => {
  const file = join(dir, 'cookie-tokens.csv');
  writeFileSync(file, 'tok-alice,alice,uid-1\n');
  const a = new Authenticator({ tokenAuthFile: file });
  const withCookie = (url: string, cookie = '_xsrf=x; skiff-notebook-token=tok-alice'): IncomingMessage => req({ cookie }, '127.0.0.1', '127.0.0.1', url);

  it('names the user on the notebook proxy\'s paths, HTTP and WebSocket', async () => {
    assert.equal(userOf(await a.authenticate(withCookie('/notebook/team-a/nb/lab'))), 'alice');
    assert.equal(userOf(await a.authenticate(withCookie('/notebook/team-a/nb/api/kernels/k/channels?session_id=1'))), 'alice');
    assert.equal(userOf(await a.authenticate(withCookie('/notebook/_session'))), 'alice');
    // a wrong token in the cookie proves nothing: 401, as a wrong bearer token
    assert.match(userOf(await a.authenticate(withCookie('/notebook/team-a/nb/lab', 'skiff-notebook-token=tok-mallory'))), /^failure/);
  });

  it('is ignored everywhere else: the API, the dashboard, paths that only look like a notebook\'s', async () => {
    for (const url of ['/api/v1/namespaces/team-a/pods', '/apis/kubeflow.org/v1/notebooks', '/skiff/v1/streams', '/ui/team-a/notebooks', '/notebook', '/notebooks/x/y', '/notebook/../api/v1/pods', '/notebook/%2e%2e/api/v1/pods', '/notebook/a/b/../../../api/v1/secrets']) {
      assert.equal(userOf(await a.authenticate(withCookie(url))), 'system:anonymous', url);
    }
  });

  it('gives way to a bearer token, and is read only by its exact name', async () => {
    writeFileSync(join(dir, 'cookie-tokens2.csv'), 'tok-alice,alice,uid-1\ntok-bob,bob,uid-2\n');
    const b = new Authenticator({ tokenAuthFile: join(dir, 'cookie-tokens2.csv') });
    assert.equal(userOf(await b.authenticate(req({ authorization: 'Bearer tok-bob', cookie: 'skiff-notebook-token=tok-alice' }, '127.0.0.1', '127.0.0.1', '/notebook/team-a/nb/lab'))), 'bob');
    assert.equal(cookieValue('xskiff-notebook-token=a; skiff-notebook-token=b', 'skiff-notebook-token'), 'b');
    assert.equal(cookieValue('skiff-notebook-token=%E0', 'skiff-notebook-token'), undefined);
    assert.equal(cookiePath('/notebook/a/b/'), true);
    assert.equal(cookiePath('/notebook/./a/'), true);
  });
});
