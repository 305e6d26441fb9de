import type { Insertable, Selectable } from 'kysely';
import { parseJson, toBool, toInt, type Db } from '../db/database.js';
import type { McpTables } from './mcp.tables.js';
import type { McpAuthType, McpTransport } from './mcp.types.js';
import { pageAndTotal } from '../db/paging.js';

type Row = Selectable<McpTables['mcp_servers']>;

/** A registry entry as stored: secrets still sealed. */
export interface StoredMcpServer {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  url: string;
  transport: McpTransport;
  authType: McpAuthType;
  apiKeySealed: string | null;
  clientId: string | null;
  clientSecretSealed: string | null;
  additionalScopes: string[];
  shareUserTokenAcrossOtherAgents: boolean;
  headersSealed: string | null;
  allowedTools: string[] | null;
  createdAt: number;
  updatedAt: number;
}

/** A registry entry as services show it: which secrets exist, never their values. */
export interface McpServerRecord extends Omit<StoredMcpServer, 'apiKeySealed' | 'clientSecretSealed' | 'headersSealed'> {
  hasApiKey: boolean;
  hasClientSecret: boolean;
  headerNames: string[];
}

function fromRow(r: Row): StoredMcpServer {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    description: r.description,
    url: r.url,
    transport: r.transport as McpTransport,
    authType: r.auth_type as McpAuthType,
    apiKeySealed: r.api_key_sealed,
    clientId: r.client_id,
    clientSecretSealed: r.client_secret_sealed,
    additionalScopes: parseJson(r.additional_scopes, []),
    shareUserTokenAcrossOtherAgents: toBool(r.share_user_token_across_other_agents),
    headersSealed: r.headers_sealed,
    allowedTools: parseJson<string[] | null>(r.allowed_tools, null),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toRow(s: StoredMcpServer): Insertable<McpTables['mcp_servers']> {
  return {
    id: s.id,
    organization_id: s.organizationId,
    name: s.name,
    description: s.description,
    url: s.url,
    transport: s.transport,
    auth_type: s.authType,
    api_key_sealed: s.apiKeySealed,
    client_id: s.clientId,
    client_secret_sealed: s.clientSecretSealed,
    additional_scopes: JSON.stringify(s.additionalScopes),
    share_user_token_across_other_agents: toInt(s.shareUserTokenAcrossOtherAgents),
    headers_sealed: s.headersSealed,
    allowed_tools: s.allowedTools === null ? null : JSON.stringify(s.allowedTools),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/** SQL of the MCP server registry; every query is scoped to one organization. */
export class McpServersRepository {
  constructor(private readonly db: Db) {}

  async insert(s: StoredMcpServer): Promise<void> {
    await this.db.kysely.insertInto('mcp_servers').values(toRow(s)).execute();
  }

  /** Replaces every mutable column of an existing entry; false when it does not exist in the organization. */
  async replace(s: StoredMcpServer): Promise<boolean> {
    const { id: _id, organization_id: _org, created_at: _c, ...values } = toRow(s);
    const r = await this.db.kysely
      .updateTable('mcp_servers')
      .set(values)
      .where('organization_id', '=', s.organizationId)
      .where('id', '=', s.id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async find(organizationId: string, id: string): Promise<StoredMcpServer | undefined> {
    const r = await this.db.kysely.selectFrom('mcp_servers').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return r && fromRow(r);
  }

  async list(organizationId: string, offset: number, limit: number): Promise<{ items: StoredMcpServer[]; total: number }> {
    const { rows, total } = await pageAndTotal(this.db.kysely.selectFrom('mcp_servers').where('organization_id', '=', organizationId), (q) =>
      q.selectAll().orderBy('id', 'desc').offset(offset).limit(limit),
    );
    return { items: rows.map(fromRow), total };
  }

  /** Deletes the entry and the user tokens stored for it (migration 0008). */
  async delete(organizationId: string, id: string): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('mcp_servers').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      await trx.deleteFrom('mcp_user_tokens').where('organization_id', '=', organizationId).where('mcp_server_id', '=', id).execute();
      return true;
    });
  }
}
