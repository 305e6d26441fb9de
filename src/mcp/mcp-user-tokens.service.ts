import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { McpServersRepository } from './mcp-servers.repository.js';
import type { McpUserTokenMeta, McpUserTokensRepository, StoredMcpUserToken } from './mcp-user-tokens.repository.js';

/** What the runtime learns about a user's stored token for a server. */
export type StoredTokenLookup =
  | { status: 'found'; token: string }
  | { status: 'expired'; expiresAt: number; /** Why the refresh token could not renew it, when there was one. */ refreshError?: string }
  | { status: 'none' };

/**
 * The user id a token is stored under: the task's user when the server shares tokens across agents (the default),
 * else `{agent_id}_{user_id}` (the xpander convention, docs/contract.md), so a token obtained or stored for one agent
 * is used by that agent only. Agent ids are UUIDs: the first `_` separates the two.
 */
export function storedTokenUserId(userId: string, agentId: string, shareAcrossAgents: boolean): string {
  return shareAcrossAgents ? userId : `${agentId}_${userId}`;
}

/** Tokens an authorization server answered with (code exchange or refresh). */
export interface ObtainedTokens {
  accessToken: string;
  refreshToken?: string;
  /** Seconds; absent: the token does not say when it expires. */
  expiresIn?: number;
}

/** Renews a user's access token with its refresh token (src/mcp/mcp-oauth.service.ts); throws with a readable reason. */
export type TokenRefresher = (organizationId: string, serverId: string, refreshToken: string) => Promise<ObtainedTokens>;

/**
 * OAuth access tokens stored per user for registry MCP servers of auth_type oauth2
 * (`/v1/mcp_servers/{id}/user_tokens/{user_id}`). The token is sealed before it reaches the repository, never
 * returned by the API, and opened only by `lookup` for a run whose task belongs to that user. An invocation's
 * `user_tokens` always wins over a stored token (src/runtime/tools/mcp.tools.ts).
 */
export class McpUserTokensService {
  constructor(
    private readonly repo: McpUserTokensRepository,
    private readonly servers: Pick<McpServersRepository, 'find'>,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    /** Reached at call time: the OAuth service is built after this one. */
    private readonly refresher?: () => TokenRefresher,
  ) {}

  /** Refreshes in flight, so concurrent runs of one user spend a (possibly single-use) refresh token once. */
  private readonly refreshing = new Map<string, Promise<StoredTokenLookup>>();

  /** Creates or replaces the user's token; `expiresIn` in seconds from now (absent: no expiry). 409 unless oauth2. */
  async put(organizationId: string, serverId: string, userId: string, accessToken: string, expiresIn: number | null | undefined): Promise<{ token: McpUserTokenMeta; created: boolean }> {
    const server = await this.servers.find(organizationId, serverId);
    if (!server) throw AppError.notFound('MCP server');
    if (server.authType !== 'oauth2') {
      throw new AppError('conflict', `MCP server '${server.name}' uses auth_type '${server.authType}': user tokens are stored only for oauth2 servers`);
    }
    const now = this.clock.now();
    const expiresAt = expiresIn === null || expiresIn === undefined ? null : now + expiresIn * 1000;
    // A token given by hand replaces the whole grant: a refresh token of an earlier grant would bring the old one back.
    const created = await this.repo.upsert(organizationId, serverId, userId, { accessTokenSealed: this.box.seal(accessToken), refreshTokenSealed: null, expiresAt }, now);
    const stored = await this.repo.find(organizationId, serverId, userId);
    if (!stored) throw AppError.notFound('MCP user token');
    const { accessTokenSealed: _sealed, refreshTokenSealed: _refresh, ...token } = stored;
    return { token, created };
  }

  /** Stores tokens the OAuth flow obtained for the user (callback or refresh); a refresh that names no new refresh token keeps the old one. */
  async storeObtained(organizationId: string, serverId: string, userId: string, t: ObtainedTokens, previousRefreshSealed: string | null = null): Promise<void> {
    const now = this.clock.now();
    await this.repo.upsert(
      organizationId,
      serverId,
      userId,
      {
        accessTokenSealed: this.box.seal(t.accessToken),
        refreshTokenSealed: t.refreshToken ? this.box.seal(t.refreshToken) : previousRefreshSealed,
        expiresAt: t.expiresIn === undefined ? null : now + t.expiresIn * 1000,
      },
      now,
    );
  }

  /** Metadata of the server's stored tokens (any auth_type, so tokens left from an earlier oauth2 setting can be seen and deleted). */
  async list(organizationId: string, serverId: string, page: number, perPage: number): Promise<{ items: McpUserTokenMeta[]; total: number }> {
    await this.server(organizationId, serverId);
    return this.repo.list(organizationId, serverId, (page - 1) * perPage, perPage);
  }

  async delete(organizationId: string, serverId: string, userId: string): Promise<void> {
    await this.server(organizationId, serverId);
    if (!(await this.repo.delete(organizationId, serverId, userId))) throw AppError.notFound('MCP user token');
  }

  /** For the runtime: the user's token for the server, opened; an expired one is first renewed with its refresh token, if it has one. */
  async lookup(organizationId: string, serverId: string, userId: string): Promise<StoredTokenLookup> {
    const stored = await this.repo.find(organizationId, serverId, userId);
    if (!stored) return { status: 'none' };
    if (stored.expiresAt === null || stored.expiresAt > this.clock.now()) return { status: 'found', token: this.box.open(stored.accessTokenSealed) };
    if (!stored.refreshTokenSealed || !this.refresher) return { status: 'expired', expiresAt: stored.expiresAt };
    const key = JSON.stringify([organizationId, serverId, userId]);
    let pending = this.refreshing.get(key);
    if (!pending) {
      pending = this.refresh(organizationId, serverId, userId, stored).finally(() => this.refreshing.delete(key));
      this.refreshing.set(key, pending);
    }
    return pending;
  }

  private async refresh(organizationId: string, serverId: string, userId: string, stored: StoredMcpUserToken): Promise<StoredTokenLookup> {
    try {
      const t = await this.refresher!()(organizationId, serverId, this.box.open(stored.refreshTokenSealed!));
      await this.storeObtained(organizationId, serverId, userId, t, stored.refreshTokenSealed);
      return { status: 'found', token: t.accessToken };
    } catch (e) {
      return { status: 'expired', expiresAt: stored.expiresAt!, refreshError: (e as Error).message };
    }
  }

  private async server(organizationId: string, serverId: string): Promise<void> {
    if (!(await this.servers.find(organizationId, serverId))) throw AppError.notFound('MCP server');
  }
}
