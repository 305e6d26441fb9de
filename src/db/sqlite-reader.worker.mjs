// A list reader's thread (list-reads.ts): its own read-only connection to the database file, so a read whose cost
// grows with the data runs here and never holds the service's event loop. WAL gives it a snapshot of what was
// committed when the statement began, and it never blocks the writer.
//
// Plain JavaScript, like the checkpoint thread, rather than a TypeScript module served by thread-serve.ts: from the
// sources a TypeScript thread first registers the type-stripping hooks and transpiles what it imports (~0.7 s per
// start, paid by every test app that lists tasks); this one starts in the time libsql takes to load. It answers
// thread-pool.ts's protocol as serveThread does: `ready`, then `{ id, ok, value | reason }` per job, and 'retire'
// ends it between jobs.
import { parentPort } from 'node:worker_threads';
import Database from 'libsql';

/** Prepared statements by SQL text: the lists' statements are few (one per combination of filters). */
const STATEMENTS_MAX = 200;

let db;
const statements = new Map();

function statement(path, sql) {
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

parentPort.on('message', (msg) => {
  if (msg === 'retire') {
    statements.clear();
    db?.close();
    // Between jobs: no statement is running, so ending the thread interrupts nothing native.
    process.exit(0);
  }
  const { id, request } = msg;
  try {
    parentPort.postMessage({ id, ok: true, value: statement(request.path, request.sql).all(request.parameters) });
  } catch (e) {
    parentPort.postMessage({ id, ok: false, reason: String(e?.message ?? e).slice(0, 2000) });
  }
});
parentPort.postMessage({ ready: true });
