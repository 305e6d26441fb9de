import { AppError } from '../errors.js';
import { endpoint } from '../runtime/tools/mcp.tools.js';
import { McpCallError, type McpClientPool } from './mcp-client-pool.js';
import type { McpServersService } from './mcp-servers.service.js';

export interface McpToolView {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  read_only: boolean;
  /** False when the server's `allowed_tools` leaves the tool out: agents are not offered it. */
  allowed: boolean;
}

/**
 * The tools a registered MCP server offers (`GET /v1/mcp_servers/{id}/tools`, shown by the console), read through
 * the same client pool as runs, so a listing warms the cache a run would use.
 */
export class McpToolsCatalog {
  constructor(
    private readonly servers: McpServersService,
    private readonly pool: McpClientPool,
  ) {}

  async list(organizationId: string, id: string, signal?: AbortSignal): Promise<McpToolView[]> {
    const settings = await this.servers.settings(organizationId, id);
    if (!settings) throw AppError.notFound('MCP server');
    // A user's OAuth token is per run; the registry holds none to list with.
    if (settings.authType === 'oauth2') throw new AppError('conflict', `MCP server '${settings.name}' uses OAuth: its tools are listed in a run, with the user's token`);
    try {
      const tools = await this.pool.listTools(endpoint(settings), signal);
      const allowed = settings.allowedTools ? new Set(settings.allowedTools) : null;
      return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema, read_only: t.readOnly, allowed: !allowed || allowed.has(t.name) }));
    } catch (e) {
      if (e instanceof McpCallError) throw new AppError('upstream', e.message, { cause: e });
      throw e;
    }
  }
}
