import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { REDACTED, type SecretBox } from '../lib/secret-box.js';
import type { McpServerCreate, McpServerPatch } from './mcp.schemas.js';
import type { McpServerSettings } from './mcp.types.js';
import type { McpServerRecord, McpServersRepository, StoredMcpServer } from './mcp-servers.repository.js';

/**
 * The MCP server registry (`/v1/mcp_servers`) that `mcp` tool entries reference by `mcp_id`.
 * Secrets (api_key, client_secret, header values) are sealed before they reach the repository and are opened only
 * for a connection (settings()). They read back as "********"; that placeholder written back (a server read and sent
 * again) keeps the stored value, and where nothing is stored it is refused (422) rather than sealed as the key.
 */
export class McpServersService {
  constructor(
    private readonly repo: McpServersRepository,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async create(organizationId: string, input: McpServerCreate): Promise<McpServerRecord> {
    checkAuth(input.auth_type, input.api_key ?? null, ['body']);
    checkOAuthClient({ clientId: input.client_id ?? null, hasClientSecret: Boolean(input.client_secret), additionalScopes: input.additional_scopes }, ['body']);
    const now = this.clock.now();
    const stored: StoredMcpServer = {
      id: newId(),
      organizationId,
      name: input.name,
      description: input.description ?? '',
      url: input.url,
      transport: input.transport,
      authType: input.auth_type,
      apiKeySealed: this.sealOrNull(input.api_key, null, ['body', 'api_key']),
      clientId: input.client_id ?? null,
      clientSecretSealed: this.sealOrNull(input.client_secret, null, ['body', 'client_secret']),
      additionalScopes: input.additional_scopes,
      shareUserTokenAcrossOtherAgents: input.share_user_token_across_other_agents,
      headersSealed: this.sealHeaders(input.headers, {}),
      allowedTools: input.allowed_tools ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.repo.insert(stored);
    return this.describe(stored);
  }

  async get(organizationId: string, id: string): Promise<McpServerRecord> {
    return this.describe(await this.stored(organizationId, id));
  }

  async list(organizationId: string, page: number, perPage: number): Promise<{ items: McpServerRecord[]; total: number }> {
    const { items, total } = await this.repo.list(organizationId, (page - 1) * perPage, perPage);
    return { items: items.map((s) => this.describe(s)), total };
  }

  async update(organizationId: string, id: string, patch: McpServerPatch): Promise<McpServerRecord> {
    const cur = await this.stored(organizationId, id);
    const next: StoredMcpServer = {
      ...cur,
      name: patch.name ?? cur.name,
      description: patch.description === undefined ? cur.description : (patch.description ?? ''),
      url: patch.url ?? cur.url,
      transport: patch.transport ?? cur.transport,
      authType: patch.auth_type ?? cur.authType,
      apiKeySealed: patch.api_key === undefined ? cur.apiKeySealed : this.sealOrNull(patch.api_key, cur.apiKeySealed, ['body', 'api_key']),
      clientId: patch.client_id === undefined ? cur.clientId : patch.client_id,
      clientSecretSealed: patch.client_secret === undefined ? cur.clientSecretSealed : this.sealOrNull(patch.client_secret, cur.clientSecretSealed, ['body', 'client_secret']),
      additionalScopes: patch.additional_scopes ?? cur.additionalScopes,
      shareUserTokenAcrossOtherAgents: patch.share_user_token_across_other_agents ?? cur.shareUserTokenAcrossOtherAgents,
      headersSealed: patch.headers === undefined ? cur.headersSealed : this.sealHeaders(patch.headers, this.openHeaders(cur.headersSealed)),
      allowedTools: patch.allowed_tools === undefined ? cur.allowedTools : patch.allowed_tools,
      updatedAt: this.clock.now(),
    };
    checkAuth(next.authType, next.apiKeySealed, ['body']);
    // Only a PATCH that touches the OAuth client fields is held to their rule, so older entries stay editable.
    if (['client_id', 'client_secret', 'additional_scopes'].some((k) => (patch as Record<string, unknown>)[k] !== undefined)) {
      checkOAuthClient({ clientId: next.clientId, hasClientSecret: next.clientSecretSealed !== null, additionalScopes: next.additionalScopes }, ['body']);
    }
    if (!(await this.repo.replace(next))) throw AppError.notFound('MCP server');
    return this.describe(next);
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!(await this.repo.delete(organizationId, id))) throw AppError.notFound('MCP server');
  }

  /** The entry with its secrets opened, for a connection; undefined when it does not exist in the organization. */
  async settings(organizationId: string, id: string): Promise<McpServerSettings | undefined> {
    const s = await this.repo.find(organizationId, id);
    if (!s) return undefined;
    return {
      name: s.name,
      url: s.url,
      transport: s.transport,
      authType: s.authType,
      apiKey: s.apiKeySealed ? this.box.open(s.apiKeySealed) : null,
      clientId: s.clientId,
      clientSecret: s.clientSecretSealed ? this.box.open(s.clientSecretSealed) : null,
      additionalScopes: s.additionalScopes,
      shareUserTokenAcrossOtherAgents: s.shareUserTokenAcrossOtherAgents,
      headers: this.openHeaders(s.headersSealed),
      allowedTools: s.allowedTools,
    };
  }

  private async stored(organizationId: string, id: string): Promise<StoredMcpServer> {
    const s = await this.repo.find(organizationId, id);
    if (!s) throw AppError.notFound('MCP server');
    return s;
  }

  private describe(s: StoredMcpServer): McpServerRecord {
    const { apiKeySealed, clientSecretSealed, headersSealed, ...rest } = s;
    return { ...rest, hasApiKey: apiKeySealed !== null, hasClientSecret: clientSecretSealed !== null, headerNames: Object.keys(this.openHeaders(headersSealed)) };
  }

  /** `stored`: the sealed value "********" stands for. */
  private sealOrNull(v: string | null | undefined, stored: string | null, loc: (string | number)[]): string | null {
    if (v === null || v === undefined || v === '') return null;
    if (v !== REDACTED) return this.box.seal(v);
    if (stored) return stored;
    throw AppError.invalid(loc, placeholderMessage);
  }

  /** `stored`: the current header values, which a "********" value stands for. */
  private sealHeaders(h: Record<string, string>, stored: Record<string, string>): string | null {
    const out: Record<string, string> = {};
    for (const [name, v] of Object.entries(h)) {
      if (v !== REDACTED) out[name] = v;
      else if (stored[name] !== undefined) out[name] = stored[name];
      else throw AppError.invalid(['body', 'headers', name], placeholderMessage);
    }
    return Object.keys(out).length ? this.box.sealJson(out) : null;
  }

  private openHeaders(sealed: string | null): Record<string, string> {
    return sealed ? this.box.openJson<Record<string, string>>(sealed) : {};
  }
}

const placeholderMessage = `"${REDACTED}" stands for a stored secret, and none is stored here: send the real value`;

/** An api_key server without a key could never connect: refuse it where it is configured. */
export function checkAuth(authType: string, apiKey: string | null, loc: (string | number)[]): void {
  if (authType === 'api_key' && !apiKey) throw AppError.invalid([...loc, 'api_key'], "api_key is required when auth_type is 'api_key'");
}

/**
 * The OAuth client fields act only through the interactive flow, which needs a client_id (docs/decisions.md,
 * "MCP servers: interactive OAuth"): a client_secret or additional_scopes without one would be inert, so they are
 * refused.
 */
export function checkOAuthClient(f: { clientId: string | null; hasClientSecret: boolean; additionalScopes: string[] }, loc: (string | number)[]): void {
  if (f.clientId) return;
  if (f.hasClientSecret) throw AppError.invalid([...loc, 'client_secret'], 'client_secret needs a client_id (it authenticates the OAuth client at the token endpoint)');
  if (f.additionalScopes.length) throw AppError.invalid([...loc, 'additional_scopes'], 'additional_scopes need a client_id (they are requested by the interactive OAuth flow)');
}
