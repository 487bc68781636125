import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KeyUsage, createCertificate, der, newKeyPair, tlv, toPem } from './x509.js';

function pair(): { caPem: string; leafPem: string } {
  const ca = newKeyPair();
  const leaf = newKeyPair();
  const now = Date.now();
  const caPem = toPem(createCertificate({
    subject: { commonName: 'test-ca' }, publicKey: ca.publicKey, selfSignKey: ca.privateKey, isCA: true,
    notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyCertSign, KeyUsage.cRLSign],
  }));
  const leafPem = toPem(createCertificate({
    subject: { commonName: 'server', organization: ['skiff'] }, publicKey: leaf.publicKey,
    issuer: { subject: { commonName: 'test-ca' }, privateKey: ca.privateKey, publicKey: ca.publicKey },
    notBefore: new Date(now - 60_000), notAfter: new Date(Date.UTC(2051, 0, 1)), keyUsage: [KeyUsage.digitalSignature], extKeyUsage: ['serverAuth'],
    dnsNames: ['kubernetes.default.svc'], ipAddresses: ['127.0.0.2', '::1', 'fd00::10:1'],
  }));
  return { caPem, leafPem };
}

describe('DER', () => {
  it('writes short and long lengths', () => {
    assert.deepEqual([...tlv(0x04, Buffer.alloc(3))].slice(0, 2), [0x04, 3]);
    assert.deepEqual([...tlv(0x04, Buffer.alloc(200))].slice(0, 3), [0x04, 0x81, 200]);
    assert.deepEqual([...tlv(0x04, Buffer.alloc(300))].slice(0, 4), [0x04, 0x82, 0x01, 0x2c]);
  });
  it('keeps integers positive and minimal', () => {
    assert.deepEqual([...der.int(2)], [0x02, 1, 2]);
    assert.deepEqual([...der.int(128)], [0x02, 2, 0, 0x80]);
    assert.deepEqual([...der.unsigned(Buffer.from([0, 0, 5]))], [0x02, 1, 5]);
  });
  it('encodes object identifiers with multi-byte arcs', () => {
    // 1.2.840.10045.4.3.2 (ecdsa-with-SHA256), as every certificate tool writes it
    assert.equal(der.oid('1.2.840.10045.4.3.2').toString('hex'), '06082a8648ce3d040302');
  });
  it('writes UTCTime before 2050 and GeneralizedTime after', () => {
    assert.equal(der.time(new Date(Date.UTC(2026, 10, 25, 6, 7, 8))).toString('latin1').slice(2), '261125060708Z');
    assert.equal(der.time(new Date(Date.UTC(2051, 0, 1))).toString('latin1').slice(2), '20510101000000Z');
  });
});

describe('createCertificate', () => {
  it('makes a CA and a server certificate that Node reads and verifies', () => {
    const { caPem, leafPem } = pair();
    const ca = new X509Certificate(caPem);
    const leaf = new X509Certificate(leafPem);
    assert.equal(ca.ca, true);
    assert.equal(leaf.ca, false);
    assert.ok(ca.verify(ca.publicKey), 'the CA is self-signed');
    assert.ok(leaf.checkIssued(ca));
    assert.ok(leaf.verify(ca.publicKey));
    assert.equal(leaf.checkIP('127.0.0.2'), '127.0.0.2');
    assert.equal(leaf.checkIP('::1'), '::1');
    assert.equal(leaf.checkIP('fd00::10:1'), 'fd00::10:1');
    assert.equal(leaf.checkIP('127.0.0.3'), undefined);
    assert.equal(leaf.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
    assert.match(leaf.subject, /CN=server/);
    assert.match(leaf.subject, /O=skiff/);
    assert.equal(leaf.issuer, 'CN=test-ca');
    assert.deepEqual(leaf.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(new Date(leaf.validTo).getUTCFullYear(), 2051);
  });

  it('passes OpenSSL\'s strict verification', { skip: spawnSync('openssl', ['version']).status !== 0 && 'no openssl here' }, () => {
    const { caPem, leafPem } = pair();
    const dir = mkdtempSync(join(tmpdir(), 'x509-'));
    try {
      writeFileSync(join(dir, 'ca.crt'), caPem);
      writeFileSync(join(dir, 'leaf.crt'), leafPem);
      const r = spawnSync('openssl', ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.crt'), join(dir, 'leaf.crt')], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /leaf\.crt: OK/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an address it cannot write', () => {
    const k = newKeyPair();
    const req = { subject: { commonName: 'x' }, publicKey: k.publicKey, selfSignKey: k.privateKey, notBefore: new Date(), notAfter: new Date(), keyUsage: [] };
    assert.throws(() => createCertificate({ ...req, ipAddresses: ['::ffff:1.2.3.4'] }), /not an IP address this writer supports/);
    assert.throws(() => createCertificate({ ...req, ipAddresses: ['localhost'] }), /not an IP address/);
  });

  it('refuses a certificate with nothing to sign it', () => {
    const k = newKeyPair();
    assert.throws(() => createCertificate({ subject: { commonName: 'x' }, publicKey: k.publicKey, notBefore: new Date(), notAfter: new Date(), keyUsage: [] }), /issuer or a key/);
  });
});
