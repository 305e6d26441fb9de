import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, isAppError } from '../errors.js';

/**
 * One mapping from every error to the contract's bodies. Unknown errors become a 500 with the request id,
 * which the log line carries too; nothing internal reaches the client.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    const mapped = isAppError(err) ? err : fromFastify(err as FastifyError);
    const status = (err as FastifyError).statusCode;
    if (!mapped && status && status >= 400 && status < 500) {
      // A client error raised by Fastify or a plugin (405, 406, 403 from static files, ...): keep its status,
      // answer in the contract's shape with the standard reason phrase, never the plugin's internals.
      return reply.code(status).send({ detail: STATUS_CODES[status] ?? 'Bad Request' });
    }
    if (mapped) {
      if (mapped.retryAfter !== undefined) reply.header('retry-after', String(mapped.retryAfter));
      const detail = mapped.code === 'validation' ? mapped.issues : mapped.message;
      return reply.code(mapped.status).send({ detail });
    }
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ detail: 'Internal server error', request_id: request.id });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));
}

function fromFastify(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return AppError.validation([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return AppError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new AppError('too_large', 'Request too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media', 'Unsupported media type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('bad_request', 'Invalid content length');
  }
  if (err.statusCode === 413) return new AppError('too_large', 'Request too large');
  return undefined;
}
