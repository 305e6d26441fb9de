// A list reader's thread (list-reads.ts): its own read-only connection to the database file, so a read whose cost
// grows with the data runs here and never holds the service's event loop. WAL gives it a snapshot of what was
// committed when the statement began, and it never blocks the writer.
import Database from 'libsql';
import { serveThread } from '../lib/thread-serve.js';

export interface ReadRequest {
  path: string;
  sql: string;
  parameters: readonly unknown[];
}

/** Prepared statements by SQL text: the lists' statements are few (one per combination of filters). */
const STATEMENTS_MAX = 200;

let db: Database.Database | undefined;
const statements = new Map<string, Database.Statement>();

function statement(path: string, sql: string): Database.Statement {
  if (!db) {
    db = new Database(path, { readonly: true });
    // A reader waits for a writer only while the WAL is being reset; the main connection waits as long.
    db.exec('PRAGMA busy_timeout=5000');
    // Belt and braces: whatever SQL arrives here, this connection cannot write.
    db.exec('PRAGMA query_only=1');
  }
  let s = statements.get(sql);
  if (!s) {
    if (statements.size >= STATEMENTS_MAX) statements.clear();
    s = db.prepare(sql);
    statements.set(sql, s);
  }
  return s;
}

serveThread(
  ({ path, sql, parameters }: ReadRequest) => statement(path, sql).all(parameters as unknown[]),
  () => {
    statements.clear();
    db?.close();
  },
);
