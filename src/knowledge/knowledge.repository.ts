import { sql, type Kysely, type RawBuilder, type Updateable } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { batches, ROWS_PER_INSERT, VALUES_PER_IN_LIST } from '../db/batches.js';
import { pgIds } from '../db/id-lists.js';
import { pageAndTotal } from '../db/paging.js';
import { releaseFiles, type ReleasedBlob } from '../files/file-lifetime.repository.js';

export type KbRow = Database['knowledge_bases'];
export type DocumentRow = Database['kb_documents'];
/** A document row without its (possibly large) extracted text. */
export type DocumentSummary = Omit<DocumentRow, 'raw_text'>;
/** A deleted document: its id (for its jobs and chunks) and its uploaded file, if any. */
export type DeletedDocument = Pick<DocumentRow, 'id' | 'file_id'>;

const SUMMARY_COLUMNS = [
  'id',
  'organization_id',
  'kb_id',
  'name',
  'source',
  'document_url',
  'file_id',
  'mime_type',
  'status',
  'status_reason',
  'chunks_count',
  'created_at',
  'updated_at',
  'indexed_at',
] as const;

/**
 * PostgreSQL: the documents `ids`, found by primary key alone, whatever the statistics (db/id-lists.ts). A subquery
 * with an offset is planned by itself, so the caller's filters by organization and base stay outside it: inside, the
 * planner would read the base through its (organization_id, kb_id) index on a guess of two rows.
 */
function documentsById(ids: readonly string[]): RawBuilder<unknown> {
  return sql`select id, organization_id, kb_id, file_id from kb_documents where id = any(${pgIds(ids)}) offset 0`;
}

/** Knowledge bases and their documents. Every query filters by organization. */
export class KnowledgeRepository {
  constructor(private readonly db: Db) {}

  get k(): Kysely<Database> {
    return this.db.kysely;
  }

  transaction<T>(fn: (k: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  async insertKb(row: KbRow): Promise<void> {
    await this.k.insertInto('knowledge_bases').values(row).execute();
  }

  findKb(org: string, id: string): Promise<KbRow | undefined> {
    return this.k.selectFrom('knowledge_bases').selectAll().where('organization_id', '=', org).where('id', '=', id).executeTakeFirst();
  }

  /** The ids among `ids` that are knowledge bases of the organization. */
  async existingKbIds(org: string, ids: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const batch of batches(ids, VALUES_PER_IN_LIST)) {
      const rows = await this.k.selectFrom('knowledge_bases').select('id').where('organization_id', '=', org).where('id', 'in', batch).execute();
      for (const r of rows) out.add(r.id);
    }
    return out;
  }

  listKbs(org: string, offset: number, limit: number): Promise<{ rows: KbRow[]; total: number }> {
    return pageAndTotal(this.k.selectFrom('knowledge_bases').where('organization_id', '=', org), (q) =>
      q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit),
    );
  }

