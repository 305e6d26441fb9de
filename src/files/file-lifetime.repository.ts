import type { Expression, ExpressionBuilder, Kysely, SqlBool, Transaction } from 'kysely';
import { unlessLocked } from '../db/advisory-lock.js';
import { batches, ROWS_PER_INSERT, VALUES_PER_IN_LIST } from '../db/batches.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';

/** A blob whose file row is deleted: it is removed from the blob store after the commit (file-disposal.ts). */
export interface ReleasedBlob {
  blobKey: string;
  organizationId: string;
  fileId: string;
}

/** An upload's place in its organization's creation order: where the next page of the range starts. */
export interface UploadKey {
  id: string;
  created_at: number;
}

/** An upload of a task or of a knowledge document, and whether that holder exists. */
export interface UploadHolder extends UploadKey {
  held: boolean;
}

type Files = ExpressionBuilder<Database, 'files'>;

/** Whether the file's task exists: one seek of the primary key of `tasks`. */
const hasTask = (eb: Files) =>
  eb.exists(eb.selectFrom('tasks').select('tasks.id').whereRef('tasks.organization_id', '=', 'files.organization_id').whereRef('tasks.id', '=', 'files.task_id'));

/** Whether the file's knowledge document exists: one seek of the primary key of `kb_documents`. */
const hasDocument = (eb: Files) =>
  eb.exists(
    eb.selectFrom('kb_documents').select('kb_documents.id').whereRef('kb_documents.organization_id', '=', 'files.organization_id').whereRef('kb_documents.id', '=', 'files.document_id'),
  );

/**
 * Files that were uploaded for something: a task (`task_id`) or a knowledge document (`document_id`). The others
 * (unattributed uploads of before migration 0027, document files of before 0029) are never orphans.
 */
const hasHolderId = (eb: Files) => eb.or([eb('task_id', 'is not', null), eb('document_id', 'is not', null)]);

/** Whether what the file was uploaded for exists (a file has at most one of the two ids). */
const isHeld = (eb: Files) => eb.or([hasTask(eb), hasDocument(eb)]);

/**
 * Deletes the organization's file rows that `where` selects and records their blobs in `file_blob_deletions`, both
 * in the caller's transaction: a blob whose row is gone is always either removed or recorded, never forgotten.
 * Returns what to remove once the transaction commits.
 */
async function releaseWhere(trx: Transaction<Database> | Kysely<Database>, orgId: string, where: (eb: Files) => Expression<SqlBool>, now: number): Promise<ReleasedBlob[]> {
  const gone = await trx.deleteFrom('files').where('organization_id', '=', orgId).where(where).returning(['id', 'blob_key']).execute();
  const released = gone.map((r) => ({ blobKey: r.blob_key, organizationId: orgId, fileId: r.id }));
  for (const batch of batches(released, ROWS_PER_INSERT)) {
    await trx
      .insertInto('file_blob_deletions')
      .values(batch.map((b) => ({ blob_key: b.blobKey, organization_id: orgId, file_id: b.fileId, released_at: now })))
      .execute();
  }
  return released;
}

/**
 * The uploads of the given tasks (at most VALUES_PER_IN_LIST), in the transaction that deletes the tasks'
 * records (deleteTaskRecords, src/tasks/tasks.repository.ts). With no upload it is one index seek per task
 * (`files_task_idx`) and no write.
 */
export function releaseTaskFiles(trx: Transaction<Database>, orgId: string, taskIds: string[], now: number): Promise<ReleasedBlob[]> {
  return releaseWhere(trx, orgId, (eb) => eb('task_id', 'in', taskIds), now);
}

/**
 * The organization's files `ids`, in the caller's transaction: the one that deletes the knowledge documents holding
 * them (KnowledgeRepository), or `release` below. Files already gone are skipped.
 */
export async function releaseFiles(trx: Transaction<Database> | Kysely<Database>, orgId: string, ids: readonly string[], now: number): Promise<ReleasedBlob[]> {
  const out: ReleasedBlob[] = [];
  for (const batch of batches([...ids], VALUES_PER_IN_LIST)) out.push(...(await releaseWhere(trx, orgId, (eb) => eb('id', 'in', batch), now)));
  return out;
}

