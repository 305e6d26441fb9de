import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parse as parseQuery } from 'fast-querystring';
import { parse as secureJsonParse } from 'secure-json-parse';
import type { FastifyServerFactory } from 'fastify';
import type { Container } from '../container.js';
import { logOperatorDetail } from '../errors.js';
import { newId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { WebhookForm } from '../webhooks/webhook-params.js';
import type { PublicBinding } from '../webhooks/webhook-receiver.service.js';
import {
  errorResponse,
  internalErrorResponse,
  invalidContentLengthError,
  invalidJsonError,
  JSON_CONTENT_TYPE,
  tooLargeError,
} from './error-response.js';
import { applyFastifyTimeouts, NOSNIFF } from './fastify-options.js';
import { jsonTooDeep, jsonTooDeepError } from './json-depth.js';
import { objectBody, precheckKey, runWebhook } from './webhook-transport.js';
import type { Principal } from '../auth/principal.js';

/**
 * The webhook listener's common case, a JSON POST to `/wh_<secret>` or `/`, answered on bare node:http: going
 * through Fastify costs ~26 us of CPU a request, a quarter of the accept budget (issue 9). Everything else (forms,
 * multipart, other types, /health, 404s) and every request once the app is closing is handed to Fastify as is.
 *
 * It answers exactly as the Fastify routes do: the same checks in the same order (credentials before the body),
 * the same body limit and JSON parser options, the same error mapping (`errorResponse`) and headers, including
 * the `connection: close` Fastify adds when a body cannot be read or parsed. Only requests it is sure to route
 * the way find-my-way would are taken: a secret of 1-100 URL-safe characters (longer ones go to Fastify), no
 * percent-encoding, no other path. test/webhooks/webhook-contract.test.ts runs one table of calls against the lane
 * and against the Fastify routes alone.
 */
export interface WebhookFastLane {
  /** Fastify's `serverFactory`: our handler first, Fastify's for whatever the lane does not take. */
  serverFactory: FastifyServerFactory;
  /** From Fastify's preClose: it then answers 503 with `connection: close`, so it gets every request. */
  close(): void;
}

/** `/wh_` and a secret of 1-100 URL-safe characters (`[A-Za-z0-9_-]`), as a loop: a regex test is ~2x its cost. */
export function isPublicPath(path: string): boolean {
  const n = path.length;
  if (n < 5 || n > 104 || !path.startsWith('/wh_')) return false;
  for (let i = 4; i < n; i++) {
    const c = path.charCodeAt(i);
    // 0-9, A-Z, a-z, '-', '_'
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95)) return false;
  }
  return true;
}
/** Only types Fastify's content-type parsing certainly reads as `application/json`, parameters or not. */
const JSON_TYPE = /^application\/json[ \t]*(?:;|$)/i;
/** What nearly every sender sends: compared as a string before the regex. */
const PLAIN_JSON = 'application/json';
/** Fastify's JSON parser as `createFastify` configures it: `__proto__` refused, `constructor` left alone. */
const JSON_PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'ignore' } as const;

export function createWebhookFastLane(c: Container): WebhookFastLane {
  let closing = false;
  const limit = c.config.maxBodyBytes;
  const maxDepth = c.config.maxJsonDepth;
  const verbose = c.log.isLevelEnabled('debug');
  const accepted: LaneSeries | undefined = c.metrics && {
    public: c.metrics.webhookSeries('public', '/wh_:secret', 200),
    key: c.metrics.webhookSeries('key', '/', 200),
  };

  const take = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (closing || req.method !== 'POST') return false;
    const type = req.headers['content-type'];
    if (type === undefined || (type !== PLAIN_JSON && !JSON_TYPE.test(type))) return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    let form: WebhookForm;
    if (path === '/') form = 'key';
    else if (isPublicPath(path)) form = 'public';
    else return false;
    // As find-my-way hands the query string to Fastify: an empty one is `{}`, repeated keys become arrays.
    const qs = q === -1 ? '' : url.slice(q + 1);
    const query: Record<string, unknown> = qs.length === 0 ? {} : parseQuery(qs);
    const requestId = verbose ? logRequest(c.log, req, res) : undefined;
    const started = c.metrics ? performance.now() : 0;
    serve(c, req, res, { form, secret: form === 'public' ? path.slice(4) : undefined, query, limit, maxDepth, requestId, started, accepted }).catch((err: unknown) => {
      // Only writing the answer itself can fail here; the process must not go down for it.
      c.log.error({ err }, 'webhook fast lane could not answer');
      res.destroy();
    });
    return true;
  };

  return {
    serverFactory: (fastify, opts) => {
      const server = createServer((req, res) => {
        if (!take(req, res)) fastify(req, res);
      });
      applyFastifyTimeouts(server, opts);
      return server;
    },
    close: () => {
      closing = true;
    },
  };
}

