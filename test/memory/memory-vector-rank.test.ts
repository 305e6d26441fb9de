import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { cosine } from '../../src/knowledge/ranking.js';
import { MemoryRepository, type NewMemory } from '../../src/memory/memory.repository.js';
import { TEST_DBS } from '../support/harness.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { rankingCase } from '../support/vectors.js';

/**
 * Memory recall's vector ranking runs in the database (libsql's vector_distance_cos on the list reader thread; on
 * PostgreSQL without pgvector, the cosine in SQL over float4 arrays) and orders memories as `cosine()` does: opposite and zero vectors
 * included, equal similarities newest first, only the agent's memories of the given owners and model, however many.
 */
describe.each(TEST_DBS)('vector ranking of memories (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  /** Organizations whose reads went through `Db.lists`. */
  const listReads: string[] = [];
  let repo: MemoryRepository;
  let n = 0;
  const memory = (over: Partial<NewMemory> & { v: number[] | null }): NewMemory => {
    const { v, ...rest } = over;
    n++;
    return {
      id: `m-${n}`,
      organization_id: 'org-a',
      agent_id: 'agent-1',
      user_id: 'user-1',
      content: `memory ${n}`,
      source: 'api',
      task_id: null,
      embedding: v,
      embedding_model: v && 'toy',
      created_at: n,
      updated_at: n,
      ...rest,
    };
  };
  const insert = (rows: NewMemory[]) => repo.transaction(async (k) => {
    for (const row of rows) await repo.insert(row, k);
  });

  beforeAll(async () => {
    ({ db, close } = await openMigratedDb(kind));
    const counted: Db = { ...db, lists: { all: (org, q) => (listReads.push(org), db.lists.all(org, q)), close: () => db.lists.close() } };
    repo = new MemoryRepository(counted);
  });
  afterAll(() => close?.());

  it('orders by cosine similarity as cosine() does, among the agent memories of the owners and model asked', async () => {
    const query = [1, 0.1, 0];
    const scoped: [string | null, number[]][] = [
      ['user-1', [0, 1, 0]],
      [null, [-1, 0, 0]],
      ['user-1', [1, 1, 0]],
      [null, [0, 0, 0]],
      ['user-1', [1, 0, 0]],
      [null, [2, 0.2, 0]],
      ['user-1', [0.3, -1, 0.5]],
      // Equal similarities: the same vector twice, and a vector orthogonal to the query beside the zero one.
      [null, [1, 1, 0]],
      ['user-1', [0, 0, 1]],
    ];
    const rows = scoped.map(([user_id, v]) => memory({ user_id, v }));
    await insert([
      ...rows,
      memory({ organization_id: 'org-b', v: [1, 0.1, 0] }),
      memory({ agent_id: 'agent-2', v: [1, 0.1, 0] }),
      memory({ user_id: 'user-2', v: [1, 0.1, 0] }),
      memory({ embedding_model: 'other', v: [1, 0.1, 0] }),
      memory({ v: null }),
    ]);
    const expected = rows
      .map((r, i) => ({ id: r.id, sim: cosine(query, scoped[i]![1]), i }))
      .sort((a, b) => b.sim - a.sim || b.i - a.i)
      .map((x) => x.id);
    listReads.length = 0;
    expect(await repo.vector('org-a', 'agent-1', ['user-1', null], 'toy', query, 50)).toEqual(expected);
    expect(await repo.vector('org-a', 'agent-1', ['user-1', null], 'toy', query, 4)).toEqual(expected.slice(0, 4));
    const shared = rows.filter((r) => r.user_id === null).map((r) => r.id);
    expect(await repo.vector('org-a', 'agent-1', [null], 'toy', query, 50)).toEqual(expected.filter((id) => shared.includes(id)));
    // Each ranking is a list read of the organization (off the event loop on libsql).
    expect(listReads).toEqual(['org-a', 'org-a', 'org-a']);
  });

  it('orders random vectors of 1,536 dimensions as cosine() does: norms apart, zero, duplicate, opposite, tiny components', async () => {
    const { query, vectors } = rankingCase(26, 60, 1536);
    const rows = vectors.map((v) => memory({ agent_id: 'agent-random', user_id: null, v }));
    await insert(rows);
    const expected = rows
      .map((r, i) => ({ id: r.id, sim: cosine(query, vectors[i]!), i }))
      .sort((a, b) => b.sim - a.sim || b.i - a.i)
      .map((x) => x.id);
    expect(await repo.vector('org-a', 'agent-random', [null], 'toy', query, 100)).toEqual(expected);
  });

  it('compares every memory in scope, past 2,000 of them', async () => {
    const big = { agent_id: 'agent-big', user_id: null };
    const best = memory({ ...big, v: [1, 0, 0] });
    await insert([best, ...Array.from({ length: 2100 }, (_, i) => memory({ ...big, v: [i % 7, 1, 0] }))]);
    // Inserted first, and edited last: the last row of the (agent, user, updated_at) index and, on PostgreSQL, of
    // the heap, where a read of the first 2,000 in any of those orders misses it.
    await repo.update('org-a', best.id, best.content, { embedding: best.embedding, embedding_model: 'toy' }, 1e9);
    expect(await repo.vector('org-a', 'agent-big', [null], 'toy', [1, 0, 0], 1)).toEqual([best.id]);
  });
});
