import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTRACTION_SYSTEM } from '../../src/memory/memory-extractor.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../knowledge/embeddings-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/** With the knowledge bases' embedding endpoint configured, recall fuses vector similarity with lexical rank. */
describe.each(TEST_DBS)('memory recall with embeddings (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let emb: EmbeddingsServer;
  beforeAll(async () => {
    [llm, emb] = await Promise.all([startOpenAIServer(), startEmbeddingsServer()]);
    t = await createTasksApp(kind, { env: { AGENTRY_EMBEDDINGS_BASE_URL: emb.baseUrl, AGENTRY_EMBEDDINGS_MODEL: 'toy-embed' } });
    llm.handle((req) => ({ text: `answer to: ${req.lastUserText}` }));
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([llm?.close(), emb?.close()]);
  });

  const agentFields = () => scriptedAgentFields(llm.baseUrl, { agno_settings: { agent_memories: true } });
  const ask = async (agent: string, text: string) => {
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text } });
    expect(r.json().status, r.body).toBe('completed');
    await t.c.memoryExtractor.idle();
    return llm.requests.filter((q) => q.system !== EXTRACTION_SYSTEM).at(-1)!.system;
  };

  it('recalls by meaning a memory that shares no word with the task and is not among the newest', async () => {
    const agent = await t.createAgent(agentFields());
    const add = async (content: string) => expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content })).statusCode).toBe(201);
    await add('The automobile is parked in bay seven.');
    for (let i = 0; i < 12; i++) await add(`Filler fact ${i} about gardening.`);
    expect(emb.requests.some((r) => r.input.includes('The automobile is parked in bay seven.') && r.model === 'toy-embed')).toBe(true);
    // "car" is not in the memory: only the vector list finds it; lexical rank alone would fill with the newest.
    const system = await ask(agent, 'Where did I leave the car?');
    expect(system).toContain('- The automobile is parked in bay seven.');
  });

  it('keeps a memory whose embedding failed, found lexically', async () => {
    const agent = await t.createAgent(agentFields());
    emb.failWith = 500;
    try {
      expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content: 'The wifi password is on the fridge.' })).statusCode).toBe(201);
      for (let i = 0; i < 12; i++) expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content: `Filler fact ${i}.` })).statusCode).toBe(201);
      expect(await ask(agent, 'What is the wifi password?')).toContain('- The wifi password is on the fridge.');
    } finally {
      emb.failWith = null;
    }
  });
});
