// A closed-loop HTTP load generator: `concurrency` keep-alive connections, each sending the next
// request as soon as the last one is answered, for a fixed time. Reports throughput and latency
// percentiles; every response status other than 200 counts as an error.
//
// It speaks HTTP/1.1 over raw sockets with the request bytes built once, and reads only the status
// line and Content-Length of each answer (chunked answers are followed too), so that the load
// generator itself takes as little as possible of the CPU it shares with the servers it measures —
// as wrk or vegeta would, rather than a full HTTP client.
import { connect } from 'node:net';
import type { Socket } from 'node:net';

export interface LoadOptions {
  url: string;
  method?: string;
  /** the request body, or a function giving each request's (called a fixed number of times up front) */
  body?: Buffer | (() => Buffer);
  headers?: Record<string, string>;
  concurrency: number;
  durationMs: number;
  /** requests sent before measuring, per connection */
  warmup?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  /** the first error seen, for the report */
  firstError?: string;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function requestBytes(o: LoadOptions, body: Buffer | undefined): Buffer {
  const u = new URL(o.url);
  const headers: Record<string, string> = { host: u.host, ...(o.headers ?? {}) };
  if (body) headers['content-length'] = String(body.length);
  const head = `${o.method ?? (body ? 'POST' : 'GET')} ${u.pathname}${u.search} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

/** One keep-alive connection answering one request at a time. */
class Conn {
  private buf: Buffer = Buffer.alloc(0);
  private waiting: ((r: { status: number; body: Buffer }) => void) | undefined;
  private failing: ((e: Error) => void) | undefined;
  private readonly socket: Socket;

  constructor(host: string, port: number) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on('data', (d: Buffer) => this.onData(d));
    this.socket.on('error', (e) => this.failing?.(e));
    this.socket.on('close', () => this.failing?.(new Error('connection closed')));
  }

  send(req: Buffer): Promise<{ status: number; body: Buffer }> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failing = reject;
      this.socket.write(req);
    });
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buf.subarray(0, end).toString('latin1');
    const status = Number(head.slice(9, 12));
    const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
    let bodyStart = end + 4;
    let body: Buffer;
    if (cl) {
      const n = Number(cl[1]);
      if (this.buf.length < bodyStart + n) return;
      body = this.buf.subarray(bodyStart, bodyStart + n);
      this.buf = this.buf.subarray(bodyStart + n);
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const parts: Buffer[] = [];
      for (;;) {
        const le = this.buf.indexOf('\r\n', bodyStart);
        if (le < 0) return;
        const size = parseInt(this.buf.subarray(bodyStart, le).toString('latin1'), 16);
        if (this.buf.length < le + 2 + size + 2) return;
        if (size === 0) {
          this.buf = this.buf.subarray(le + 4);
          break;
        }
        parts.push(this.buf.subarray(le + 2, le + 2 + size));
        bodyStart = le + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      body = Buffer.alloc(0);
      this.buf = this.buf.subarray(bodyStart);
    }
    const w = this.waiting;
    this.waiting = undefined;
    this.failing = undefined;
    w?.({ status, body });
  }

  close(): void {
    this.socket.destroy();
  }
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const u = new URL(o.url);
  // the requests are built once; a body function gives up to 64 different ones, sent in turn
  const reqs = typeof o.body === 'function' ? Array.from({ length: 64 }, () => requestBytes(o, (o.body as () => Buffer)())) : [requestBytes(o, o.body)];
  let next = 0;
  const port = Number(u.port || 80);
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const warm = o.warmup ?? 5;
  const conns = Array.from({ length: o.concurrency }, () => new Conn(u.hostname, port));
  const once = async (c: Conn): Promise<void> => {
    const r = await c.send(reqs[next++ % reqs.length] as Buffer);
    if (r.status !== 200) {
      errors++;
      firstError ??= `HTTP ${r.status}: ${r.body.toString().slice(0, 300)}`;
    }
  };
  await Promise.all(conns.map(async (c) => {
    for (let i = 0; i < warm; i++) await once(c).catch(() => undefined);
  }));
  errors = 0;
  firstError = undefined;
  const start = performance.now();
  const end = start + o.durationMs;
  await Promise.all(conns.map(async (c) => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await once(c);
      } catch (e) {
        errors++;
        firstError ??= (e as Error).message;
        break;
      }
      lat.push(performance.now() - t);
    }
  }));
  const elapsed = performance.now() - start;
  for (const c of conns) c.close();
  lat.sort((a, b) => a - b);
  return { requests: lat.length, errors, rps: (lat.length * 1000) / elapsed, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), ...(firstError ? { firstError } : {}) };
}
