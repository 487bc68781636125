// The server end of one SPDY/3.1 connection (spdy.ts has the frames). The client opens streams; each
// is vetted, answered with SYN_REPLY and handed to the caller, which reads and writes it. Frames are
// handled strictly in arrival order (header blocks share one zlib context), and a frame that breaks
// the protocol ends this connection with GOAWAY, never anything beyond it.
import type { Frame, SpdyHeaders } from './spdy.js';
import { FrameParser, GoAwayStatus, HeaderCodec, RstStatus, SpdyProtocolError, dataFrame, goAwayFrame, pingFrame, rstStreamFrame, synReplyFrame } from './spdy.js';

/** Where the connection's bytes go: a socket after an HTTP upgrade, or WebSocket messages. */
export interface SpdyTransport {
  /** false when the bytes are queued beyond the transport's comfort; `onDrain` fires when they are out */
  send(bytes: Buffer): boolean;
  onDrain(cb: () => void): void;
  /** stops and restarts reading from the client (a slow destination holds the sender back) */
  pause(): void;
  resume(): void;
  close(): void;
}

/** the largest DATA frame sent: a pod's 64 KiB reads go out whole */
const maxDataFrame = 64 * 1024;

export class SpdyStream {
  /** remote FIN seen */
  remoteEnded = false;
  /** FIN or RST sent */
  private localEnded = false;
  private resetDone = false;
  onData: (data: Buffer) => void = () => undefined;
  /** the client finished sending (FIN) */
  onEnd: () => void = () => undefined;
  /** the stream was reset by the client, or the connection is gone */
  onReset: () => void = () => undefined;

  constructor(readonly id: number, readonly headers: SpdyHeaders, private readonly session: SpdySession) {}

  header(name: string): string | undefined {
    return this.headers.get(name)?.[0];
  }

  get closed(): boolean {
    return this.resetDone || (this.localEnded && this.remoteEnded);
  }

  /** sends data; false when the transport is congested (wait for `session.onDrain`) */
  write(data: Buffer): boolean {
    if (this.localEnded || this.resetDone) return true;
    let ok = true;
    for (let at = 0; at < data.length; at += maxDataFrame) ok = this.session.send(dataFrame(this.id, data.subarray(at, at + maxDataFrame))) && ok;
    return ok;
  }

  /** half-closes this side (DATA with FIN) */
  end(): void {
    if (this.localEnded || this.resetDone) return;
    this.localEnded = true;
    this.session.send(dataFrame(this.id, Buffer.alloc(0), true));
    if (this.remoteEnded) this.session.forget(this);
  }

  /** ends the stream both ways (RST_STREAM) */
  reset(status: number = RstStatus.Cancel): void {
    if (this.resetDone) return;
    const wasOpen = !this.closed;
    this.resetDone = true;
    this.localEnded = true;
    if (wasOpen) this.session.send(rstStreamFrame(this.id, status));
    this.session.forget(this);
  }

  /** @internal the client reset it or the connection ended */
  remoteReset(): void {
    if (this.resetDone) return;
    this.resetDone = true;
    this.localEnded = true;
    this.onReset();
  }
}

export interface SpdySessionOptions {
  /** a reason to refuse a new stream (it is reset), or undefined to accept it */
  vet: (headers: SpdyHeaders) => string | undefined;
  onStream: (stream: SpdyStream) => void;
  /** the connection ended: every stream has been told */
  onClose?: (reason?: Error) => void;
  /** a stream refused or a protocol error, for the server's log */
  log?: (msg: string) => void;
}

export class SpdySession {
  private readonly parser = new FrameParser();
  private readonly codec = new HeaderCodec();
  private readonly streams = new Map<number, SpdyStream>();
  private lastStreamId = 0;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly drainWaiters: (() => void)[] = [];
  private pauses = 0;

  constructor(private readonly transport: SpdyTransport, private readonly opts: SpdySessionOptions) {
    transport.onDrain(() => {
      for (const cb of this.drainWaiters.splice(0)) cb();
    });
  }

  /** bytes from the client, in order */
  receive(chunk: Buffer): void {
    if (this.closed) return;
    let frames: Frame[];
    try {
      frames = this.parser.push(chunk);
    } catch (e) {
      this.fail(e as Error);
      return;
    }
    for (const f of frames) {
      this.chain = this.chain.then(() => (this.closed ? undefined : this.handle(f))).catch((e: Error) => this.fail(e));
    }
  }

