import type { MigrationDef } from './migration.js';

/**
 * `tasks.call_depth`: how many agent calls led to this task (0 for a call from outside; a sub-agent's task, or a task
 * started by another agent over A2A, MCP, a webhook or the invoke API with `x-agentry-call-depth`, is one more than
 * its caller's). Submissions past MAX_CALL_DEPTH (src/tasks/call-depth.ts) are refused, so agents that call each other in a loop stop.
 */
export const callDepth0023: MigrationDef = {
  name: '0023_call_depth',
  async up(db) {
    await db.schema.alterTable('tasks').addColumn('call_depth', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
