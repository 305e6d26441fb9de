import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';

/**
 * The ORDER BY term that ranks rows best first by the cosine similarity of an embedding column to `query`, computed
 * by the database: knowledge chunks and memories both compare every vector in their scope, which in the process
 * meant parsing and comparing tens of MB of JSON per search on the event loop (2,000 memories of 1,536 dimensions:
 * ~0.7 s). Callers run the query as a list read (`Db.lists`, list-reads.ts), so on libsql it runs on the reader
 * thread and on PostgreSQL a few at a time.
 *
 * The column holds, on libsql, a float32 vector blob or the vector's JSON text (`vector_distance_cos` reads both);
 * on PostgreSQL the JSON text ('[0.1,0.2]'), which is also pgvector's text form. A zero vector on either side ranks
 * as cosine 0 (distance 1), as `cosine()` (src/knowledge/ranking.ts) has it. The caller appends its tie-break.
 */
export async function cosineOrder(db: Db, embedding: RawBuilder<unknown>, query: number[]): Promise<RawBuilder<unknown>> {
  if (db.dialect === 'sqlite') {
    // A zero vector has no distance: null, which would sort first.
    return sql`coalesce(vector_distance_cos(${embedding}, vector32(${JSON.stringify(query)})), 1)`;
  }
  if (await hasPgvector(db)) {
    // pgvector's cosine distance of a zero vector is NaN, which PostgreSQL sorts after every number.
    return sql`coalesce(nullif(${embedding}::vector <=> ${JSON.stringify(query)}::vector, 'NaN'::float8), 1)`;
  }
  // Without pgvector, the cosine from the text form read as float8[]. Reading the text is most of the cost: ~0.8 ms
  // per vector of 1,536 dimensions with replace(), twice that with translate(), which goes character by character.
  // The query's own norm is the same for every row, so the order is that of dot / |row|.
  return sql`coalesce((
    select sum(a * b) / nullif(sqrt(sum(a * a)), 0)
    from unnest(replace(replace(${embedding}, '[', '{'), ']', '}')::float8[], ${`{${query.join(',')}}`}::float8[]) as t(a, b)
  ), 0) desc`;
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
