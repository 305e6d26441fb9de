import type { FastifyInstance } from 'fastify';
import type { Container } from '../container.js';
import { createFastify } from './fastify-options.js';
import { installErrorHandler } from './error-handler.js';

/** The webhook receiver: its own listener, so it can be exposed to the internet alone. */
export async function buildWebhookApp(c: Container): Promise<FastifyInstance> {
  const app = createFastify(c.log);
  installErrorHandler(app);
  app.get('/health', async (_req, reply) => reply.type('application/json').send('"ok"'));
  return app;
}
