import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';
import { createKb, multipart, waitForDocuments } from './kb-helpers.js';

/**
 * An agent's `knowledge_bases[].documents` limits its searches of that knowledge base to those documents, on both
 * strategies, in the query (top-k counts only the listed documents' chunks); unknown ids are refused at write time.
 */

const KEEPER = 'The lighthouse keeper on Gull Island rows to the mainland every Tuesday.';
// Sixty sections that match "lighthouse keeper" much better than KEEPER: without the filter in SQL they fill every
// candidate list, so KEEPER would not even be fetched.
const BEACONS = Array.from({ length: 60 }, (_, i) => `## Beacon ${i + 1}\n\nLighthouse keeper log: the lighthouse keeper checked lighthouse lamp ${i + 1}.`).join('\n\n');

describe.each(TEST_DBS)('agent knowledge_bases[].documents (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let kbId: string;
  let keeperId: string;
  let beaconsId: string;
  let otherKbDocId: string;
  let foreignDocId: string;

  const upload = async (kb: string, files: { name: string; content: string }[], key?: string): Promise<string[]> => {
    const { payload, contentType } = multipart(files);
    const r = await t.app.inject({ method: 'POST', url: `/v1/knowledge/${kb}/documents`, payload, headers: { 'x-api-key': key ?? t.keyA, 'content-type': contentType } });
    expect(r.statusCode).toBe(201);
    return r.json().map((d: any) => d.id);
  };
  const agentWith = async (knowledge_bases: unknown[]) => {
    const r = await t.req('POST', '/v1/agents', { name: `scoped ${Math.random().toString(36).slice(2)}`, should_stage_before_publish: false, ...scriptedAgentFields(llm.baseUrl, { knowledge_bases }) });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().id as string;
  };
  /** Runs one task in which the model calls the search tool once; answers the tool's results and the first request. */
  const searchThroughAgent = async (agentId: string, query: string, top_k = 5) => {
    const before = llm.requests.length;
    llm.reply({ toolCalls: [{ name: 'search_knowledge_base', arguments: { query, top_k } }] }, { text: 'Done.' });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: query } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Done.' });
    const [first, second] = llm.requests.slice(before);
    const toolMessage = second!.body.messages.find((m: any) => m.role === 'tool');
    return { first: first!, hits: JSON.parse(toolMessage.content) as any[] };
  };

  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind);
    await t.c.knowledgeIndexer.start();
    kbId = await createKb(t, 'Coast');
    [keeperId, beaconsId] = await upload(kbId, [
      { name: 'keeper.md', content: `# Keeper\n\n${KEEPER}` },
      { name: 'beacons.md', content: `# Beacons\n\n${BEACONS}` },
    ]);
    const otherKb = await createKb(t, 'Other');
    [otherKbDocId] = await upload(otherKb, [{ name: 'other.md', content: 'The lighthouse keeper of another knowledge base.' }]);
    const foreignKb = (await t.req('POST', '/v1/knowledge', { name: 'theirs' }, { 'x-api-key': t.keyB })).json().id;
    [foreignDocId] = await upload(foreignKb, [{ name: 'foreign.md', content: 'The lighthouse keeper of another organization.' }], t.keyB);
    for (const kb of [kbId, otherKb]) expect((await waitForDocuments(t, kb)).every((d) => d.status === 'ready')).toBe(true);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  it('agentic_rag: the search tool returns only the listed document, even when others match far better', async () => {
    const agentId = await agentWith([{ id: kbId, name: 'Coast', strategy: 'agentic_rag', documents: [keeperId] }]);
    const { first, hits } = await searchThroughAgent(agentId, 'lighthouse keeper', 3);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ document_id: keeperId, document_name: 'keeper.md' });
    expect(hits[0].content).toContain(KEEPER);
    expect(JSON.stringify(hits)).not.toContain('Beacon');
    const tool = first.body.tools.find((x: any) => x.function.name === 'search_knowledge_base');
    expect(tool.function.description).toContain('limited to 1 chosen document(s)');
  });

  it('an empty list searches the whole knowledge base', async () => {
    const agentId = await agentWith([{ id: kbId, strategy: 'agentic_rag', documents: [] }]);
    const { hits } = await searchThroughAgent(agentId, 'lighthouse keeper', 3);
    expect(hits).toHaveLength(3);
    expect(hits.every((h) => h.document_id === beaconsId)).toBe(true);
  });

  it('vanilla: only the listed document reaches the context', async () => {
    const agentId = await agentWith([{ id: kbId, strategy: 'vanilla', documents: [keeperId] }]);
    llm.reply({ text: 'Tuesdays.' });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'When does the lighthouse keeper row ashore?' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Tuesdays.' });
    const system = llm.requests[llm.requests.length - 1]!.system;
    expect(system).toContain(KEEPER);
    expect(system).not.toContain('Beacon');
  });

  it('refuses unknown ids, another knowledge base\'s document and another organization\'s, naming each (create)', async () => {
    const documents = [keeperId, '00000000-0000-7000-8000-000000000000', 'not-a-uuid', otherKbDocId, foreignDocId];
    const r = await t.req('POST', '/v1/agents', { name: 'bad documents', knowledge_bases: [{ id: kbId, strategy: 'agentic_rag', documents }] });
    expect(r.statusCode).toBe(422);
    const detail = r.json().detail as any[];
    expect(detail.map((d) => d.loc)).toEqual([1, 2, 3, 4].map((j) => ['body', 'knowledge_bases', 0, 'documents', j]));
    expect(detail[2]).toMatchObject({ type: 'value_error', msg: `Value error, document '${otherKbDocId}' not found in knowledge base '${kbId}'` });
    // Another organization's document reads exactly like a made-up one.
    expect(detail[3].msg).toBe(`Value error, document '${foreignDocId}' not found in knowledge base '${kbId}'`);
  });

  it('PATCH: refuses an unknown id, and a valid list takes effect on the next run', async () => {
    const agentId = await agentWith([{ id: kbId, strategy: 'agentic_rag' }]);
    const bad = await t.req('PATCH', `/v1/agents/${agentId}`, { knowledge_bases: [{ id: kbId, strategy: 'agentic_rag', documents: [foreignDocId] }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'knowledge_bases', 0, 'documents', 0]);
    const ok = await t.req('PATCH', `/v1/agents/${agentId}`, { knowledge_bases: [{ id: kbId, strategy: 'agentic_rag', documents: [keeperId] }] });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().knowledge_bases[0].documents).toEqual([keeperId]);
    const { hits } = await searchThroughAgent(agentId, 'lighthouse keeper');
    expect(hits.map((h) => h.document_id)).toEqual([keeperId]);
  });

  it('a listed document deleted later stops matching; the rest of the knowledge base stays out', async () => {
    const kb = await createKb(t, 'Short-lived');
    const [gone] = await upload(kb, [
      { name: 'gone.md', content: 'The tide table for the harbour mouth.' },
      { name: 'kept.md', content: 'The tide table for the river mouth.' },
    ]);
    await waitForDocuments(t, kb);
    const agentId = await agentWith([{ id: kb, strategy: 'agentic_rag', documents: [gone] }]);
    expect((await searchThroughAgent(agentId, 'tide table')).hits.map((h) => h.document_id)).toEqual([gone]);
    expect((await t.req('DELETE', `/v1/knowledge/${kb}/documents/${gone}`)).statusCode).toBe(202);
    expect((await searchThroughAgent(agentId, 'tide table')).hits).toEqual([]);
  });

  it('rw with a list: the agent writes into the knowledge base, is told it will not find it, and does not', async () => {
    const kb = await createKb(t, 'Notes');
    const [seed] = await upload(kb, [{ name: 'seed.md', content: 'Moorings on the west quay are reserved.' }]);
    await waitForDocuments(t, kb);
    const agentId = await agentWith([{ id: kb, strategy: 'agentic_rag', rw: true, documents: [seed] }]);
    const before = llm.requests.length;
    llm.reply({ toolCalls: [{ name: 'add_knowledge_document', arguments: { title: 'East quay', content: 'Moorings on the east quay are free.' } }] }, { text: 'Saved.' });
    await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'Note the east quay.' } });
    const result = JSON.parse(llm.requests[before + 1]!.body.messages.find((m: any) => m.role === 'tool').content);
    expect(result.note).toContain('limited to the documents chosen in your configuration');
    const docs = await waitForDocuments(t, kb);
    expect(docs.map((d) => [d.name, d.status]).sort()).toEqual([['East quay', 'ready'], ['seed.md', 'ready']]);
    const { hits } = await searchThroughAgent(agentId, 'moorings quay');
    expect(hits.map((h) => h.document_id)).toEqual([seed]);
  });
});
