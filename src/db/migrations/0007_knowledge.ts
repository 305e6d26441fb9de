import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Knowledge bases, their documents and chunks, and the `jobs` queue that indexes documents.
 *
 * Lexical search lives next to the chunks in each dialect's own engine: an FTS5 table (external content, kept in
 * step by triggers) on libsql, a generated tsvector column with a GIN index on PostgreSQL. Embeddings are stored
 * as libsql's native float32 vector blob, and as pgvector's text form ('[0.1,0.2,...]') on PostgreSQL so the
 * same column serves both with and without the extension (it is cast to `vector` at query time when present).
 */
export const knowledge0007: MigrationDef = {
  name: '0007_knowledge',
  async up(db, dialect) {
    await db.schema
      .createTable('knowledge_bases')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('knowledge_bases_org_idx').on('knowledge_bases').columns(['organization_id', 'created_at']).execute();

    await db.schema
      .createTable('kb_documents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('kb_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('document_url', 'text')
      .addColumn('file_id', 'text')
      .addColumn('mime_type', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('status_reason', 'text')
      .addColumn('raw_text', 'text')
      .addColumn('chunks_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('indexed_at', 'bigint')
      .execute();
    await db.schema.createIndex('kb_documents_kb_idx').on('kb_documents').columns(['organization_id', 'kb_id', 'created_at']).execute();

    const chunks = db.schema.createTable('kb_chunks');
    await (dialect === 'postgres'
      ? chunks.addColumn('seq', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : chunks.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    )
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('kb_id', 'text', (c) => c.notNull())
      .addColumn('document_id', 'text', (c) => c.notNull())
      .addColumn('ord', 'integer', (c) => c.notNull())
      .addColumn('heading', 'text', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('embedding', dialect === 'postgres' ? 'text' : 'blob')
      .addColumn('embedding_model', 'text')
      .execute();
    await db.schema.createIndex('kb_chunks_kb_idx').on('kb_chunks').columns(['organization_id', 'kb_id']).execute();
    await db.schema.createIndex('kb_chunks_doc_idx').on('kb_chunks').columns(['document_id', 'ord']).execute();

    if (dialect === 'postgres') {
      // Content weighs more than the heading path (ts_rank weights: A 1.0, B 0.4).
      await sql`alter table kb_chunks add column tsv tsvector generated always as (
        setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', heading), 'B')) stored`.execute(db);
      await sql`create index kb_chunks_tsv_idx on kb_chunks using gin (tsv)`.execute(db);
    } else {
      await sql`create virtual table kb_chunks_fts using fts5(heading, content, content='kb_chunks', content_rowid='seq', tokenize='porter unicode61')`.execute(db);
      await sql`create trigger kb_chunks_fts_ai after insert on kb_chunks begin
        insert into kb_chunks_fts(rowid, heading, content) values (new.seq, new.heading, new.content); end`.execute(db);
      await sql`create trigger kb_chunks_fts_ad after delete on kb_chunks begin
        insert into kb_chunks_fts(kb_chunks_fts, rowid, heading, content) values ('delete', old.seq, old.heading, old.content); end`.execute(db);
    }

    // The durable work queue (indexing today): claimed with a lease and a fencing number, like tasks.
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('ref_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('fence', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('heartbeat_at', 'bigint')
      .addColumn('run_after', 'bigint', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('jobs_queue_idx').on('jobs').columns(['status', 'run_after']).execute();
    await db.schema.createIndex('jobs_lease_idx').on('jobs').columns(['status', 'lease_expires_at']).execute();
    await db.schema.createIndex('jobs_ref_idx').on('jobs').columns(['organization_id', 'ref_id']).execute();
  },
};
