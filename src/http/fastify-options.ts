import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { Logger } from '../lib/logger.js';
import { newId } from '../lib/ids.js';

/** Options shared by both listeners: our logger, UUIDv7 request ids, per-request logs only at debug. */
export function createFastify(log: Logger, opts: { bodyLimit?: number; serverFactory?: FastifyServerFactory } = {}): FastifyInstance {
  const verbose = log.isLevelEnabled('debug');
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    genReqId: () => newId(),
    requestIdHeader: false,
    bodyLimit: opts.bodyLimit ?? 10 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: !verbose }),
    ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
  }) as unknown as FastifyInstance;
  // `curl -X POST -H 'content-type: application/json'` with no body is common: treat it as no body (a route
  // that needs one answers 422 missing) instead of Fastify's 400. Parsing itself stays Fastify's, with its
  // prototype-poisoning protection.
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    return parseJson(request, body as string, done);
  });
  return app;
}
