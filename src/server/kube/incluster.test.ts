import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import YAML from 'yaml';
import { newKeyPair } from '../../util/x509.js';
import { kubeconfig, kubeconfigPath, startInCluster, writeKubeconfig } from './incluster.js';
import { loadPki } from './pki.js';
import { ServiceAccountTokens } from './tokens.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'skiff-incluster-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('loadPki', () => {
  it('makes a CA, a serving certificate and a token key once, and reuses them', () => {
    const dir = tmp();
    const a = loadPki(dir, ['127.0.0.2']);
    const ca = new X509Certificate(a.caPem);
    const cert = new X509Certificate(a.serverCertPem);
    assert.ok(cert.verify(ca.publicKey));
    assert.equal(cert.checkIP('127.0.0.2'), '127.0.0.2');
    assert.equal(cert.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
    for (const f of ['ca.key', 'apiserver.key', 'sa.key']) assert.equal(statSync(join(dir, 'pki', f)).mode & 0o777, 0o600, f);
    const b = loadPki(dir, ['127.0.0.2']);
    assert.equal(b.caPem, a.caPem);
    assert.equal(b.serverCertPem, a.serverCertPem);
    assert.equal(b.tokenKey.publicKey.export({ type: 'spki', format: 'pem' }), a.tokenKey.publicKey.export({ type: 'spki', format: 'pem' }));
  });

  it('issues a new serving certificate, from the same CA, for an address the old one lacks', () => {
    const dir = tmp();
    const a = loadPki(dir, ['127.0.0.2']);
    const b = loadPki(dir, ['127.0.0.2', '10.1.2.3']);
    assert.equal(b.caPem, a.caPem);
    assert.notEqual(b.serverCertPem, a.serverCertPem);
    assert.equal(new X509Certificate(b.serverCertPem).checkIP('10.1.2.3'), '10.1.2.3');
    assert.ok(new X509Certificate(b.serverCertPem).verify(new X509Certificate(a.caPem).publicKey));
  });
});

describe('ServiceAccountTokens', () => {
  const tokens = new ServiceAccountTokens(newKeyPair());
  it('binds a token to its namespace, service account and Pod, as kube-apiserver does', () => {
    const t = tokens.issue({ namespace: 'team-a', serviceAccount: 'default', pod: { name: 'p', uid: 'u1' }, node: 'local' });
    const claims = JSON.parse(Buffer.from(t.split('.')[1] ?? '', 'base64url').toString()) as Record<string, any>;
    assert.equal(claims.sub, 'system:serviceaccount:team-a:default');
    assert.deepEqual(claims['kubernetes.io'].pod, { name: 'p', uid: 'u1' });
    assert.ok(claims.exp > claims.iat);
    const id = tokens.verify(t);
    assert.equal(id.user, 'system:serviceaccount:team-a:default');
    assert.deepEqual(id.serviceAccount, { namespace: 'team-a', name: 'default' });
    assert.deepEqual(id.pod, { name: 'p', uid: 'u1' });
    assert.ok(id.groups.includes('system:serviceaccounts:team-a'));
  });
  it('authenticates a request by its bearer token and refuses another key\'s tokens', () => {
    const admin = tokens.issueUser('skiff-admin', ['system:masters']);
    const req = (authorization?: string): IncomingMessage => ({ headers: authorization ? { authorization } : {} }) as IncomingMessage;
    assert.deepEqual(tokens.authenticate(req(`Bearer ${admin}`)), { user: 'skiff-admin', groups: ['system:masters', 'system:authenticated'] });
    assert.equal(tokens.authenticate(req()), undefined);
    const other = new ServiceAccountTokens(newKeyPair()).issueUser('skiff-admin', []);
    assert.throws(() => tokens.authenticate(req(`Bearer ${other}`)), /invalid signature/);
  });
});

describe('startInCluster', () => {
  it('serves the handler over HTTPS with a certificate Pods verify with ca.crt, on the port it had before', async () => {
    const dir = tmp();
    const plain = createServer();
    let upgraded = '';
    plain.on('upgrade', (req: IncomingMessage, socket) => {
      upgraded = req.url ?? '';
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
    });
    const ic = await startInCluster({ dataDir: dir, handler: (req, res) => res.end(`hello ${req.url}`), upgrades: plain });
    assert.ok(ic);
    const get = (path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> => new Promise((resolve, reject) => {
      const r = request({ host: ic.host, port: ic.port, path, ca: ic.pki.caPem, servername: 'kubernetes.default.svc', headers }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      r.on('upgrade', (res) => resolve({ status: res.statusCode ?? 0, body: '' }));
      r.on('error', reject);
      r.end();
    });
    try {
      assert.deepEqual(await get('/api'), { status: 200, body: 'hello /api' });
      assert.equal((await get('/ws', { connection: 'Upgrade', upgrade: 'test' })).status, 101);
      assert.equal(upgraded, '/ws');
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '1', creationTimestamp: '' }, spec: { containers: [] } };
      assert.equal(ic.tokens.verify(ic.contract.token(pod as never)).user, 'system:serviceaccount:ns:default');
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'incluster.json'), 'utf8')), { host: ic.host, port: ic.port });
    } finally {
      await ic.close();
    }
    const again = await startInCluster({ dataDir: dir, handler: (_req, res) => res.end(), upgrades: plain });
    try {
      assert.equal(again?.port, ic.port, 'running Pods keep the port they were told');
    } finally {
      await again?.close();
    }
  });

  it('writes a kubeconfig with the plain URL as its current context and the HTTPS endpoint beside it', async () => {
    const dir = tmp();
    const ic = await startInCluster({ dataDir: dir, handler: (_req, res) => res.end(), upgrades: createServer() });
    try {
      const file = writeKubeconfig(dir, kubeconfig('http://127.0.0.1:8080', ic, ic?.adminToken));
      assert.equal(file, kubeconfigPath(dir));
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const cfg = YAML.parse(readFileSync(file, 'utf8')) as any;
      assert.equal(cfg['current-context'], 'skiff');
      assert.deepEqual(cfg.contexts[0], { name: 'skiff', context: { cluster: 'skiff', user: 'skiff', namespace: 'default' } });
      assert.equal(cfg.clusters[0].cluster.server, 'http://127.0.0.1:8080');
      assert.equal(cfg.clusters[1].cluster.server, ic?.url);
      assert.equal(Buffer.from(cfg.clusters[1].cluster['certificate-authority-data'], 'base64').toString(), ic?.pki.caPem);
      assert.equal(ic?.tokens.verify(cfg.users[0].user.token).user, 'skiff-admin');
    } finally {
      await ic?.close();
    }
  });
});
