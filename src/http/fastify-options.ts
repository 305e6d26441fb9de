import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from '../lib/logger.js';
import { newId } from '../lib/ids.js';

/** Options shared by both listeners: our logger, UUIDv7 request ids, per-request logs only at debug. */
export function createFastify(log: Logger, opts: { bodyLimit?: number } = {}): FastifyInstance {
  const verbose = log.isLevelEnabled('debug');
  return Fastify({
    loggerInstance: log as FastifyBaseLogger,
    genReqId: () => newId(),
    requestIdHeader: false,
    bodyLimit: opts.bodyLimit ?? 10 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: !verbose }),
  }) as unknown as FastifyInstance;
}
