import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../container.js';
import { AppError } from '../errors.js';
import type { WebhookForm } from '../webhooks/webhook-params.js';
import type { PublicBinding } from '../webhooks/webhook-receiver.service.js';
import { createFastify } from './fastify-options.js';
import { installErrorHandler } from './error-handler.js';
import { readMultipart } from './multipart.js';

/** Multipart text fields are parameters and context, not documents: 1 MB each is generous. */
const MAX_FIELD_BYTES = 1024 * 1024;

/**
 * The webhook receiver: its own listener, so it can be exposed to the internet alone. It serves nothing but the
 * two invocation forms of spec 4.3 and 4.4 (and /health): no management route is reachable here.
 */
export async function buildWebhookApp(c: Container): Promise<FastifyInstance> {
  const { maxRequestBytes } = c.config.files;
  const app = createFastify(c.log, { bodyLimit: maxRequestBytes });
  installErrorHandler(app);
  await app.register(formbody, { bodyLimit: maxRequestBytes });
  await app.register(multipart, { limits: { fieldSize: MAX_FIELD_BYTES, fields: 1000, parts: 10_000 } });
  app.get('/health', async (_req, reply) => reply.type('application/json').send('"ok"'));

  // Credentials are checked before the body is parsed: a caller without them gets 401/403 (spec 7.2) whatever it sent.
  const bindings = new WeakMap<FastifyRequest, PublicBinding>();
  const resolvePublic = async (request: FastifyRequest) => {
    bindings.set(request, await c.webhooks.resolvePublic((request.params as { secret: string }).secret));
  };

  const handle = (form: WebhookForm) => async (request: FastifyRequest, reply: FastifyReply) => {
    const query = queryOf(request);
    const isForm = /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '');
    const { body, files } = request.isMultipart() ? await readMultipart(request, c) : { body: objectBody(request.body, isForm), files: [] };
    const answer = await c.webhooks.invoke({
      form,
      secret: form === 'public' ? (request.params as { secret: string }).secret : undefined,
      bound: bindings.get(request),
      apiKey: form === 'key' ? apiKeyOf(request, query) : undefined,
      query,
      body,
      files,
    });
    const value = answer.kind === 'started' ? { status: 'Started' } : answer.value;
    // Serialised here: a bare string (a getter value) must go out as JSON, not as text/plain.
    return reply.code(200).type('application/json').send(JSON.stringify(value ?? null));
  };

  app.post('/wh_:secret', { onRequest: resolvePublic }, handle('public'));
  app.post('/', { onRequest: async (request) => c.webhooks.precheckKey(queryOf(request), apiKeyOf(request, queryOf(request))) }, handle('key'));
  return app;
}

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return (request.query ?? {}) as Record<string, unknown>;
}

function apiKeyOf(request: FastifyRequest, query: Record<string, unknown>): string | undefined {
  const h = request.headers['x-api-key'];
  const fromHeader = Array.isArray(h) ? h[0] : h;
  const q = query['x-api-key'];
  const fromQuery = Array.isArray(q) ? q[0] : q;
  const key = fromHeader?.trim() || (typeof fromQuery === 'string' ? fromQuery.trim() : '');
  return key || undefined;
}

/**
 * A JSON or form body as an object; no body is an empty one. In a form a repeated name counts once (its first
 * value), as in the query string and in multipart bodies.
 */
function objectBody(body: unknown, isForm: boolean): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw AppError.validation([{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }]);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) out[k] = isForm && Array.isArray(v) ? v[0] : v;
  return out;
}

