import type { MigrationDef } from './migration.js';

/**
 * `task_payloads`: a large submission's texts (input, additional context, expected output, instructions override,
 * output schema), kept out of the hot `tasks` row on libsql (src/tasks/task-payloads.repository.ts), and
 * `tasks.payload_stored` saying a row's texts are there. Existing tasks keep their texts in their rows (0).
 */
export const taskPayloads0031: MigrationDef = {
  name: '0031_task_payloads',
  async up(db) {
    await db.schema
      .createTable('task_payloads')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('input_text', 'text', (c) => c.notNull())
      .addColumn('additional_context', 'text')
      .addColumn('expected_output', 'text')
      .addColumn('instructions_override', 'text')
      .addColumn('output_schema', 'text')
      .addPrimaryKeyConstraint('task_payloads_pk', ['organization_id', 'task_id'])
      .execute();
    await db.schema.alterTable('tasks').addColumn('payload_stored', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
