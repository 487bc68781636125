// X.509 certificates written in-process: Node's crypto makes keys and signatures but not certificates,
// and the server (which owns its TLS endpoint) may not start processes such as openssl. The DER
// writer covers what a CA and a TLS server certificate need (RFC 5280), nothing more; Node's own
// X509Certificate, Go's crypto/x509 and OpenSSL read what it writes (see x509.test.ts).
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

// ---- DER

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** one TLV: tag, DER length, contents */
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const der = {
  sequence: (...items: Buffer[]): Buffer => tlv(0x30, ...items),
  set: (...items: Buffer[]): Buffer => tlv(0x31, ...items),
  boolean: (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00])),
  /** a non-negative integer given as big-endian bytes (a leading zero keeps it positive) */
  unsigned(bytes: Buffer): Buffer {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const b = bytes.subarray(i);
    return tlv(0x02, (b[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b.length ? b : Buffer.from([0]));
  },
  int(n: number): Buffer {
    const hex = n.toString(16);
    return der.unsigned(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
  },
  octets: (b: Buffer): Buffer => tlv(0x04, b),
  /** a BIT STRING of whole bytes */
  bits: (b: Buffer): Buffer => tlv(0x03, Buffer.from([0]), b),
  utf8: (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8')),
  oid(dotted: string): Buffer {
    const parts = dotted.split('.').map(Number);
    const out = [40 * (parts[0] ?? 0) + (parts[1] ?? 0)];
    for (const p of parts.slice(2)) {
      const groups: number[] = [];
      for (let v = p; ; v = Math.floor(v / 128)) {
        groups.unshift(v % 128);
        if (v < 128) break;
      }
      out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
    }
    return tlv(0x06, Buffer.from(out));
  },
  /** RFC 5280: UTCTime through 2049, GeneralizedTime from 2050 */
  time(d: Date): Buffer {
    const iso = d.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
    return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
  },
  /** [n] EXPLICIT */
  explicit: (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner),
};

// ---- certificates

const OID = {
  ecdsaSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/** key usage bits as RFC 5280 numbers them (bit 0 is the first byte's top bit) */
export const KeyUsage = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

export interface Subject {
  commonName: string;
  organization?: string[];
}

export interface CertificateRequest {
  subject: Subject;
  /** the certified key (public, or private: its public half is used) */
  publicKey: KeyObject;
  /** who signs; omitted for a self-signed certificate (the subject's own private key signs) */
  issuer?: { subject: Subject; privateKey: KeyObject; publicKey: KeyObject };
  /** the key that signs a self-signed certificate */
  selfSignKey?: KeyObject;
  notBefore: Date;
  notAfter: Date;
  isCA?: boolean;
  keyUsage: number[];
  extKeyUsage?: ('serverAuth' | 'clientAuth')[];
  /** subjectAltName entries: DNS names and IP addresses (v4 or v6) */
  dnsNames?: string[];
  ipAddresses?: string[];
}

function name(s: Subject): Buffer {
  const rdns = [...(s.organization ?? []).map((o) => der.set(der.sequence(der.oid(OID.organization), der.utf8(o)))), der.set(der.sequence(der.oid(OID.commonName), der.utf8(s.commonName)))];
  return der.sequence(...rdns);
}

function spki(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ type: 'spki', format: 'der' });
}

/** the key identifier of a public key: SHA-1 over its SubjectPublicKeyInfo (RFC 5280 4.2.1.2 allows any method) */
export function keyId(key: KeyObject): Buffer {
  return createHash('sha1').update(spki(key)).digest();
}

function keyUsageBits(bits: number[]): Buffer {
  const bytes = Buffer.alloc(2);
  for (const b of bits) bytes[b >> 3] = (bytes[b >> 3] ?? 0) | (0x80 >> (b & 7));
  const used = (bytes[1] ?? 0) ? 2 : 1;
  const last = bytes[used - 1] ?? 0;
  let unused = 0;
  while (unused < 8 && last && !(last & (1 << unused))) unused++;
  return tlv(0x03, Buffer.from([last ? unused : 0]), bytes.subarray(0, used));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  // the embedded-IPv4 spelling (::ffff:1.2.3.4) is not needed for the addresses Skiff certifies
  if (isIP(ip) !== 6 || ip.includes('.')) throw new Error(`"${ip}" is not an IP address this writer supports`);
  const [head, tail] = ip.includes('::') ? ip.split('::') as [string, string] : [ip, undefined];
  const groups = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(all.map((g) => g.padStart(4, '0')).join(''), 'hex');
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return der.sequence(der.oid(oid), ...(critical ? [der.boolean(true)] : []), der.octets(value));
}

/** a DER-encoded, ECDSA-with-SHA256-signed X.509 v3 certificate */
export function createCertificate(req: CertificateRequest): Buffer {
  const signer = req.issuer?.privateKey ?? req.selfSignKey;
  if (!signer) throw new Error('a certificate needs an issuer or a key to sign itself with');
  const issuerSubject = req.issuer?.subject ?? req.subject;
  const issuerPublic = req.issuer?.publicKey ?? req.publicKey;
  const exts: Buffer[] = [
    extension(OID.basicConstraints, true, der.sequence(...(req.isCA ? [der.boolean(true)] : []))),
    extension(OID.keyUsage, true, keyUsageBits(req.keyUsage)),
  ];
  if (req.extKeyUsage?.length) exts.push(extension(OID.extKeyUsage, false, der.sequence(...req.extKeyUsage.map((u) => der.oid(OID[u])))));
  exts.push(extension(OID.subjectKeyId, false, der.octets(keyId(req.publicKey))));
  if (req.issuer) exts.push(extension(OID.authorityKeyId, false, der.sequence(tlv(0x80, keyId(issuerPublic)))));
  const alt = [...(req.dnsNames ?? []).map((d) => tlv(0x82, Buffer.from(d, 'ascii'))), ...(req.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip)))];
  if (alt.length) exts.push(extension(OID.subjectAltName, false, der.sequence(...alt)));
  // a positive serial of at most 20 octets: 16 random bytes with the top bit clear
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01;
  const algorithm = der.sequence(der.oid(OID.ecdsaSha256));
  const tbs = der.sequence(
    der.explicit(0, der.int(2)),
    der.unsigned(serial),
    algorithm,
    name(issuerSubject),
    der.sequence(der.time(req.notBefore), der.time(req.notAfter)),
    name(req.subject),
    spki(req.publicKey),
    der.explicit(3, der.sequence(...exts)),
  );
  // an EC key signs in DER (ECDSA-Sig-Value), which is what a certificate carries
  const signature = sign('sha256', tbs, signer);
  return der.sequence(tbs, algorithm, der.bits(signature));
}

export function toPem(derBytes: Buffer, label = 'CERTIFICATE'): string {
  const b64 = derBytes.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** an ECDSA P-256 key pair: quick to make, and every TLS stack (Go, OpenSSL, browsers) accepts it */
export function newKeyPair(): KeyPair {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

export function keyPairFromPem(pem: string): KeyPair {
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}
