import { sql, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import { AppError } from '../errors.js';
import { FairQueue } from '../lib/fair-queue.js';
import { ThreadPool, type ThreadOutcome } from '../lib/thread-pool.js';
import type { Database } from './schema.js';

/** A read as the reader thread (sqlite-reader.worker.mjs) takes it. */
interface ReadRequest {
  path: string;
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Reads whose cost grows with the data and with what the caller asks: a task list filtered by status or user, and
 * its total, read the organization's tasks in creation order (at 500,000 tasks on libsql, 45-60 ms for a status,
 * 370-390 ms for a user no task has); a knowledge search compares every chunk in scope.
 * Such a read must not hold what every other request needs:
 * - on libsql (a file) it runs on a reader thread with its own connection (sqlite-reader.worker.mjs), not on the
 *   event loop that serves the webhook accept and the API;
 * - on PostgreSQL at most a few run at once, so they cannot take the pool's every connection.
 * Either way the waiting reads are served per organization in turn (FairQueue): one organization's burst of lists
 * delays another's list by at most one read per reader, and past QUEUE_PER_OWNER waiting reads it is refused (429).
 */
export interface ListReads {
  /** The rows of `query` (a read), run as above. Throws AppError 429/503 when it cannot be run. */
  all<R>(owner: string, query: Compilable<R>): Promise<R[]>;
  close(): Promise<void>;
}

/** A raw SQL read as ListReads takes it: compiled by `kysely` when it is run. */
export const rawRead = <R>(kysely: Kysely<Database>, query: RawBuilder<R>): Compilable<R> => ({ compile: () => query.compile(kysely) });

/** Reads one organization may have waiting: a console polls two per list; far more is a client in a loop. */
const QUEUE_PER_OWNER = 32;
/** A list read that runs longer is abandoned: the caller should narrow it (by agent or dates). */
export const LIST_READ_TIMEOUT_MS = 30_000;

const narrowIt = (ms: number) => new AppError('unavailable', `The list took longer than ${ms / 1000} s; narrow it by agent, status or dates`, { retryAfter: 5 });
const tooMany = () => new AppError('rate_limited', 'Too many list reads are waiting for this organization; retry shortly', { retryAfter: 1 });

/** libsql with a database file: reads on threads of their own. */
export class ThreadedListReads implements ListReads {
  private readonly pool: ThreadPool<ReadRequest, unknown[]>;
  private readonly timeoutMs: number;

  constructor(
    private readonly path: string,
    opts: { threads?: number; timeoutMs?: number; idleMs?: number } = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? LIST_READ_TIMEOUT_MS;
    this.pool = new ThreadPool({
      base: import.meta.url,
      module: './sqlite-reader.worker',
      doing: 'reading the list',
      threads: opts.threads ?? 1,
      timeoutMs: this.timeoutMs,
      // Rows of one page (50 at most) and totals: the heap holds little more than libsql's statement cache.
      heapMb: 64,
      queuePerOwner: QUEUE_PER_OWNER,
      // A statement cannot be stopped from outside: a read past its deadline is answered 503 at once, and its
      // thread ends when the statement does, while a fresh one serves the next read.
      letGo: 'retire',
      plain: true,
      // The thread and its connection hold ~9 MB: given back after a minute without reads (a console polling every
      // 3 s keeps it), so a process that served one list returns to its idle size.
      idleMs: opts.idleMs ?? 60_000,
    });
  }

  /** Reader threads alive now. */
  get threads(): number {
    return this.pool.threads;
  }

  async all<R>(owner: string, query: Compilable<R>): Promise<R[]> {
    const { sql, parameters } = query.compile();
    return unwrap(await this.pool.run(owner, { path: this.path, sql, parameters }), this.timeoutMs) as R[];
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function unwrap<R>(outcome: ThreadOutcome<R>, timeoutMs: number): R {
  if (outcome.ok) return outcome.value;
  switch (outcome.failure) {
    case 'busy':
      throw tooMany();
    case 'unstarted':
      throw new AppError('unavailable', 'The list reader is not available; retry shortly', { retryAfter: 1 });
    case 'timeout':
      throw narrowIt(timeoutMs);
    case 'crashed':
    case 'stopping':
      throw new AppError('unavailable', 'The list reader stopped; retry shortly', { retryAfter: 1 });
    default:
      // The statement failed: a fault of ours, answered as a 500 with the request id that the log has.
      throw new Error(`list read failed: ${outcome.reason}`);
  }
}

/**
 * PostgreSQL (and libsql in memory, where no second connection can see the data): the read runs as any query, at
 * most `concurrency` at once. With `deadlineMs` (PostgreSQL), the server cancels it past that time.
 */
export class GatedListReads implements ListReads {
  private readonly waiting = new FairQueue<() => void>();
  private running = 0;
  private closed = false;

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly concurrency: number,
    private readonly deadlineMs?: number,
  ) {}

  async all<R>(owner: string, query: Compilable<R>): Promise<R[]> {
    if (this.closed) throw new AppError('unavailable', 'The service is stopping', { retryAfter: 1 });
    if (this.running >= this.concurrency) {
      if (this.waiting.sizeOf(owner) >= QUEUE_PER_OWNER) throw tooMany();
      await new Promise<void>((resolve) => this.waiting.push(owner, resolve));
    } else this.running++;
    try {
      return await (this.deadlineMs ? this.withDeadline(query, this.deadlineMs) : this.kysely.executeQuery(query.compile()).then((r) => r.rows as R[]));
    } finally {
      // The slot passes to the next waiting read, or is given back.
      const next = this.waiting.shift(() => true);
      if (next) next();
      else this.running--;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** `set local` needs a transaction: three more round trips, on a read that is not on any hot path. */
  private async withDeadline<R>(query: Compilable<R>, ms: number): Promise<R[]> {
    try {
      return await this.kysely.transaction().execute(async (trx) => {
        await sql`set local statement_timeout = ${sql.lit(ms)}`.execute(trx);
        return (await trx.executeQuery(query.compile())).rows as R[];
      });
    } catch (e) {
      // 57014: query_canceled, here by the statement timeout.
      if ((e as { code?: string }).code === '57014') throw narrowIt(ms);
      throw e;
    }
  }
}
