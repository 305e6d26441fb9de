import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Sqlite from 'libsql';
import { ensurePrivateFile, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenMode } from '../lib/private-files.js';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { createLogger, type Logger } from '../lib/logger.js';
import { PgConfigWatch } from './pg-config-watch.js';
import { pgModule } from './pg-module.js';
import { PgNotifications } from './pg-notifications.js';
import { GatedListReads, LIST_READ_TIMEOUT_MS, ThreadedListReads, type ListReads } from './list-reads.js';
import { withPatchedClients } from './pg-pool.js';
import type { Database } from './schema.js';
import { AUTOCHECKPOINT_PAGES, SqliteCheckpointer } from './sqlite-checkpointer.js';
import { withStatementCache } from './sqlite-handle.js';

export type DialectName = 'sqlite' | 'postgres';

/** The database handle every repository receives. Dialect differences stay in src/db/. */
export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: DialectName;
  /** PostgreSQL: the process's one LISTEN connection, shared by every channel (pg-notifications.ts). */
  readonly notifications?: PgNotifications;
  /**
   * A value that changes whenever the configuration tables (config-change.ts) may have changed: at once for this
   * process's writes; for another process's, from the next event-loop turn on libsql and when its commit
   * notification arrives on PostgreSQL (PgConfigWatch). Undefined while that cannot be known (PostgreSQL before its
   * listening connection is up, or while it is down): callers read through. Lets hot paths cache what every
   * request reads (an API key, the webhook's channel and agent).
   */
  configVersion(): string | undefined;
  /** Reads whose cost grows with the data (the task lists): off the event loop, a few at a time (list-reads.ts). */
  readonly lists: ListReads;
  /** libsql: the WAL checkpoint thread (sqlite-checkpointer.ts). */
  readonly checkpointer?: SqliteCheckpointer;
  /** PostgreSQL: the pool's connections right now, for /metrics. */
  poolStats?(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export function openDatabase(opts: { url?: string; sqlitePath: string; poolSize?: number; log?: Logger }): Db {
  if (opts.url) {
    const pool = new (pgModule().Pool)({ connectionString: opts.url, max: opts.poolSize ?? 10 });
    // A dropped idle connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const notifications = new PgNotifications(opts.url, opts.log ?? createLogger('silent'));
    const watch = new PgConfigWatch(notifications);
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withPatchedClients(pool, () => watch.localChange()) }) });
    // A third of the pool at most, so long lists leave the accept path its connections.
    const lists = new GatedListReads(kysely, Math.max(1, Math.floor((opts.poolSize ?? 10) / 3)), LIST_READ_TIMEOUT_MS);
    return {
      kysely,
      dialect: 'postgres',
      lists,
      notifications,
      configVersion: () => watch.version(),
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      close: async () => {
        await lists.close();
        await notifications.close();
        await kysely.destroy();
      },
    };
  }
  if (opts.sqlitePath !== ':memory:') createPrivateDatabaseFile(opts.sqlitePath, opts.log);
  const raw = new Sqlite(opts.sqlitePath);
  // WAL lets readers proceed while a writer commits; busy_timeout makes concurrent processes wait, not fail.
  raw.exec('PRAGMA journal_mode=WAL');
  raw.exec('PRAGMA busy_timeout=5000');
  raw.exec('PRAGMA synchronous=NORMAL');
  raw.exec('PRAGMA foreign_keys=ON');
  // Checkpoint every ~40 MB of WAL instead of ~4 MB: the hot pages of a write-heavy queue (the rightmost leaves
  // of the tasks and events indexes) are copied back once per checkpoint, not ten times; measured +12% accepted
  // webhooks/s and p99 21 -> 13 ms. The WAL file is truncated back to 64 MB at most after a checkpoint.
  raw.exec(`PRAGMA wal_autocheckpoint=${AUTOCHECKPOINT_PAGES}`);
  raw.exec('PRAGMA journal_size_limit=67108864');
  // Under write load the checkpoints move to a thread of their own (sqlite-checkpointer.ts).
  const checkpointer = opts.sqlitePath === ':memory:' ? undefined : new SqliteCheckpointer(raw, opts.sqlitePath, (why) => opts.log?.warn(why));
  const handle = withStatementCache(raw);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle as never }) });
  // In memory no other connection sees the data: the lists then run on the event loop (tests, trials).
  const lists = opts.sqlitePath === ':memory:' ? new GatedListReads(kysely, 2) : new ThreadedListReads(opts.sqlitePath);
  // data_version moves when another connection (another process) commits; our own writes are counted as they run.
  // As a bare array: the row object (with its `_metadata`) cost ~20% of the read.
  const dataVersion = raw.prepare('PRAGMA data_version').raw(true);
  // Read once per event-loop turn (it costs ~25 us, and a loaded webhook listener asks twice per request): a
  // commit by another process is seen from the next turn on. This process's own writes count at once.
  let turnVersion: number | undefined;
  let lastOther = -1;
  let lastOwn = -1;
  let lastVersion = '';
  const otherProcesses = () => {
    if (turnVersion === undefined) {
      turnVersion = (dataVersion.get() as [number])[0];
      setImmediate(() => (turnVersion = undefined));
    }
    return turnVersion;
  };
  return {
    kysely,
    dialect: 'sqlite',
    configVersion: () => {
      // The same string while nothing changed: caches compare it on every lookup (two per webhook call).
      const other = otherProcesses();
      const own = handle.configWrites();
      if (other !== lastOther || own !== lastOwn) {
        lastOther = other;
        lastOwn = own;
        lastVersion = `${other}:${own}`;
      }
      return lastVersion;
    },
    lists,
    checkpointer,
    close: async () => {
      await lists.close();
      await checkpointer?.close();
      await kysely.destroy();
    },
  };
}

/**
 * The database file is created 0600 before SQLite opens it: SQLite creates its -wal and -shm files with the
 * database file's mode, so they follow. Files of an older version (0644) are tightened here; the directory is
 * created 0700 when missing (the container tightens the data directory itself).
 */
function createPrivateDatabaseFile(path: string, log?: Logger): void {
  const warn = (m: string) => log?.warn(m);
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  ensurePrivateFile(path, warn);
  for (const suffix of ['-wal', '-shm', '-journal']) tightenMode(path + suffix, PRIVATE_FILE_MODE, warn);
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
