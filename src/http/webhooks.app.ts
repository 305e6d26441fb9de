import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../container.js';
import type { WebhookForm } from '../webhooks/webhook-params.js';
import type { PublicBinding } from '../webhooks/webhook-receiver.service.js';
import type { Principal } from '../auth/principal.js';
import { JSON_CONTENT_TYPE } from './error-response.js';
import { createFastify } from './fastify-options.js';
import { installErrorHandler } from './error-handler.js';
import { readMultipart } from './multipart.js';
import { createWebhookFastLane } from './webhook-fast-lane.js';
import { installHttpMetrics } from '../observability/metrics-http.js';
import { objectBody, precheckKey, runWebhook } from './webhook-transport.js';

/** Multipart text fields are parameters and context, not documents: 1 MB each is generous. */
const MAX_FIELD_BYTES = 1024 * 1024;

export interface WebhookAppOptions {
  /**
   * Default true. False builds the listener without the fast lane, so the Fastify routes answer every request:
   * the second implementation test/webhooks/webhook-contract.test.ts runs its table against. Not a setting: the
   * two answer alike (that table is the proof), so production always has the lane.
   */
  fastLane?: boolean;
}

/**
 * The webhook receiver: its own listener, so it can be exposed to the internet alone. It serves nothing but the
 * two invocation forms of spec 4.3 and 4.4 (and /health): no management route is reachable here.
 *
 * A JSON call (the common case) is answered by the fast lane before Fastify sees it (see webhook-fast-lane.ts);
 * the routes below serve the rest, and `inject`, identically.
 */
export async function buildWebhookApp(c: Container, opts: WebhookAppOptions = {}): Promise<FastifyInstance> {
  // JSON and form bodies are bounded apart from uploads: a 100 MiB prompt is not an upload (multipart.ts counts a
  // multipart body's text fields against the same limit).
  const { maxBodyBytes } = c.config;
  const lane = opts.fastLane === false ? undefined : createWebhookFastLane(c);
  const app = createFastify(c.log, { bodyLimit: maxBodyBytes, serverFactory: lane?.serverFactory, maxJsonDepth: c.config.maxJsonDepth, requestTimeoutMs: c.config.requestTimeoutMs });
  if (lane) app.addHook('preClose', async () => lane.close());
  installErrorHandler(app);
  if (c.metrics) installHttpMetrics(app, c.metrics, 'webhooks');
  await app.register(formbody, { bodyLimit: maxBodyBytes });
  await app.register(multipart, { limits: { fieldSize: MAX_FIELD_BYTES, fields: 1000, parts: 10_000 } });
  app.get('/health', async (_req, reply) => reply.type('application/json').send('"ok"'));

  // Credentials are checked before the body is parsed: a caller without them gets 401/403 (spec 7.2) whatever it sent.
  const bindings = new WeakMap<FastifyRequest, PublicBinding>();
  const callers = new WeakMap<FastifyRequest, Principal>();
  const resolvePublic = async (request: FastifyRequest) => {
    bindings.set(request, await c.webhooks.resolvePublic(secretOf(request)));
  };

  const handle = (form: WebhookForm) => async (request: FastifyRequest, reply: FastifyReply) => {
    const isForm = /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '');
    const { body, files } = request.isMultipart() ? await readMultipart(request, c) : { body: objectBody(request.body, isForm), files: [] };
    const answer = await runWebhook(c, { form, secret: secretOf(request), bound: bindings.get(request), caller: callers.get(request), headers: request.headers, query: queryOf(request), body, files });
    return reply.code(200).headers(answer.headers).type(JSON_CONTENT_TYPE).send(answer.text);
  };

  app.post('/wh_:secret', { onRequest: resolvePublic }, handle('public'));
  app.post(
    '/',
    {
      onRequest: async (request) => {
        const caller = await precheckKey(c, request.headers, queryOf(request));
        if (caller) callers.set(request, caller);
      },
    },
    handle('key'),
  );
  return app;
}

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return (request.query ?? {}) as Record<string, unknown>;
}

function secretOf(request: FastifyRequest): string | undefined {
  return (request.params as { secret?: string }).secret;
}