  /** resolves once every frame received so far has been handled */
  async whenIdle(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.chain;
      await seen;
    } while (seen !== this.chain);
  }

  /** @internal */
  send(bytes: Buffer): boolean {
    if (this.closed) return true;
    return this.transport.send(bytes);
  }

  /** calls back once the transport has room again */
  onDrain(cb: () => void): void {
    this.drainWaiters.push(cb);
  }

  /** holds reading from the client until the matching `resume` */
  pause(): void {
    if (this.pauses++ === 0) this.transport.pause();
  }

  resume(): void {
    if (this.pauses > 0 && --this.pauses === 0) this.transport.resume();
  }

  /** @internal */
  forget(s: SpdyStream): void {
    if (this.streams.get(s.id) === s) this.streams.delete(s.id);
  }

  get openStreams(): number {
    return this.streams.size;
  }

  private async handle(f: Frame): Promise<void> {
    switch (f.type) {
      case 'syn_stream':
        return this.synStream(f);
      case 'data': {
        const s = this.streams.get(f.streamId);
        if (!s) return; // already reset here: its last frames may still be on the way
        if (s.remoteEnded) {
          s.reset(RstStatus.StreamAlreadyClosed);
          s.onReset();
          return;
        }
        if (f.data.length) s.onData(f.data);
        if (f.fin) this.remoteFin(s);
        return;
      }
      case 'rst_stream': {
        const s = this.streams.get(f.streamId);
        if (!s) return;
        this.streams.delete(s.id);
        s.remoteReset();
        return;
      }
      case 'ping':
        // the client's pings have odd ids; an even one would answer a ping this side never sends
        if (f.id % 2 === 1) this.send(pingFrame(f.id));
        return;
      case 'goaway':
        this.close();
        return;
      case 'headers':
      case 'syn_reply': {
        // decoded only to keep the shared zlib context in step; nothing here uses them
        await this.codec.decompress(f.headerBlock);
        if (f.type === 'headers' && f.fin) {
          const s = this.streams.get(f.streamId);
          if (s) this.remoteFin(s);
        }
        return;
      }
      case 'settings':
      case 'window_update':
        // Kubernetes' SPDY peers do no flow control; the transport's own back-pressure stands in
        return;
    }
  }

  private remoteFin(s: SpdyStream): void {
    s.remoteEnded = true;
    s.onEnd();
    if (s.closed) this.forget(s);
  }

  private async synStream(f: Extract<Frame, { type: 'syn_stream' }>): Promise<void> {
    const headers = await this.codec.decompress(f.headerBlock);
    if (f.streamId === 0 || f.streamId % 2 === 0 || f.streamId <= this.lastStreamId) {
      this.opts.log?.(`port-forward: stream id ${f.streamId} refused: client stream ids must be odd and increasing (last was ${this.lastStreamId})`);
      this.send(rstStreamFrame(f.streamId || 1, RstStatus.ProtocolError));
      return;
    }
    this.lastStreamId = f.streamId;
    const refusal = this.opts.vet(headers);
    if (refusal) {
      this.opts.log?.(`port-forward: stream ${f.streamId} refused: ${refusal}`);
      this.send(rstStreamFrame(f.streamId, RstStatus.Cancel));
      return;
    }
    const s = new SpdyStream(f.streamId, headers, this);
    this.streams.set(s.id, s);
    this.send(synReplyFrame(s.id, await this.codec.compress(new Map())));
    if (this.closed) return;
    this.opts.onStream(s);
    if (f.fin) this.remoteFin(s);
  }

  private fail(e: Error): void {
    if (this.closed) return;
    const protocol = e instanceof SpdyProtocolError;
    this.opts.log?.(`port-forward: ${protocol ? 'protocol error' : 'internal error'}, closing the connection: ${e.message}`);
    this.send(goAwayFrame(this.lastStreamId, protocol ? GoAwayStatus.ProtocolError : GoAwayStatus.InternalError));
    this.close(e);
  }

  /** ends the connection: the transport closes and every stream hears it */
  close(reason?: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of [...this.streams.values()]) s.remoteReset();
    this.streams.clear();
    this.codec.close();
    this.transport.close();
    this.opts.onClose?.(reason);
  }
}
