import { sql, type Kysely } from 'kysely';
import type { MigrationContext, MigrationDef } from './migration.js';

/**
 * On PostgreSQL, embeddings of memories and knowledge chunks are stored as float4 arrays (`embedding_f4 real[]`) with
 * the norm of those values (`embedding_norm`), so that no ranking parses the JSON text they were kept in: that
 * parsing was most of a recall's cost (docs/decisions.md, "Embeddings on PostgreSQL are float4 arrays").
 *
 * Columns are added, not converted. Converting the column in place (`alter column type ... using`) would rewrite both
 * tables under a lock that blocks even reads for as long as the parse takes, and processes of the previous version,
 * which write and read JSON text, would fail on every vector write and ranking during a rolling restart. Beside the
 * new columns they keep working: their text is still there for them to rank, and a trigger fills the new columns
 * from the text they write (an insert, or an edited memory), so the new version ranks their rows too. Rows the new
 * version writes leave the text null. libsql keeps the float32 blob (chunks) and JSON text (memories) that
 * `vector_distance_cos` reads: nothing changes there.
 *
 * Existing rows are converted by `backfill`, after the migrations' transaction commits (that transaction holds the
 * tables' exclusive lock from `add column`), 500 rows per transaction, by every starting process until none is left;
 * the partial index finds the rows still to convert, so a start after it is done costs one index probe. The cost on
 * this machine: ~60 s of PostgreSQL's CPU per 100,000 rows of 1,536 dimensions (docs/benchmarks.md).
 */
const TABLES = ['memories', 'kb_chunks'] as const;
const BATCH = 500;

/**
 * The float4 array of pgvector's text form of a vector ('[0.1,0.2]'), and the norm of its values: float8 sums of
 * exact float8 products, in order, as the repositories compute it for what they write (db/cosine-order.ts).
 */
const fromText = (text: string) => `replace(replace(${text}, '[', '{'), ']', '}')::real[]`;
const normOf = (f4: string) => `(select sqrt(sum(a::float8 * a)) from (select unnest(${f4}) as a) as u)`;

export const binaryEmbeddings0028: MigrationDef = {
  name: '0028_binary_embeddings',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql
      .raw(
        `create function agentry_embedding_from_text() returns trigger language plpgsql as $$
        begin
          new.embedding_f4 := ${fromText('new.embedding')};
          new.embedding_norm := ${normOf('new.embedding_f4')};
          return new;
        end $$`,
      )
      .execute(db);
    for (const t of TABLES) {
      await sql`alter table ${sql.table(t)} add column embedding_f4 real[], add column embedding_norm float8`.execute(db);
      await sql`create trigger ${sql.id(`${t}_embedding_from_text`)} before insert or update of embedding on ${sql.table(t)}
        for each row when (new.embedding is not null) execute function agentry_embedding_from_text()`.execute(db);
      await sql`create index ${sql.id(`${t}_embedding_text_idx`)} on ${sql.table(t)} (seq) where embedding is not null and embedding_f4 is null`.execute(db);
    }
  },
  async backfill(db, dialect, ctx) {
    if (dialect === 'postgres') await backfillEmbeddings(db, ctx);
  },
};

/**
 * Converts the JSON text of rows written before the migration, `batch` rows per statement (each its own
 * transaction), until none is left. Processes starting together share the work: a batch locks its rows, and another
 * process waiting on them finds them converted and moves on. Exported for its test, which runs it on rows written
 * as the previous version wrote them.
 */
export async function backfillEmbeddings(db: Kysely<any>, ctx: MigrationContext = {}, batch = BATCH): Promise<void> {
  for (const t of TABLES) {
    const started = Date.now();
    let converted = 0;
    for (;;) {
      // `offset 0` keeps the parse in its subquery: pulled up, it would run once for each use of f4. `= any(array(...))`
      // reads the batch's rows by primary key: as `in (...)` it was a hash join over the whole table, every batch.
      const r = await sql`
        update ${sql.table(t)} as x
        set (embedding_f4, embedding_norm) = (select f4, ${sql.raw(normOf('f4'))} from (select ${sql.raw(fromText('x.embedding'))} as f4 offset 0) as p)
        where x.seq = any(array(
          select seq from ${sql.table(t)} where embedding is not null and embedding_f4 is null order by seq limit ${batch} for update
        ))`.execute(db);
      const n = Number(r.numAffectedRows ?? 0);
      if (!n) break;
      converted += n;
    }
    if (converted) ctx.log?.info({ table: t, rows: converted, duration_ms: Date.now() - started }, `embeddings of ${t} converted to float4 arrays`);
  }
}
