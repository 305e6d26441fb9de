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

/**
 * Runs `fn` unless another process of the database is running it under the same `key`: PostgreSQL takes a session
 * advisory lock with `pg_try_advisory_lock` on one pool connection, pinned for the whole of `fn` (which gets it), so
 * the lock spans `fn`'s own transactions and is released with the session if the process dies. Returns `{ ran:
 * false }` at once when the lock is taken. SQLite runs `fn` on the one connection of the process: its writers are
 * serial, so there is no lock to take, and work several processes duplicate must be idempotent.
 */
export async function unlessLocked<T>(db: Db, key: string, fn: (k: Kysely<Database>) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  if (db.dialect !== 'postgres') return { ran: true, value: await fn(db.kysely) };
  return db.kysely.connection().execute(async (conn) => {
    const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(hashtextextended(${key}, 0)) as ok`.execute(conn);
    if (!got.rows[0]?.ok) return { ran: false } as const;
    try {
      return { ran: true, value: await fn(conn) } as const;
    } finally {
      await sql`select pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(conn);
    }
  });
}
