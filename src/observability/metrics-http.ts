import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';

/**
 * How the metrics reach Prometheus: GET /metrics on the API listener, and (AGENTRY_METRICS_PORT) on a listener of
 * their own, for processes without the api role (a worker) or to keep them off the public port. With
 * AGENTRY_METRICS_TOKEN set, a scrape must send `Authorization: Bearer <token>`.
 */

/** Request latency by route pattern, recorded after the answer is sent (onResponse): nothing is added before it. */
export function installHttpMetrics(app: FastifyInstance, metrics: Metrics, listener: 'api' | 'webhooks'): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequest(listener, request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    // The webhook routes Fastify serves (forms, multipart, what the fast lane hands over) count as deliveries too.
    if (listener === 'webhooks' && request.method === 'POST' && (route === '/' || route === '/wh_:secret')) {
      metrics.webhookCall(route === '/' ? 'key' : 'public', reply.statusCode);
    }
    done();
  });
}

export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  app.get('/metrics', async (request, reply) => {
    if (!authorized(request.headers.authorization, token)) return reply.code(401).header('www-authenticate', 'Bearer').send({ detail: 'Not authenticated' });
    const { contentType, text } = await metrics.render();
    return reply.type(contentType).header('cache-control', 'no-store').send(text);
  });
}

/** The separate metrics listener: GET /metrics and nothing else. */
export function createMetricsServer(metrics: Metrics, token: string | undefined): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') return end(res, 404, 'application/json', '{"detail":"Not Found"}');
    if (!authorized(req.headers.authorization, token)) return end(res, 401, 'application/json', '{"detail":"Not authenticated"}');
    metrics.render().then(
      ({ contentType, text }) => end(res, 200, contentType, text),
      () => end(res, 500, 'application/json', '{"detail":"Internal Server Error"}'),
    );
  });
}

function end(res: ServerResponse, status: number, type: string, text: string): void {
  res.writeHead(status, { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}) });
  res.end(text);
}

function authorized(header: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
