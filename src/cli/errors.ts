/** Error types the CLI turns into one clear line (never a stack trace). */

/** A Kubernetes `Status` object as returned by the server on failures. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}
export interface Status {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
}

/** An error the user caused or should fix; printed as `error: <message>`. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad command line: printed as `error: <message>` plus a hint to `--help`. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The server answered with an error (a `Status`, or something we made into one). */
export class ApiError extends Error {
  readonly status: Status;
  readonly code: number;
  constructor(status: Status, httpCode: number) {
    const code = typeof status.code === 'number' && status.code > 0 ? status.code : httpCode;
    const reason = status.reason || REASON_BY_CODE[code] || '';
    let message = status.message?.trim() ?? '';
    if (!message) {
      const causes = (status.details?.causes ?? [])
        .map((c) => [c.field, c.message].filter(Boolean).join(': '))
        .filter(Boolean);
      message = causes.length > 0 ? causes.join(', ') : `the server responded with HTTP ${code}`;
    }
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = { ...status, reason, message, code };
  }
  get reason(): string {
    return this.status.reason ?? '';
  }
  get isNotFound(): boolean {
    return this.code === 404;
  }
  /** kubectl style: `Error from server (NotFound): jobs.batch "x" not found`. */
  format(): string {
    const oneLine = this.message.replace(/\s*\n\s*/g, '; ');
    return this.reason ? `Error from server (${this.reason}): ${oneLine}` : `Error from server: ${oneLine}`;
  }
}

/** The server could not be reached at all. */
export class ConnectionError extends CliError {
  constructor(readonly server: string, readonly detail: string) {
    super(
      `cannot reach the Skiff server at ${server} (${detail}); start it with 'skiff up' or set SKIFF_SERVER`,
    );
    this.name = 'ConnectionError';
  }
}

/** One line for any error: what the user sees after a failed command. */
export function formatError(err: unknown): string {
  if (err instanceof ApiError) return err.format();
  if (err instanceof CliError) return `error: ${oneLine(err.message)}`;
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'ENOTDIR') {
      return `error: ${oneLine(err.message)}`;
    }
    return `error: ${oneLine(err.message || String(err))}`;
  }
  return `error: ${oneLine(String(err))}`;
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, '; ').trim();
}

export function isAbortError(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err.name === 'AbortError' || (err as NodeJS.ErrnoException).code === 'ABORT_ERR' || err.name === 'TimeoutError')
  );
}
