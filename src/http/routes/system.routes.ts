import type { Container } from '../../container.js';
import { buildOpenApi } from '../openapi.js';
import { webhookReceiverPaths } from '../openapi-webhooks.js';
import type { Router } from '../router.js';

export function systemRoutes(router: Router, c: Container): void {
  router.route({ method: 'GET', url: '/health', summary: 'Liveness', tags: ['system'], auth: false }, ({ reply }) =>
    // A JSON string, as the xpander API answers.
    reply.type('application/json').send('"ok"'),
  );

  // Built lazily on first request: by then every module has registered its routes.
  let doc: Record<string, unknown> | undefined;
  router.route({ method: 'GET', url: '/openapi.json', summary: 'This API as an OpenAPI 3.1 document', tags: ['system'], auth: false }, () => {
    doc ??= buildOpenApi(router.routes, c.urls.api, webhookReceiverPaths(c.urls.webhook));
    return doc;
  });
}
