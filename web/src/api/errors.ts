// The server's errors as the dashboard shows them: Kubernetes' Status (reason, message, the fields at
// fault in details.causes) or the KFP API's {error_message}.

export interface Cause {
  field?: string;
  message?: string;
  reason?: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason: string = '',
    readonly causes: Cause[] = [],
  ) {
    super(message);
  }
  get notFound(): boolean {
    return this.code === 404;
  }
  get gone(): boolean {
    return this.code === 410;
  }
}

export function errorFromBody(code: number, body: unknown, fallback: string): ApiError {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (b.kind === 'Status') {
      const details = (b.details ?? {}) as { causes?: Cause[] };
      return new ApiError(typeof b.code === 'number' ? b.code : code, String(b.message ?? fallback), String(b.reason ?? ''), details.causes ?? []);
    }
    const msg = b.error_message ?? b.message ?? b.error;
    if (typeof msg === 'string') return new ApiError(code, msg);
  }
  return new ApiError(code, fallback);
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
