import { AppError } from '../../errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { inlineMcpItem, registryMcpItem, type McpEntry } from '../../mcp/mcp-graph.js';
import { checkAuth, type McpServersService } from '../../mcp/mcp-servers.service.js';
import type { ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

/**
 * `{type:"mcp", mcp_id}` (a registry server of the organization) or `{type:"mcp", url, ...}` (an inline server)
 * -> one graph item of type `mcp` (spec 2.4: no attached_tools entry). See src/mcp/mcp-graph.ts for its settings.
 */
export class McpToolResolver implements ToolEntryResolver<McpEntry> {
  constructor(
    private readonly registry: Pick<McpServersService, 'settings'>,
    private readonly box: SecretBox,
  ) {}

  async resolve(organizationId: string, entry: McpEntry, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    if (entry.mcp_id) {
      const settings = await this.registry.settings(organizationId, entry.mcp_id);
      if (!settings) throw AppError.invalid([...loc, 'mcp_id'], `MCP server '${entry.mcp_id}' not found`);
      return { graph: [registryMcpItem(entry.mcp_id, settings, entry.allowed_tools)] };
    }
    if (!entry.url) throw AppError.invalid(loc, 'an mcp tool needs exactly one of mcp_id (registry) or url (inline server)');
    checkAuth(entry.auth_type ?? 'none', entry.api_key ?? null, loc);
    return { graph: [inlineMcpItem({ ...entry, url: entry.url }, this.box)] };
  }
}
