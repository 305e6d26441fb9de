import type { ToolResolverRegistry } from '../agents/tool-resolvers/index.js';
import { McpToolResolver } from '../agents/tool-resolvers/mcp.resolver.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { closeOnStop, type Startable } from '../lib/lifecycle.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { SafeFetch } from '../net/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { McpToolProvider } from '../runtime/tools/mcp.tools.js';
import { McpClientPool } from './mcp-client-pool.js';
import { McpOAuthClient } from './mcp-oauth-client.js';
import { McpOAuthService } from './mcp-oauth.service.js';
import { McpServersRepository } from './mcp-servers.repository.js';
import { McpServersService } from './mcp-servers.service.js';
import { McpToolsCatalog } from './mcp-tools-catalog.js';
import { McpUserTokensRepository } from './mcp-user-tokens.repository.js';
import { McpUserTokensService } from './mcp-user-tokens.service.js';

export interface McpModule {
  mcpServers: McpServersService;
  /** OAuth tokens stored per user for oauth2 registry servers. */
  mcpUserTokens: McpUserTokensService;
  /** The interactive OAuth flow: authorization links, the callback, refreshes. */
  mcpOAuth: McpOAuthService;
  /** Live MCP sessions and their cached tool lists. */
  mcpClients: McpClientPool;
  /** A registered server's tools, for the console. */
  mcpTools: McpToolsCatalog;
  /** Closes the live sessions when the process stops. */
  sessions: Startable;
}

/** MCP servers as a tool kind (issue 6): the registry, per-user tokens, the session pool, the `mcp` tool kind. */
export function createMcpModule(d: {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  safeFetch: SafeFetch;
  urls: PublicUrls;
  toolResolvers: ToolResolverRegistry;
  runtime: Runtime;
}): McpModule {
  const serversRepo = new McpServersRepository(d.db);
  const mcpServers = new McpServersService(serversRepo, d.secretBox, d.clock);
  // The token store refreshes expired tokens through the OAuth service, which stores what it obtains in it.
  const mcpUserTokens: McpUserTokensService = new McpUserTokensService(new McpUserTokensRepository(d.db), serversRepo, d.secretBox, d.clock, () => mcpOAuth.refresher);
  const mcpOAuth = new McpOAuthService({
    servers: mcpServers,
    tokens: mcpUserTokens,
    client: new McpOAuthClient(d.safeFetch, d.clock),
    box: d.secretBox,
    clock: d.clock,
    publicApiUrl: () => d.urls.api,
  });
  const mcpClients = new McpClientPool({ fetch: d.safeFetch, clock: d.clock });
  d.toolResolvers.mcp = new McpToolResolver(mcpServers, d.secretBox);
  d.runtime.tools.register('mcp', new McpToolProvider({ registry: mcpServers, storedTokens: mcpUserTokens, oauth: mcpOAuth, pool: mcpClients, box: d.secretBox }));
  return { mcpServers, mcpUserTokens, mcpOAuth, mcpClients, mcpTools: new McpToolsCatalog(mcpServers, mcpClients), sessions: closeOnStop(() => mcpClients.close()) };
}
