import { sql, type Kysely } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/**
 * Serialises transactions that name the same `key` until they commit, so "count, then insert if under the cap" holds
 * under concurrency. PostgreSQL runs writers concurrently at READ COMMITTED, so both could count below the cap; a
 * transaction-scoped advisory lock orders them. SQLite needs nothing: its write transaction already admits one writer.
 */
export async function serialiseOn(db: Db, trx: Kysely<Database>, key: string): Promise<void> {
  if (db.dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}
