// SPDY/3.1, as much of it as Kubernetes' streaming protocols use: kubectl port-forward opens one
// connection and, per forwarded TCP connection, two streams (error and data), either over a plain
// HTTP upgrade or tunnelled in WebSocket binary messages. Only the server side is here: the client
// opens streams (odd ids), the server replies, pings are echoed, no stream is ever pushed.
//
// Frames (draft-mbelshe-httpbis-spdy-00 / SPDY/3.1): a control frame starts with the high bit set,
// the version (3) and the type, then 8 bits of flags and a 24-bit length; a data frame starts with
// the 31-bit stream id, then flags and length. Name/value header blocks are one zlib stream per
// direction for the whole connection, seeded with the fixed dictionary below and sync-flushed after
// every block, so they must be (de)compressed in order on one zlib context each way.
import zlib from 'node:zlib';

export const FrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;

export const RstStatus = {
  ProtocolError: 1,
  InvalidStream: 2,
  RefusedStream: 3,
  UnsupportedVersion: 4,
  Cancel: 5,
  InternalError: 6,
  FlowControlError: 7,
  StreamInUse: 8,
  StreamAlreadyClosed: 9,
  FrameTooLarge: 11,
} as const;

export const GoAwayStatus = { Ok: 0, ProtocolError: 1, InternalError: 2 } as const;

const FLAG_FIN = 0x01;
const FLAG_UNIDIRECTIONAL = 0x02;
const VERSION = 3;
/** the largest payload a frame's 24-bit length can carry */
export const MAX_FRAME_PAYLOAD = 0xffffff;
/** control frames here are small; a larger one is refused before its header block is inflated */
const MAX_CONTROL_PAYLOAD = 64 * 1024;
/** what one inflated header block may grow to: a few headers, never megabytes */
const MAX_HEADER_BLOCK = 256 * 1024;

export type Frame =
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer }
  | { type: 'syn_stream'; streamId: number; associatedTo: number; priority: number; fin: boolean; unidirectional: boolean; headerBlock: Buffer }
  | { type: 'syn_reply'; streamId: number; fin: boolean; headerBlock: Buffer }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; clear: boolean; entries: { flags: number; id: number; value: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'headers'; streamId: number; fin: boolean; headerBlock: Buffer }
  | { type: 'window_update'; streamId: number; delta: number };

/** A frame this side cannot accept: the connection ends with GOAWAY (protocol error). */
export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

/** The dictionary SPDY/3 seeds header compression with (the spec's section 2.6.10.1): length-prefixed
 *  header names and values, then common status lines, dates and content types. */
export const headerDictionary: Buffer = (() => {
  const words = ['options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding',
    'accept-language', 'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base',
    'content-encoding', 'content-language', 'content-length', 'content-location', 'content-md5', 'content-range',
    'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since',
    'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma',
    'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te', 'trailer',
    'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning', 'www-authenticate', 'method', 'get',
    'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin'];
  const tail = '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
    '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
    'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
    'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
    'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';
  const parts: Buffer[] = [];
  for (const w of words) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    parts.push(len, Buffer.from(w, 'latin1'));
  }
  parts.push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
})();

/** Cuts a byte stream into frames; a frame split across chunks waits for the rest (its pieces are
 *  joined once, when the last arrives, so a large frame in small chunks costs no repeated copying). */
export class FrameParser {
  private chunks: Buffer[] = [];
  private size = 0;

  /** the frames completed by this chunk; throws SpdyProtocolError on a frame that is not SPDY/3 */
  push(chunk: Buffer): Frame[] {
    if (chunk.length) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    const out: Frame[] = [];
    while (this.size >= 8) {
      if ((this.chunks[0]?.length ?? 0) < 8) this.join();
      const head = this.chunks[0] as Buffer;
      const word = head.readUInt32BE(0);
      const flags = head.readUInt8(4);
      const length = head.readUIntBE(5, 3);
      const control = (word & 0x80000000) !== 0;
      if (control && length > MAX_CONTROL_PAYLOAD) throw new SpdyProtocolError(`control frame of ${length} bytes is over the limit of ${MAX_CONTROL_PAYLOAD}`);
      if (this.size < 8 + length) break;
      if (head.length < 8 + length) this.join();
      const buf = this.chunks[0] as Buffer;
      const payload = Buffer.from(buf.subarray(8, 8 + length));
      const rest = buf.subarray(8 + length);
      if (rest.length) this.chunks[0] = rest;
      else this.chunks.shift();
      this.size -= 8 + length;
      out.push(control ? parseControl((word >>> 16) & 0x7fff, word & 0xffff, flags, payload) : { type: 'data', streamId: word & 0x7fffffff, fin: (flags & FLAG_FIN) !== 0, data: payload });
    }
    return out;
  }

