import type { FastifyInstance } from 'fastify';
import { logOperatorDetail } from '../errors.js';
import { errorResponse, internalErrorResponse } from './error-response.js';

/**
 * Fastify's side of the one error mapping (`errorResponse`). Unknown errors become a 500 with the request id,
 * which the log line carries too; nothing internal reaches the client. What an AppError says for the operator only
 * (its operator detail) goes to the log beside the request.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    logOperatorDetail(request.log, err);
    let answer = errorResponse(err);
    if (!answer) {
      request.log.error({ err }, 'unhandled error');
      answer = internalErrorResponse(request.id);
    }
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));
}
