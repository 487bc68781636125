// Errors as the KFP API answers them: google.rpc.Status-like JSON `{error, code, message, details}`
// with the HTTP status, or `{error_message, error_details}` from the upload endpoints.
import type { ServerResponse } from 'node:http';
import { ApiError } from '../../api/errors.js';

/** gRPC status codes by HTTP status, as grpc-gateway maps them back */
const grpcCodes: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 409: 6, 410: 9, 412: 9, 413: 3, 415: 3, 422: 3, 500: 13, 501: 12, 503: 14, 504: 4 };

export class KfpError extends Error {
  constructor(readonly http: number, message: string, readonly grpc = grpcCodes[http] ?? 2) {
    super(message);
    this.name = 'KfpError';
  }
}

export const badRequest = (msg: string): KfpError => new KfpError(400, msg);
export const notFound = (what: string, id: string): KfpError => new KfpError(404, `${what} ${JSON.stringify(id)} not found`);
export const conflict = (msg: string): KfpError => new KfpError(409, msg);
/** a request that is well-formed but not allowed in the object's state (FAILED_PRECONDITION) */
export const precondition = (msg: string): KfpError => new KfpError(400, msg, 9);

/** camelCase → snake_case for one name */
export const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A Skiff field path (`spec.parameters.x`, `spec.pipelineSpec.root.dag`) as the KFP request named
 * it (`runtime_config.parameters.x`, `pipeline_spec.root.dag`). IR fields keep their camelCase.
 */
export function kfpField(field: string, kind: string): string {
  let f = field.replace(/^spec\.?/, '');
  if (kind === 'Run') {
    f = f.replace(/^parameters\b/, 'runtime_config.parameters').replace(/^pipelineRoot\b/, 'runtime_config.pipeline_root');
  }
  const segs = f.split('.');
  const out: string[] = [];
  let keep = false;
  for (const s of segs) {
    out.push(keep ? s : snake(s));
    if (['pipelineSpec', 'platformSpec', 'parameters', 'labels', 'annotations', 'tags'].includes(s)) keep = true;
  }
  return out.join('.');
}

/** Skiff's errors in KFP's terms: a 422 with field causes becomes a 400 naming the request's fields. */
export function toKfpError(e: unknown): KfpError {
  if (e instanceof KfpError) return e;
  if (e instanceof ApiError) {
    const causes = e.details.causes ?? [];
    if (causes.length) {
      const kind = e.details.kind ?? '';
      const msg = causes.map((c) => `${c.field ? kfpField(c.field, kind) + ': ' : ''}${c.message}`).join('; ');
      return new KfpError(400, `Invalid input error: ${msg}`);
    }
    return new KfpError(e.code === 422 ? 400 : e.code, e.message);
  }
  return new KfpError(500, `internal error: ${(e as Error)?.message ?? String(e)}`);
}

function write(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendKfpError(res: ServerResponse, e: unknown, upload = false): void {
  const err = toKfpError(e);
  if (res.headersSent) {
    res.end();
    return;
  }
  if (upload) write(res, err.http, { error_message: err.message, error_details: err.message });
  else write(res, err.http, { error: err.message, code: err.grpc, message: err.message, details: [] });
}

export function sendJson(res: ServerResponse, body: unknown, code = 200): void {
  write(res, code, body);
}
