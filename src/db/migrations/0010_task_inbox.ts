import type { MigrationDef } from './migration.js';

/**
 * The task inbox (src/tasks/task-inbox.ts): asynchronous webhook calls append their new task here, one row per
 * task and no secondary index, and readers and workers move the rows into `tasks` before they look.
 * Identity (PostgreSQL) and rowid (SQLite) keep the rows in arrival order; SQLite needs no AUTOINCREMENT, whose
 * counter table would be one more write per insert: a reused number after the inbox empties orders nothing wrong.
 */
export const taskInbox0010: MigrationDef = {
  name: '0010_task_inbox',
  async up(db, dialect) {
    const table = db.schema.createTable('task_inbox');
    await (dialect === 'postgres'
      ? table.addColumn('seq', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : table.addColumn('seq', 'integer', (c) => c.primaryKey())
    )
      .addColumn('row', 'text', (c) => c.notNull())
      .execute();
  },
};
