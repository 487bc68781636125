// The API server's own PKI, made at first start and reused after: a CA (what Pods get as ca.crt), the
// serving certificate of the HTTPS endpoint Pods reach, and the key that signs service-account tokens.
// Files live under <dataDir>/pki, as kubeadm keeps /etc/kubernetes/pki.
import { X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeyUsage, createCertificate, keyPairFromPem, newKeyPair, privateKeyPem, toPem, type KeyPair } from '../../util/x509.js';

export interface Pki {
  dir: string;
  /** PEM of the CA certificate: ca.crt in every Pod, certificate-authority-data in kubeconfigs */
  caPem: string;
  /** the HTTPS endpoint's certificate and key, PEM */
  serverCertPem: string;
  serverKeyPem: string;
  /** signs (and so verifies) service-account tokens */
  tokenKey: KeyPair;
}

/** the names a Pod's client may use for the API server, as a cluster's `kubernetes` Service has them */
export const apiServerNames = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', 'localhost'];

const day = 24 * 3600 * 1000;
const caSubject = { commonName: 'skiff-ca' };

function readKey(file: string): KeyPair | undefined {
  try {
    return keyPairFromPem(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function writePrivate(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
}

/** a certificate still good for `ips` and `dns` for at least another 30 days, signed by `ca` */
function stillGood(pem: string, ca: X509Certificate, ips: string[], dns: string[], key: KeyObject): boolean {
  try {
    const cert = new X509Certificate(pem);
    if (Date.parse(cert.validTo) - Date.now() < 30 * day) return false;
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey) || !cert.checkPrivateKey(key)) return false;
    return ips.every((ip) => cert.checkIP(ip) !== undefined) && dns.every((d) => cert.checkHost(d, { wildcards: false }) !== undefined);
  } catch {
    return false;
  }
}

/** loads the PKI under dataDir/pki, making what is missing; the serving certificate is made anew when
 *  it does not cover `ips` (the addresses Pods reach the server at) or is about to expire */
export function loadPki(dataDir: string, ips: string[]): Pki {
  const dir = join(dataDir, 'pki');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  const caKeyFile = join(dir, 'ca.key');
  const caCertFile = join(dir, 'ca.crt');
  let ca = readKey(caKeyFile);
  let caPem = existsSync(caCertFile) ? readFileSync(caCertFile, 'utf8') : '';
  let caCert: X509Certificate | undefined;
  try {
    caCert = ca && caPem ? new X509Certificate(caPem) : undefined;
    if (caCert && ca && (!caCert.checkPrivateKey(ca.privateKey) || Date.parse(caCert.validTo) - now < 60 * day)) caCert = undefined;
  } catch {
    caCert = undefined;
  }
  if (!ca || !caCert) {
    // a CA made anew invalidates every ca.crt handed out before; only a missing or expiring one is
    ca = newKeyPair();
    caPem = toPem(createCertificate({
      subject: caSubject, publicKey: ca.publicKey, selfSignKey: ca.privateKey, isCA: true,
      notBefore: new Date(now - 3600_000), notAfter: new Date(now + 10 * 365 * day),
      keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyCertSign, KeyUsage.cRLSign],
    }));
    writePrivate(caKeyFile, privateKeyPem(ca.privateKey));
    writeFileSync(caCertFile, caPem);
    caCert = new X509Certificate(caPem);
  }
  const keyFile = join(dir, 'apiserver.key');
  const certFile = join(dir, 'apiserver.crt');
  let server = readKey(keyFile);
  let serverCertPem = existsSync(certFile) ? readFileSync(certFile, 'utf8') : '';
  if (!server || !serverCertPem || !stillGood(serverCertPem, caCert, ips, apiServerNames, server.privateKey)) {
    server = newKeyPair();
    serverCertPem = toPem(createCertificate({
      subject: { commonName: 'kube-apiserver' }, publicKey: server.publicKey,
      issuer: { subject: caSubject, privateKey: ca.privateKey, publicKey: ca.publicKey },
      notBefore: new Date(now - 3600_000), notAfter: new Date(now + 365 * day),
      keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyEncipherment], extKeyUsage: ['serverAuth'],
      dnsNames: apiServerNames, ipAddresses: [...new Set(ips)],
    }));
    writePrivate(keyFile, privateKeyPem(server.privateKey));
    writeFileSync(certFile, serverCertPem);
  }
  const saFile = join(dir, 'sa.key');
  let tokenKey = readKey(saFile);
  if (!tokenKey) {
    tokenKey = newKeyPair();
    writePrivate(saFile, privateKeyPem(tokenKey.privateKey));
  }
  return { dir, caPem, serverCertPem, serverKeyPem: privateKeyPem(server.privateKey), tokenKey };
}