/** PostgreSQL session lock key: one file sweep at a time across the processes of a database. */
const SWEEP_LOCK = 'agentry:file-sweep';

/**
 * SQL of the files' lifetime: discarding files (a refused submission or document), the blob deletions still to do,
 * and the orphan sweep's reads (file-sweep.ts). Orphans are found by range-scanning
 * `files_org_idx (organization_id, created_at)` over the uploads not yet checked, looking each one's task or document
 * up by the primary key of `tasks` or `kb_documents`; the release checks again, in its statement, that it does not exist.
 */
export class FileLifetimeRepository {
  constructor(
    private readonly db: Db,
    private readonly k: Kysely<Database> = db.kysely,
  ) {}

  /** Deletes the rows of the organization's files `ids` in one transaction, recording their blobs (see releaseWhere). */
  release(orgId: string, ids: string[], now: number): Promise<ReleasedBlob[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.k.transaction().execute((trx) => releaseFiles(trx, orgId, ids, now));
  }

  /** Blob deletions done: their records go. */
  async forget(blobKeys: string[]): Promise<void> {
    for (const batch of batches(blobKeys, VALUES_PER_IN_LIST)) await this.k.deleteFrom('file_blob_deletions').where('blob_key', 'in', batch).execute();
  }

  /** Blob deletions still to do, in key order after `after`. */
  async pending(after: string | undefined, limit: number): Promise<ReleasedBlob[]> {
    const rows = await this.k
      .selectFrom('file_blob_deletions')
      .select(['blob_key', 'organization_id', 'file_id'])
      .where('blob_key', '>', after ?? '')
      .orderBy('blob_key')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ blobKey: r.blob_key, organizationId: r.organization_id, fileId: r.file_id }));
  }

  /** Runs `fn` as the database's only file sweeper (db/advisory-lock.ts); `{ ran: false }` when another process is sweeping. */
  exclusively<T>(fn: (repo: FileLifetimeRepository) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    return unlessLocked(this.db, SWEEP_LOCK, (k) => fn(new FileLifetimeRepository(this.db, k)));
  }

  /** The next organization that has files, in id order (one index seek each). */
  async organizationAfter(after: string | undefined): Promise<string | undefined> {
    const r = await this.k.selectFrom('files').select('organization_id').where('organization_id', '>', after ?? '').orderBy('organization_id').limit(1).executeTakeFirst();
    return r?.organization_id;
  }

  /**
   * Up to `limit` uploads of tasks or documents (`task_id` or `document_id` set) of the organization created in
   * [from, to), in (created_at, id) order after `after`, each with whether its task or document exists.
   */
  async uploads(orgId: string, from: number, to: number, after: UploadKey | undefined, limit: number): Promise<UploadHolder[]> {
    const rows = await uploadsQuery(this.k, orgId, from, to, after, limit).execute();
    // SQLite answers 0/1, PostgreSQL a boolean.
    return rows.map((r) => ({ id: r.id, created_at: Number(r.created_at), held: Boolean(Number(r.held)) }));
  }

  /**
   * Deletes those of the organization's uploads `ids` that are still orphans: created before `cutoff` for a task or
   * document that does not exist. In one transaction, recording their blobs.
   */
  releaseOrphans(orgId: string, ids: string[], cutoff: number, now: number): Promise<ReleasedBlob[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.k.transaction().execute((trx) =>
      releaseWhere(
        trx,
        orgId,
        (eb) =>
          eb.and([
            eb('id', 'in', ids),
            hasHolderId(eb),
            eb('created_at', '<', cutoff),
            eb.not(isHeld(eb)),
          ]),
        now,
      ),
    );
  }
}

/** Exported for the plan test (test/files/file-lifetime-db.test.ts): must range-scan `files_org_idx`. */
export function uploadsQuery(k: Kysely<Database>, orgId: string, from: number, to: number, after: UploadKey | undefined, limit: number) {
  let q = k
    .selectFrom('files')
    .select((eb) => ['id', 'created_at', isHeld(eb).as('held')])
    .where('organization_id', '=', orgId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where(hasHolderId);
  // (created_at, id): one request's files share a millisecond.
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)));
  return q.orderBy('created_at').orderBy('id').limit(limit);
}
