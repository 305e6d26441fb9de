import type { MigrationDef } from './migration.js';

/**
 * `files.document_id`: the knowledge document an upload was stored for (docs/decisions.md, "Files: lifetime"). The
 * document's id is drawn before its file is stored, as a task's is for its uploads (`files.task_id`, 0027), so a file
 * whose document never committed (the process died between storing the file and committing the document, or the
 * discard after a refused commit failed) is an orphan the file sweep finds: its document, looked up by the primary key
 * of `kb_documents`, does not exist. Without it such a file looked like an unattributed upload of before 0027, which
 * stays for good.
 *
 * No index: the file goes with its document through `kb_documents.file_id` (the document's delete returns it), and
 * the sweep reads files by `files_org_idx`. Files of documents created before this migration keep a null document id
 * and go with their document as before.
 *
 * Adding a nullable column without a default rewrites nothing on either database.
 */
export const fileDocuments0029: MigrationDef = {
  name: '0029_file_documents',
  async up(db) {
    await db.schema.alterTable('files').addColumn('document_id', 'text').execute();
  },
};
