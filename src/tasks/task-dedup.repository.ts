import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The keys of duplication_prevention (task-dedup.ts; table `task_dedup_keys`, migration 0032). Used inside the
 * transaction that commits the task, so an event and its task are stored together or not at all.
 */

export interface DedupClaim {
  organizationId: string;
  agentId: string;
  key: string;
  /** The task this event starts, if it is the first in its window. */
  taskId: string;
  now: number;
  expiresAt: number;
}

/**
 * Takes the key for `taskId` unless an event with the same key was accepted within its window: then returns that
 * event's task id and writes nothing. One statement decides: the upsert updates an existing row only once its window
 * has passed. On PostgreSQL a concurrent transaction that inserted the key first makes this one wait for its commit
 * and then see its row (a rollback leaves the key to this one), so two simultaneous deliveries start one task.
 */
export async function claimDedupKey(trx: Transaction<Database>, c: DedupClaim): Promise<string | undefined> {
  const taken = await sql<{ task_id: string }>`
    insert into task_dedup_keys (organization_id, agent_id, key, task_id, expires_at)
    values (${c.organizationId}, ${c.agentId}, ${c.key}, ${c.taskId}, ${c.expiresAt})
    on conflict (organization_id, agent_id, key) do update set task_id = excluded.task_id, expires_at = excluded.expires_at
    where task_dedup_keys.expires_at <= ${c.now}
    returning task_id`.execute(trx);
  if (taken.rows.length > 0) return undefined;
  const held = await trx
    .selectFrom('task_dedup_keys')
    .select('task_id')
    .where('organization_id', '=', c.organizationId)
    .where('agent_id', '=', c.agentId)
    .where('key', '=', c.key)
    .executeTakeFirst();
  return held?.task_id;
}

/**
 * Gives the key of an event whose task is gone to `c.taskId`. deleteTaskRecords deletes a task's keys with it, so this
 * is a safeguard; it is not part of the upsert above, whose condition PostgreSQL evaluates against the committed
 * key but a statement snapshot that may predate the task committed with it.
 */
export async function retakeDedupKey(trx: Transaction<Database>, c: DedupClaim, goneTaskId: string): Promise<void> {
  await trx
    .updateTable('task_dedup_keys')
    .set({ task_id: c.taskId, expires_at: c.expiresAt })
    .where('organization_id', '=', c.organizationId)
    .where('agent_id', '=', c.agentId)
    .where('key', '=', c.key)
    .where('task_id', '=', goneTaskId)
    .execute();
}

/** A deleted task's keys go with it (deleteTaskRecords): an event seen again afterwards starts a new task. */
export async function deleteDedupKeys(trx: Transaction<Database>, organizationId: string, taskIds: string[]): Promise<void> {
  await trx.deleteFrom('task_dedup_keys').where('organization_id', '=', organizationId).where('task_id', 'in', taskIds).execute();
}
