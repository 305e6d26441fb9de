import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { QueueStats } from './metrics.js';

/**
 * The queue as an operator sees it, for /metrics: counts over every organization. The one repository that does
 * not filter by organization, on purpose: it returns numbers only, never a row, and only to the metrics scrape
 * (no route of the API reaches it). Both statements use the (status, queued_at) index.
 */
export class QueueStatsRepository {
  constructor(private readonly db: Db) {}

  async read(): Promise<QueueStats> {
    const k = this.db.kysely;
    const [byStatus, oldest, inbox] = await Promise.all([
      k
        .selectFrom('tasks')
        .select(['status', sql<number>`count(*)`.as('n')])
        .where('status', 'in', ['pending', 'executing', 'paused'])
        .groupBy('status')
        .execute(),
      k.selectFrom('tasks').select(sql<number | null>`min(queued_at)`.as('oldest')).where('status', '=', 'pending').executeTakeFirst(),
      k.selectFrom('task_inbox').select(sql<number>`count(*)`.as('n')).executeTakeFirst(),
    ]);
    const counts: Record<string, number> = {};
    for (const r of byStatus) counts[r.status] = Number(r.n);
    const at = oldest?.oldest;
    return { byStatus: counts, inbox: Number(inbox?.n ?? 0), oldestPendingAt: at === null || at === undefined ? null : Number(at) };
  }
}
