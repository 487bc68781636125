// SPDY/3.1 frames against bytes written out by hand from the spec, and the server session against a
// client built from those frames (the real client, kubectl, is driven in test/kubectl-portforward).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import type { Frame } from './spdy.js';
import { FrameParser, HeaderCodec, RstStatus, SpdyProtocolError, dataFrame, decodeHeaderBlock, encodeHeaderBlock, goAwayFrame, headerDictionary, pingFrame, rstStreamFrame, settingsFrame, synReplyFrame, synStreamFrame, windowUpdateFrame } from './spdy.js';
import { SpdySession, type SpdyStream, type SpdyTransport } from './spdy-session.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** a peer's header compressor: one zlib stream over all its blocks, sync-flushed after each */
function compressor(): (raw: Buffer) => Promise<Buffer> {
  const d = zlib.createDeflate({ dictionary: headerDictionary });
  return (raw) => new Promise((resolve) => {
    d.write(raw);
    d.flush(zlib.constants.Z_SYNC_FLUSH, () => {
      const out: Buffer[] = [];
      for (let c = d.read() as Buffer | null; c !== null; c = d.read() as Buffer | null) out.push(c);
      resolve(Buffer.concat(out));
    });
  });
}

function decompressor(): (block: Buffer) => Promise<Buffer> {
  const i = zlib.createInflate({ dictionary: headerDictionary });
  return (block) => new Promise((resolve) => {
    i.write(block);
    i.flush(zlib.constants.Z_SYNC_FLUSH, () => {
      const out: Buffer[] = [];
      for (let c = i.read() as Buffer | null; c !== null; c = i.read() as Buffer | null) out.push(c);
      resolve(Buffer.concat(out));
    });
  });
}

/** a name/value block written out field by field: 32-bit count, then length-prefixed names and values */
function rawBlock(pairs: [string, string][]): Buffer {
  const u32 = (n: number): string => n.toString(16).padStart(8, '0');
  let h = u32(pairs.length);
  for (const [k, v] of pairs) h += u32(k.length) + Buffer.from(k).toString('hex') + u32(v.length) + Buffer.from(v).toString('hex');
  return hex(h);
}

