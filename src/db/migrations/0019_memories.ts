import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/**
 * Memories (issue 26): facts an agent keeps about a user (`user_id` set) or for all of its users (`user_id` null),
 * and the running summary of long task threads.
 *
 * Recall is lexical in each dialect's own engine, as for knowledge chunks (0007): an FTS5 table (external content,
 * kept in step by triggers, including updates since memories are edited) on libsql; a generated tsvector column
 * with a GIN index on PostgreSQL. `seq` is the integer key FTS5 needs; `id` is the public id. Embeddings (when an
 * embedding endpoint is configured) are JSON text on both dialects, which recall's cosine ranking in SQL reads as it
 * is (src/db/cosine-order.ts), so neither libsql's vector type nor a pgvector column is needed.
 */
export const memories0019: MigrationDef = {
  name: '0019_memories',
  async up(db, dialect) {
    const t = db.schema.createTable('memories');
    await (dialect === 'postgres'
      ? t.addColumn('seq', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : t.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    )
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('embedding', 'text')
      .addColumn('embedding_model', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('memories_agent_idx').on('memories').columns(['organization_id', 'agent_id', 'user_id', 'updated_at']).execute();
    await db.schema.createIndex('memories_user_idx').on('memories').columns(['organization_id', 'user_id', 'updated_at']).execute();
    if (dialect === 'postgres') {
      await sql`alter table memories add column tsv tsvector generated always as (to_tsvector('english', content)) stored`.execute(db);
      await sql`create index memories_tsv_idx on memories using gin (tsv)`.execute(db);
    } else {
      await sql`create virtual table memories_fts using fts5(content, content='memories', content_rowid='seq', tokenize='porter unicode61')`.execute(db);
      await sql`create trigger memories_fts_ai after insert on memories begin
        insert into memories_fts(rowid, content) values (new.seq, new.content); end`.execute(db);
      await sql`create trigger memories_fts_ad after delete on memories begin
        insert into memories_fts(memories_fts, rowid, content) values ('delete', old.seq, old.content); end`.execute(db);
      await sql`create trigger memories_fts_au after update of content on memories begin
        insert into memories_fts(memories_fts, rowid, content) values ('delete', old.seq, old.content);
        insert into memories_fts(rowid, content) values (new.seq, new.content); end`.execute(db);
    }
    await db.schema
      .createTable('session_summaries')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('covered_run', 'integer', (c) => c.notNull())
      .addColumn('summary', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('session_summaries_pk', ['organization_id', 'task_id'])
      .execute();
  },
};
