import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { QueueStats } from './metrics.js';

/**
 * The queue as an operator sees it, for /metrics: counts over every organization. The one repository that does
 * not filter by organization, on purpose: it returns numbers only, never a row, and only to the metrics scrape
 * (no route of the API reaches it).
 *
 * Each statement reads an index, never the table's rows (test/db/task-indexes.test.ts): pending tasks from the
 * queue index, which holds nothing else (migration 0026; `status = 'pending'` is a literal so that it is chosen);
 * executing and paused tasks from the lease index, since such a task always holds a lease: the claim gives it one,
 * and only a final status or a return to the queue takes it away (`lease_expires_at is not null` says so to the
 * planner).
 */
export class QueueStatsRepository {
  constructor(private readonly db: Db) {}

  async read(): Promise<QueueStats> {
    const k = this.db.kysely;
    const [pending, running, inbox] = await Promise.all([
      k
        .selectFrom('tasks')
        .select([sql<number>`count(*)`.as('n'), sql<number | null>`min(queued_at)`.as('oldest')])
        .where(sql<boolean>`status = 'pending'`)
        .executeTakeFirst(),
      k
        .selectFrom('tasks')
        .select(['status', sql<number>`count(*)`.as('n')])
        .where(sql<boolean>`status in ('executing', 'paused') and lease_expires_at is not null`)
        .groupBy('status')
        .execute(),
      k.selectFrom('task_inbox').select(sql<number>`count(*)`.as('n')).executeTakeFirst(),
    ]);
    const counts: Record<string, number> = { pending: Number(pending?.n ?? 0) };
    for (const r of running) counts[r.status] = Number(r.n);
    const at = pending?.oldest;
    return { byStatus: counts, inbox: Number(inbox?.n ?? 0), oldestPendingAt: at === null || at === undefined ? null : Number(at) };
  }
}
