import type { Awaitable } from '../../lib/awaitable.js';
import { isoTime } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { McpCallResult, McpClientPool, McpEndpoint, McpToolInfo } from '../../mcp/mcp-client-pool.js';
import { inlineSettings, mcpSettingsOf } from '../../mcp/mcp-graph.js';
import type { McpServerSettings } from '../../mcp/mcp.types.js';
import { storedTokenUserId, type StoredTokenLookup } from '../../mcp/mcp-user-tokens.service.js';
import type { GraphItem, RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';
import { toolName } from './index.js';

/**
 * MCP servers (graph items of type `mcp`): each server's tools, filtered by allowed_tools, become LLM tools named
 * `<server>_<tool>`. A server that cannot be used for this run (down, refused by the egress policy, credentials
 * rejected, OAuth token missing) never fails the run: it contributes one stand-in tool whose call fails with the
 * reason, so the model can tell the user what is wrong.
 *
 * The token of an oauth2 server: the invocation's `user_tokens` under the graph item id, else (registry servers
 * only) the token stored for the task's user (`/v1/mcp_servers/{id}/user_tokens/{user_id}`), renewed with its refresh
 * token when it expired. Without one, a registry server with a client_id offers the user an authorization link
 * (src/mcp/mcp-oauth.service.ts) in the stand-in's text and the auth_event.
 */

export interface McpToolProviderDeps {
  registry: { settings(organizationId: string, id: string): Promise<McpServerSettings | undefined> };
  /** Tokens stored per user for oauth2 registry servers; absent: only `user_tokens` count. */
  storedTokens?: { lookup(organizationId: string, serverId: string, userId: string): Promise<StoredTokenLookup> };
  /** Authorization links for registry servers with a client_id; absent: no links. */
  oauth?: { authorizationUrl(organizationId: string, serverId: string, s: McpServerSettings, userId: string, agentId: string): Promise<string> };
  pool: McpClientPool;
  box: SecretBox;
}

const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {}, additionalProperties: false };

