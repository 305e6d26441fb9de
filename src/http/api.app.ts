import { memoriesRoutes } from './routes/memories.routes.js';
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { Container } from '../container.js';
import { createFastify } from './fastify-options.js';
import { installAuthHook } from './auth.hook.js';
import { installErrorHandler } from './error-handler.js';
import { Router } from './router.js';
import { systemRoutes } from './routes/system.routes.js';
import { invokeRoutes } from './routes/invoke.routes.js';
import { tasksRoutes } from './routes/tasks.routes.js';
import { agentsRoutes } from './routes/agents.routes.js';
import { llmProvidersRoutes } from './routes/llm-providers.routes.js';
import { secretsRoutes } from './routes/secrets.routes.js';
import { filesRoutes } from './routes/files.routes.js';
import { webhookChannelRoutes } from './routes/webhook-channel.routes.js';
import { consolePlugin } from '../console/console.plugin.js';
import { customFunctionsRoutes } from './routes/custom-functions.routes.js';
import { mcpServersRoutes } from './routes/mcp-servers.routes.js';
import { mcpOAuthRoutes } from './routes/mcp-oauth.routes.js';
import { skillsRoutes } from './routes/skills.routes.js';
import { knowledgeRoutes } from './routes/knowledge.routes.js';
import { connectorsRoutes } from './routes/connectors.routes.js';
import { xpanderRoutes } from './routes/xpander.routes.js';
import { schedulesRoutes } from './routes/schedules.routes.js';
import { notificationsRoutes } from './routes/notifications.routes.js';
import { installHttpMetrics, registerMetricsRoute } from '../observability/metrics-http.js';
import { apiDocsPlugin } from './api-docs/api-docs.plugin.js';
import { apiKeysRoutes } from './routes/api-keys.routes.js';
import { a2aRoutes } from './routes/a2a.routes.js';
import { mcpEndpointRoutes } from './routes/mcp-endpoint.routes.js';
import { workflowsRoutes } from './routes/workflows.routes.js';

/** A route module registers one resource's routes; handlers stay thin and call one service. */
export type RouteModule = (router: Router, c: Container) => void;

/** Add one line per resource. */
const routeModules: RouteModule[] = [systemRoutes, agentsRoutes, llmProvidersRoutes, secretsRoutes, customFunctionsRoutes, mcpServersRoutes, mcpOAuthRoutes, skillsRoutes, filesRoutes, webhookChannelRoutes, invokeRoutes, tasksRoutes, knowledgeRoutes, connectorsRoutes, apiKeysRoutes, schedulesRoutes, memoriesRoutes, notificationsRoutes, xpanderRoutes, a2aRoutes, mcpEndpointRoutes, workflowsRoutes];

export async function buildApiApp(c: Container): Promise<FastifyInstance> {
  const app = createFastify(c.log, { bodyLimit: c.config.maxBodyBytes, maxJsonDepth: c.config.maxJsonDepth, requestTimeoutMs: c.config.requestTimeoutMs });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandler(app);
  if (c.metrics) {
    installHttpMetrics(app, c.metrics, 'api');
    registerMetricsRoute(app, c.metrics, c.config.metrics.token);
  }
  installAuthHook(app, c.auth, c.rateLimits);
  // Multipart uploads (knowledge-base documents, connector documents); every route reads its own parts.
  if (!app.hasContentTypeParser('multipart/form-data')) await app.register(multipart, { limits: { fieldSize: 1024 * 1024, fields: 100, parts: 1000 } });
  const router = new Router(app, {
    agentVisible: (viewer, id) => c.agents.visibleTo(viewer, id),
    taskVisible: (viewer, id) => c.tasks.queries.visibleTo(viewer, id),
  });
  app.decorate('agentryRouter', router);
  for (const m of routeModules) m(router, c);
  // The monitoring console (GET / and /console/*): static files, a client of the /v1 API above.
  await consolePlugin(app);
  // The API reference (GET /docs): Swagger UI over /openapi.json.
  await apiDocsPlugin(app);
  return app;
}
