// IP addresses and CIDR blocks as numbers, read as Kubernetes reads its legacy fields (Go's
// ParseIPSloppy and ParseCIDRSloppy): an IPv4 octet may have leading zeros (`010.0.0.1` is 10.0.0.1)
// and an address with host bits set names its block (`10.0.0.5/24` is 10.0.0.0/24).

export interface IpAddress {
  family: 4 | 6;
  value: bigint;
}

export interface CidrBlock {
  family: 4 | 6;
  /** the first address of the block (host bits cleared) */
  base: bigint;
  prefix: number;
}

const bitsOf = (family: 4 | 6): number => (family === 4 ? 32 : 128);

function parseIpv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let out = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return undefined;
    out = (out << 8n) | BigInt(Number(p));
  }
  return out;
}

function parseIpv6(s: string): bigint | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (text: string): number[] | undefined => {
    if (text === '') return [];
    const out: number[] = [];
    const parts = text.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] ?? '';
      // an IPv4 address may end an IPv6 one (`::ffff:10.0.0.1`): two groups
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIpv4(p);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let out = 0n;
  for (const g of [...head, ...new Array<number>(missing).fill(0), ...tail]) out = (out << 16n) | BigInt(g);
  return out;
}

export function parseIp(s: string): IpAddress | undefined {
  const v4 = parseIpv4(s);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = s.includes(':') ? parseIpv6(s) : undefined;
  return v6 === undefined ? undefined : { family: 6, value: v6 };
}

export function parseCidr(s: string): CidrBlock | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(s.slice(0, slash));
  const len = s.slice(slash + 1);
  if (!ip || !/^[0-9]{1,3}$/.test(len)) return undefined;
  const prefix = Number(len);
  const bits = bitsOf(ip.family);
  if (prefix > bits) return undefined;
  const host = (1n << BigInt(bits - prefix)) - 1n;
  return { family: ip.family, base: ip.value & ~host, prefix };
}

/** the last address of a block */
export function cidrEnd(c: CidrBlock): bigint {
  return c.base + (1n << BigInt(bitsOf(c.family) - c.prefix)) - 1n;
}

export function cidrContains(c: CidrBlock, ip: IpAddress): boolean {
  return c.family === ip.family && ip.value >= c.base && ip.value <= cidrEnd(c);
}

/** `10.1.2.3` for an IPv4 address held as a number */
export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