interface LaneRequest {
  form: WebhookForm;
  secret?: string;
  query: Record<string, unknown>;
  limit: number;
  maxDepth: number;
  /** Set at debug level only, where the request is logged under it, as Fastify does. */
  requestId?: string;
  /** performance.now() when the lane took the request, for the metrics (0 when they are off). */
  started: number;
  /** The metric series of 200 answers (undefined when the metrics are off). */
  accepted?: LaneSeries;
}

async function serve(c: Container, req: IncomingMessage, res: ServerResponse, r: LaneRequest): Promise<void> {
  let bodyFailed = false;
  try {
    let bound: PublicBinding | undefined;
    let caller: Principal | undefined;
    if (r.form === 'public') {
      const resolved = c.webhooks.resolvePublic(r.secret);
      bound = resolved instanceof Promise ? await resolved : resolved;
    } else caller = await precheckKey(c, req.headers, r.query);
    let parsed: unknown;
    try {
      parsed = parseJsonBody(await readBody(req, r.limit), r.maxDepth);
    } catch (e) {
      bodyFailed = true;
      throw e;
    }
    const reply = await runWebhook(c, { form: r.form, secret: r.secret, bound, caller, headers: req.headers, query: r.query, body: objectBody(parsed, false), files: [] });
    send(res, 200, reply.headers, reply.text);
    observe(c, r, 200);
  } catch (err) {
    logOperatorDetail(c.log, err, r.requestId ? { reqId: r.requestId } : {});
    let answer = errorResponse(err);
    if (!answer) {
      const request_id = r.requestId ?? newId();
      c.log.error({ err, request_id }, 'unhandled error');
      answer = internalErrorResponse(request_id);
    }
    // Fastify closes the connection after a body it could not read or parse: the client may still be sending.
    send(res, answer.status, bodyFailed ? { connection: 'close', ...answer.headers } : answer.headers, JSON.stringify(answer.body));
    observe(c, r, answer.status);
  }
}

/**
 * The same series the Fastify routes feed (installHttpMetrics): two in-memory updates after the answer is written.
 * A 200 goes to series bound once per form (`accepted`); other statuses are looked up by their labels.
 */
function observe(c: Container, r: LaneRequest, status: number): void {
  if (!c.metrics) return;
  const seconds = (performance.now() - r.started) / 1000;
  if (r.accepted && status === 200) return (r.form === 'key' ? r.accepted.key : r.accepted.public)(seconds);
  c.metrics.httpRequest('webhooks', 'POST', r.form === 'key' ? '/' : '/wh_:secret', status, seconds);
  c.metrics.webhookCall(r.form, status);
}

/** The metric series of each form's 200 answers. */
interface LaneSeries {
  public: (seconds: number) => void;
  key: (seconds: number) => void;
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, text: string): void {
  if (res.headersSent) return;
  // nosniff first: Fastify's answers carry it first too (set on the raw response before Fastify sees the request).
  res.writeHead(status, { [NOSNIFF[0]]: NOSNIFF[1], ...headers, 'content-type': JSON_CONTENT_TYPE, 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Fastify's raw body reading: the declared length is refused before reading, the received one while reading. */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLargeError());
  return new Promise((resolve, reject) => {
    let received = 0;
    const chunks: Buffer[] = [];
    const stop = () => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onEnd);
    };
    function onData(chunk: Buffer) {
      received += chunk.length;
      if (received > limit) {
        // The rest flows on unread; the answer closes the connection.
        stop();
        reject(tooLargeError());
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(err?: Error & { statusCode?: number }) {
      if (err != null) {
        stop();
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        reject(err);
        return;
      }
      // A complete request emits nothing more: its listeners are left to go with it (three removals a call saved).
      // A late error would find onEnd and settle nothing.
      if (!Number.isNaN(declared) && received !== declared) return reject(invalidContentLengthError());
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onEnd);
    req.resume();
  });
}

/** As `createFastify`'s JSON parser: an empty or blank body is no body; one nested too deep is refused unparsed. */
function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text === '' || text.trim() === '') return undefined;
  if (jsonTooDeep(text, maxDepth)) throw jsonTooDeepError(maxDepth);
  try {
    return secureJsonParse(text, JSON_PARSE_OPTIONS);
  } catch {
    throw invalidJsonError();
  }
}

/**
 * Fastify's own request log lines (at debug level only, see `createFastify`): the same messages, bindings and
 * fields, so a log reader cannot tell which path answered.
 */
function logRequest(log: Logger, req: IncomingMessage, res: ServerResponse): string {
  const id = newId();
  const logger = log.child({ reqId: id });
  const started = performance.now();
  logger.info({ req: { id, method: req.method, url: req.url } }, 'incoming request');
  const done = (err?: Error) => {
    res.removeListener('finish', done);
    res.removeListener('error', done);
    const responseTime = performance.now() - started;
    if (err) logger.error({ res: { statusCode: res.statusCode }, err, responseTime }, 'request errored');
    else logger.info({ res: { statusCode: res.statusCode }, responseTime }, 'request completed');
  };
  res.on('finish', done);
  res.on('error', done);
  return id;
}
