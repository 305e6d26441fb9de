import type { MigrationDef } from './migration.js';

/**
 * `task_dedup_keys`: the events an agent with `task_level_strategies.duplication_prevention` has accepted, for its
 * window (src/tasks/task-dedup.ts). One row per agent and key: a key whose window has passed is taken over by the
 * next event that brings it, so the table holds at most one row per distinct event, and a task's rows go with the task
 * (deleteTaskRecords, by `task_dedup_keys_task_idx`).
 */
export const taskDedupKeys0032: MigrationDef = {
  name: '0032_task_dedup_keys',
  async up(db) {
    await db.schema
      .createTable('task_dedup_keys')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_dedup_keys_pk', ['organization_id', 'agent_id', 'key'])
      .execute();
    await db.schema.createIndex('task_dedup_keys_task_idx').on('task_dedup_keys').columns(['organization_id', 'task_id']).execute();
  },
};
