import type { Db } from '../db/database.js';
import { pageAndTotal } from '../db/paging.js';

export interface SecretRow {
  name: string;
  sealedValue: string;
  description: string | null;
  createdAt: number;
  updatedAt: number;
}

/** SQL for organization secrets (table `org_secrets`, migration 0001). */
export class SecretsRepository {
  constructor(private readonly db: Db) {}

  /** Inserts or replaces; returns true when the secret is new. */
  async upsert(organizationId: string, name: string, sealedValue: string, description: string | null, now: number): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('org_secrets')
        .select('name')
        .where('organization_id', '=', organizationId)
        .where('name', '=', name)
        .executeTakeFirst();
      await trx
        .insertInto('org_secrets')
        .values({ organization_id: organizationId, name, sealed_value: sealedValue, description, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['organization_id', 'name']).doUpdateSet({ sealed_value: sealedValue, description, updated_at: now }))
        .execute();
      return !existing;
    });
  }

  async find(organizationId: string, name: string): Promise<SecretRow | undefined> {
    const r = await this.db.kysely
      .selectFrom('org_secrets')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
    return r && { name: r.name, sealedValue: r.sealed_value, description: r.description, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) };
  }

  async list(organizationId: string, offset: number, limit: number): Promise<{ rows: Omit<SecretRow, 'sealedValue'>[]; total: number }> {
    const { rows, total } = await pageAndTotal(this.db.kysely.selectFrom('org_secrets').where('organization_id', '=', organizationId), (q) =>
      q.select(['name', 'description', 'created_at', 'updated_at']).orderBy('name').offset(offset).limit(limit),
    );
    return {
      rows: rows.map((r) => ({ name: r.name, description: r.description, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) })),
      total,
    };
  }

  async delete(organizationId: string, name: string): Promise<boolean> {
    const r = await this.db.kysely.deleteFrom('org_secrets').where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
