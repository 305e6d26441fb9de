import { sql } from 'kysely';
import type { Db } from './database.js';
import { migrations, type MigrationContext } from './migrations/index.js';

/**
 * Applies pending migrations. Several processes may start at once on PostgreSQL:
 * an advisory lock serialises them; on SQLite the write transaction does.
 */
export async function migrate(db: Db, ctx: MigrationContext = {}): Promise<string[]> {
  const k = db.kysely as any;
  await sql`create table if not exists agentry_migrations (name text primary key, applied_at bigint not null)`.execute(k);
  const applied: string[] = [];
  await k.transaction().execute(async (trx: any) => {
    if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(727274)`.execute(trx);
    const done = new Set<string>((await trx.selectFrom('agentry_migrations').select('name').execute()).map((r: any) => r.name));
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      await m.up(trx, db.dialect, ctx);
      await trx.insertInto('agentry_migrations').values({ name: m.name, applied_at: Date.now() }).execute();
      applied.push(m.name);
    }
  });
  return applied;
}
