import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import { pgFloat4Array, pgFloat8Array } from './pg-arrays.js';

/**
 * How embeddings are stored and ranked by cosine similarity, in the database: knowledge chunks and memories both
 * compare every vector in their scope, which in the process meant parsing and comparing tens of MB of JSON per search
 * on the event loop (2,000 memories of 1,536 dimensions: ~0.7 s). Callers run the ranking as a list read (`Db.lists`,
 * list-reads.ts), so on libsql it runs on the reader thread and on PostgreSQL a few at a time.
 *
 * Storage: on libsql the `embedding` column, a float32 vector blob (chunks) or the vector's JSON text (memories),
 * both read by `vector_distance_cos`. On PostgreSQL (migration 0028) `embedding_f4 real[]`, written as a binary
 * parameter, and `embedding_norm`, the norm of those float4 values computed once at write time; `embedding`, the
 * JSON text, only on rows of the previous version (kept for its processes during an upgrade), and a trigger fills
 * the binary columns from the text such processes write. No query parses number text.
 */

/** The rows that have a vector to rank. */
export function hasEmbedding(db: Db, table: string): RawBuilder<unknown> {
  return db.dialect === 'sqlite' ? sql`${sql.ref(`${table}.embedding`)} is not null` : sql`${sql.ref(`${table}.embedding_f4`)} is not null`;
}

/**
 * The ORDER BY term that ranks the rows of `table` (an alias) best first by cosine similarity to `query`. A zero
 * vector on either side ranks as cosine 0 (distance 1), as `cosine()` (src/knowledge/ranking.ts) has it. The caller
 * appends its tie-break.
 */
export async function cosineOrder(db: Db, table: string, query: number[]): Promise<RawBuilder<unknown>> {
  if (db.dialect === 'sqlite') {
    // A zero vector has no distance: null, which would sort first.
    return sql`coalesce(vector_distance_cos(${sql.ref(`${table}.embedding`)}, vector32(${JSON.stringify(query)})), 1)`;
  }
  const f4 = sql.ref(`${table}.embedding_f4`);
  if (await hasPgvector(db)) {
    // pgvector's cast of real[] copies the floats; its cosine distance of a zero vector is NaN, which PostgreSQL
    // sorts after every number.
    return sql`coalesce(nullif(${f4}::vector <=> ${JSON.stringify(query)}::vector, 'NaN'::float8), 1)`;
  }
  // Without pgvector, the dot product over the two arrays unnested side by side (set-returning functions in a select
  // list advance together), divided by the stored norm: the query's own norm is the same for every row, so the order
  // is that of dot / |row|. Unnesting in the select list rather than in FROM (which materialises the rows first)
  // halves the cost; real * float8 is one cross-type multiply, so the sum is of float8 at the cost of float4 and
  // cannot underflow to an error as a float4 product of tiny components would. Measured at 1,536 dimensions: ~0.09 ms
  // of PostgreSQL's CPU per row, against ~0.42 ms when each row's JSON text was read as float8[] (docs/decisions.md).
  return sql`coalesce((
    select sum(a * b) from (select unnest(${f4}) as a, unnest(${pgFloat8Array(query)}::float8[]) as b) as t
  ) / nullif(${sql.ref(`${table}.embedding_norm`)}, 0), 0) desc`;
}

/**
 * The PostgreSQL columns of a vector as written: the float4 array (a binary parameter), the norm of those float4
 * values (float8 sums of exact float8 products, in order, as the trigger of migration 0028 computes it for text
 * written by the previous version), and no JSON text. All null without a vector.
 */
export function pgEmbeddingColumns(v: readonly number[] | null) {
  if (!v) return { embedding: null, embedding_f4: null, embedding_norm: null };
  let sum = 0;
  for (const x of v) {
    const f = Math.fround(x);
    sum += f * f;
  }
  return { embedding: null, embedding_f4: sql<number[]>`${pgFloat4Array(v)}::real[]`, embedding_norm: Math.sqrt(sum) };
}

const pgvector = new WeakMap<Db, Promise<boolean>>();

/** Whether pgvector is installed; tries to install it once when the server has it (it is not packaged everywhere). */
export function hasPgvector(db: Db): Promise<boolean> {
  if (db.dialect !== 'postgres') return Promise.resolve(false);
  let known = pgvector.get(db);
  if (!known) {
    known = detect(db).catch(() => false);
    pgvector.set(db, known);
  }
  return known;
}

async function detect(db: Db): Promise<boolean> {
  const k = db.kysely;
  if ((await sql`select 1 from pg_extension where extname = 'vector'`.execute(k)).rows.length) return true;
  if (!(await sql`select 1 from pg_available_extensions where name = 'vector'`.execute(k)).rows.length) return false;
  try {
    await sql`create extension if not exists vector`.execute(k);
    return true;
  } catch {
    return false;
  }
}
