// Request bodies: JSON or YAML, with a size limit; responses as JSON or YAML.
import type { IncomingMessage, ServerResponse } from 'node:http';
import YAML from 'yaml';
import { ApiError, StatusReason } from '../api/errors.js';
import { decodeProtobufObject, isProtobufMediaType } from '../api/protobuf.js';

export const maxBodyBytes = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBodyBytes) throw new ApiError(StatusReason.RequestEntityTooLarge, `the request body is ${declared} bytes; the limit is ${maxBodyBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new ApiError(StatusReason.RequestEntityTooLarge, `the request body is over the limit of ${maxBodyBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses a body by its content type; YAML is accepted wherever JSON is, and Kubernetes' protobuf for
 * its own kinds (`into`: the kind the path serves, see src/api/protobuf.ts).
 */
export function parseBody(buf: Buffer, contentType: string | undefined, into?: { apiVersion: string; kind: string }): unknown {
  if (isProtobufMediaType(contentType)) return decodeProtobufObject(buf, into);
  const text = buf.toString('utf8');
  if (!text.trim()) throw new ApiError(StatusReason.BadRequest, 'the request body is empty');
  const ct = (contentType ?? '').toLowerCase();
  const isYaml = ct.includes('yaml');
  if (!isYaml) {
    try {
      return JSON.parse(text);
    } catch (e) {
      if (ct.includes('json')) throw new ApiError(StatusReason.BadRequest, `the request body is not valid JSON: ${(e as Error).message}`);
    }
  }
  // a repeated key is not a syntax error: fieldValidation decides (src/server/kube/fields.ts), the last one wins
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: false });
  if (docs.length !== 1) throw new ApiError(StatusReason.BadRequest, `the request body must hold exactly one object; it holds ${docs.length} YAML documents`);
  const doc = docs[0] as YAML.Document;
  if (doc.errors.length) {
    const err = doc.errors[0] as YAML.YAMLError;
    const line = err.linePos?.[0]?.line;
    throw new ApiError(StatusReason.BadRequest, `the request body is not valid YAML${line ? ` (line ${line})` : ''}: ${err.message.split('\n')[0]}`);
  }
  return doc.toJS();
}

export function send(res: ServerResponse, code: number, body: unknown, accept?: string): void {
  const yaml = (accept ?? '').includes('yaml');
  const text = yaml ? YAML.stringify(body) : JSON.stringify(body);
  res.writeHead(code, { 'content-type': yaml ? 'application/yaml' : 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, e: unknown): void {
  const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, `internal error: ${(e as Error)?.message ?? String(e)}`);
  if (res.headersSent) {
    res.end();
    return;
  }
  send(res, err.code, err.toStatus());
}
