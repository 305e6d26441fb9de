import { VersionedCache } from '../lib/versioned-cache.js';
import type { Db } from '../db/database.js';

export interface WebhookChannel {
  agentId: string;
  organizationId: string;
  secretHash: string;
}

export class WebhookChannelsRepository {
  /** Secret hash -> channel, kept while no configuration table changed (exact; read-through on PostgreSQL). */
  private readonly bySecret: VersionedCache<WebhookChannel>;

  constructor(private readonly db: Db) {
    this.bySecret = new VersionedCache(() => db.configVersion());
  }

  /**
   * The channel a public URL's secret hash belongs to. This is the one lookup not filtered by organization:
   * the secret is what establishes the organization.
   */
  async findBySecretHash(secretHash: string): Promise<WebhookChannel | undefined> {
    return this.bySecret.get(secretHash, async () => {
      const r = await this.db.kysely.selectFrom('webhook_channels').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
      return r && Object.freeze({ agentId: r.agent_id, organizationId: r.organization_id, secretHash: r.secret_hash });
    });
  }

  /** `findBySecretHash` when its answer is cached and current; undefined means "ask findBySecretHash". */
  cachedBySecretHash(secretHash: string): WebhookChannel | undefined {
    return this.bySecret.peek(secretHash);
  }

  async find(organizationId: string, agentId: string): Promise<WebhookChannel | undefined> {
    const r = await this.db.kysely
      .selectFrom('webhook_channels')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return r && { agentId: r.agent_id, organizationId: r.organization_id, secretHash: r.secret_hash };
  }

  /** Creates the channel unless one exists; true when this call created it (so its secret is the live one). */
  async insertIfAbsent(organizationId: string, agentId: string, secretHash: string, now: number): Promise<boolean> {
    const r = await this.db.kysely
      .insertInto('webhook_channels')
      .values({ agent_id: agentId, organization_id: organizationId, secret_hash: secretHash, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('agent_id').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Replaces the secret (creating the channel when absent): the old URL stops matching in the same statement. */
  async upsertSecret(organizationId: string, agentId: string, secretHash: string, now: number): Promise<void> {
    await this.db.kysely
      .insertInto('webhook_channels')
      .values({ agent_id: agentId, organization_id: organizationId, secret_hash: secretHash, created_at: now, updated_at: now })
      .onConflict((oc) =>
        oc.column('agent_id').doUpdateSet({ secret_hash: secretHash, updated_at: now }).where('webhook_channels.organization_id', '=', organizationId),
      )
      .execute();
  }

  async delete(organizationId: string, agentId: string): Promise<void> {
    await this.db.kysely.deleteFrom('webhook_channels').where('organization_id', '=', organizationId).where('agent_id', '=', agentId).execute();
  }
}