describe('SPDY/3.1 frames', () => {
  it('the header dictionary is the spec\'s: 1423 bytes, and its Adler-32 is what a zlib stream seeded with it names', () => {
    assert.equal(headerDictionary.length, 1423);
    assert.equal(headerDictionary.subarray(0, 11).toString('hex'), '000000076f7074696f6e73'); // "options"
    assert.ok(headerDictionary.subarray(-20).toString('latin1').endsWith(',utf-,*,enq=0.'));
    // a zlib stream with a preset dictionary carries its Adler-32 after the two header bytes
    const z = zlib.deflateSync(Buffer.from('x'), { dictionary: headerDictionary });
    assert.equal(z.subarray(2, 6).toString('hex'), 'e3c6a7c2');
  });

  it('parses control and data frames written by hand, across chunk boundaries', () => {
    const bytes = Buffer.concat([
      hex('8003 0006 00 000004 00000001'), // PING id 1
      hex('00000003 01 000005'), Buffer.from('hello'), // DATA stream 3, FIN, "hello"
      hex('8003 0003 00 000008 00000005 00000005'), // RST_STREAM stream 5, CANCEL
      hex('8003 0004 00 00000c 00000001 00000007 00010000'), // SETTINGS: INITIAL_WINDOW_SIZE 65536
      hex('8003 0009 00 000008 00000001 00001000'), // WINDOW_UPDATE stream 1, +4096
      hex('8003 0007 00 000008 00000003 00000000'), // GOAWAY last 3, OK
    ]);
    const p = new FrameParser();
    const frames: Frame[] = [];
    for (let i = 0; i < bytes.length; i += 3) frames.push(...p.push(bytes.subarray(i, i + 3)));
    assert.deepEqual(frames, [
      { type: 'ping', id: 1 },
      { type: 'data', streamId: 3, fin: true, data: Buffer.from('hello') },
      { type: 'rst_stream', streamId: 5, status: RstStatus.Cancel },
      { type: 'settings', clear: false, entries: [{ flags: 0, id: 7, value: 65536 }] },
      { type: 'window_update', streamId: 1, delta: 4096 },
      { type: 'goaway', lastGoodStreamId: 3, status: 0 },
    ]);
  });

  it('joins a large frame sent in small pieces, and splits many frames sent in one piece', () => {
    const body = Buffer.alloc(1024 * 1024 + 3, 7);
    const p = new FrameParser();
    const wire = dataFrame(1, body);
    const frames: Frame[] = [];
    for (let i = 0; i < wire.length; i += 1000) frames.push(...p.push(wire.subarray(i, i + 1000)));
    assert.equal(frames.length, 1);
    assert.ok((frames[0] as { data: Buffer }).data.equals(body));
    const many = new FrameParser().push(Buffer.concat(Array.from({ length: 50 }, (_, i) => pingFrame(2 * i + 1))));
    assert.deepEqual(many.map((f) => (f as { id: number }).id), Array.from({ length: 50 }, (_, i) => 2 * i + 1));
  });

  it('parses SYN_STREAM: stream id, associated id, priority, flags and the header block', () => {
    const block = hex('0102030405');
    const f = new FrameParser().push(Buffer.concat([hex('8003 0001 03 00000f 00000007 00000000 60 00'), block]));
    assert.deepEqual(f, [{ type: 'syn_stream', streamId: 7, associatedTo: 0, priority: 3, fin: true, unidirectional: true, headerBlock: block }]);
  });

  it('builds frames byte for byte as the spec lays them out', () => {
    assert.deepEqual(pingFrame(1), hex('8003 0006 00 000004 00000001'));
    assert.deepEqual(rstStreamFrame(5, RstStatus.Cancel), hex('8003 0003 00 000008 00000005 00000005'));
    assert.deepEqual(goAwayFrame(3, 1), hex('8003 0007 00 000008 00000003 00000001'));
    assert.deepEqual(windowUpdateFrame(1, 4096), hex('8003 0009 00 000008 00000001 00001000'));
    assert.deepEqual(settingsFrame([{ id: 4, value: 100 }]), hex('8003 0004 00 00000c 00000001 00000004 00000064'));
    assert.deepEqual(dataFrame(3, Buffer.from('hi'), true), hex('00000003 01 000002 6869'));
    assert.deepEqual(dataFrame(3, Buffer.alloc(0)), hex('00000003 00 000000'));
    assert.deepEqual(synReplyFrame(9, hex('aabb')), hex('8003 0002 00 000006 00000009 aabb'));
    assert.deepEqual(synStreamFrame(1, hex('cc'), { priority: 2 }), hex('8003 0001 00 00000b 00000001 00000000 40 00 cc'));
  });

  it('encodes and decodes name/value blocks; several values of one name are joined with NUL', () => {
    const raw = rawBlock([['port', '8000'], ['streamtype', 'data']]);
    const h = decodeHeaderBlock(raw);
    assert.deepEqual([...h], [['port', ['8000']], ['streamtype', ['data']]]);
    assert.deepEqual(encodeHeaderBlock(h), raw);
    assert.deepEqual(decodeHeaderBlock(rawBlock([['accept', 'a\0b']])).get('accept'), ['a', 'b']);
    assert.deepEqual(encodeHeaderBlock(new Map()), hex('00000000'));
  });

  it('refuses what is not SPDY/3: another version, short or oversized control frames, unknown types, bad header blocks', () => {
    const bad = (b: Buffer): void => assert.throws(() => new FrameParser().push(b), SpdyProtocolError);
    bad(hex('8002 0006 00 000004 00000001')); // SPDY/2
    bad(hex('8003 0006 00 000003 000000')); // PING of 3 bytes
    bad(hex('8003 0003 00 000004 00000001')); // RST_STREAM without a status
    bad(hex('8003 0005 00 000000')); // type 5 (NOOP) is gone in SPDY/3
    bad(hex('8003 0001 00 ffffff')); // a 16 MiB control frame is refused from its header
    bad(hex('8003 0004 00 000008 00000002 00000000')); // SETTINGS whose count disagrees with its length
    assert.throws(() => decodeHeaderBlock(rawBlock([['Port', '1']])), /not lower-case/);
    assert.throws(() => decodeHeaderBlock(rawBlock([['port', '1'], ['port', '2']])), /appears twice/);
    assert.throws(() => decodeHeaderBlock(hex('00000001 00000004 706f')), /ends inside/);
    assert.throws(() => decodeHeaderBlock(Buffer.concat([rawBlock([]), hex('00')])), /after its 0 headers/);
  });

  it('keeps one zlib context per direction: a second block decodes only against the first', async () => {
    const peer = compressor();
    const codec = new HeaderCodec();
    const first = await peer(rawBlock([['streamtype', 'error'], ['port', '8000'], ['requestid', '0']]));
    const second = await peer(rawBlock([['streamtype', 'data'], ['port', '8000'], ['requestid', '0']]));
    assert.equal(first.subarray(2, 6).toString('hex'), 'e3c6a7c2'); // the first block opens the stream
    assert.deepEqual([...await codec.decompress(first)], [['streamtype', ['error']], ['port', ['8000']], ['requestid', ['0']]]);
    assert.deepEqual((await codec.decompress(second)).get('streamtype'), ['data']);
    // and what it compresses, a peer decompresses in order
    const peerIn = decompressor();
    const a = await codec.compress(new Map([['x', ['1']]]));
    const b = await codec.compress(new Map());
    assert.deepEqual(await peerIn(a), rawBlock([['x', '1']]));
    assert.deepEqual(await peerIn(b), hex('00000000'));
    await assert.rejects(new HeaderCodec().decompress(hex('deadbeef')), SpdyProtocolError);
    codec.close();
  });
});

