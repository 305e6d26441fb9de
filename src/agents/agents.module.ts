import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { AgentConfig } from './agent.schemas.js';
import type { KnowledgeBaseLookup } from './agent-tools.js';
import type { SecretExists } from './agent-writes.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentsService } from './agents.service.js';
import { createToolResolverRegistry, type ToolResolverRegistry } from './tool-resolvers/index.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

export interface AgentsModule {
  agents: AgentsService;
  /** Create-time resolvers of `tools` entries: each tool-kind module registers its own (`toolResolvers.mcp = ...`). */
  toolResolvers: ToolResolverRegistry;
}

/** Agents (issue 2): the service and the registry of create-time tool resolvers it validates `tools` with. */
export function createAgentsModule(d: {
  db: Db;
  clock: Clock;
  urls: PublicUrls;
  secretBox: SecretBox;
  /** Rules of other domains on every resulting configuration (OIDC pre-auth). */
  configRules: readonly ((cfg: AgentConfig) => void)[];
  knowledgeBases: KnowledgeBaseLookup;
  checkOutputSchema?: OutputSchemaCheck;
  secretExists?: SecretExists;
}): AgentsModule {
  const repo = new AgentsRepository(d.db);
  const toolResolvers = createToolResolverRegistry({ agents: repo });
  const agents = new AgentsService({ repo, clock: d.clock, urls: d.urls, secretBox: d.secretBox, toolResolvers, configRules: d.configRules, knowledgeBases: d.knowledgeBases, checkOutputSchema: d.checkOutputSchema, secretExists: d.secretExists });
  return { agents, toolResolvers };
}
