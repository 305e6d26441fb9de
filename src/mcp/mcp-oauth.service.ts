import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { McpServerSettings } from './mcp.types.js';
import type { McpOAuthClient } from './mcp-oauth-client.js';
import { openState, sealState } from './mcp-oauth-state.js';
import { storedTokenUserId, type ObtainedTokens, type TokenRefresher } from './mcp-user-tokens.service.js';

/**
 * The interactive OAuth flow (authorization code + PKCE) of registry MCP servers with auth_type oauth2 and a
 * client_id: the link a run offers when the task's user has no token, the callback that turns the code into the
 * user's stored token, and the refresh of an expired stored token. See docs/decisions.md#mcp-servers-interactive-oauth.
 */

/** The callback route (src/http/routes/mcp-oauth.routes.ts); the redirect_uri is the public API URL plus this. */
export const MCP_OAUTH_CALLBACK_PATH = '/v1/mcp_servers/oauth/callback';

/** How long an authorization link (its sealed state) can be completed. */
export const MCP_OAUTH_LINK_TTL_MS = 10 * 60_000;

export interface McpOAuthDeps {
  servers: { settings(organizationId: string, id: string): Promise<McpServerSettings | undefined> };
  tokens: { storeObtained(organizationId: string, serverId: string, userId: string, t: ObtainedTokens): Promise<void> };
  client: McpOAuthClient;
  box: SecretBox;
  clock: Clock;
  /** The api role's public base URL (AGENTRY_PUBLIC_API_URL; known only after start when the port is 0). */
  publicApiUrl: () => string;
}

export interface McpOAuthCallbackQuery {
  state?: string;
  code?: string;
  error?: string;
  error_description?: string;
}

export type McpOAuthOutcome = { ok: true; server: string; userId: string; /** The token serves only the agent that asked. */ agentOnly: boolean } | { ok: false; reason: string };

export class McpOAuthService {
  constructor(private readonly d: McpOAuthDeps) {}

  redirectUri(): string {
    return `${this.d.publicApiUrl()}${MCP_OAUTH_CALLBACK_PATH}`;
  }

  /**
   * For a run: the link that lets `userId` authorize the server. Scope: what the server asks for plus its
   * additional_scopes. Throws with a readable reason (no client_id, discovery failed, incompatible server).
   */
  async authorizationUrl(organizationId: string, serverId: string, s: McpServerSettings, userId: string, agentId: string): Promise<string> {
    if (!s.clientId) throw new Error('the server has no client_id');
    const found = await this.d.client.discover(s);
    const scope = [...new Set([...found.scopes, ...s.additionalScopes])].join(' ');
    const redirectUri = this.redirectUri();
    const { url, codeVerifier } = await this.d.client.start(found, s.clientId, redirectUri, scope);
    const expiresAt = this.d.clock.now() + MCP_OAUTH_LINK_TTL_MS;
    url.searchParams.set('state', sealState(this.d.box, { organizationId, serverId, userId, agentId, clientId: s.clientId, codeVerifier, redirectUri, expiresAt }));
    return url.href;
  }

  /**
   * The callback: only a state this service sealed, unexpired, for a server that still exists in that organization
   * with the same client_id, and an authorization code the token endpoint accepts (with the PKCE verifier) store
   * anything. Reasons never contain the code, the tokens or the client secret.
   */
  async complete(q: McpOAuthCallbackQuery): Promise<McpOAuthOutcome> {
    if (!q.state) return { ok: false, reason: 'the state parameter is missing' };
    const opened = openState(this.d.box, q.state, this.d.clock.now());
    if ('refused' in opened) return { ok: false, reason: opened.refused };
    const st = opened.state;
    if (q.error) return { ok: false, reason: `the authorization server answered ${short(q.error)}${q.error_description ? `: ${short(q.error_description)}` : ''}` };
    if (!q.code) return { ok: false, reason: 'the authorization code is missing' };
    const s = await this.d.servers.settings(st.organizationId, st.serverId);
    if (!s) return { ok: false, reason: 'the MCP server of this link no longer exists' };
    if (s.authType !== 'oauth2' || s.clientId !== st.clientId) return { ok: false, reason: `MCP server '${s.name}' changed its OAuth settings since this link was made: ask the agent again` };
    let tokens: ObtainedTokens;
    try {
      const found = await this.d.client.discover(s);
      tokens = await this.d.client.exchange(found, { clientId: s.clientId, clientSecret: s.clientSecret }, q.code, st.codeVerifier, st.redirectUri);
    } catch (e) {
      return { ok: false, reason: `the authorization server did not exchange the code: ${scrub((e as Error).message, [s.clientSecret, q.code])}` };
    }
    // Stored where the server's current sharing rule makes runs look: the user's, or this agent's for the user.
    await this.d.tokens.storeObtained(st.organizationId, st.serverId, storedTokenUserId(st.userId, st.agentId, s.shareUserTokenAcrossOtherAgents), tokens);
    return { ok: true, server: s.name, userId: st.userId, agentOnly: !s.shareUserTokenAcrossOtherAgents };
  }

  /** Renews a stored token (McpUserTokensService.lookup): the server's current client credentials and metadata. */
  readonly refresher: TokenRefresher = async (organizationId, serverId, refreshToken) => {
    const s = await this.d.servers.settings(organizationId, serverId);
    if (!s || s.authType !== 'oauth2' || !s.clientId) throw new Error('the server no longer has an OAuth client_id to refresh with');
    try {
      const found = await this.d.client.discover(s);
      return await this.d.client.refresh(found, { clientId: s.clientId, clientSecret: s.clientSecret }, refreshToken);
    } catch (e) {
      throw new Error(`the refresh was refused: ${scrub((e as Error).message, [s.clientSecret, refreshToken])}`);
    }
  };
}

function short(v: string): string {
  return v.replace(/\s+/g, ' ').slice(0, 300);
}

/** Error texts of the authorization server could quote what was sent: never pass a credential on. */
function scrub(message: string, secrets: (string | null | undefined)[]): string {
  let m = short(message);
  for (const s of secrets) if (s) m = m.split(s).join('[REDACTED]');
  return m;
}
