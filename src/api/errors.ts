// Errors a user can act on. The server renders them as Kubernetes `Status` objects.

export interface FieldError {
  /** dotted path with indices, e.g. `spec.template.spec.containers[0].name` */
  field: string;
  /** Kubernetes cause reason: FieldValueRequired, FieldValueInvalid, FieldValueNotSupported, FieldValueDuplicate, FieldValueTooLong, FieldValueForbidden, FieldValueTypeInvalid */
  type: string;
  message: string;
}

export const StatusReason = {
  BadRequest: 'BadRequest',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Invalid: 'Invalid',
  Gone: 'Expired',
  MethodNotAllowed: 'MethodNotAllowed',
  NotAcceptable: 'NotAcceptable',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
  UnsupportedMediaType: 'UnsupportedMediaType',
  InternalError: 'InternalError',
  Timeout: 'Timeout',
  ServiceUnavailable: 'ServiceUnavailable',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

const codes: Record<StatusReason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Invalid: 422,
  Expired: 410,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  InternalError: 500,
  Timeout: 504,
  ServiceUnavailable: 503,
};

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: { reason: string; message: string; field: string }[];
  retryAfterSeconds?: number;
}

/** Thrown by the store, validation and the server; carries what a Kubernetes Status carries. */
export class ApiError extends Error {
  readonly reason: StatusReason;
  readonly code: number;
  readonly details: StatusDetails;
  /** a continue token the Status carries in its metadata (an expired list continue, as kube-apiserver answers) */
  continueToken?: string;

  constructor(reason: StatusReason, message: string, details: StatusDetails = {}) {
    super(message);
    this.name = 'ApiError';
    this.reason = reason;
    this.code = codes[reason];
    this.details = details;
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.continueToken ? { continue: this.continueToken } : {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      // an empty cause field is left out, as Kubernetes' JSON omits it
      details: this.details.causes ? { ...this.details, causes: this.details.causes.map(({ field, ...c }) => (field ? { ...c, field } : c)) } : this.details,
      code: this.code,
    };
  }

  static notFound(kind: string, group: string, name: string): ApiError {
    const res = group ? `${kind.toLowerCase()}s.${group}` : `${kind.toLowerCase()}s`;
    return new ApiError(StatusReason.NotFound, `${res} "${name}" not found`, { name, group, kind });
  }

  static invalid(kind: string, group: string, name: string, errs: FieldError[]): ApiError {
    const msg = `${kind}${group ? '.' + group : ''} "${name}" is invalid: ` + errs.map((e) => `${e.field}: ${e.message}`).join(', ');
    return new ApiError(StatusReason.Invalid, msg, {
      name,
      group,
      kind,
      causes: errs.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
    });
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof ApiError && e.reason === StatusReason.NotFound;
}
export function isConflict(e: unknown): boolean {
  return e instanceof ApiError && (e.reason === StatusReason.Conflict || e.reason === StatusReason.AlreadyExists);
}

export function isAlreadyExists(e: unknown): boolean {
  return e instanceof ApiError && e.reason === StatusReason.AlreadyExists;
}

/**
 * An error kube-apiserver answers as a bare 500 Status, with neither reason nor details: what its
 * handlers pass on unclassified (a strategic merge patch's missing merge key, an applied
 * configuration it cannot type). Clients print its message as is.
 */
export class UnclassifiedError extends ApiError {
  constructor(message: string) {
    super(StatusReason.InternalError, message);
  }

  override toStatus(): Record<string, unknown> {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, code: this.code };
  }
}
