import type { Db } from '../db/database.js';
import { VersionedCache } from '../lib/versioned-cache.js';
import { isRole, type KeyRole } from '../auth/roles.js';
import { pageAndTotal } from '../db/paging.js';

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
  role: KeyRole;
}

/** A key as `GET /v1/api_keys` lists it: never its hash. */
export interface ApiKeyInfo {
  id: string;
  name: string | null;
  role: KeyRole;
  createdBy: string | null;
  createdAt: number;
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

  async insertKey(row: { id: string; organizationId: string; lookup: string; keyHash: string; name: string | null; now: number; role: KeyRole; createdBy?: string | null }) {
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
        role: row.role,
        created_by: row.createdBy ?? null,
      })
      .onConflict((oc) => oc.column('lookup').doNothing())
      .execute();
  }

  async findKeyByLookup(lookup: string): Promise<Readonly<ApiKeyRow> | undefined> {
    return this.keys.get(lookup, async () => {
      const r = await this.db.kysely.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst();
      // An unknown role (a hand-edited row) grants the least, never the most.
      return r && Object.freeze({ id: r.id, organizationId: r.organization_id, keyHash: r.key_hash, name: r.name, revokedAt: r.revoked_at, role: isRole(r.role) ? r.role : 'read-only' });
    });
  }

  /** Keys of the organization, newest first; revoked ones too (their revocation time says so). */
  async listKeys(organizationId: string, offset: number, limit: number): Promise<{ rows: ApiKeyInfo[]; total: number }> {
    const base = this.db.kysely.selectFrom('api_keys').where('organization_id', '=', organizationId);
    const { rows, total } = await pageAndTotal(base, (q) => q.select(['id', 'name', 'role', 'created_by', 'created_at', 'revoked_at']).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit));
    return { rows: rows.map(toKeyInfo), total };
  }

  async findKey(organizationId: string, id: string): Promise<ApiKeyInfo | undefined> {
    const r = await this.db.kysely
      .selectFrom('api_keys')
      .select(['id', 'name', 'role', 'created_by', 'created_at', 'revoked_at'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && toKeyInfo(r);
  }

  /**
   * Revokes the key unless it is the organization's last active admin key (an organization nobody can administer
   * any more is recovered only with the CLI). Returns false when that rule refused it; idempotent on a revoked key.
   */
  async revokeKey(organizationId: string, id: string, now: number): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const admins = await trx
        .selectFrom('api_keys')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('role', '=', 'admin')
        .where('revoked_at', 'is', null)
        .limit(2)
        .execute();
      if (admins.length === 1 && admins[0]!.id === id) return false;
      await trx
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
      return true;
    });
  }
}

function toKeyInfo(r: { id: string; name: string | null; role: string; created_by: string | null; created_at: number; revoked_at: number | null }): ApiKeyInfo {
  return {
    id: r.id,
    name: r.name,
    role: isRole(r.role) ? r.role : 'read-only',
    createdBy: r.created_by,
    createdAt: Number(r.created_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  };
}
