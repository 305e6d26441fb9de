import { createHash } from 'node:crypto';
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
  /**
   * A value that changes whenever the configuration tables (CONFIG_CHANGE) may have changed, in this process or
   * any other; undefined where that cannot be known cheaply (PostgreSQL), so callers must read through. Lets hot
   * paths cache what every request reads (the webhook's channel and agent) without ever serving a stale value.
   */
  configVersion(): string | undefined;
  close(): Promise<void>;
}

// int8 (COUNT, bigint timestamps) arrives as a string by default; every value we store fits a double.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function openDatabase(opts: { url?: string; sqlitePath: string; poolSize?: number }): Db {
  if (opts.url) {
    const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10 });
    // A dropped idle connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool) }) });
    return { kysely, dialect: 'postgres', url: opts.url, configVersion: () => undefined, close: () => kysely.destroy() };
  }
  if (opts.sqlitePath !== ':memory:') mkdirSync(dirname(opts.sqlitePath), { recursive: true });
  const raw = new Sqlite(opts.sqlitePath);
  // WAL lets readers proceed while a writer commits; busy_timeout makes concurrent processes wait, not fail.
  raw.exec('PRAGMA journal_mode=WAL');
  raw.exec('PRAGMA busy_timeout=5000');
  raw.exec('PRAGMA synchronous=NORMAL');
  raw.exec('PRAGMA foreign_keys=ON');
  // Checkpoint every ~40 MB of WAL instead of ~4 MB: the hot pages of a write-heavy queue (the rightmost leaves
  // of the tasks and events indexes) are copied back once per checkpoint, not ten times; measured +12% accepted
  // webhooks/s and p99 21 -> 13 ms. The WAL file is truncated back to 64 MB at most after a checkpoint.
  raw.exec('PRAGMA wal_autocheckpoint=10000');
  raw.exec('PRAGMA journal_size_limit=67108864');
  const handle = withStatementCache(raw);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle as never }) });
  // data_version moves when another connection (another process) commits; our own writes are counted as they run.
  const dataVersion = raw.prepare('PRAGMA data_version');
  // Read once per event-loop turn (it costs ~25 us, and a loaded webhook listener asks twice per request): a
  // commit by another process is seen from the next turn on. This process's own writes count at once.
  let turnVersion: number | undefined;
  const otherProcesses = () => {
    if (turnVersion === undefined) {
      turnVersion = (dataVersion.get() as { data_version: number }).data_version;
      setImmediate(() => (turnVersion = undefined));
    }
    return turnVersion;
  };
  return {
    kysely,
    dialect: 'sqlite',
    configVersion: () => `${otherProcesses()}:${handle.configWrites()}`,
    close: () => kysely.destroy(),
  };
}

/**
 * Statements that change what hot paths cache (see Db.configVersion): writes to organizations, keys, agents and
 * webhook channels, and any schema change.
 */
const CONFIG_CHANGE =
  /^\s*(?:(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?(?:organizations|api_keys|agents|agent_versions|webhook_channels)"?[\s(]|(?:alter|drop|create)\s)/i;

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
  const cache = new Map<string, Statement>();
  let configWrites = 0;
  return {
    prepare(sql: string) {
      const text = sql === 'begin' ? 'begin immediate' : sql;
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = raw.prepare(text);
        // Writes to configuration tables are counted when they run (a rolled-back one only costs a re-read).
        if (CONFIG_CHANGE.test(text)) stmt = counting(stmt, () => configWrites++);
        if (cache.size >= STATEMENT_CACHE_MAX) cache.delete(cache.keys().next().value!);
        cache.set(text, stmt);
      }
      return stmt;
    },
    configWrites: () => configWrites,
    close() {
      cache.clear();
      raw.close();
    },
  };
}

/** Longer texts (multi-row inserts of varying size) are not worth a server-side statement each. */
const NAMED_STATEMENT_MAX_CHARS = 2000;
const NAMED = Symbol('named statements');

/**
 * What Kysely's PostgreSQL driver sees of the pool: parameterised queries go as named prepared statements, so
 * each connection parses and plans a query text once instead of on every execution (Kysely sends unnamed ones).
 * The name is a hash of the text; texts are parameterised, so there are few of them.
 */
function withNamedStatements(pool: pg.Pool) {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      name = `k${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    async connect() {
      const client = (await pool.connect()) as pg.PoolClient & { [NAMED]?: true };
      // Pool clients are reused: patch each once.
      if (!client[NAMED]) {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        client.query = ((config: unknown, values?: unknown[]) =>
          typeof config === 'string' && values?.length && config.length <= NAMED_STATEMENT_MAX_CHARS
            ? query({ name: nameOf(config), text: config, values })
            : query(config, values)) as pg.PoolClient['query'];
        client[NAMED] = true;
      }
      return client;
    },
    end: () => pool.end(),
  };
}

type Statement = ReturnType<Sqlite.Database['prepare']>;

/** The statement as Kysely's driver uses it (reader, all, run, iterate), calling `onRun` after each execution. */
function counting(statement: Statement, onRun: () => void): Statement {
  // Kysely passes one parameters array; the variadic signature is libsql's.
  const stmt = statement as unknown as Record<'all' | 'run' | 'iterate', (...a: unknown[]) => unknown> & { reader: boolean };
  return {
    get reader() {
      return stmt.reader;
    },
    all: (...args: unknown[]) => {
      try {
        return stmt.all(...args);
      } finally {
        onRun();
      }
    },
    run: (...args: unknown[]) => {
      try {
        return stmt.run(...args);
      } finally {
        onRun();
      }
    },
    iterate: (...args: unknown[]) => {
      onRun();
      return stmt.iterate(...args);
    },
  } as unknown as Statement;
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
