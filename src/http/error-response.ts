import { STATUS_CODES } from 'node:http';
import { AppError, isAppError } from '../errors.js';
import { nulTextError } from '../lib/nul-text.js';

/** Every JSON answer of ours carries this type; Fastify would append the charset to a bare `application/json`. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** An error as the contract answers it, independent of the transport that writes it. */
export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: { detail: unknown; request_id?: string };
}

/**
 * The one mapping from an error to the contract's status, headers and body, shared by the Fastify error handler
 * and the webhook fast lane so both answer byte for byte alike. `undefined` means an unknown error: the caller
 * logs it and answers `internalErrorResponse`, so nothing internal reaches the client.
 */
export function errorResponse(err: unknown): ErrorResponse | undefined {
  const mapped = isAppError(err) ? err : fromFastify(err as FrameworkError);
  const status = (err as FrameworkError | null)?.statusCode;
  if (!mapped && status && status >= 400 && status < 500) {
    // A client error raised by Fastify or a plugin (405, 406, 403 from static files, ...): keep its status,
    // answer in the contract's shape with the standard reason phrase, never the plugin's internals.
    return { status, headers: {}, body: { detail: STATUS_CODES[status] ?? 'Bad Request' } };
  }
  if (!mapped) return undefined;
  const headers: Record<string, string> = mapped.retryAfter !== undefined ? { 'retry-after': String(mapped.retryAfter) } : {};
  return { status: mapped.status, headers, body: { detail: mapped.code === 'validation' ? mapped.issues : mapped.message } };
}

export function internalErrorResponse(requestId: string): ErrorResponse {
  return { status: 500, headers: {}, body: { detail: 'Internal server error', request_id: requestId } };
}

/** Malformed JSON, whichever parser found it (Fastify's, or the fast lane's). */
export function invalidJsonError(): AppError {
  return AppError.validation([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]);
}

export function tooLargeError(): AppError {
  return new AppError('too_large', 'Request too large');
}

/** A request body whose length differs from its content-length header (Fastify's FST_ERR_CTP_INVALID_CONTENT_LENGTH). */
export function invalidContentLengthError(): AppError {
  return new AppError('bad_request', 'Invalid content length');
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
}

function fromFastify(err: FrameworkError | null | undefined): AppError | undefined {
  switch (err?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJsonError();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return AppError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return tooLargeError();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media', 'Unsupported media type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidContentLengthError();
    // PostgreSQL refusing a value the caller sent (NUL in text, a character the encoding lacks): the statement
    // failed, its transaction rolled back; the caller's mistake, not ours.
    case '22021':
    case '22P05':
      return nulTextError();
    // An index row over PostgreSQL's size limit (a huge value in an indexed column).
    case '54000':
      return tooLargeError();
  }
  if (err?.statusCode === 413) return tooLargeError();
  return undefined;
}
