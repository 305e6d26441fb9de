import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { McpUserTokensTables } from './mcp.tables.js';
import { pageAndTotal } from '../db/paging.js';

type Row = Selectable<McpUserTokensTables['mcp_user_tokens']>;

/** A stored token's metadata: everything but the token. */
export interface McpUserTokenMeta {
  mcpServerId: string;
  userId: string;
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface StoredMcpUserToken extends McpUserTokenMeta {
  accessTokenSealed: string;
  /** Migration 0025: null when the token came without one (always for PUT). */
  refreshTokenSealed: string | null;
}

/** What is written for (server, user): the sealed tokens and the access token's expiry. */
export interface SealedTokenSet {
  accessTokenSealed: string;
  refreshTokenSealed: string | null;
  expiresAt: number | null;
}

const num = (v: number | null) => (v === null ? null : Number(v));

function meta(r: Omit<Row, 'access_token_sealed' | 'refresh_token_sealed' | 'organization_id'>): McpUserTokenMeta {
  return { mcpServerId: r.mcp_server_id, userId: r.user_id, expiresAt: num(r.expires_at), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) };
}

/** SQL of `mcp_user_tokens` (migration 0008); every query is scoped to one organization and one server. */
export class McpUserTokensRepository {
  constructor(private readonly db: Db) {}

  /** Inserts or replaces the tokens of (server, user); true when it is new. Keeps created_at on replace. */
  async upsert(organizationId: string, serverId: string, userId: string, t: SealedTokenSet, now: number): Promise<boolean> {
    const values = { access_token_sealed: t.accessTokenSealed, refresh_token_sealed: t.refreshTokenSealed, expires_at: t.expiresAt };
    return this.db.kysely.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('mcp_user_tokens')
        .select('user_id')
        .where('organization_id', '=', organizationId)
        .where('mcp_server_id', '=', serverId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      await trx
        .insertInto('mcp_user_tokens')
        .values({ organization_id: organizationId, mcp_server_id: serverId, user_id: userId, ...values, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['organization_id', 'mcp_server_id', 'user_id']).doUpdateSet({ ...values, updated_at: now }))
        .execute();
      return !existing;
    });
  }

  async find(organizationId: string, serverId: string, userId: string): Promise<StoredMcpUserToken | undefined> {
    const r = await this.db.kysely
      .selectFrom('mcp_user_tokens')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('mcp_server_id', '=', serverId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return r && { ...meta(r), accessTokenSealed: r.access_token_sealed, refreshTokenSealed: r.refresh_token_sealed ?? null };
  }

  /** Metadata only: the sealed token is not even read. */
  async list(organizationId: string, serverId: string, offset: number, limit: number): Promise<{ items: McpUserTokenMeta[]; total: number }> {
    const base = this.db.kysely.selectFrom('mcp_user_tokens').where('organization_id', '=', organizationId).where('mcp_server_id', '=', serverId);
    const { rows, total } = await pageAndTotal(base, (q) => q.select(['mcp_server_id', 'user_id', 'expires_at', 'created_at', 'updated_at']).orderBy('user_id').offset(offset).limit(limit));
    return { items: rows.map(meta), total };
  }

  async delete(organizationId: string, serverId: string, userId: string): Promise<boolean> {
    const r = await this.db.kysely
      .deleteFrom('mcp_user_tokens')
      .where('organization_id', '=', organizationId)
      .where('mcp_server_id', '=', serverId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
