import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { startEmbeddingsServer, type EmbeddingsServer } from './embeddings-server.js';
import { createKb, uploadFiles, waitForDocuments } from './kb-helpers.js';

const DOCS = [
  { name: 'garage.md', content: '# Garage\n\nThe car is parked in the garage behind the house.' },
  { name: 'clinic.md', content: '# Clinic\n\nThe doctor sees patients on Tuesdays.' },
  { name: 'garden.md', content: '# Garden\n\nTomatoes grow best against the south wall.' },
];

/** With an embedding endpoint configured, search fuses vector and lexical rankings. */
describe.each(TEST_DBS)('hybrid knowledge search (%s)', (kind) => {
  let emb: EmbeddingsServer;
  let t: TestApp;
  let kbId: string;
  beforeAll(async () => {
    emb = await startEmbeddingsServer();
    t = await createTestApp(kind, {
      env: { AGENTRY_EMBEDDINGS_BASE_URL: emb.baseUrl, AGENTRY_EMBEDDINGS_MODEL: 'toy-embed', AGENTRY_EMBEDDINGS_API_KEY: 'sk-embed' },
    });
    await t.c.knowledgeIndexer.start();
    kbId = await createKb(t, 'Household');
    expect((await uploadFiles(t, kbId, DOCS)).statusCode).toBe(201);
    expect((await waitForDocuments(t, kbId)).map((d) => d.status)).toEqual(['ready', 'ready', 'ready']);
  });
  afterAll(async () => {
    await t?.close();
    await emb?.close();
  });

  it('embeds every chunk with the configured model and key', () => {
    const indexed = emb.requests.flatMap((r) => r.input);
    for (const d of DOCS) expect(indexed.some((text) => text.includes(d.content.split('\n\n')[1]!))).toBe(true);
    expect(emb.requests.every((r) => r.model === 'toy-embed' && r.authorization === 'Bearer sk-embed')).toBe(true);
  });

  it('finds by meaning what shares no word with the query, and ranks agreement of both lists first', async () => {
    // "automobile" is in no document: only the vector list can find it.
    expect(await t.c.db.kysely.selectFrom('kb_chunks').select('seq').where('content', 'like', '%automobile%').execute()).toEqual([]);
    const r = await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=automobile&top_k=1`);
    expect(r.json()).toHaveLength(1);
    expect(r.json()[0].content).toContain('The car is parked');

    // A word in the text and a synonym: first in both lists, the top fused score is 1.
    const both = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=physician%20patients`)).json();
    expect(both[0]).toMatchObject({ score: 1 });
    expect(both[0].content).toContain('The doctor sees patients');
  });

  it('keeps answering lexically when the embedding endpoint fails', async () => {
    emb.failWith = 500;
    try {
      const hits = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=tomatoes`)).json();
      expect(hits[0].content).toContain('Tomatoes grow best');
      expect((await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=automobile`)).json()).toEqual([]);
    } finally {
      emb.failWith = null;
    }
  });

  it('answers lexically within the query-embedding deadline (10 s) when the endpoint never answers', async () => {
    emb.hang = true;
    try {
      const started = Date.now();
      const hits = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=tomatoes`)).json();
      expect(hits[0].content).toContain('Tomatoes grow best');
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      emb.hang = false;
    }
  }, 30_000);
});
