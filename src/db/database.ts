import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Sqlite from 'libsql';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

/** The database handle every repository receives. Dialect differences stay in src/db/. */
export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: DialectName;
  /** PostgreSQL connection string, for components that need a dedicated connection (LISTEN). */
  readonly url?: string;
  close(): Promise<void>;
}

// int8 (COUNT, bigint timestamps) arrives as a string by default; every value we store fits a double.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function openDatabase(opts: { url?: string; sqlitePath: string; poolSize?: number }): Db {
  if (opts.url) {
    const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10 });
    // A dropped idle connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', url: opts.url, close: () => kysely.destroy() };
  }
  if (opts.sqlitePath !== ':memory:') mkdirSync(dirname(opts.sqlitePath), { recursive: true });
  const raw = new Sqlite(opts.sqlitePath);
  // WAL lets readers proceed while a writer commits; busy_timeout makes concurrent processes wait, not fail.
  raw.exec('PRAGMA journal_mode=WAL');
  raw.exec('PRAGMA busy_timeout=5000');
  raw.exec('PRAGMA synchronous=NORMAL');
  raw.exec('PRAGMA foreign_keys=ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(raw) as never }) });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
}

const STATEMENT_CACHE_MAX = 500;

/**
 * What Kysely's SQLite driver sees of the database. Two changes to the plain handle:
 * - prepared statements are cached by SQL text: Kysely prepares on every query, and preparing was the largest
 *   single cost in the request profiles (queries are parameterised, so the set of texts is small);
 * - `begin` becomes `begin immediate`: a deferred transaction that reads and then writes fails at once with
 *   SQLITE_BUSY when another process (a separate worker role) holds the write lock, where an immediate one
 *   waits busy_timeout for it.
 */
function withStatementCache(raw: Sqlite.Database) {
  const cache = new Map<string, ReturnType<Sqlite.Database['prepare']>>();
  return {
    prepare(sql: string) {
      const text = sql === 'begin' ? 'begin immediate' : sql;
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = raw.prepare(text);
        if (cache.size >= STATEMENT_CACHE_MAX) cache.delete(cache.keys().next().value!);
        cache.set(text, stmt);
      }
      return stmt;
    },
    close() {
      cache.clear();
      raw.close();
    },
  };
}

/** Booleans are stored as 0/1 integers on both dialects, so one set of queries serves both. */
export const toInt = (b: boolean | undefined | null): number => (b ? 1 : 0);
export const toBool = (n: number | boolean | null | undefined): boolean => n === true || n === 1;

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

/** True when a driver error is a unique-constraint violation (either dialect). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === '23505' || /UNIQUE constraint failed/i.test(err?.message ?? '') || err?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}