  /** Ready documents per knowledge base (what `total_documents` shows). */
  async readyCounts(org: string, kbIds: string[]): Promise<Map<string, number>> {
    if (!kbIds.length) return new Map();
    const rows = await this.k
      .selectFrom('kb_documents')
      .select(['kb_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('organization_id', '=', org)
      .where('kb_id', 'in', kbIds)
      .where('status', '=', 'ready')
      .groupBy('kb_id')
      .execute();
    return new Map(rows.map((r) => [r.kb_id, Number(r.n)]));
  }

  async updateKb(org: string, id: string, patch: Partial<Pick<KbRow, 'name' | 'description' | 'agent_id'>>, now: number): Promise<KbRow | undefined> {
    return this.k
      .updateTable('knowledge_bases')
      .set({ ...patch, updated_at: now })
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Deletes the knowledge base and its documents, returning the documents. The knowledge base row goes first: its lock
   * makes a concurrent commitDocuments wait (lockKb), so on PostgreSQL the documents it commits are either seen and
   * deleted here or refused there, never left in a deleted knowledge base.
   */
  async deleteKb(k: Kysely<Database>, org: string, id: string): Promise<DeletedDocument[]> {
    await k.deleteFrom('knowledge_bases').where('organization_id', '=', org).where('id', '=', id).execute();
    return k.deleteFrom('kb_documents').where('organization_id', '=', org).where('kb_id', '=', id).returning(['id', 'file_id']).execute();
  }

  /**
   * Whether the knowledge base exists, holding its row lock until the transaction ends (an update that changes
   * nothing: the one statement both databases lock a row with). Documents are inserted after it (see deleteKb).
   */
  async lockKb(k: Kysely<Database>, org: string, id: string): Promise<boolean> {
    const r = await k
      .updateTable('knowledge_bases')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async insertDocuments(k: Kysely<Database>, rows: DocumentRow[]): Promise<void> {
    for (const batch of batches(rows, ROWS_PER_INSERT)) await k.insertInto('kb_documents').values(batch).execute();
  }

  findDocument(org: string, kbId: string, id: string): Promise<DocumentRow | undefined> {
    return this.k
      .selectFrom('kb_documents')
      .selectAll()
      .where('organization_id', '=', org)
      .where('kb_id', '=', kbId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Any document of the organization by id (the indexer knows only the job's reference). */
  findDocumentById(org: string, id: string): Promise<DocumentRow | undefined> {
    return this.k.selectFrom('kb_documents').selectAll().where('organization_id', '=', org).where('id', '=', id).executeTakeFirst();
  }

  /** The ids among `ids` that are documents of knowledge base `kbId` of the organization. */
  async existingDocumentIds(org: string, kbId: string, ids: string[]): Promise<Set<string>> {
    if (this.db.dialect === 'postgres') {
      const r = await sql<{ id: string }>`select id from (${documentsById(ids)}) as d where organization_id = ${org} and kb_id = ${kbId}`.execute(this.k);
      return new Set(r.rows.map((d) => d.id));
    }
    const out = new Set<string>();
    for (const batch of batches(ids, VALUES_PER_IN_LIST)) {
      const rows = await this.k
        .selectFrom('kb_documents')
        .select('id')
        .where('organization_id', '=', org)
        .where('kb_id', '=', kbId)
        .where('id', 'in', batch)
        .execute();
      for (const r of rows) out.add(r.id);
    }
    return out;
  }

  listDocuments(org: string, kbId: string, offset: number, limit: number): Promise<{ rows: DocumentSummary[]; total: number }> {
    return pageAndTotal(this.k.selectFrom('kb_documents').where('organization_id', '=', org).where('kb_id', '=', kbId), (q) =>
      q.select([...SUMMARY_COLUMNS]).orderBy('created_at', 'asc').orderBy('id', 'asc').offset(offset).limit(limit),
    );
  }

  /** Deletes the organization's documents `ids` of knowledge base `kbId`; those it deleted (a concurrent delete's are not). */
  async deleteDocuments(k: Kysely<Database>, org: string, kbId: string, ids: readonly string[]): Promise<DeletedDocument[]> {
    if (this.db.dialect === 'postgres') {
      const r = await sql<DeletedDocument>`delete from kb_documents
        where id = any(array(select id from (${documentsById(ids)}) as d where organization_id = ${org} and kb_id = ${kbId}))
        returning id, file_id`.execute(k);
      return r.rows;
    }
    const out: DeletedDocument[] = [];
    for (const batch of batches([...ids], VALUES_PER_IN_LIST)) {
      out.push(...(await k.deleteFrom('kb_documents').where('organization_id', '=', org).where('kb_id', '=', kbId).where('id', 'in', batch).returning(['id', 'file_id']).execute()));
    }
    return out;
  }

  /**
   * The uploaded files of deleted documents, in the transaction that deleted them: rows and text now, blobs recorded
   * for removal after the commit (docs/decisions.md, "Files: lifetime").
   */
  releaseFiles(k: Kysely<Database>, org: string, docs: readonly DeletedDocument[], now: number): Promise<ReleasedBlob[]> {
    return releaseFiles(k, org, docs.flatMap((d) => (d.file_id ? [d.file_id] : [])), now);
  }

  /**
   * Moves a document to `indexing` only while the job that claimed it still holds its fence, so a stale worker
   * cannot move a finished document back.
   */
  markIndexing(org: string, id: string, jobId: string, fence: number, now: number): Promise<boolean> {
    return this.updateFenced(org, id, jobId, fence, { status: 'indexing', status_reason: null, updated_at: now });
  }

  /** Keeps the fetched text (so a retry after a crash does not fetch again); fenced like markIndexing. */
  saveText(org: string, id: string, jobId: string, fence: number, text: string, mimeType: string | null, name: string | null, now: number): Promise<boolean> {
    return this.updateFenced(org, id, jobId, fence, { raw_text: text, mime_type: mimeType, ...(name ? { name } : {}), updated_at: now });
  }

  /** Updates a document only while the job `jobId` still runs with `fence` (a job taken over by another indexer writes nothing). */
  private async updateFenced(org: string, id: string, jobId: string, fence: number, set: Updateable<Database['kb_documents']>): Promise<boolean> {
    const r = await this.k
      .updateTable('kb_documents')
      .set(set)
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .where(({ exists, selectFrom }) =>
        exists(selectFrom('jobs').select('jobs.id').where('jobs.id', '=', jobId).where('jobs.fence', '=', fence).where('jobs.status', '=', 'running')),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async setOutcome(k: Kysely<Database>, org: string, id: string, fields: Pick<DocumentRow, 'status' | 'status_reason'> & Partial<Pick<DocumentRow, 'chunks_count' | 'indexed_at'>>, now: number): Promise<boolean> {
    const r = await k
      .updateTable('kb_documents')
      .set({ ...fields, updated_at: now })
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