class FakeTransport implements SpdyTransport {
  readonly parser = new FrameParser();
  frames: Frame[] = [];
  closed = false;
  paused = false;
  send(bytes: Buffer): boolean {
    this.frames.push(...this.parser.push(bytes));
    return true;
  }
  onDrain(): void { /* never congested */ }
  pause(): void { this.paused = true; }
  resume(): void { this.paused = false; }
  close(): void { this.closed = true; }
}

describe('SPDY server session', () => {
  const open = (setup: (s: SpdyStream) => void = () => undefined): { t: FakeTransport; session: SpdySession; streams: SpdyStream[]; closedWith: (Error | undefined)[] } => {
    const t = new FakeTransport();
    const streams: SpdyStream[] = [];
    const closedWith: (Error | undefined)[] = [];
    const session = new SpdySession(t, {
      vet: (h) => (h.get('port') ? undefined : '"port" header is required'),
      onStream: (s) => {
        streams.push(s);
        setup(s);
      },
      onClose: (e) => closedWith.push(e),
    });
    return { t, session, streams, closedWith };
  };

  it('answers a stream with SYN_REPLY, carries data both ways, echoes pings and ends streams with FIN', async () => {
    const got: Buffer[] = [];
    let ended = false;
    const { t, session, streams } = open((s) => {
      s.onData = (b) => got.push(b);
      s.onEnd = () => { ended = true; };
    });
    const peer = compressor();
    const peerIn = decompressor();
    const block = await peer(rawBlock([['port', '8000'], ['streamtype', 'data']]));
    session.receive(Buffer.concat([synStreamFrame(1, block), dataFrame(1, Buffer.from('ping?')), pingFrame(3)]));
    await session.whenIdle();
    assert.equal(streams.length, 1);
    const s = streams[0] as SpdyStream;
    assert.equal(s.header('port'), '8000');
    const reply = t.frames[0];
    assert.equal(reply?.type, 'syn_reply');
    assert.deepEqual(await peerIn((reply as { headerBlock: Buffer }).headerBlock), hex('00000000'));
    assert.deepEqual(t.frames[1], { type: 'ping', id: 3 });
    session.receive(dataFrame(1, Buffer.from('more'), true));
    await session.whenIdle();
    assert.equal(Buffer.concat(got).toString(), 'ping?more');
    assert.ok(ended);
    s.write(Buffer.alloc(150 * 1024, 1));
    s.end();
    const data = t.frames.filter((f) => f.type === 'data') as Extract<Frame, { type: 'data' }>[];
    assert.deepEqual(data.map((f) => f.data.length), [65536, 65536, 22528, 0]);
    assert.ok(data[3]?.fin);
    assert.equal(session.openStreams, 0);
  });

  it('refuses streams the caller vets out, and stream ids that are even or go backwards, with RST_STREAM', async () => {
    const { t, session, streams } = open();
    const peer = compressor();
    session.receive(synStreamFrame(1, await peer(rawBlock([['streamtype', 'data']]))));
    session.receive(synStreamFrame(2, await peer(rawBlock([['port', '1']]))));
    session.receive(synStreamFrame(5, await peer(rawBlock([['port', '1']]))));
    session.receive(synStreamFrame(3, await peer(rawBlock([['port', '1']]))));
    await session.whenIdle();
    assert.deepEqual(t.frames.filter((f) => f.type === 'rst_stream'), [
      { type: 'rst_stream', streamId: 1, status: RstStatus.Cancel },
      { type: 'rst_stream', streamId: 2, status: RstStatus.ProtocolError },
      { type: 'rst_stream', streamId: 3, status: RstStatus.ProtocolError },
    ]);
    assert.deepEqual(streams.map((s) => s.id), [5]);
    assert.equal(t.closed, false);
  });

  it('a client RST_STREAM ends that stream only', async () => {
    const { t, session, streams } = open();
    const peer = compressor();
    session.receive(synStreamFrame(1, await peer(rawBlock([['port', '1']]))));
    session.receive(synStreamFrame(3, await peer(rawBlock([['port', '2']]))));
    await session.whenIdle();
    let reset = 0;
    for (const s of streams) s.onReset = () => reset++;
    session.receive(rstStreamFrame(1, RstStatus.Cancel));
    await session.whenIdle();
    assert.equal(reset, 1);
    assert.equal(session.openStreams, 1);
    assert.equal(t.closed, false);
  });

  it('a malformed frame ends the connection with GOAWAY (protocol error) and resets every stream', async () => {
    const { t, session, streams, closedWith } = open();
    const peer = compressor();
    session.receive(synStreamFrame(1, await peer(rawBlock([['port', '1']]))));
    await session.whenIdle();
    let reset = false;
    (streams[0] as SpdyStream).onReset = () => { reset = true; };
    session.receive(hex('8002 0006 00 000004 00000001'));
    await session.whenIdle();
    assert.deepEqual(t.frames.at(-1), { type: 'goaway', lastGoodStreamId: 1, status: 1 });
    assert.ok(t.closed);
    assert.ok(reset);
    assert.ok(closedWith[0] instanceof SpdyProtocolError);
  });

  it('a header block that is not zlib data ends the connection, not the process', async () => {
    const { t, session, closedWith } = open();
    session.receive(synStreamFrame(1, hex('00112233445566778899')));
    await session.whenIdle();
    assert.equal(t.frames.at(-1)?.type, 'goaway');
    assert.ok(t.closed);
    assert.match(String(closedWith[0]?.message), /zlib/);
  });
});
