import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { QueueStats } from './metrics.js';

/** Two scalar subqueries: SQLite reads a lone min() or max() from the key's end, but scans for both in one select. */
export const SQLITE_INBOX_DEPTH = 'select (select max(seq) from task_inbox) - (select min(seq) from task_inbox) + 1 as n';

/** The scrape's reads queue beside the organizations' lists under a name no organization id can take. */
const METRICS_OWNER = '(metrics)';

/**
 * The queue as an operator sees it, for /metrics: counts over every organization. The one repository that does
 * not filter by organization, on purpose: it returns numbers only, never a row, and only to the metrics scrape
 * (no route of the API reaches it).
 *
 * Each statement reads an index, never the table's rows (test/db/task-indexes.test.ts): pending tasks from the
 * queue index, which holds nothing else (`tasks_fair_idx`, migration 0030, with `queued_at` in its key; `status = 'pending'` is a literal so that it is chosen);
 * executing and paused tasks from the lease index, since such a task always holds a lease: the claim gives it one,
 * and only a final status or a return to the queue takes it away (`lease_expires_at is not null` says so to the
 * planner).
 */
export class QueueStatsRepository {
  constructor(private readonly db: Db) {}

  async read(): Promise<QueueStats> {
    const k = this.db.kysely;
    const [[pending], running, inbox] = await Promise.all([
      // ~35 ns per waiting task on libsql (20 ms at 600,000): off the event loop there (list-reads.ts).
      this.db.lists.all(
        METRICS_OWNER,
        k.selectFrom('tasks').select([sql<number>`count(*)`.as('n'), sql<number | null>`min(queued_at)`.as('oldest')]).where(sql<boolean>`status = 'pending'`),
      ),
      k
        .selectFrom('tasks')
        .select(['status', sql<number>`count(*)`.as('n')])
        .where(sql<boolean>`status in ('executing', 'paused') and lease_expires_at is not null`)
        .groupBy('status')
        .execute(),
      this.inboxDepth(),
    ]);
    const counts: Record<string, number> = { pending: Number(pending?.n ?? 0) };
    for (const r of running) counts[r.status] = Number(r.n);
    const at = pending?.oldest;
    return { byStatus: counts, inbox: Number(inbox ?? 0), oldestPendingAt: at === null || at === undefined ? null : Number(at) };
  }

  /**
   * Entries in the task inbox. SQLite counts them from its two ends: a libsql statement runs on the event loop, and
   * `count(*)` read every entry (60-80 ms at 1.2 million waiting, every request of the process held meanwhile, at
   * every scrape). SQLite numbers a new row one past the largest (no AUTOINCREMENT) and the inbox is only ever emptied
   * from its oldest end (TaskInboxRepository.move), so its numbers are contiguous and the difference is exact.
   * PostgreSQL counts (on its own CPU, not the service's): an identity can skip numbers (a rolled-back append).
   */
  private async inboxDepth(): Promise<number | undefined> {
    const k = this.db.kysely;
    if (this.db.dialect === 'postgres') return (await k.selectFrom('task_inbox').select(sql<number>`count(*)`.as('n')).executeTakeFirst())?.n;
    const r = await sql.raw<{ n: number | null }>(SQLITE_INBOX_DEPTH).execute(k);
    return r.rows[0]?.n ?? 0;
  }
}
