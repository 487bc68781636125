// Archive builders for tests: byte-exact tar and zip files, including the hostile ones (entries
// named `../x` or `/etc/x`, links that leave the target) that real archivers refuse to write.
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

export interface TestEntry {
  name: string;
  /** file contents; omit for a directory (a name ending in `/`) or a symlink */
  body?: string | Buffer;
  /** a symlink to this target */
  link?: string;
  mode?: number;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** A ustar archive of `entries`, gzipped when `gzip` is set. */
export function makeTar(entries: TestEntry[], gzip = false): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body);
    const h = Buffer.alloc(512);
    h.write(e.name, 0, 100, 'utf8');
    h.write(octal(e.mode ?? (e.name.endsWith('/') ? 0o755 : 0o644), 8), 100, 'latin1');
    h.write(octal(0, 8), 108, 'latin1');
    h.write(octal(0, 8), 116, 'latin1');
    h.write(octal(body.length, 12), 124, 'latin1');
    h.write(octal(0, 12), 136, 'latin1');
    h.write(e.link !== undefined ? '2' : e.name.endsWith('/') ? '5' : '0', 156, 'latin1');
    if (e.link !== undefined) h.write(e.link, 157, 100, 'utf8');
    h.write('ustar\0', 257, 'latin1');
    h.write('00', 263, 'latin1');
    h.fill(' ', 148, 156);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(octal(sum, 7) + ' ', 148, 'latin1');
    blocks.push(h, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  const tar = Buffer.concat(blocks);
  return gzip ? gzipSync(tar) : tar;
}

/** A zip archive of `entries`, deflated, with its central directory. */
export function makeZip(entries: TestEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const raw = e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body);
    const data = raw.length ? deflateRawSync(raw) : raw;
    const method = raw.length ? 8 : 0;
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(raw);
    const l = Buffer.alloc(30);
    l.writeUInt32LE(0x04034b50, 0);
    l.writeUInt16LE(20, 4);
    l.writeUInt16LE(0x0800, 6);
    l.writeUInt16LE(method, 8);
    l.writeUInt32LE(crc, 14);
    l.writeUInt32LE(data.length, 18);
    l.writeUInt32LE(raw.length, 22);
    l.writeUInt16LE(name.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE((3 << 8) | 20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x0800, 8);
    c.writeUInt16LE(method, 10);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(raw.length, 24);
    c.writeUInt16LE(name.length, 28);
    const mode = (e.name.endsWith('/') ? 0o040000 : 0o100000) | (e.mode ?? (e.name.endsWith('/') ? 0o755 : 0o644));
    c.writeUInt32LE((mode << 16) >>> 0, 38);
    c.writeUInt32LE(offset, 42);
    locals.push(l, name, data);
    central.push(c, name);
    offset += l.length + name.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
