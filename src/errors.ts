/**
 * Services throw AppError with a closed code; one table maps codes to HTTP status.
 * The HTTP layer is the only place that knows about status codes.
 */

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export const ERROR_STATUS = {
  validation: 422,
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  unavailable: 503,
  upstream: 502,
  timeout: 504,
  internal: 500,
  // A route a client library calls that this service knows but does not serve (the xpander internal API, issue 25).
  not_implemented: 501,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * What an error tells the operator but not the caller (a configured URL, the cause of an outage): logged at warn by
 * whoever answers the caller (`logOperatorDetail`). Plain strings only, already free of user info, queries and secrets.
 */
export interface OperatorDetail {
  message: string;
  fields: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly issues?: ValidationIssue[];
  /** Seconds, for 429 and 503 answers. */
  readonly retryAfter?: number;
  /** For the service log only; `message` is what the caller sees. */
  readonly operatorDetail?: OperatorDetail;

  constructor(code: ErrorCode, message: string, opts: { issues?: ValidationIssue[]; retryAfter?: number; cause?: unknown; operatorDetail?: OperatorDetail } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.issues = opts.issues;
    this.retryAfter = opts.retryAfter;
    this.operatorDetail = opts.operatorDetail;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  static notFound(kind: string): AppError {
    return new AppError('not_found', `${kind} not found`);
  }

  /** A single 422 issue, e.g. `AppError.invalid(['body','name'], 'Agent name already exists')`. */
  static invalid(loc: (string | number)[], msg: string, type = 'value_error'): AppError {
    const text = type === 'value_error' && !msg.startsWith('Value error') ? `Value error, ${msg}` : msg;
    return new AppError('validation', msg, { issues: [{ loc, msg: text, type }] });
  }

  static validation(issues: ValidationIssue[]): AppError {
    return new AppError('validation', issues[0]?.msg ?? 'Validation error', { issues });
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** Causes whose operator detail was logged: requests that waited on one failed fetch log it once. */
const loggedCauses = new WeakSet<object>();

/**
 * Logs an AppError's operator detail at warn, once per failure (per cause). Called where an error is turned into an
 * answer (the HTTP error handler, the webhook fast lane, the inbound A2A and MCP handlers), with their logger:
 * services have none, and the error carries what the log needs.
 */
export function logOperatorDetail(log: { warn(fields: object, message: string): void }, e: unknown, bindings: Record<string, unknown> = {}): void {
  if (!isAppError(e) || !e.operatorDetail) return;
  const key = typeof e.cause === 'object' && e.cause !== null ? e.cause : e;
  if (loggedCauses.has(key)) return;
  loggedCauses.add(key);
  log.warn({ ...bindings, ...e.operatorDetail.fields }, e.operatorDetail.message);
}
