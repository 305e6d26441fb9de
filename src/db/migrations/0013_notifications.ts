import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Notifications when a task ends (issue 21, docs/notifications.md):
 * - `tasks.callback_url`: the URL a webhook caller asked to be called back on (null almost always);
 * - `notification_deliveries`: the outbox. One row per (task end, target), written in the transaction that records
 *   the task's final status, claimed by the dispatcher with a lease; it carries the payload as it was at the end;
 * - `notification_attempts`: every delivery attempt (outcome, HTTP status, latency, error);
 * - `notification_signing_keys`: each agent's Standard Webhooks secret, sealed with the master key.
 */
export const notifications0013: MigrationDef = {
  name: '0013_notifications',
  async up(db) {
    await db.schema.alterTable('tasks').addColumn('callback_url', 'text').execute();

    await db.schema
      .createTable('notification_deliveries')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('give_up_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .addPrimaryKeyConstraint('notification_deliveries_pk', ['organization_id', 'id'])
      .execute();
    await db.schema.createIndex('notification_deliveries_task_idx').on('notification_deliveries').columns(['organization_id', 'task_id']).execute();
    // Only rows still to deliver are in the dispatcher's index: delivered and given-up rows never touch it again.
    await db.schema
      .createIndex('notification_deliveries_due_idx')
      .on('notification_deliveries')
      .column('next_attempt_at')
      .where(sql.ref('status'), '=', 'pending')
      .execute();

    await db.schema
      .createTable('notification_attempts')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addPrimaryKeyConstraint('notification_attempts_pk', ['organization_id', 'delivery_id', 'attempt'])
      .execute();

    await db.schema
      .createTable('notification_signing_keys')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('sealed_secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('notification_signing_keys_pk', ['organization_id', 'agent_id'])
      .execute();
  },
};
