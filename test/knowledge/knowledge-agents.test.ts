import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';
import { createKb, loadCorpus, waitForDocuments } from './kb-helpers.js';

const SENATOR_AGE = 'No Person shall be a Senator who shall not have attained to the Age of thirty Years';

describe.each(TEST_DBS)('knowledge bases on agents (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let kbId: string;
  const agentWith = (knowledge_bases: unknown[]) =>
    t.createAgent(scriptedAgentFields(llm.baseUrl, { knowledge_bases }));

  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind);
    await t.c.knowledgeIndexer.start();
    kbId = await createKb(t, 'Founding documents');
    await loadCorpus(t, kbId);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  it('refuses an agent whose knowledge base does not exist in the organization', async () => {
    const other = await t.req('POST', '/v1/knowledge', { name: 'theirs' }, { 'x-api-key': t.keyB });
    for (const id of ['00000000-0000-7000-8000-000000000000', other.json().id]) {
      const r = await t.req('POST', '/v1/agents', { name: `bad kb ${id.slice(0, 8)}`, knowledge_bases: [{ id, strategy: 'vanilla' }] });
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['body', 'knowledge_bases', 0, 'id']);
    }
  });

  it('vanilla: the passage answering the task input reaches the LLM context, and no search tool is offered', async () => {
    const agentId = await agentWith([{ id: kbId, name: 'Founding documents', strategy: 'vanilla' }]);
    llm.reply({ text: 'Thirty years.' });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'How old must someone be to serve as a senator?' } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Thirty years.' });
    const call = llm.requests[llm.requests.length - 1]!;
    expect(call.system).toContain(SENATOR_AGE);
    expect(call.system).toContain('Article I > Section 3');
    expect(call.tools).not.toContain('search_knowledge_base');
  });

  it('agentic_rag: the agent calls the search tool and gets the passage back', async () => {
    const agentId = await agentWith([{ id: kbId, name: 'Founding documents', strategy: 'agentic_rag' }]);
    const before = llm.requests.length;
    llm.reply({ toolCalls: [{ name: 'search_knowledge_base', arguments: { query: 'minimum age to be a senator', top_k: 3 } }] }, { text: 'Thirty years old.' });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'What is the minimum age for a senator?' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Thirty years old.' });
    const [first, second] = llm.requests.slice(before);
    expect(first!.tools).toContain('search_knowledge_base');
    // Not injected: the agent has to ask.
    expect(first!.system).not.toContain(SENATOR_AGE);
    const toolMessage = second!.body.messages.find((m: any) => m.role === 'tool');
    const results = JSON.parse(toolMessage.content);
    expect(results).toHaveLength(3);
    expect(results.some((h: any) => h.content.includes(SENATOR_AGE))).toBe(true);
    expect(results[0]).toMatchObject({ document_name: expect.any(String), score: expect.any(Number) });
  });

  it('rw: the agent writes a document that is indexed and becomes searchable', async () => {
    const notes = await createKb(t, 'Agent notes');
    const agentId = await agentWith([{ id: notes, strategy: 'agentic_rag', rw: true }]);
    llm.reply(
      { toolCalls: [{ name: 'add_knowledge_document', arguments: { title: 'Harbour visit', content: 'The harbour master prefers moorings on the east quay.' } }] },
      { text: 'Saved.' },
    );
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'Remember the mooring preference.' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Saved.' });
    expect(llm.requests[llm.requests.length - 2]!.tools).toEqual(expect.arrayContaining(['search_knowledge_base', 'add_knowledge_document']));
    const [doc] = await waitForDocuments(t, notes);
    expect(doc).toMatchObject({ name: 'Harbour visit', source: 'agent', status: 'ready' });
    const hits = (await t.req('GET', `/v1/knowledge/${notes}/search?search_query=east%20quay%20moorings`)).json();
    expect(hits[0].content).toContain('The harbour master prefers moorings on the east quay.');
  });
});
