import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pgEmbeddingColumns } from '../../src/db/cosine-order.js';
import type { Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { backfillEmbeddings } from '../../src/db/migrations/0028_binary_embeddings.js';
import { migrations } from '../../src/db/migrations/index.js';
import { ChunkStoreRepository } from '../../src/knowledge/chunk-store.repository.js';
import { cosine } from '../../src/knowledge/ranking.js';
import { MemoryRepository } from '../../src/memory/memory.repository.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { rankingCase } from '../support/vectors.js';

const MIGRATION = '0028_binary_embeddings';
/** What a start applies on a database migrated up to just before MIGRATION: it, and any migration after it. */
const FROM_MIGRATION = migrations.slice(migrations.findIndex((m) => m.name === MIGRATION)).map((m) => m.name);

/**
 * Migration 0028 stores PostgreSQL's embeddings as float4 arrays with their norm. Rows written before it (JSON text;
 * on libsql, chunks as float32 blobs) rank after it as cosine() orders them, and so do rows that processes of the
 * previous version write during a rolling restart (JSON text, converted by the migration's trigger).
 */
describe.each(TEST_DBS)('embeddings written before migration 0028 (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ db, close } = await openMigratedDb(kind, { before: MIGRATION }));
  });
  afterEach(() => close());

  const k = () => db.kysely as unknown as Kysely<any>;
  /** A memory as the previous version wrote it: its vector as JSON text, on both dialects. */
  const oldMemory = (i: number, v: number[] | null) =>
    k()
      .insertInto('memories')
      .values({ id: `m${i}`, organization_id: 'org-a', agent_id: 'agent-1', user_id: null, content: `memory ${i}`, source: 'api', task_id: null, embedding: v && JSON.stringify(v), embedding_model: v && 'toy', created_at: i, updated_at: i })
      .execute();
  /** Chunks as the previous version wrote them: JSON text on PostgreSQL, float32 blobs on libsql. */
  const oldChunks = (vectors: number[][], firstOrd = 0) =>
    k()
      .insertInto('kb_chunks')
      .values(
        vectors.map((v, i) => ({
          organization_id: 'org-a',
          kb_id: 'kb-1',
          document_id: 'doc-1',
          ord: firstOrd + i,
          heading: '',
          content: `c${firstOrd + i}`,
          embedding: kind === 'sqlite' ? sql`vector32(${JSON.stringify(v)})` : JSON.stringify(v),
          embedding_model: 'toy',
        })),
      )
      .execute();
  const left = async (table: string) => (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where embedding is not null and embedding_f4 is null`.execute(k())).rows[0]!.n;

  /** Memory ids by cosine() to `query`, equal similarities newest (last inserted) first, as the ranking has them. */
  const byCosine = (query: number[], vectors: Map<string, number[]>) =>
    [...vectors]
      .map(([id, v], i) => ({ id, sim: cosine(query, v), i }))
      .sort((a, b) => b.sim - a.sim || b.i - a.i)
      .map((x) => x.id);

  it('ranks them as cosine() does after it, and the rows the previous version writes and edits meanwhile', async () => {
    const mem = rankingCase(1, 30, 256);
    const memVectors = new Map<string, number[]>();
    for (const [i, v] of mem.vectors.entries()) {
      await oldMemory(i, v);
      memVectors.set(`m${i}`, v);
    }
    await oldMemory(100, null);
    const chunks = rankingCase(2, 30, 256);
    const chunkVectors = [...chunks.vectors];
    await oldChunks(chunkVectors);

    expect(await migrate(db)).toEqual(FROM_MIGRATION);

    const memories = new MemoryRepository(db);
    const store = new ChunkStoreRepository(db);
    const rankMemories = () => memories.vector('org-a', 'agent-1', [null], 'toy', mem.query, 100);
    const rankChunks = async () => {
      const seqs = await store.vector('org-a', [{ kbId: 'kb-1', documentIds: null }], 'toy', chunks.query, 100);
      const ords = new Map((await k().selectFrom('kb_chunks').select(['seq', 'ord']).execute()).map((r) => [Number(r.seq), r.ord]));
      return seqs.map((s) => ords.get(s));
    };
    const chunkOrder = () =>
      chunkVectors
        .map((v, ord) => ({ sim: cosine(chunks.query, v), ord }))
        .sort((a, b) => b.sim - a.sim || a.ord - b.ord)
        .map((x) => x.ord);

    expect(await rankMemories()).toEqual(byCosine(mem.query, memVectors));
    expect(await rankChunks()).toEqual(chunkOrder());
    if (kind === 'postgres') {
      // Converted before the migration returned: nothing left for a later start.
      expect(await left('memories')).toBe(0);
      expect(await left('kb_chunks')).toBe(0);
    }

    // A process of the previous version, during a rolling restart: it edits a converted memory (its new vector is
    // the query's, so it must now rank first), adds a memory and adds a chunk, all with JSON text.
    await k().updateTable('memories').set({ content: 'edited', embedding: JSON.stringify(mem.query), embedding_model: 'toy', updated_at: 1000 }).where('id', '=', 'm3').execute();
    memVectors.set('m3', mem.query);
    await oldMemory(200, chunks.vectors[4]!);
    memVectors.set('m200', chunks.vectors[4]!);
    await oldChunks([chunks.query], chunkVectors.length);
    chunkVectors.push(chunks.query);
    expect(await rankMemories()).toEqual(byCosine(mem.query, memVectors));
    expect((await rankMemories())[0]).toBe('m3');
    expect(await rankChunks()).toEqual(chunkOrder());

    // This version edits a converted memory: ranked by its new vector; on PostgreSQL the old text is cleared.
    await memories.update('org-a', 'm5', 'new text', { embedding: mem.vectors[7]!.map((x) => -x), embedding_model: 'toy' }, 2000);
    memVectors.set('m5', mem.vectors[7]!.map((x) => -x));
    expect(await rankMemories()).toEqual(byCosine(mem.query, memVectors));
    const m5 = await k().selectFrom('memories').select('embedding').where('id', '=', 'm5').executeTakeFirstOrThrow();
    if (kind === 'postgres') expect(m5.embedding).toBeNull();
  });

  it.runIf(kind === 'postgres')('converts in batches, shared by processes starting together, to what this version writes', async () => {
    const { vectors } = rankingCase(3, 20, 64);
    for (const [i, v] of vectors.entries()) await oldMemory(i, v);
    await oldChunks(vectors);
    const logged: { table: string; rows: number }[] = [];
    const log = { info: (f: object) => logged.push(f as { table: string; rows: number }) };
    expect(await migrate(db, { log })).toEqual(FROM_MIGRATION);
    expect(logged.map((l) => [l.table, l.rows])).toEqual([
      ['memories', vectors.length],
      ['kb_chunks', vectors.length],
    ]);

    // The float4 values and the norm are those this version writes for the same vector.
    const stored = async (table: string) =>
      (await sql<{ f4: number[]; norm: number }>`select embedding_f4 as f4, embedding_norm as norm from ${sql.table(table)} order by seq`.execute(k())).rows.map((r) => ({
        f4: r.f4.map(Math.fround),
        norm: r.norm,
      }));
    const written = vectors.map((v) => ({ f4: v.map(Math.fround), norm: pgEmbeddingColumns(v).embedding_norm }));
    expect(await stored('memories')).toEqual(written);
    expect(await stored('kb_chunks')).toEqual(written);

    // Unconverted again, then two processes' backfills at once, 3 rows a batch: each row converted once, all of them.
    for (const table of ['memories', 'kb_chunks']) await sql`update ${sql.table(table)} set embedding_f4 = null, embedding_norm = null`.execute(k());
    expect(await left('memories')).toBe(vectors.length);
    logged.length = 0;
    await Promise.all([backfillEmbeddings(k(), { log }, 3), backfillEmbeddings(k(), { log }, 3)]);
    for (const table of ['memories', 'kb_chunks']) {
      expect(logged.filter((l) => l.table === table).reduce((n, l) => n + l.rows, 0)).toBe(vectors.length);
      expect(await stored(table)).toEqual(written);
    }

    // A later start finds nothing to convert.
    logged.length = 0;
    expect(await migrate(db, { log })).toEqual([]);
    expect(logged).toEqual([]);
  });
});
