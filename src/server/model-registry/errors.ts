// Errors as the Model Registry answers them: upstream's `Error` schema, `{code, message}`, where
// `code` is the HTTP status text ("Bad Request", "Not Found", "Conflict") and the status is the
// HTTP one. Skiff's own store errors are mapped onto the same shape.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { ApiError } from '../../api/errors.js';

export class RegistryError extends Error {
  constructor(readonly http: number, message: string) {
    super(message);
    this.name = 'RegistryError';
  }
}

export const badRequest = (msg: string): RegistryError => new RegistryError(400, msg);
export const notFound = (msg: string): RegistryError => new RegistryError(404, msg);
export const conflict = (msg: string): RegistryError => new RegistryError(409, msg);

export function toRegistryError(e: unknown): RegistryError {
  if (e instanceof RegistryError) return e;
  if (e instanceof ApiError) {
    const causes = e.details.causes ?? [];
    const msg = causes.length ? causes.map((c) => `${c.field ? c.field + ': ' : ''}${c.message}`).join('; ') : e.message;
    return new RegistryError(e.code === 422 ? 400 : e.code, msg);
  }
  return new RegistryError(500, `internal error: ${(e as Error)?.message ?? String(e)}`);
}

function write(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendRegistryError(res: ServerResponse, e: unknown): void {
  const err = toRegistryError(e);
  if (res.headersSent) {
    res.end();
    return;
  }
  write(res, err.http, { code: STATUS_CODES[err.http] ?? String(err.http), message: err.message });
}

export function sendJson(res: ServerResponse, body: unknown, code = 200): void {
  write(res, code, body);
}