  private join(): void {
    this.chunks = [Buffer.concat(this.chunks)];
  }
}

function need(payload: Buffer, n: number, what: string): void {
  if (payload.length < n) throw new SpdyProtocolError(`${what} frame is ${payload.length} bytes, it needs at least ${n}`);
}

function parseControl(version: number, type: number, flags: number, p: Buffer): Frame {
  if (version !== VERSION) throw new SpdyProtocolError(`SPDY version ${version} is not supported (only ${VERSION})`);
  const fin = (flags & FLAG_FIN) !== 0;
  switch (type) {
    case FrameType.SynStream:
      need(p, 10, 'SYN_STREAM');
      return { type: 'syn_stream', streamId: p.readUInt32BE(0) & 0x7fffffff, associatedTo: p.readUInt32BE(4) & 0x7fffffff, priority: p.readUInt8(8) >> 5, fin, unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0, headerBlock: p.subarray(10) };
    case FrameType.SynReply:
      need(p, 4, 'SYN_REPLY');
      return { type: 'syn_reply', streamId: p.readUInt32BE(0) & 0x7fffffff, fin, headerBlock: p.subarray(4) };
    case FrameType.RstStream:
      need(p, 8, 'RST_STREAM');
      return { type: 'rst_stream', streamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
    case FrameType.Settings: {
      need(p, 4, 'SETTINGS');
      const n = p.readUInt32BE(0);
      if (p.length !== 4 + n * 8) throw new SpdyProtocolError(`SETTINGS frame says ${n} entries but is ${p.length} bytes`);
      const entries = [];
      for (let i = 0; i < n; i++) entries.push({ flags: p.readUInt8(4 + i * 8), id: p.readUIntBE(5 + i * 8, 3), value: p.readUInt32BE(8 + i * 8) });
      return { type: 'settings', clear: fin, entries };
    }
    case FrameType.Ping:
      if (p.length !== 4) throw new SpdyProtocolError(`PING frame is ${p.length} bytes, not 4`);
      return { type: 'ping', id: p.readUInt32BE(0) };
    case FrameType.GoAway:
      if (p.length !== 8) throw new SpdyProtocolError(`GOAWAY frame is ${p.length} bytes, not 8`);
      return { type: 'goaway', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
    case FrameType.Headers:
      need(p, 4, 'HEADERS');
      return { type: 'headers', streamId: p.readUInt32BE(0) & 0x7fffffff, fin, headerBlock: p.subarray(4) };
    case FrameType.WindowUpdate:
      if (p.length !== 8) throw new SpdyProtocolError(`WINDOW_UPDATE frame is ${p.length} bytes, not 8`);
      return { type: 'window_update', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
  }
  throw new SpdyProtocolError(`unknown control frame type ${type}`);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw new RangeError(`a frame payload of ${payload.length} bytes does not fit in 24 bits`);
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt8(flags, 4);
  head.writeUIntBE(payload.length, 5, 3);
  return Buffer.concat([head, payload]);
}

function u32s(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

export function dataFrame(streamId: number, data: Buffer, fin = false): Buffer {
  if (data.length > MAX_FRAME_PAYLOAD) throw new RangeError(`a data frame of ${data.length} bytes does not fit in 24 bits`);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt8(fin ? FLAG_FIN : 0, 4);
  head.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([head, data]);
}

/** SYN_REPLY with an already compressed header block */
export function synReplyFrame(streamId: number, headerBlock: Buffer, fin = false): Buffer {
  return controlFrame(FrameType.SynReply, fin ? FLAG_FIN : 0, Buffer.concat([u32s(streamId & 0x7fffffff), headerBlock]));
}

/** SYN_STREAM with an already compressed header block (what a client sends; the tests use it) */
export function synStreamFrame(streamId: number, headerBlock: Buffer, opts: { fin?: boolean; associatedTo?: number; priority?: number } = {}): Buffer {
  const p = Buffer.alloc(10);
  p.writeUInt32BE(streamId & 0x7fffffff, 0);
  p.writeUInt32BE((opts.associatedTo ?? 0) & 0x7fffffff, 4);
  p.writeUInt8(((opts.priority ?? 0) & 7) << 5, 8);
  return controlFrame(FrameType.SynStream, opts.fin ? FLAG_FIN : 0, Buffer.concat([p, headerBlock]));
}

export function rstStreamFrame(streamId: number, status: number): Buffer {
  return controlFrame(FrameType.RstStream, 0, u32s(streamId & 0x7fffffff, status));
}

export function pingFrame(id: number): Buffer {
  return controlFrame(FrameType.Ping, 0, u32s(id));
}

export function goAwayFrame(lastGoodStreamId: number, status: number): Buffer {
  return controlFrame(FrameType.GoAway, 0, u32s(lastGoodStreamId & 0x7fffffff, status));
}

export function settingsFrame(entries: { flags?: number; id: number; value: number }[]): Buffer {
  const p = Buffer.alloc(4 + entries.length * 8);
  p.writeUInt32BE(entries.length, 0);
  entries.forEach((e, i) => {
    p.writeUInt8(e.flags ?? 0, 4 + i * 8);
    p.writeUIntBE(e.id, 5 + i * 8, 3);
    p.writeUInt32BE(e.value >>> 0, 8 + i * 8);
  });
  return controlFrame(FrameType.Settings, 0, p);
}

export function windowUpdateFrame(streamId: number, delta: number): Buffer {
  return controlFrame(FrameType.WindowUpdate, 0, u32s(streamId & 0x7fffffff, delta & 0x7fffffff));
}

/** Headers as SPDY carries them: lower-case names, each with its values (NUL-joined on the wire). */
export type SpdyHeaders = Map<string, string[]>;

/** The uncompressed name/value block: a 32-bit count, then 32-bit-length-prefixed names and values. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [u32s(headers.size)];
  for (const [name, values] of headers) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32s(n.length), n, u32s(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const out: SpdyHeaders = new Map();
  let at = 0;
  const take = (what: string): Buffer => {
    if (block.length < at + 4) throw new SpdyProtocolError(`header block ends inside the length of a ${what}`);
    const len = block.readUInt32BE(at);
    at += 4;
    if (block.length < at + len) throw new SpdyProtocolError(`header block ends inside a ${what} of ${len} bytes`);
    const b = block.subarray(at, at + len);
    at += len;
    return b;
  };
  if (block.length < 4) throw new SpdyProtocolError('header block is shorter than its count');
  const count = block.readUInt32BE(0);
  at = 4;
  for (let i = 0; i < count; i++) {
    const name = take('header name').toString('utf8');
    const value = take('header value').toString('utf8');
    if (name === '' || name !== name.toLowerCase()) throw new SpdyProtocolError(`header name ${JSON.stringify(name)} is not lower-case`);
    if (out.has(name)) throw new SpdyProtocolError(`header ${name} appears twice`);
    out.set(name, value.split('\0'));
  }
  if (at !== block.length) throw new SpdyProtocolError(`header block has ${block.length - at} bytes after its ${count} headers`);
  return out;
}

/** One direction's zlib context; blocks go through it one at a time, in the order given. */
class ZContext {
  private tail: Promise<unknown> = Promise.resolve();
  private failed?: Error;

  constructor(private readonly stream: zlib.Deflate | zlib.Inflate, private readonly limit: number) {
    stream.on('error', (e) => { this.failed ??= e; });
  }

  run(input: Buffer): Promise<Buffer> {
    const next = this.tail.then(() => this.once(input));
    this.tail = next.catch(() => undefined);
    return next;
  }

  private once(input: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failed) return reject(new SpdyProtocolError(`header compression failed: ${this.failed.message}`));
      const onError = (e: Error): void => reject(new SpdyProtocolError(`header block is not valid zlib data: ${e.message}`));
      this.stream.once('error', onError);
      this.stream.write(input);
      this.stream.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        this.stream.off('error', onError);
        if (this.failed) return reject(new SpdyProtocolError(`header block is not valid zlib data: ${this.failed.message}`));
        const out: Buffer[] = [];
        let size = 0;
        for (let c = this.stream.read() as Buffer | null; c !== null; c = this.stream.read() as Buffer | null) {
          out.push(c);
          size += c.length;
        }
        if (size > this.limit) return reject(new SpdyProtocolError(`header block inflates to ${size} bytes, over the limit of ${this.limit}`));
        resolve(Buffer.concat(out));
      });
    });
  }

  close(): void {
    this.stream.destroy();
  }
}

/** The two header compression contexts of one connection. */
export class HeaderCodec {
  private readonly deflate = new ZContext(zlib.createDeflate({ dictionary: headerDictionary, level: zlib.constants.Z_BEST_COMPRESSION }), Infinity);
  private readonly inflate = new ZContext(zlib.createInflate({ dictionary: headerDictionary }), MAX_HEADER_BLOCK);

  async compress(headers: SpdyHeaders): Promise<Buffer> {
    return this.deflate.run(encodeHeaderBlock(headers));
  }

  async decompress(block: Buffer): Promise<SpdyHeaders> {
    return decodeHeaderBlock(await this.inflate.run(block));
  }

  close(): void {
    this.deflate.close();
    this.inflate.close();
  }
}
