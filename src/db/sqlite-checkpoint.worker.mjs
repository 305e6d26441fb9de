// The WAL checkpointer's thread (sqlite-checkpointer.ts): its own connection to the database file.
// Each tick copies back, in PASSIVE mode, what no reader still needs: it never waits for the writer nor blocks it.
// Under steady writes a passive pass never finds the WAL fully copied at a moment no write is under way, so the WAL
// would never start over and would grow; past `restartFrames` a RESTART follows the passive pass. With a busy
// timeout of 0 it does not wait for a writer: it runs only between two transactions, then holds the write lock just
// long enough to copy the few frames written since the passive pass and reset the WAL.
//
// The RESTART holds the write lock while it syncs the database file, and a passive pass that did not end with the WAL
// fully copied (always, under steady writes) leaves the pages it copied unsynced: the RESTART's sync then flushed all
// of them (~30 MB, 20-35 ms here) while every writer of the process waited in SQLite's busy handler, whose backoff
// (1, 2, 5, 10, 15 ms...) stretches even a short wait. So the file is synced here after each passive pass, with no
// lock held, and the RESTART's own syncs have only its few frames left to flush.
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'libsql';

const db = new Database(workerData.path);
db.exec('PRAGMA busy_timeout=0');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
// fdatasync flushes the file's dirty pages whichever descriptor wrote them.
const dbFile = openSync(workerData.path, 'r');
const timer = setInterval(() => {
  try {
    let r = passive.get();
    if (r.checkpointed > 0) fdatasyncSync(dbFile);
    if (r.log > workerData.restartFrames) r = restart.get();
    parentPort.postMessage({ busy: r.busy, log: r.log, checkpointed: r.checkpointed });
  } catch (e) {
    // Locked by another checkpointer (another process): the next tick tries again.
    parentPort.postMessage({ error: String(e?.message ?? e) });
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'stop') {
    clearInterval(timer);
    db.close();
    closeSync(dbFile);
    parentPort.close();
  }
});
