import type { Db } from '../db/database.js';
import type { FilesTables } from './files.tables.js';
import { batches, ROWS_PER_INSERT } from '../db/batches.js';

export interface FileRecord {
  id: string;
  organizationId: string;
  name: string;
  kind: string;
  mimeType: string;
  size: number;
  sha256: string;
  blobKey: string;
  text: string | null;
  createdAt: number;
  /** The task it was uploaded for (it goes with that task); null for a knowledge document's file. */
  taskId: string | null;
  /** The knowledge document it was uploaded for (it goes with that document); null for a task's upload. */
  documentId: string | null;
}

type Row = FilesTables['files'];

const toRecord = (r: Row): FileRecord => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  kind: r.kind,
  mimeType: r.mime_type,
  size: Number(r.size),
  sha256: r.sha256,
  blobKey: r.blob_key,
  text: r.text,
  createdAt: Number(r.created_at),
  taskId: r.task_id,
  documentId: r.document_id,
});

export class FilesRepository {
  constructor(private readonly db: Db) {}

  /** All rows of one request in one transaction: either every file is recorded or none is. */
  async insertMany(records: FileRecord[]): Promise<void> {
    if (!records.length) return;
    await this.db.kysely.transaction().execute(async (trx) => {
      for (const batch of batches(records, ROWS_PER_INSERT)) {
        await trx
          .insertInto('files')
          .values(
            batch.map((f) => ({
              id: f.id,
              organization_id: f.organizationId,
              name: f.name,
              kind: f.kind,
              mime_type: f.mimeType,
              size: f.size,
              sha256: f.sha256,
              blob_key: f.blobKey,
              text: f.text,
              created_at: f.createdAt,
              task_id: f.taskId,
              document_id: f.documentId,
            })),
          )
          .execute();
      }
    });
  }

  async find(organizationId: string, id: string): Promise<FileRecord | undefined> {
    const r = await this.db.kysely.selectFrom('files').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  /**
   * The organization a file belongs to, for checking a presigned URL whose signature names the organization.
   * Only the signature check that follows may use the answer.
   */
  async findOwner(id: string): Promise<string | undefined> {
    const r = await this.db.kysely.selectFrom('files').select('organization_id').where('id', '=', id).executeTakeFirst();
    return r?.organization_id;
  }

  async count(organizationId: string): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('files')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
