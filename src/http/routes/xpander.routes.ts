import type { Container } from '../../container.js';
import type { Router } from '../router.js';
import { xpanderAgentsRoutes } from './xpander-agents.routes.js';
import { xpanderKnowledgeRoutes } from './xpander-knowledge.routes.js';
import { xpanderTasksRoutes } from './xpander-tasks.routes.js';
import { xpanderUnsupportedRoutes } from './xpander-unsupported.routes.js';

/** xpander's internal API (docs/contract.md#internal-api): one entry in api.app.ts for its four route files. */
export function xpanderRoutes(router: Router, c: Container): void {
  xpanderAgentsRoutes(router, c);
  xpanderTasksRoutes(router, c);
  xpanderKnowledgeRoutes(router, c);
  xpanderUnsupportedRoutes(router, c);
}
