import type { MigrationDef } from './migration.js';

/** Tasks (the queue), their execution trace, conversation threads and per-run accounting. */
export const tasks0004: MigrationDef = {
  name: '0004_tasks',
  async up(db, dialect) {
    await db.schema
      .createTable('tasks')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('agent_version', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('input_text', 'text', (c) => c.notNull())
      .addColumn('input_files', 'text', (c) => c.notNull())
      .addColumn('input_user', 'text')
      .addColumn('user_id', 'text')
      .addColumn('title', 'text')
      .addColumn('result', 'text')
      .addColumn('additional_context', 'text')
      .addColumn('expected_output', 'text')
      .addColumn('instructions_override', 'text')
      .addColumn('output_format', 'text')
      .addColumn('output_schema', 'text')
      .addColumn('disable_attachment_injection', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('sealed_user_tokens', 'text')
      .addColumn('parent_execution', 'text')
      .addColumn('is_manually_stopped', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('prompt_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('completion_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('total_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('llm_model_provider', 'text')
      .addColumn('llm_model_name', 'text')
      .addColumn('run', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('execution_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('fence', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('heartbeat_at', 'bigint')
      .addColumn('queued_at', 'bigint', (c) => c.notNull())
      .addColumn('hitl_request', 'text')
      .addColumn('hitl_decision', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      // Per organization: two organizations may pick the same chat id without learning of each other.
      .addPrimaryKeyConstraint('tasks_pk', ['organization_id', 'id'])
      .execute();
    // The claim queries: pending in queue order, and leases that ran out.
    await db.schema.createIndex('tasks_queue_idx').on('tasks').columns(['status', 'queued_at']).execute();
    await db.schema.createIndex('tasks_lease_idx').on('tasks').columns(['status', 'lease_expires_at']).execute();
    await db.schema.createIndex('tasks_owner_idx').on('tasks').column('lease_owner').execute();
    await db.schema.createIndex('tasks_list_idx').on('tasks').columns(['organization_id', 'created_at']).execute();
    await db.schema.createIndex('tasks_agent_idx').on('tasks').columns(['organization_id', 'agent_id', 'created_at']).execute();
    await db.schema.createIndex('tasks_parent_idx').on('tasks').columns(['organization_id', 'parent_execution']).execute();

    const seq = (t: 'task_events' | 'task_messages') => {
      const b = db.schema.createTable(t);
      return dialect === 'postgres'
        ? b.addColumn('seq', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
        : b.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
    };
    await seq('task_events')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('time', 'bigint', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('task_events_task_idx').on('task_events').columns(['organization_id', 'task_id', 'seq']).execute();

    await seq('task_messages')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('run', 'integer', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('tool_calls', 'text')
      .addColumn('tool_call_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('task_messages_task_idx').on('task_messages').columns(['organization_id', 'task_id', 'seq']).execute();

    await db.schema
      .createTable('task_runs')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('run', 'integer', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_runs_pk', ['organization_id', 'task_id', 'run'])
      .execute();
    await db.schema.createIndex('task_runs_agent_idx').on('task_runs').columns(['organization_id', 'agent_id', 'created_at']).execute();
  },
};
