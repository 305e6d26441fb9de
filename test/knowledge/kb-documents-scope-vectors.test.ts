import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';
import { startEmbeddingsServer, type EmbeddingsServer } from './embeddings-server.js';
import { createKb, uploadFiles, waitForDocuments } from './kb-helpers.js';

/**
 * The vector half of search honours an agent's `knowledge_bases[].documents` in its query too (libsql's
 * vector_distance_cos; pgvector's `<=>` or the cosine in SQL on PostgreSQL): "automobile" is in no document,
 * so only vectors can find anything, and sixty closer chunks of an unlisted document must not crowd out the listed one.
 */
const GARAGE = 'The car is parked in the garage behind the house.';
const FLEET = Array.from({ length: 60 }, (_, i) => `## Fleet ${i + 1}\n\nCar car vehicle ${i + 1}.`).join('\n\n');

describe.each(TEST_DBS)('agent documents list, vector search (%s)', (kind) => {
  let emb: EmbeddingsServer;
  let llm: ScriptedLlmServer;
  let t: TasksApp;
  let kbId: string;
  let garageId: string;

  beforeAll(async () => {
    emb = await startEmbeddingsServer();
    llm = await startOpenAIServer();
    t = await createTasksApp(kind, { env: { AGENTRY_EMBEDDINGS_BASE_URL: emb.baseUrl, AGENTRY_EMBEDDINGS_MODEL: 'toy-embed' } });
    await t.c.knowledgeIndexer.start();
    kbId = await createKb(t, 'Vehicles');
    const r = await uploadFiles(t, kbId, [
      { name: 'garage.md', content: `# Garage\n\n${GARAGE}` },
      { name: 'fleet.md', content: `# Fleet\n\n${FLEET}` },
    ]);
    garageId = r.json()[0].id;
    expect((await waitForDocuments(t, kbId)).map((d) => d.status)).toEqual(['ready', 'ready']);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await emb?.close();
  });

  it('the search tool finds the listed document by meaning alone, and nothing of the unlisted one', async () => {
    const agent = await t.req('POST', '/v1/agents', {
      name: 'garage only',
      should_stage_before_publish: false,
      ...scriptedAgentFields(llm.baseUrl, { knowledge_bases: [{ id: kbId, strategy: 'agentic_rag', documents: [garageId] }] }),
    });
    expect(agent.statusCode, agent.body).toBe(201);
    const before = llm.requests.length;
    llm.reply({ toolCalls: [{ name: 'search_knowledge_base', arguments: { query: 'automobile', top_k: 2 } }] }, { text: 'Found it.' });
    const run = await t.req('POST', `/v1/agents/${agent.json().id}/invoke`, { input: { text: 'Where is the automobile?' } });
    expect(run.json()).toMatchObject({ status: 'completed', result: 'Found it.' });
    const hits = JSON.parse(llm.requests[before + 1]!.body.messages.find((m: any) => m.role === 'tool').content);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ document_id: garageId });
    expect(hits[0].content).toContain(GARAGE);
  });
});
