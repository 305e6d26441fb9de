import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * The queue index holds pending tasks only: `(queued_at) where status = 'pending'` replaces `(status, queued_at)`.
 * Every task passed through the old index twice more than it needed: a synchronous run is inserted already claimed
 * (`executing`) and updated once to its final status, and each of those wrote an entry the claim never reads. Now
 * only a queued task has an entry, and the claim, which asks for exactly `status = 'pending'`, reads fewer.
 *
 * The other reader of the old index, the /metrics count of executing and paused tasks, reads `tasks_lease_idx`
 * instead: such a task always holds a lease (QueueStatsRepository). Every query that needs the new index writes
 * `status = 'pending'` as a literal: PostgreSQL's generic plan of a prepared statement (pg-pool.ts prepares them)
 * cannot choose a partial index for a bound parameter. test/db/task-indexes.test.ts checks each plan.
 *
 * Building it reads the whole table once, under the migration's lock: 0.3 s for a million tasks (docs/operations.md).
 */
export const pendingQueueIndex0026: MigrationDef = {
  name: '0026_pending_queue_index',
  async up(db) {
    await db.schema.createIndex('tasks_pending_idx').on('tasks').column('queued_at').where(sql.ref('status'), '=', sql.lit('pending')).execute();
    await db.schema.dropIndex('tasks_queue_idx').execute();
  },
};
