import type { Kysely } from 'kysely';
import { batches, VALUES_PER_IN_LIST } from '../batches.js';
import type { MigrationDef } from './migration.js';

/**
 * Uploaded files get a lifetime (docs/decisions.md, "Files: lifetime"):
 *
 * - `files.task_id`: the task a webhook or invoke upload was stored for (its id is chosen before the files are
 *   stored). The file goes with that task, in the transaction that deletes the task's records. Null for a knowledge
 *   document's file (it goes with its document) and for uploads this migration could not attribute (below).
 * - `file_blob_deletions`: the blobs of file rows already deleted, written in the same transaction as the delete.
 *   Whoever deleted the rows removes the blobs after the commit and then these rows; what fails stays here and the
 *   worker role's file sweep (src/files/file-sweep.ts) tries again. Keyed by the blob key, unique per file.
 *
 * Existing uploads are attributed from `tasks.input_files` (a TaskFile's id is its file's id): one pass over the
 * table, pages of tasks in primary-key order, only rows with files parsed. Not attributed, and kept as before: files
 * of a conversation's earlier runs (a continuation replaces `input_files`) and of tasks still in the task inbox.
 */
const PAGE = 500;

export const fileLifetime0027: MigrationDef = {
  name: '0027_file_lifetime',
  async up(db) {
    await db.schema.alterTable('files').addColumn('task_id', 'text').execute();
    // deleteTaskRecords finds a task's files by it; the orphan sweep reads the organization's files by creation time
    // (files_org_idx) and looks each task up by the primary key of `tasks`.
    await db.schema.createIndex('files_task_idx').on('files').columns(['organization_id', 'task_id']).execute();
    await db.schema
      .createTable('file_blob_deletions')
      .addColumn('blob_key', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('file_id', 'text', (c) => c.notNull())
      .addColumn('released_at', 'bigint', (c) => c.notNull())
      .execute();
    await attributeUploads(db);
  },
};

/** Exported for its test (test/files/file-lifetime-db.test.ts), which pages it by fewer tasks. */
export async function attributeUploads(db: Kysely<any>, page = PAGE): Promise<void> {
  let after: { org: string; id: string } | undefined;
  for (;;) {
    let q = db.selectFrom('tasks').select(['organization_id', 'id', 'input_files']).where('input_files', '!=', '[]');
    // A row value, not an OR of columns: both databases then seek the primary key to the next page.
    if (after) {
      const a = after;
      q = q.where((eb) => eb(eb.refTuple('organization_id', 'id'), '>', eb.tuple(a.org, a.id)));
    }
    const rows = await q.orderBy('organization_id').orderBy('id').limit(page).execute();
    for (const r of rows) {
      for (const ids of batches(fileIdsOf(r.input_files), VALUES_PER_IN_LIST)) {
        await db.updateTable('files').set({ task_id: r.id }).where('organization_id', '=', r.organization_id).where('id', 'in', ids).where('task_id', 'is', null).execute();
      }
    }
    if (rows.length < page) break;
    const last = rows[rows.length - 1];
    after = { org: last.organization_id, id: last.id };
  }
}

/** The ids of a task's `input_files`; none when the text is not a list. Ids of files given by URL match no file. */
function fileIdsOf(text: string): string[] {
  try {
    const files = JSON.parse(text) as unknown;
    if (!Array.isArray(files)) return [];
    return files.flatMap((f) => (f && typeof f === 'object' && typeof (f as { id?: unknown }).id === 'string' ? [(f as { id: string }).id] : []));
  } catch {
    return [];
  }
}
