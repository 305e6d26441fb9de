import type { Kysely } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Access (issue 24): API key roles, the owner of an agent for `access_scope: personal`, and the shared token buckets
 * of the rate limits.
 *
 * - `api_keys.role`: every key that existed before roles was an administrator, and stays one (default 'admin');
 *   `created_by` records which principal created a key through `POST /v1/api_keys` (null: the CLI or SQL).
 * - `agents.owner` is the authenticated principal that created the agent (`api_key:<key id>` or `jwt:<sub>`), never
 *   the caller-writable `created_by`; `agents.personal` mirrors the published configuration's `access_scope` so lists
 *   filter in SQL. Existing agents: the owner is known only where `created_by` is the id of a key of the same
 *   organization (the service filled it from the key when the caller gave none); the others keep no owner and stay
 *   visible to the whole organization, as they were.
 * - `rate_buckets`: one row per limited bucket (a key, a public webhook URL); processes lease tokens from it in
 *   batches (src/auth/rate-limiter.ts), so no request pays a round trip for it.
 */
const PAGE = 200;

export const access0015: MigrationDef = {
  name: '0015_access',
  async up(db, dialect) {
    await db.schema.alterTable('api_keys').addColumn('role', 'text', (c) => c.notNull().defaultTo('admin')).execute();
    await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
    await db.schema.alterTable('agents').addColumn('owner', 'text').execute();
    await db.schema.alterTable('agents').addColumn('personal', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema
      .createTable('rate_buckets')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('bucket', 'text', (c) => c.notNull())
      .addColumn('tokens', dialect === 'postgres' ? 'double precision' : 'real', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rate_buckets_pk', ['organization_id', 'bucket'])
      .execute();
    await backfillOwners(db);
  },
};

async function backfillOwners(db: Kysely<any>): Promise<void> {
  let lastId = '';
  for (;;) {
    const rows = await db.selectFrom('agents').select(['id', 'organization_id', 'created_by', 'config']).where('id', '>', lastId).orderBy('id').limit(PAGE).execute();
    for (const r of rows) {
      if (!r.created_by) continue;
      const key = await db.selectFrom('api_keys').select('id').where('id', '=', r.created_by).where('organization_id', '=', r.organization_id).executeTakeFirst();
      if (!key) continue;
      let scope: unknown;
      try {
        scope = (JSON.parse(r.config) as { access_scope?: unknown }).access_scope;
      } catch {
        scope = undefined;
      }
      await db
        .updateTable('agents')
        .set({ owner: `api_key:${key.id}`, personal: scope === 'organizational' ? 0 : 1 })
        .where('id', '=', r.id)
        .execute();
    }
    if (rows.length < PAGE) break;
    lastId = rows[rows.length - 1].id;
  }
}
