import type { Kysely } from 'kysely';
import { unlessLocked } from '../db/advisory-lock.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { ReleasedBlob } from '../files/file-lifetime.repository.js';
import { FINAL_STATUSES } from './task.types.js';
import { deleteTaskRecords } from './tasks.repository.js';

/** A task's place in its organization's creation order: where the next page of the range starts. */
export interface RangeKey {
  id: string;
  created_at: number;
}

/** What the sweep (task-retention.ts) needs of the database; tests wrap it to pace or interrupt a sweep. */
export interface RetentionStore {
  exclusively<T>(fn: (store: RetentionStore) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  organizationAfter(after: string | undefined): Promise<string | undefined>;
  createdBefore(orgId: string, cutoff: number, after: RangeKey | undefined, limit: number): Promise<RangeKey[]>;
  deleteExpired(orgId: string, ids: string[], cutoff: number, now: number): Promise<ExpiredBatch>;
}

/** What one delete transaction of the sweep removed: tasks, and the blobs of their uploads to remove after it. */
export interface ExpiredBatch {
  deleted: number;
  released: ReleasedBlob[];
}

const FINAL = [...FINAL_STATUSES];

/** PostgreSQL session lock key: one sweeper at a time across the processes of a database. */
const SWEEP_LOCK = 'agentry:task-retention';

/**
 * SQL of the task retention sweep (task-retention.ts). The candidates are found by range-scanning
 * `tasks_list_idx (organization_id, created_at)` below the cutoff, a page at a time: a task that finished before the
 * cutoff was created before it. The expiry rule itself is checked by the delete, in its transaction, so a task that
 * was continued (back to pending) or whose notification is still being retried between the read and the delete is
 * kept.
 */
export class TaskRetentionRepository implements RetentionStore {
  constructor(
    private readonly db: Db,
    private readonly k: Kysely<Database> = db.kysely,
  ) {}

  /**
   * Runs `fn` as the database's only sweeper (db/advisory-lock.ts: on PostgreSQL a session lock on a pinned
   * connection, which `fn`'s repository then uses); `{ ran: false }` when another process is sweeping.
   */
  exclusively<T>(fn: (store: RetentionStore) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    return unlessLocked(this.db, SWEEP_LOCK, (k) => fn(new TaskRetentionRepository(this.db, k)));
  }

  /** The next organization that has tasks, in id order (one index seek each, not a scan of `tasks`). */
  async organizationAfter(after: string | undefined): Promise<string | undefined> {
    return (await nextOrganizationQuery(this.k, after).executeTakeFirst())?.organization_id;
  }

  /** Up to `limit` tasks of the organization created before `cutoff`, oldest first, after `after`. */
  async createdBefore(orgId: string, cutoff: number, after: RangeKey | undefined, limit: number): Promise<RangeKey[]> {
    const rows = await createdBeforeQuery(this.k, orgId, cutoff, after, limit).execute();
    return rows.map((r) => ({ id: r.id, created_at: Number(r.created_at) }));
  }

  /**
   * Deletes, in one transaction, those of `ids` that are final, finished before `cutoff` (`finished_at`, else the
   * last update, else the creation) and have no notification still being delivered, with their records
   * (deleteTaskRecords, uploads included). Returns how many tasks went, and their uploads' blobs.
   */
  async deleteExpired(orgId: string, ids: string[], cutoff: number, now: number): Promise<ExpiredBatch> {
    if (ids.length === 0) return { deleted: 0, released: [] };
    return this.k.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('tasks')
        .where('organization_id', '=', orgId)
        .where('id', 'in', ids)
        .where('status', 'in', FINAL)
        .where((eb) => eb(eb.fn.coalesce('finished_at', 'updated_at', 'created_at'), '<', cutoff))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('notification_deliveries as d')
                .select('d.id')
                .whereRef('d.organization_id', '=', 'tasks.organization_id')
                .whereRef('d.task_id', '=', 'tasks.id')
                .where('d.status', '=', 'pending'),
            ),
          ),
        )
        .returning('id')
        .execute();
      const released = await deleteTaskRecords(trx, orgId, gone.map((r) => r.id), now);
      return { deleted: gone.length, released };
    });
  }
}

/** Exported for the plan test (test/tasks/task-retention.test.ts): must seek an index of `tasks`. */
export function nextOrganizationQuery(k: Kysely<Database>, after: string | undefined) {
  // '' sorts before every id: the first call has the same shape (and plan) as the others.
  return k.selectFrom('tasks').select('organization_id').where('organization_id', '>', after ?? '').orderBy('organization_id').limit(1);
}

/** Exported for the plan test: must range-scan `tasks_list_idx`. */
export function createdBeforeQuery(k: Kysely<Database>, orgId: string, cutoff: number, after: RangeKey | undefined, limit: number) {
  let q = k.selectFrom('tasks').select(['id', 'created_at']).where('organization_id', '=', orgId).where('created_at', '<', cutoff);
  // (created_at, id) rather than created_at alone: a group commit gives hundreds of tasks the same millisecond.
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)));
  return q.orderBy('created_at').orderBy('id').limit(limit);
}
