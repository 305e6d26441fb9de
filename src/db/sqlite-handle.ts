import { setBounded } from '../lib/bounded-map.js';
import type Sqlite from 'libsql';
import { CONFIG_CHANGE } from './config-change.js';

const STATEMENT_CACHE_MAX = 500;

/**
 * What Kysely's SQLite driver sees of the database. Two changes to the plain handle:
 * - prepared statements are cached by SQL text: Kysely prepares on every query, and preparing was the largest
 *   single cost in the request profiles (queries are parameterised, so the set of texts is small);
 * - `begin` becomes `begin immediate`: a deferred transaction that reads and then writes fails at once with
 *   SQLITE_BUSY when another process (a separate worker role) holds the write lock, where an immediate one
 *   waits busy_timeout for it.
 */
export function withStatementCache(raw: Sqlite.Database) {
  const cache = new Map<string, Statement>();
  let configWrites = 0;
  return {
    prepare(sql: string) {
      const text = sql === 'begin' ? 'begin immediate' : sql;
      let stmt = cache.get(text);
      if (!stmt) {
        // Writes to configuration tables are counted when they run (a rolled-back one only costs a re-read).
        stmt = wrapped(raw.prepare(text), CONFIG_CHANGE.test(text) ? () => configWrites++ : undefined);
        setBounded(cache, text, stmt, STATEMENT_CACHE_MAX);
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

type Statement = ReturnType<Sqlite.Database['prepare']>;

/**
 * The statement as Kysely's driver uses it (reader, all, run, iterate). `reader` is read once: libsql answers it
 * with a native call (~5 us), and Kysely asks before every execution. `onRun`, when given, is called after each
 * execution.
 */
function wrapped(statement: Statement, onRun: () => void = () => {}): Statement {
  // Kysely passes one parameters array; the variadic signature is libsql's.
  const stmt = statement as unknown as Record<'all' | 'run' | 'iterate', (...a: unknown[]) => unknown>;
  return {
    reader: statement.reader,
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
