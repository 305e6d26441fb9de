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
    refuseInlineOAuthClient(entry, loc);
    if (entry.mcp_id) {
      refuseShadowedSettings(entry, loc);
      const settings = await this.registry.settings(organizationId, entry.mcp_id);
      if (!settings) throw AppError.invalid([...loc, 'mcp_id'], `MCP server '${entry.mcp_id}' not found`);
      return { graph: [registryMcpItem(entry.mcp_id, settings, entry.allowed_tools)] };
    }
    if (!entry.url) throw AppError.invalid(loc, 'an mcp tool needs exactly one of mcp_id (registry) or url (inline server)');
    checkAuth(entry.auth_type ?? 'none', entry.api_key ?? null, loc);
    return { graph: [inlineMcpItem({ ...entry, url: entry.url }, this.box)] };
  }
}

/**
 * The interactive OAuth flow and stored tokens belong to registry servers (a token is stored per user under the
 * registry id): on a tool entry, the OAuth client fields and the sharing rule would be inert (inline) or shadowed by
 * the registry's (with mcp_id), so they are refused, pointing to the registry. `share_user_token_across_other_agents:
 * true` (the default) is accepted.
 */
function refuseInlineOAuthClient(entry: McpEntry, loc: (string | number)[]): void {
  const where = 'set it on a registered MCP server (POST /v1/mcp_servers, auth_type oauth2) and reference that server with mcp_id';
  if (entry.client_id) throw AppError.invalid([...loc, 'client_id'], `client_id is not accepted on an mcp tool entry: ${where}`);
  if (entry.client_secret) throw AppError.invalid([...loc, 'client_secret'], `client_secret is not accepted on an mcp tool entry: ${where}`);
  if (entry.additional_scopes?.length) throw AppError.invalid([...loc, 'additional_scopes'], `additional_scopes are not accepted on an mcp tool entry: ${where}`);
  if (entry.share_user_token_across_other_agents === false) {
    throw AppError.invalid([...loc, 'share_user_token_across_other_agents'], `share_user_token_across_other_agents is not accepted on an mcp tool entry: ${where}`);
  }
}

/** With mcp_id the registry's connection settings apply on every run: the entry's own would be stored and ignored. */
const REGISTRY_SETTINGS = ['name', 'transport', 'auth_type', 'api_key', 'headers'] as const;

function refuseShadowedSettings(entry: McpEntry, loc: (string | number)[]): void {
  for (const field of REGISTRY_SETTINGS) {
    if (entry[field] === undefined) continue;
    throw AppError.invalid(
      [...loc, field],
      `${field} is not accepted beside mcp_id: the registered MCP server's own applies (change it with PATCH /v1/mcp_servers/${entry.mcp_id}); an mcp_id entry takes only allowed_tools`,
    );
  }
}
