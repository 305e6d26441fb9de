import type { Db } from '../db/database.js';
import { VersionedCache } from '../lib/versioned-cache.js';

export interface Organization {
  id: string;
  name: string;
  createdAt: number;
}

export interface ApiKeyRow {
  id: string;
  organizationId: string;
  keyHash: string;
  name: string | null;
  revokedAt: number | null;
}

export class OrgsRepository {
  /** Lookup -> key, kept while no configuration table changed (exact: see Db.configVersion); auth is on every request. */
  private readonly keys: VersionedCache<Readonly<ApiKeyRow>>;

  constructor(private readonly db: Db) {
    this.keys = new VersionedCache(() => db.configVersion(), 10_000);
  }

  async findOrgByName(name: string): Promise<Organization | undefined> {
    const r = await this.db.kysely.selectFrom('organizations').selectAll().where('name', '=', name).executeTakeFirst();
    return r && { id: r.id, name: r.name, createdAt: Number(r.created_at) };
  }

  async findOrgById(id: string): Promise<Organization | undefined> {
    const r = await this.db.kysely.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { id: r.id, name: r.name, createdAt: Number(r.created_at) };
  }

  /** Inserts unless the name exists; returns the stored organization either way (race-safe). */
  async ensureOrg(id: string, name: string, now: number): Promise<Organization> {
    await this.db.kysely
      .insertInto('organizations')
      .values({ id, name, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (await this.findOrgByName(name))!;
  }

  async insertKey(row: { id: string; organizationId: string; lookup: string; keyHash: string; name: string | null; now: number }) {
    await this.db.kysely
      .insertInto('api_keys')
      .values({
        id: row.id,
        organization_id: row.organizationId,
        lookup: row.lookup,
        key_hash: row.keyHash,
        name: row.name,
        created_at: row.now,
        revoked_at: null,
      })
      .onConflict((oc) => oc.column('lookup').doNothing())
      .execute();
  }

  async findKeyByLookup(lookup: string): Promise<Readonly<ApiKeyRow> | undefined> {
    return this.keys.get(lookup, async () => {
      const r = await this.db.kysely.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst();
      return r && Object.freeze({ id: r.id, organizationId: r.organization_id, keyHash: r.key_hash, name: r.name, revokedAt: r.revoked_at });
    });
  }
}
