import type { FastifyInstance } from 'fastify';
import type { Container } from '../container.js';
import { createFastify } from './fastify-options.js';
import { installAuthHook } from './auth.hook.js';
import { installErrorHandler } from './error-handler.js';
import { Router } from './router.js';
import { systemRoutes } from './routes/system.routes.js';
import { filesRoutes } from './routes/files.routes.js';
import { consolePlugin } from '../console/console.plugin.js';
import { customFunctionsRoutes } from './routes/custom-functions.routes.js';

/** A route module registers one resource's routes; handlers stay thin and call one service. */
export type RouteModule = (router: Router, c: Container) => void;

/** Add one line per resource. */
const routeModules: RouteModule[] = [systemRoutes, customFunctionsRoutes, filesRoutes];

export async function buildApiApp(c: Container): Promise<FastifyInstance> {
  const app = createFastify(c.log);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandler(app);
  installAuthHook(app, c.auth);
  const router = new Router(app);
  app.decorate('agentryRouter', router);
  for (const m of routeModules) m(router, c);
  // The monitoring console (GET / and /console/*): static files, a client of the /v1 API above.
  await consolePlugin(app);
  return app;
}
