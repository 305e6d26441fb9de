import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Three task indexes become partial: a queued task has no lease and (almost always) no parent, so its insert
 * no longer touches them. Every query that uses them compares the column, which implies IS NOT NULL on both
 * databases, so the plans are unchanged: the worker's owned-tasks and expired-lease lookups, and sub-executions.
 */
export const partialTaskIndexes0009: MigrationDef = {
  name: '0009_partial_task_indexes',
  async up(db) {
    await db.schema.dropIndex('tasks_owner_idx').execute();
    await db.schema.createIndex('tasks_owner_idx').on('tasks').column('lease_owner').where(sql.ref('lease_owner'), 'is not', null).execute();
    await db.schema.dropIndex('tasks_lease_idx').execute();
    await db.schema
      .createIndex('tasks_lease_idx')
      .on('tasks')
      .columns(['status', 'lease_expires_at'])
      .where(sql.ref('lease_expires_at'), 'is not', null)
      .execute();
    await db.schema.dropIndex('tasks_parent_idx').execute();
    await db.schema
      .createIndex('tasks_parent_idx')
      .on('tasks')
      .columns(['organization_id', 'parent_execution'])
      .where(sql.ref('parent_execution'), 'is not', null)
      .execute();
  },
};