export class McpToolProvider implements RuntimeToolProvider {
  constructor(private readonly deps: McpToolProviderDeps) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    const items = agent.graph.filter((g) => g.type === 'mcp' && g.item_id);
    if (!items.length) return [];
    // OIDC pre-auth: with `oidc_pre_auth_token_mcp_audience`, the end user's token is the OAuth token of oauth2 servers
    // the invocation's user_tokens do not name (verified to carry that audience: src/auth/pre-auth.service.ts).
    const preAuth = agent.oidc_pre_auth_token_mcp_audience !== null ? ctx.preAuthToken : undefined;
    return Promise.all(items.map((item) => this.toolsFor(item, ctx, preAuth))).then((lists) => lists.flat());
  }

  private async toolsFor(item: GraphItem, ctx: ToolCallContext, preAuth: string | undefined): Promise<RuntimeTool[]> {
    const itemId = item.id ?? item.item_id;
    const label = item.name ?? (mcpSettingsOf(item).name as string | undefined) ?? itemId;
    let settings: McpServerSettings;
    try {
      settings = await this.settingsOf(item, ctx.organizationId);
    } catch (e) {
      return [this.standIn(item, label, (e as Error).message)];
    }
    const prefix = toolName(settings.name, 'mcp').slice(0, 24);

    let token: string | undefined;
    let tokenSource: 'user_tokens' | 'stored' | undefined;
    if (settings.authType === 'oauth2') {
      token = ctx.userTokens[itemId] ?? ctx.userTokens[item.item_id] ?? preAuth;
      if (token) tokenSource = 'user_tokens';
      const registryId = mcpSettingsOf(item).mcp_id;
      // With share_user_token_across_other_agents false, the user's token is this agent's own.
      const tokenUser = ctx.userId ? storedTokenUserId(ctx.userId, ctx.agentId, settings.shareUserTokenAcrossOtherAgents) : undefined;
      let expired = '';
      if (!token && typeof registryId === 'string' && tokenUser && this.deps.storedTokens) {
        let stored: StoredTokenLookup;
        try {
          stored = await this.deps.storedTokens.lookup(ctx.organizationId, registryId, tokenUser);
        } catch (e) {
          return [this.standIn(item, settings.name, `The OAuth token stored for this user could not be read: ${(e as Error).message}`)];
        }
        if (stored.status === 'found') {
          token = stored.token;
          tokenSource = 'stored';
        } else if (stored.status === 'expired') {
          const refresh = stored.refreshError ? `; renewing it with its refresh token failed: ${stored.refreshError}` : '';
          expired = ` (the token stored for user '${tokenUser}' expired at ${isoTime(stored.expiresAt)}${refresh})`;
        }
      }
      if (!token) {
        const link = typeof registryId === 'string' ? await this.link(registryId, settings, ctx) : {};
        const open = link.authorization_url ? `the user can authorize it by opening ${link.authorization_url} ; or ` : '';
        const noLink = link.authorization_link_error ? ` (no authorization link: ${link.authorization_link_error})` : '';
        const storeAs = settings.shareUserTokenAcrossOtherAgents ? '{user_id}' : `${ctx.agentId}_{user_id} (this server's tokens are per agent)`;
        const orStore = typeof registryId === 'string' ? `, or store one for the task's user with PUT /v1/mcp_servers/${registryId}/user_tokens/${storeAs}` : '';
        const message = `MCP server '${settings.name}' needs the user's OAuth authorization${expired}: ${open}pass an access token in user_tokens under the key '${itemId}'${orStore}${noLink}`;
        const extra = { ...(ctx.userId ? { user_id: ctx.userId } : {}), ...(tokenUser && tokenUser !== ctx.userId ? { token_user_id: tokenUser } : {}), ...(expired ? { stored_token: 'expired' } : {}), ...link };
        await this.authEvent(ctx, item, settings, 'authorization_required', message, extra);
        return [this.standIn(item, settings.name, message, () => this.authEvent(ctx, item, settings, 'authorization_required', message, extra))];
      }
    }
    const ep = endpoint(settings, token);
    let tools: McpToolInfo[];
    try {
      tools = await this.deps.pool.listTools(ep, ctx.signal);
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      const message = (e as Error).message;
      if (settings.authType === 'oauth2' && /refused the credentials/.test(message)) {
        const registryId = mcpSettingsOf(item).mcp_id;
        const link = typeof registryId === 'string' ? await this.link(registryId, settings, ctx) : {};
        await this.authEvent(ctx, item, settings, 'token_rejected', message, { token_source: tokenSource, ...(ctx.userId ? { user_id: ctx.userId } : {}), ...link });
        if (link.authorization_url) return [this.standIn(item, settings.name, `${message}; the user can authorize it again by opening ${link.authorization_url}`)];
      }
      return [this.standIn(item, settings.name, message)];
    }
    const allowed = settings.allowedTools ? new Set(settings.allowedTools) : null;
    return tools
      .filter((t) => !allowed || allowed.has(t.name))
      .map((t) => ({
        name: `${prefix}_${toolName(t.name)}`.slice(0, 64),
        description: `[MCP ${settings.name}] ${t.description}`.trim().slice(0, 4000),
        inputSchema: objectSchema(t.inputSchema),
        // Supervised agents pause before any MCP call unless the server marks the tool read-only.
        mutating: !t.readOnly,
        graphItemId: itemId,
        execute: async (args: Record<string, unknown>, callCtx: ToolCallContext) => {
          const r = await this.deps.pool.callTool(ep, t.name, args, callCtx.signal);
          const output = resultOf(r);
          if (r.isError) throw new Error(`MCP tool '${t.name}' of server '${settings.name}' reported an error: ${typeof output === 'string' ? output : JSON.stringify(output)}`);
          return output;
        },
      }));
  }

  private async settingsOf(item: GraphItem, organizationId: string): Promise<McpServerSettings> {
    const s = mcpSettingsOf(item);
    if (typeof s.mcp_id !== 'string') return inlineSettings(item, this.deps.box);
    const registered = await this.deps.registry.settings(organizationId, s.mcp_id);
    if (!registered) throw new Error(`MCP server '${item.name ?? s.mcp_id}' no longer exists in the MCP server registry`);
    // The agent's own allowed_tools (snapshot taken when the tool was attached) narrow the registry's.
    return Array.isArray(s.allowed_tools) ? { ...registered, allowedTools: s.allowed_tools as string[] } : registered;
  }

  /**
   * An authorization link for the task's user, when the server can offer one (registry, oauth2 with a client_id, a
   * user to store the token for); a link that cannot be made says why instead.
   */
  private async link(registryId: string, s: McpServerSettings, ctx: ToolCallContext): Promise<{ authorization_url?: string; authorization_link_error?: string }> {
    if (!this.deps.oauth || !s.clientId || !ctx.userId) return {};
    try {
      return { authorization_url: await this.deps.oauth.authorizationUrl(ctx.organizationId, registryId, s, ctx.userId, ctx.agentId) };
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      return { authorization_link_error: (e as Error).message.replace(/\s+/g, ' ').slice(0, 300) };
    }
  }

  /** The one tool a server offers when its real tools cannot be listed: calling it reports why. */
  private standIn(item: GraphItem, serverName: string, reason: string, onCall?: () => Promise<void>): RuntimeTool {
    return {
      name: `${toolName(serverName, 'mcp').slice(0, 40)}_unavailable`,
      description: `The tools of MCP server '${serverName}' are not available in this run. Call this to learn why, then tell the user. Reason: ${reason}`,
      inputSchema: EMPTY_OBJECT_SCHEMA,
      mutating: false,
      graphItemId: item.id ?? item.item_id,
      execute: async () => {
        await onCall?.();
        throw new Error(reason);
      },
    };
  }

  private async authEvent(ctx: ToolCallContext, item: GraphItem, s: McpServerSettings, status: string, message: string, extra: Record<string, unknown> = {}): Promise<void> {
    await ctx.emit('auth_event', {
      kind: 'mcp_oauth',
      status,
      graph_item_id: item.id ?? item.item_id,
      server: s.name,
      url: s.url,
      message,
      ...extra,
      ...(ctx.toolCallId ? { tool_call_id: ctx.toolCallId } : {}),
    });
  }
}

