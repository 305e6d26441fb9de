import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChunkStoreRepository } from '../../src/knowledge/chunk-store.repository.js';
import { cosine } from '../../src/knowledge/ranking.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { rankingCase } from '../support/vectors.js';

/**
 * The vector ranking of each engine (libsql's vector_distance_cos; on PostgreSQL without pgvector, the cosine in
 * SQL over float4 arrays) orders chunks as `cosine()` does: opposite and zero vectors included, ties by insertion order.
 */
describe.each(TEST_DBS)('vector ranking of knowledge chunks (%s)', (kind) => {
  let t: TestApp;
  const vectors = [
    [0, 1, 0],
    [-1, 0, 0],
    [1, 1, 0],
    [0, 0, 0],
    [1, 0, 0],
    [2, 0.2, 0],
    [0.3, -1, 0.5],
  ];
  beforeAll(async () => {
    t = await createTestApp(kind);
    const store = new ChunkStoreRepository(t.c.db);
    const chunks = vectors.map((embedding, ord) => ({ ord, heading: '', content: `v${ord}`, embedding }));
    await store.insert(t.c.db.kysely, t.orgA, 'kb-1', 'doc-1', chunks, 'toy');
    // Another organization's chunk and another model's are never compared.
    await store.insert(t.c.db.kysely, t.orgB, 'kb-1', 'doc-1', [{ ord: 0, heading: '', content: 'other org', embedding: [1, 0, 0] }], 'toy');
    await store.insert(t.c.db.kysely, t.orgA, 'kb-1', 'doc-1', [{ ord: 9, heading: '', content: 'other model', embedding: [1, 0, 0] }], 'other');
  });
  afterAll(() => t?.close());

  it('orders by cosine similarity, as cosine() does', async () => {
    const store = new ChunkStoreRepository(t.c.db);
    const query = [1, 0.1, 0];
    const seqs = await store.vector(t.orgA, [{ kbId: 'kb-1', documentIds: null }], 'toy', query, 10);
    const rows = await t.c.db.kysely.selectFrom('kb_chunks').select(['seq', 'content']).execute();
    const bySeq = new Map(rows.map((r) => [Number(r.seq), r.content]));
    const got = seqs.map((s) => bySeq.get(s));
    const expected = vectors
      .map((v, ord) => ({ content: `v${ord}`, sim: cosine(query, v), ord }))
      .sort((a, b) => b.sim - a.sim || a.ord - b.ord)
      .map((x) => x.content);
    expect(got).toEqual(expected);
  });

  it('orders random vectors of 1,536 dimensions as cosine() does: norms apart, zero, duplicate, opposite, tiny components', async () => {
    const store = new ChunkStoreRepository(t.c.db);
    const { query, vectors: random } = rankingCase(7, 60, 1536);
    await store.insert(t.c.db.kysely, t.orgA, 'kb-random', 'doc-r', random.map((embedding, ord) => ({ ord, heading: '', content: `r${ord}`, embedding })), 'toy');
    const seqs = await store.vector(t.orgA, [{ kbId: 'kb-random', documentIds: null }], 'toy', query, 100);
    const rows = await t.c.db.kysely.selectFrom('kb_chunks').select(['seq', 'ord']).where('kb_id', '=', 'kb-random').execute();
    const ordOf = new Map(rows.map((r) => [Number(r.seq), r.ord]));
    const expected = random
      .map((v, ord) => ({ sim: cosine(query, v), ord }))
      .sort((a, b) => b.sim - a.sim || a.ord - b.ord)
      .map((x) => x.ord);
    expect(seqs.map((s) => ordOf.get(s))).toEqual(expected);
  });
});
