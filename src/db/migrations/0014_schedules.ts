import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Schedules (src/schedules/): an agent's cron, interval and one-off invocations; one row per occurrence that came
 * due (its task, or why none was made); and the schedule a task came from.
 */
export const schedules0014: MigrationDef = {
  name: '0014_schedules',
  async up(db) {
    await db.schema
      .createTable('schedules')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('cron', 'text')
      .addColumn('timezone', 'text')
      .addColumn('interval_seconds', 'integer')
      .addColumn('run_at', 'bigint')
      .addColumn('invocation', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('next_run_at', 'bigint')
      .addColumn('last_run_at', 'bigint')
      .addColumn('last_task_id', 'text')
      .addColumn('last_outcome', 'text')
      .addColumn('run_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_by_type', 'text', (c) => c.notNull())
      .addColumn('created_by_task_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('schedules_pk', ['organization_id', 'id'])
      .execute();
    // The scheduler's scan (every organization's due schedules) and an agent's list.
    await db.schema.createIndex('schedules_due_idx').on('schedules').columns(['enabled', 'next_run_at']).execute();
    await db.schema.createIndex('schedules_agent_idx').on('schedules').columns(['organization_id', 'agent_id', 'created_at']).execute();

    // One row per occurrence: the primary key is a second guard (beside the claim on next_run_at) that an occurrence
    // is turned into a task once.
    await db.schema
      .createTable('schedule_occurrences')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('schedule_id', 'text', (c) => c.notNull())
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .addColumn('fired_at', 'bigint', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('detail', 'text')
      .addPrimaryKeyConstraint('schedule_occurrences_pk', ['organization_id', 'schedule_id', 'due_at'])
      .execute();

    await db.schema.alterTable('tasks').addColumn('schedule_id', 'text').execute();
    // Partial, like the other sparse task indexes (0009): an invocation's insert never touches it.
    await db.schema
      .createIndex('tasks_schedule_idx')
      .on('tasks')
      .columns(['organization_id', 'schedule_id', 'created_at'])
      .where(sql.ref('schedule_id'), 'is not', null)
      .execute();
  },
};
