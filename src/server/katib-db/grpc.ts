// Unary gRPC over HTTP/2 cleartext (h2c with prior knowledge, what grpc's insecure channels speak),
// with node:http2: a request is one length-prefixed message, a reply one message and the trailers
// grpc-status / grpc-message. Enough for Katib's DBManager; no streaming, no compression.
import { constants, createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';

/** gRPC status codes (grpc/doc/statuscodes.md) */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAUTHENTICATED: 16,
} as const;

/** an error a handler throws to answer with that status and message */
export class GrpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** who is calling: the connection's source address (IPv4 without the `::ffff:` prefix), and the bearer token of its `authorization` metadata */
export interface CallInfo {
  peer: string;
  token?: string;
}

/** a method: request bytes in, reply bytes out */
export type UnaryHandler = (request: Buffer, call: CallInfo) => Promise<Buffer>;

/** the largest request accepted; grpc's own default receive limit */
const maxMessageBytes = 4 * 1024 * 1024;

/** grpc-message is percent-encoded outside printable ASCII (and `%` itself) */
export function encodeGrpcMessage(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** the one message of a unary request body: 1 byte compressed flag, 4 bytes big-endian length */
export function unframe(body: Buffer): Buffer {
  if (body.length < 5) throw new GrpcError(GrpcStatus.INTERNAL, `request body has ${body.length} bytes; a gRPC message needs at least 5`);
  if (body[0] !== 0) throw new GrpcError(GrpcStatus.UNIMPLEMENTED, 'compressed requests are not supported; send without grpc-encoding');
  const len = body.readUInt32BE(1);
  if (body.length !== 5 + len) throw new GrpcError(GrpcStatus.INTERNAL, `request body has ${body.length - 5} message bytes, its frame says ${len}; a unary call carries exactly one message`);
  return body.subarray(5);
}

export function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

function trailersOnly(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': encodeGrpcMessage(message) }, { endStream: true });
}

async function serve(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, methods: Map<string, UnaryHandler>, log?: (m: string) => void): Promise<void> {
  const path = String(headers[':path'] ?? '');
  const type = String(headers['content-type'] ?? '');
  if (headers[':method'] !== 'POST' || !/^application\/grpc(\+proto)?(;|$)/.test(type)) {
    // not a gRPC client (a browser, curl): say what this port is
    stream.respond({ ':status': 415, 'content-type': 'text/plain' });
    stream.end('this port serves gRPC (Katib DBManager, api.v1.beta1.DBManager); use a gRPC client\n');
    return;
  }
  const handler = methods.get(path);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 5 + maxMessageBytes) return trailersOnly(stream, GrpcStatus.RESOURCE_EXHAUSTED, `request larger than ${maxMessageBytes} bytes`);
    chunks.push(c);
  }
  if (!handler) return trailersOnly(stream, GrpcStatus.UNIMPLEMENTED, `unknown method ${path}`);
  let reply: Buffer;
  try {
    const peer = (stream.session?.socket?.remoteAddress ?? '').replace(/^::ffff:/, '');
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(headers.authorization ?? ''));
    reply = await handler(unframe(Buffer.concat(chunks)), { peer, ...(bearer ? { token: bearer[1] as string } : {}) });
  } catch (e) {
    if (e instanceof GrpcError) return trailersOnly(stream, e.code, e.message);
    log?.(`katib-db-manager: ${path}: ${(e as Error).stack ?? String(e)}`);
    return trailersOnly(stream, GrpcStatus.INTERNAL, (e as Error).message);
  }
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' }));
  stream.end(frame(reply));
}

/** an h2c server answering the given methods (keys are `/package.Service/Method`) */
export function grpcServer(methods: Record<string, UnaryHandler>, log?: (m: string) => void): Http2Server {
  const table = new Map(Object.entries(methods));
  const server = createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => { /* the client went away; nothing to answer */ });
    serve(stream, headers, table, log).catch((e: unknown) => {
      log?.(`katib-db-manager: ${(e as Error).message}`);
      if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    });
  });
  server.on('sessionError', () => { /* a broken connection ends itself */ });
  return server;
}