/** Headers sent to the server: its configured headers plus the credential of its auth_type. */
export function endpoint(s: McpServerSettings, userToken?: string): McpEndpoint {
  const headers: Record<string, string> = { ...s.headers };
  if (s.authType === 'api_key' && s.apiKey) headers.Authorization = `Bearer ${s.apiKey}`;
  if (s.authType === 'oauth2' && userToken) headers.Authorization = `Bearer ${userToken}`;
  return { name: s.name, url: s.url, transport: s.transport, headers };
}

function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const s = schema && typeof schema === 'object' ? schema : {};
  return { ...s, type: 'object', properties: s.properties ?? {} };
}

/** Structured content when the server gives it; otherwise the text parts joined, other parts summarised. */
function resultOf(r: McpCallResult): unknown {
  if (r.structuredContent && !r.isError) return r.structuredContent;
  const parts = r.content.map((c) => {
    const part = c as { type?: string; text?: string; mimeType?: string; data?: string; resource?: { uri?: string; text?: string } };
    if (part.type === 'text') return part.text ?? '';
    if (part.type === 'resource') return part.resource?.text ?? `[resource ${part.resource?.uri ?? ''}]`;
    if (part.type === 'resource_link') return `[resource ${(c as { uri?: string }).uri ?? ''}]`;
    if (part.type === 'image' || part.type === 'audio') return `[${part.type} ${part.mimeType ?? ''}, ${Math.floor(((part.data ?? '').length * 3) / 4)} bytes]`;
    return JSON.stringify(c);
  });
  return parts.join('\n');
}
