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
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw as never }) });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
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
