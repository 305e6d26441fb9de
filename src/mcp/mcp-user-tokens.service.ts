import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { McpServersRepository } from './mcp-servers.repository.js';
import type { McpUserTokenMeta, McpUserTokensRepository } from './mcp-user-tokens.repository.js';

/** What the runtime learns about a user's stored token for a server. */
export type StoredTokenLookup = { status: 'found'; token: string } | { status: 'expired'; expiresAt: number } | { status: 'none' };

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
  ) {}

  /** Creates or replaces the user's token; `expiresIn` in seconds from now (absent: no expiry). 409 unless oauth2. */
  async put(organizationId: string, serverId: string, userId: string, accessToken: string, expiresIn: number | null | undefined): Promise<{ token: McpUserTokenMeta; created: boolean }> {
    const server = await this.servers.find(organizationId, serverId);
    if (!server) throw AppError.notFound('MCP server');
    if (server.authType !== 'oauth2') {
      throw new AppError('conflict', `MCP server '${server.name}' uses auth_type '${server.authType}': user tokens are stored only for oauth2 servers`);
    }
    const now = this.clock.now();
    const expiresAt = expiresIn === null || expiresIn === undefined ? null : now + expiresIn * 1000;
    const created = await this.repo.upsert(organizationId, serverId, userId, this.box.seal(accessToken), expiresAt, now);
    const stored = await this.repo.find(organizationId, serverId, userId);
    if (!stored) throw AppError.notFound('MCP user token');
    const { accessTokenSealed: _sealed, ...token } = stored;
    return { token, created };
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

  /** For the runtime: the user's token for the server, opened, unless it is missing or expired. */
  async lookup(organizationId: string, serverId: string, userId: string): Promise<StoredTokenLookup> {
    const stored = await this.repo.find(organizationId, serverId, userId);
    if (!stored) return { status: 'none' };
    if (stored.expiresAt !== null && stored.expiresAt <= this.clock.now()) return { status: 'expired', expiresAt: stored.expiresAt };
    return { status: 'found', token: this.box.open(stored.accessTokenSealed) };
  }

  private async server(organizationId: string, serverId: string): Promise<void> {
    if (!(await this.servers.find(organizationId, serverId))) throw AppError.notFound('MCP server');
  }
}
