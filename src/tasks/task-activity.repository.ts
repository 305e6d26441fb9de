import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export const DAY_MS = 86_400_000;

export interface DayCount {
  /** Days since the epoch (UTC). */
  day: number;
  tasks: number;
  failed: number;
}

/** Counts of an agent's tasks per UTC day: the console's activity chart. Read through tasks_agent_idx. */
export class TaskActivityRepository {
  constructor(private readonly db: Db) {}

  async perDay(orgId: string, agentId: string, sinceMs: number): Promise<DayCount[]> {
    // Integer division on both dialects (created_at is an integer / bigint of epoch ms).
    const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
    // Its cost grows with the agent's tasks in the period: off the event loop on libsql (list-reads.ts).
    const rows = await this.db.lists.all(
      orgId,
      this.db.kysely
        .selectFrom('tasks')
        .select([
          day.as('day'),
          (eb) => eb.fn.countAll<number>().as('tasks'),
          sql<number>`sum(case when status in ('error', 'failed') then 1 else 0 end)`.as('failed'),
        ])
        .where('organization_id', '=', orgId)
        .where('agent_id', '=', agentId)
        .where('created_at', '>=', sinceMs)
        .groupBy(day),
    );
    return rows.map((r) => ({ day: Number(r.day), tasks: Number(r.tasks), failed: Number(r.failed ?? 0) }));
  }
}
