import { setBounded } from '../lib/bounded-map.js';
import type Sqlite from 'libsql';
import { CONFIG_CHANGE } from './config-change.js';
import { rowBuilder, type RowBuilder } from './sqlite-rows.js';

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
 * with a native call (~5 us), and Kysely asks before every execution. A reader's rows come from libsql as arrays
 * and are made objects here (sqlite-rows.ts): a third of the cost of each row. `onRun`, when given, is called after
 * each execution.
 */
function wrapped(statement: Statement, onRun: () => void = () => {}): Statement {
  // Kysely passes one parameters array; the variadic signature is libsql's.
  const stmt = statement as unknown as Record<'all' | 'run' | 'iterate', (...a: unknown[]) => unknown>;
  const reader = statement.reader;
  if (reader) statement.raw(true);
  // The column list is read at the first execution (a native call that builds an object per column), and again
  // should rows come back wider or narrower (SQLite prepares a statement again after a schema change).
  let row: RowBuilder | undefined;
  let width = -1;
  const build = (values: unknown[] | undefined): RowBuilder => {
    if (!row || (values !== undefined && values.length !== width)) {
      const names = statement.columns().map((c) => c.name);
      row = rowBuilder(names);
      width = names.length;
    }
    return row;
  };
  return {
    reader,
    all: (...args: unknown[]) => {
      try {
        const rows = stmt.all(...args) as unknown[][];
        return reader ? rows.map(build(rows[0])) : rows;
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
      const rows = stmt.iterate(...args) as IterableIterator<unknown[]>;
      return reader ? mapIterator(rows, build) : rows;
    },
  } as unknown as Statement;
}

function* mapIterator(rows: Iterable<unknown[]>, build: (values: unknown[]) => RowBuilder): IterableIterator<Record<string, unknown>> {
  for (const values of rows) yield build(values)(values);
}
