import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type Sqlite from 'libsql';

const WORKER_URL = new URL('./sqlite-checkpoint.worker.mjs', import.meta.url);

/** The main connection's own checkpoint threshold while no thread does it (pages of 4 KB: ~40 MB of WAL). */
export const AUTOCHECKPOINT_PAGES = 10_000;
/**
 * Once the thread checkpoints, the main connection still does it past this many pages (~200 MB), should the thread
 * ever fall behind: a long stall then, instead of a WAL that grows without bound.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 50_000;
/** WAL size from which the thread is started: a process that writes little never pays for it (+~10 MB RSS). */
const START_AT_BYTES = 2 * 1024 * 1024;
const WATCH_MS = 500;
const CHECKPOINT_MS = 200;
/** WAL frames (4 KB pages) past which the thread also restarts the WAL (see the worker). */
const RESTART_FRAMES = 8192;

export interface CheckpointStats {
  running: boolean;
  checkpoints: number;
  /** WAL frames copied back by the last checkpoint, and the WAL's frames then. */
  last?: { log: number; checkpointed: number };
}

/**
 * Moves libsql's WAL checkpoints off the event loop. SQLite checkpoints inside the commit that crosses
 * `wal_autocheckpoint`: that commit copies ~40 MB of pages back into the database file while every request of the
 * process waits (measured: commits of 65-95 ms, seven times in 8 s of agent creation, the whole p99). Here a worker
 * thread with its own connection checkpoints every 200 ms without waiting for the writer (see the worker), and the
 * main connection's threshold is raised to a fallback. The thread starts only once the WAL has grown past 2 MB.
 */
export class SqliteCheckpointer {
  private worker?: Worker;
  private readonly watch: NodeJS.Timeout;
  private stats: CheckpointStats = { running: false, checkpoints: 0 };

  constructor(
    private readonly raw: Sqlite.Database,
    private readonly path: string,
    private readonly onError: (message: string) => void = () => {},
  ) {
    this.watch = setInterval(() => this.startWhenWalGrows(), WATCH_MS);
    this.watch.unref();
  }

  status(): CheckpointStats {
    return { ...this.stats };
  }

  /** Starts the thread now (tests; the watch does it under load). */
  start(): void {
    if (this.worker) return;
    clearInterval(this.watch);
    const worker = new Worker(WORKER_URL, { workerData: { path: this.path, intervalMs: CHECKPOINT_MS, restartFrames: RESTART_FRAMES }, resourceLimits: { maxOldGenerationSizeMb: 16 } });
    worker.unref();
    worker.on('message', (m: { log?: number; checkpointed?: number; error?: string }) => {
      if (m.error !== undefined) return;
      this.stats = { running: true, checkpoints: this.stats.checkpoints + 1, last: { log: m.log!, checkpointed: m.checkpointed! } };
    });
    const fallBack = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.stats = { ...this.stats, running: false };
      // Back to checkpointing in the commit: slower, never unbounded.
      this.raw.exec(`PRAGMA wal_autocheckpoint=${AUTOCHECKPOINT_PAGES}`);
      this.onError(why);
    };
    worker.on('error', (e) => fallBack(`checkpoint thread failed: ${e.message}`));
    worker.on('exit', (code) => fallBack(`checkpoint thread exited (${code})`));
    this.worker = worker;
    this.stats = { ...this.stats, running: true };
    this.raw.exec(`PRAGMA wal_autocheckpoint=${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  }

  async close(): Promise<void> {
    clearInterval(this.watch);
    const w = this.worker;
    this.worker = undefined;
    this.stats = { ...this.stats, running: false };
    if (!w) return;
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    w.postMessage('stop');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 1000).unref())]);
    await w.terminate();
  }

  private startWhenWalGrows(): void {
    let size = 0;
    try {
      size = statSync(`${this.path}-wal`).size;
    } catch {
      return;
    }
    if (size >= START_AT_BYTES) this.start();
  }
}
