import { sql, type Kysely, type RawBuilder } from 'kysely';
import { cosineOrder, hasEmbedding, pgEmbeddingColumns } from '../db/cosine-order.js';
import type { Db } from '../db/database.js';
import { rawRead } from '../db/list-reads.js';
import type { Database } from '../db/schema.js';
import { batches, VALUES_PER_IN_LIST } from '../db/batches.js';
import { pgIds } from '../db/id-lists.js';
import type { SearchScope } from './search-scope.js';

export interface NewChunk {
  ord: number;
  heading: string;
  content: string;
  embedding: number[] | null;
}

export interface ChunkHit {
  seq: number;
  kbId: string;
  documentId: string;
  documentName: string;
  heading: string;
  content: string;
}

/**
 * The chunks of indexed documents and the two retrievals over them, in each dialect's own engine:
 * lexical (FTS5 bm25 on libsql; tsvector + ts_rank on PostgreSQL) and vector (libsql's vector_distance_cos;
 * pgvector's `<=>` when the extension is installed, else a cosine in SQL over float4 arrays: db/cosine-order.ts).
 * Every query filters by organization, and retrievals by their scopes in the WHERE clause, so `limit` counts only
 * chunks the caller may see.
 */
export class ChunkStoreRepository {
  constructor(private readonly db: Db) {}

  /** Writes a document's chunks (inside the caller's transaction). */
  async insert(k: Kysely<Database>, org: string, kbId: string, documentId: string, chunks: NewChunk[], model: string | null): Promise<void> {
    for (const batch of batches(chunks, 200)) {
      const rows = batch.map((c) => ({
        organization_id: org,
        kb_id: kbId,
        document_id: documentId,
        ord: c.ord,
        heading: c.heading,
        content: c.content,
        ...this.vectorColumns(c.embedding),
        embedding_model: c.embedding ? model : null,
      }));
      await k.insertInto('kb_chunks').values(rows as never).execute();
    }
  }

  /** PostgreSQL: one statement; SQLite: in slices (db/batches.ts), a set of documents may be more than one statement can bind. */
  async deleteForDocuments(k: Kysely<Database>, org: string, documentIds: readonly string[]): Promise<void> {
    if (this.db.dialect === 'postgres') {
      // Found through kb_chunks_doc_idx alone: the organization filter outside the subquery (offset 0 plans it by
      // itself) cannot draw the planner to the organization's index on a guess (db/id-lists.ts); deleted by key.
      await sql`delete from kb_chunks where seq = any(array(
        select seq from (select seq, organization_id from kb_chunks where document_id = any(${pgIds(documentIds)}) offset 0) as c
        where organization_id = ${org}))`.execute(k);
      return;
    }
    for (const batch of batches(documentIds, VALUES_PER_IN_LIST)) {
      await k.deleteFrom('kb_chunks').where('organization_id', '=', org).where('document_id', 'in', batch).execute();
    }
  }

  async deleteForKb(k: Kysely<Database>, org: string, kbId: string): Promise<void> {
    await k.deleteFrom('kb_chunks').where('organization_id', '=', org).where('kb_id', '=', kbId).execute();
  }

  /** Chunk keys in lexical rank order; any one term may match (OR), rarer terms weigh more. */
  async lexical(org: string, scopes: SearchScope[], terms: string[], limit: number): Promise<number[]> {
    if (!scopes.length || !terms.length) return [];
    const k = this.db.kysely;
    if (this.db.dialect === 'postgres') {
      // ts_rank (term frequency, weighted A/B) measured better than ts_rank_cd on the committed corpus
      // (recall@5 1.00 vs 0.91, see docs/benchmarks.md): cover density rewards clusters an OR query rarely forms.
      const r = await sql<{ seq: number }>`
        select c.seq from kb_chunks c, to_tsquery('english', ${terms.join(' | ')}) q
        where c.organization_id = ${org} and ${inScopes(scopes)} and c.tsv @@ q
        order by ts_rank(c.tsv, q) desc, c.seq
        limit ${limit}`.execute(k);
      return r.rows.map((x) => Number(x.seq));
    }
    const match = terms.map((t) => `"${t}"`).join(' OR ');
    // Ranks every chunk that has a term.
    return this.rankedOffLoop(
      org,
      sql<{ seq: number }>`
        select c.seq from kb_chunks_fts f join kb_chunks c on c.seq = f.rowid
        where kb_chunks_fts match ${match} and c.organization_id = ${org} and ${inScopes(scopes)}
        order by bm25(kb_chunks_fts, 0.5, 1.0), c.seq
        limit ${limit}`,
    );
  }

  /** Chunk keys by cosine similarity to the query vector, among chunks embedded by the same model. */
  async vector(org: string, scopes: SearchScope[], model: string, query: number[], limit: number): Promise<number[]> {
    if (!scopes.length) return [];
    // Compares every chunk in scope: on libsql ~130 ms per 20,000 chunks of 1,536 dimensions; on PostgreSQL without
    // pgvector ~90 ms of its CPU per 1,000 (float4 arrays, db/cosine-order.ts).
    return this.rankedOffLoop(
      org,
      sql<{ seq: number }>`
        select c.seq from kb_chunks c
        where c.organization_id = ${org} and ${inScopes(scopes)} and c.embedding_model = ${model} and ${hasEmbedding(this.db, 'c')}
        order by ${await cosineOrder(this.db, 'c', query)}, c.seq limit ${limit}`,
    );
  }

  /** Chunk keys of a ranking whose cost grows with the chunks in scope: run as a list read (src/db/list-reads.ts). */
  private async rankedOffLoop(org: string, ranking: RawBuilder<{ seq: number }>): Promise<number[]> {
    return (await this.db.lists.all(org, rawRead(this.db.kysely, ranking))).map((x) => Number(x.seq));
  }

  async load(org: string, seqs: number[]): Promise<ChunkHit[]> {
    if (!seqs.length) return [];
    const rows = await this.db.kysely
      .selectFrom('kb_chunks as c')
      .innerJoin('kb_documents as d', 'd.id', 'c.document_id')
      .select(['c.seq', 'c.kb_id', 'c.document_id', 'c.heading', 'c.content', 'd.name'])
      .where('c.organization_id', '=', org)
      .where('c.seq', 'in', seqs)
      .execute();
    return rows.map((r) => ({
      seq: Number(r.seq),
      kbId: r.kb_id,
      documentId: r.document_id,
      documentName: r.name,
      heading: r.heading,
      content: r.content,
    }));
  }

  /** libsql: a float32 vector blob; PostgreSQL: a float4 array and its norm (db/cosine-order.ts). */
  private vectorColumns(v: number[] | null) {
    if (this.db.dialect === 'postgres') return pgEmbeddingColumns(v);
    return { embedding: v ? sql`vector32(${JSON.stringify(v)})` : null };
  }
}

/**
 * The scopes as one predicate on `kb_chunks c`: whole knowledge bases by `kb_id`, restricted ones by their own
 * (kb_id, document ids) pair, so a listed id only ever matches inside the knowledge base it was listed under.
 */
function inScopes(scopes: SearchScope[]) {
  const whole = scopes.filter((s) => s.documentIds === null).map((s) => s.kbId);
  const parts = scopes
    .filter((s) => s.documentIds !== null && s.documentIds.length > 0)
    .map((s) => sql`(c.kb_id = ${s.kbId} and c.document_id in (${sql.join(s.documentIds!)}))`);
  if (whole.length) parts.unshift(sql`c.kb_id in (${sql.join(whole)})`);
  return parts.length ? sql`(${sql.join(parts, sql` or `)})` : sql`1 = 0`;
}
