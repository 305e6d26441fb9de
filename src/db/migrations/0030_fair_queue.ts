import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Fair queueing across organizations (docs/decisions.md, "Fair claims across organizations"): `tasks.fair_rank`,
 * the claim's order, replaces `queued_at` as the queue index's key.
 *
 * - `tasks_fair_idx (fair_rank, queued_at) where status = 'pending'` replaces `tasks_pending_idx (queued_at)`: the
 *   claim walks it in rank order and checks `queued_at <= now` (a retry's back-off) in the index, not the row; the
 *   /metrics count and oldest `queued_at` of pending tasks read it alone too. Pending tasks only, as before: a
 *   synchronous run (inserted executing) and every finished task have no entry.
 * - `task_queue_ranks`: each organization's highest rank given, for the rank of its next task, with an index on it
 *   for the highest of all (the frontier of an idle queue).
 *
 * Pending tasks are ranked by their organization's own order (`queued_at`, then `created_at`): the first pending task
 * of every organization gets 1, the second 2, and so on, so a backlog waiting during the upgrade is shared out
 * round-robin at once. Other tasks keep a null rank (a rank is given whenever a task enters the queue).
 * Done in the migration's transaction, before the indexes are built: one update of the pending rows only.
 */
export const fairQueue0030: MigrationDef = {
  name: '0030_fair_queue',
  async up(db) {
    await db.schema.alterTable('tasks').addColumn('fair_rank', 'bigint').execute();
    await sql`
      update tasks set fair_rank = r.n
      from (select organization_id, id, row_number() over (partition by organization_id order by queued_at, created_at, id) as n
            from tasks where status = 'pending') as r
      where tasks.organization_id = r.organization_id and tasks.id = r.id`.execute(db);
    await db.schema.createIndex('tasks_fair_idx').on('tasks').columns(['fair_rank', 'queued_at']).where(sql.ref('status'), '=', sql.lit('pending')).execute();
    await db.schema.dropIndex('tasks_pending_idx').execute();
    await db.schema
      .createTable('task_queue_ranks')
      .addColumn('organization_id', 'text', (c) => c.primaryKey())
      .addColumn('last_rank', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('task_queue_ranks_last_idx').on('task_queue_ranks').column('last_rank').execute();
    await sql`
      insert into task_queue_ranks (organization_id, last_rank)
      select organization_id, max(fair_rank) from tasks where status = 'pending' group by organization_id`.execute(db);
  },
};
