import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyServerFactory } from 'fastify';
import type { Logger } from '../lib/logger.js';
import { newId } from '../lib/ids.js';
import { jsonTooDeep, jsonTooDeepError } from './json-depth.js';

/** Set on every answer of both listeners, whoever writes it (routes, errors, 404s, static files, the fast lane). */
export const NOSNIFF: readonly [string, string] = ['x-content-type-options', 'nosniff'];

/** Default deepest JSON nesting of a request body (AGENTRY_MAX_JSON_DEPTH). */
export const DEFAULT_MAX_JSON_DEPTH = 256;

/**
 * Longest path parameter the router accepts. A task id is up to 128 printable characters (docs/contract.md#task-ids),
 * which percent-encoded UTF-8 makes up to 1,536; Fastify's default of 100 answered valid ids 414 (issue 20). Longer
 * ones are answered 404 like any id that names nothing.
 */
export const MAX_PARAM_LENGTH = 2048;

/**
 * Default longest time a client may take to send one whole request, headers and body (AGENTRY_REQUEST_TIMEOUT_MS):
 * Node's own default, which Fastify turns off (0). Without it a body that never completes held its connection for
 * as long as the client liked, on both listeners; enough of them exhaust the process's file descriptors. The answer's
 * own time (a synchronous invocation) is not counted: it starts once the request has arrived.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

export interface FastifyAppOptions {
  bodyLimit?: number;
  serverFactory?: FastifyServerFactory;
  maxJsonDepth?: number;
  requestTimeoutMs?: number;
}

/** Options shared by both listeners: our logger, UUIDv7 request ids, per-request logs only at debug. */
export function createFastify(log: Logger, opts: FastifyAppOptions = {}): FastifyInstance {
  const verbose = log.isLevelEnabled('debug');
  const maxDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const inner = opts.serverFactory ?? defaultServerFactory;
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    genReqId: () => newId(),
    requestIdHeader: false,
    bodyLimit: opts.bodyLimit ?? 10 * 1024 * 1024,
    requestTimeout: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    clientErrorHandler,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    logController: new LogController({ disableRequestLogging: !verbose }),
    // The header goes on the raw response before Fastify sees the request: one constant, no hook, and it is on
    // the answers Fastify writes without hooks too (framework errors, client errors).
    serverFactory: (handler, o) =>
      inner((req, res) => {
        res.setHeader(NOSNIFF[0], NOSNIFF[1]);
        handler(req, res);
      }, o),
    // A path Fastify's router cannot take (a parameter over MAX_PARAM_LENGTH, a malformed `%` escape) names no
    // resource: 404 in the contract's shape instead of Fastify's own 414/400 body.
    frameworkErrors: (err, _request, reply) => {
      const code = (err as { code?: string }).code;
      const r = reply as unknown as FastifyReply;
      if (code === 'FST_ERR_MAX_PARAM_LENGTH' || code === 'FST_ERR_BAD_URL') return r.code(404).send({ detail: 'Not Found' });
      return r.code(400).send({ detail: 'Bad Request' });
    },
  }) as unknown as FastifyInstance;
  // `curl -X POST -H 'content-type: application/json'` with no body is common: treat it as no body (a route
  // that needs one answers 422 missing) instead of Fastify's 400. Parsing itself stays Fastify's, with its
  // prototype-poisoning protection; a body nested deeper than the limit is refused before it is parsed.
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text === '' || text.trim() === '') return done(null, undefined);
    if (jsonTooDeep(text, maxDepth)) return done(jsonTooDeepError(maxDepth), undefined);
    return parseJson(request, text, done);
  });
  return app;
}

/** What Fastify does without a `serverFactory` (HTTP/1): the server and its timeouts. */
const defaultServerFactory: FastifyServerFactory = (handler, opts) => {
  const server = createServer(handler);
  applyFastifyTimeouts(server, opts as unknown as Record<string, unknown>);
  return server;
};

/** What Fastify sets on the HTTP/1 server it creates itself; it does not touch a server from `serverFactory`. */
export function applyFastifyTimeouts(server: Server, opts: Record<string, unknown>): void {
  server.keepAliveTimeout = opts.keepAliveTimeout as number;
  const requestTimeout = opts.requestTimeout as number;
  server.requestTimeout = requestTimeout;
  if (requestTimeout > 0) {
    // Node checks the two deadlines together and expects headers to be due no later than the whole request (its
    // constructor refuses otherwise); the check runs every `connectionsCheckingInterval` (read when listening starts),
    // so a short timeout is also checked more often than every 30 s.
    server.headersTimeout = Math.min(server.headersTimeout, requestTimeout);
    (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(30_000, Math.max(50, Math.floor(requestTimeout / 4)));
  }
  server.setTimeout(opts.connectionTimeout as number);
  const perSocket = opts.maxRequestsPerSocket as number;
  if (perSocket > 0) server.maxRequestsPerSocket = perSocket;
}

/**
 * Answers to requests Node's parser refused before Fastify saw them (a request not sent in time, headers too large,
 * a malformed request line): Fastify's own answers had its `{error, message, statusCode}` body and no nosniff
 * header; these are in the contract's shape.
 */
function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const reason = STATUS_CODES[status]!;
  const body = JSON.stringify({ detail: status === 408 ? 'Request not received in time' : reason });
  this.log.trace({ err }, 'client error');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `${NOSNIFF[0]}: ${NOSNIFF[1]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
