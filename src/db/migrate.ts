import { sql } from 'kysely';
import type { Db } from './database.js';
import { migrations, type MigrationContext } from './migrations/index.js';

/**
 * Applies pending migrations. Several processes may start at once on PostgreSQL:
 * an advisory lock serialises them; on SQLite the write transaction does. Then the migrations' backfills run
 * (each after the commit, in transactions of its own; see MigrationDef.backfill).
 *
 * `before`: only the migrations listed before that one, and no backfills (tests of a data migration write rows as
 * the previous version did first).
 */
export async function migrate(db: Db, ctx: MigrationContext = {}, opts: { before?: string } = {}): Promise<string[]> {
  const stop = opts.before === undefined ? migrations.length : migrations.findIndex((m) => m.name === opts.before);
  if (stop < 0) throw new Error(`no migration ${opts.before}`);
  const wanted = migrations.slice(0, stop);
  const k = db.kysely as any;
  await sql`create table if not exists agentry_migrations (name text primary key, applied_at bigint not null)`.execute(k);
  const applied: string[] = [];
  await k.transaction().execute(async (trx: any) => {
    if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(727274)`.execute(trx);
    const done = new Set<string>((await trx.selectFrom('agentry_migrations').select('name').execute()).map((r: any) => r.name));
    for (const m of wanted) {
      if (done.has(m.name)) continue;
      await m.up(trx, db.dialect, ctx);
      await trx.insertInto('agentry_migrations').values({ name: m.name, applied_at: Date.now() }).execute();
      applied.push(m.name);
    }
  });
  if (opts.before === undefined) for (const m of migrations) await m.backfill?.(db.kysely, db.dialect, ctx);
  return applied;
}
