import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { EXTRACTION_SYSTEM } from '../../src/memory/memory-extractor.js';
import { SUMMARY_SYSTEM } from '../../src/runtime/history-context.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { RecordedRequest, ScriptedLlmServer, ScriptedReply } from '../fakes/scripted-llm.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * Memory end to end (docs/memory.md): what the scripted model receives when memories are recalled, when the
 * invocation's user is described, when a long thread is summarised, when tool calls are replayed from history and
 * when tool results are compressed; and the memories API, scoped by organization.
 */
describe.each(TEST_DBS)('memory (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  /** What extraction calls answer, in order (then nothing to remember). */
  let extractions: unknown[];
  let summaries: string[];
  beforeAll(async () => {
    [t, llm] = await Promise.all([createTasksApp(kind), startOpenAIServer()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
    extractions = [];
    summaries = [];
    // Helper calls are told apart by their system prompt; every other request is the conversation.
    llm.handle((req): ScriptedReply => {
      if (req.system === EXTRACTION_SYSTEM) return { text: JSON.stringify(extractions.shift() ?? { user: { add: [] }, agent: { add: [] } }) };
      if (req.system === SUMMARY_SYSTEM) return { text: summaries.shift() ?? 'no summary scripted' };
      return { text: `answer to: ${req.lastUserText}` };
    });
  });

  const llmFields = () => scriptedAgentFields(llm.baseUrl);
  const invoke = async (agentId: string, body: Record<string, unknown>) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, body);
    expect(r.statusCode, r.body).toBe(200);
    const task = r.json() as Task;
    expect(task.status, task.result ?? '').toBe('completed');
    return task;
  };
  /** The conversation requests (not the helper calls), oldest first. */
  const conversation = () => llm.requests.filter((r) => r.system !== EXTRACTION_SYSTEM && r.system !== SUMMARY_SYSTEM);
  const last = (): RecordedRequest => conversation().at(-1)!;
  const events = async (taskId: string) => (await t.req('GET', `/v1/tasks/${encodeURIComponent(taskId)}/events`)).json() as { type: string; data: any }[];
  const ada = { id: 'u-ada', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' };

  it('extracts a user memory after a task, recalls it in a new thread, and forgets it once deleted', async () => {
    const agent = await t.createAgent({ ...llmFields(), agno_settings: { user_memories: true } });
    extractions.push({ user: { add: ['Ada prefers green tea over coffee.'] } });
    const first = await invoke(agent, { input: { text: 'I always drink green tea, never coffee.', user: ada } });
    // The user's fields reach the model; nothing is remembered yet.
    expect(last().system).toContain('## About the user');
    expect(last().system).toContain('Name: Ada Lovelace');
    expect(last().system).toContain('E-mail: ada@example.com');
    expect(last().system).not.toContain('## Memories');

    await t.c.memoryExtractor.idle();
    const extraction = llm.requests.find((r) => r.system === EXTRACTION_SYSTEM)!;
    expect(extraction.lastUserText).toContain('User: I always drink green tea, never coffee.');
    expect(extraction.lastUserText).toContain('Agent: answer to: I always drink green tea, never coffee.');
    const traced = (await events(first.id)).filter((e) => e.type === 'llm_call' && e.data.purpose === 'memory_extraction');
    expect(traced).toHaveLength(1);
    expect(traced[0]!.data.changes.user.added).toHaveLength(1);

    const listed = (await t.req('GET', `/v1/users/${ada.id}/memories`)).json();
    expect(listed.total).toBe(1);
    const memory = listed.items[0];
    expect(memory).toMatchObject({ agent_id: agent, user_id: ada.id, scope: 'user', content: 'Ada prefers green tea over coffee.', source: 'extracted', task_id: first.id });

    // A new thread of the same user recalls it; another user's thread does not.
    await invoke(agent, { input: { text: 'What should I drink this afternoon?', user: ada } });
    expect(last().system).toContain('## Memories');
    expect(last().system).toContain('- Ada prefers green tea over coffee.');
    await invoke(agent, { input: { text: 'What should I drink this afternoon?', user: { id: 'u-bob', first_name: 'Bob' } } });
    expect(last().system).not.toContain('green tea');
    await t.c.memoryExtractor.idle();

    expect((await t.req('DELETE', `/v1/agents/${agent}/memories/${memory.id}`)).statusCode).toBe(204);
    await invoke(agent, { input: { text: 'What should I drink this afternoon?', user: ada } });
    expect(last().system).not.toContain('green tea');
    await t.c.memoryExtractor.idle();
    expect((await t.req('GET', `/v1/users/${ada.id}/memories`)).json().total).toBe(0);
  });

  it('changes nothing when the extraction answer is not the expected JSON, and says so in the trace', async () => {
    const agent = await t.createAgent({ ...llmFields(), agno_settings: { user_memories: true, agent_memories: true } });
    extractions.push('I think the user likes tea');
    const task = await invoke(agent, { input: { text: 'I like tea.', user: ada } });
    await t.c.memoryExtractor.idle();
    const [traced] = (await events(task.id)).filter((e) => e.type === 'llm_call' && e.data.purpose === 'memory_extraction');
    expect(traced!.data.error).toMatch(/expected JSON/);
    expect((await t.req('GET', `/v1/agents/${agent}/memories`)).json().total).toBe(0);
    // A shared fact goes to the agent's shared memories, recalled for anyone.
    extractions.push({ user: { add: [] }, agent: { add: ['Customers often ask about tea.'] } });
    await invoke(agent, { input: { text: 'Do you sell tea?', user: { id: 'u-carl' } } });
    await t.c.memoryExtractor.idle();
    const shared = (await t.req('GET', `/v1/agents/${agent}/memories?scope=agent`)).json();
    expect(shared.items.map((m: any) => m.content)).toEqual(['Customers often ask about tea.']);
  });

  it('refuses a memory past the per-user bound with 409', async () => {
    const agent = await t.createAgent(llmFields());
    for (let i = 0; i < 100; i++) {
      const r = await t.req('POST', `/v1/agents/${agent}/memories`, { content: `Fact ${i}.`, user_id: 'u-full' });
      expect(r.statusCode, r.body).toBe(201);
    }
    const over = await t.req('POST', `/v1/agents/${agent}/memories`, { content: 'One too many.', user_id: 'u-full' });
    expect(over.statusCode).toBe(409);
    expect(over.json().detail).toMatch(/limit/);
    expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content: 'Another user is fine.', user_id: 'u-other' })).statusCode).toBe(201);
  });

  it('holds the per-user bound when creates race: exactly the free places are granted', async () => {
    const agent = await t.createAgent(llmFields());
    for (let i = 0; i < 97; i++) expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content: `Fact ${i}.`, user_id: 'u-race' })).statusCode).toBe(201);
    const racing = await Promise.all(Array.from({ length: 12 }, (_, i) => t.req('POST', `/v1/agents/${agent}/memories`, { content: `Racing ${i}.`, user_id: 'u-race' })));
    const codes = racing.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(3);
    expect(codes.filter((c) => c === 409)).toHaveLength(9);
    expect((await t.req('GET', `/v1/agents/${agent}/memories?user_id=u-race`)).json().total).toBe(100);
  });

  it('leaves the user out of the prompt when add_user_to_context is false, and extracts nothing without the switches', async () => {
    const agent = await t.createAgent({ ...llmFields(), agno_settings: { add_user_to_context: false } });
    await invoke(agent, { input: { text: 'Hello', user: ada } });
    expect(last().system).not.toContain('About the user');
    expect(last().system).not.toContain('Ada');
    await t.c.memoryExtractor.idle();
    expect(llm.requests.filter((r) => r.system === EXTRACTION_SYSTEM)).toHaveLength(0);
  });

  it('recalls shared agent memories for every user; lexical rank picks the relevant ones past the recall bound', async () => {
    const agent = await t.createAgent({ ...llmFields(), agno_settings: { agent_memories: true } });
    const add = (content: string) => t.req('POST', `/v1/agents/${agent}/memories`, { content });
    expect((await add('The refund window is 30 days.')).statusCode).toBe(201);
    for (let i = 0; i < 12; i++) expect((await add(`Filler fact number ${i} about nothing.`)).statusCode).toBe(201);
    await invoke(agent, { input: { text: 'How long is the refund window?', user: { id: 'anyone' } } });
    expect(last().system).toContain('For every user:');
    expect(last().system).toContain('- The refund window is 30 days.');
    // At most ten memories are recalled: the lexical match first, then the newest.
    expect(last().system.match(/^- /gm)!.length).toBe(10);
    await t.c.memoryExtractor.idle();

    const shared = (await t.req('GET', `/v1/agents/${agent}/memories?scope=agent&per_page=50`)).json();
    expect(shared.total).toBe(13);
    const refund = shared.items.find((m: any) => m.content.startsWith('The refund'));
    const patched = await t.req('PATCH', `/v1/agents/${agent}/memories/${refund.id}`, { content: 'The refund window is 14 days.' });
    expect(patched.json()).toMatchObject({ content: 'The refund window is 14 days.', scope: 'agent', user_id: null });
    await invoke(agent, { input: { text: 'How long is the refund window?' } });
    expect(last().system).toContain('- The refund window is 14 days.');
    expect(last().system).not.toContain('30 days');
    await t.c.memoryExtractor.idle();
  });

  it('gives the agent memory tools with agentic_memory, limited to its user', async () => {
    const agent = await t.createAgent({ ...llmFields(), agno_settings: { agentic_memory: true } });
    llm.reply({ toolCalls: [{ id: 'call_m', name: 'add_memory', arguments: { content: 'Ada is allergic to nuts.' } }] }, { text: 'Noted.' });
    await invoke(agent, { input: { text: 'Remember: I am allergic to nuts.', user: ada } });
    expect(conversation()[0]!.tools).toEqual(expect.arrayContaining(['add_memory', 'update_memory', 'forget_memory']));
    const [m] = (await t.req('GET', `/v1/agents/${agent}/memories?user_id=${ada.id}`)).json().items;
    expect(m).toMatchObject({ content: 'Ada is allergic to nuts.', source: 'agentic', user_id: ada.id });
    // The next run shows the memory with its id, and the agent can forget it; another user cannot reach it.
    llm.reply({ toolCalls: [{ id: 'call_f', name: 'forget_memory', arguments: { memory_id: m.id } }] }, { text: 'Sorry, I cannot.' });
    await invoke(agent, { input: { text: 'Forget what Ada said.', user: { id: 'u-eve' } } });
    expect((await t.req('GET', `/v1/agents/${agent}/memories?user_id=${ada.id}`)).json().total).toBe(1);
    llm.reply({ toolCalls: [{ id: 'call_g', name: 'forget_memory', arguments: { memory_id: m.id } }] }, { text: 'Forgotten.' });
    await invoke(agent, { input: { text: 'Forget my allergy.', user: ada } });
    expect(conversation().at(-2)!.system).toContain(`- [${m.id}] Ada is allergic to nuts.`);
    expect((await t.req('GET', `/v1/agents/${agent}/memories?user_id=${ada.id}`)).json().total).toBe(0);
  });

  it('summarises the runs that fall out of num_history_runs and sends the summary in their place', async () => {
    const agent = await t.createAgent({ ...llmFields(), agno_settings: { session_summaries: true, num_history_runs: 1 } });
    const chat = `chat-${kind}-${Date.now()}`;
    await invoke(agent, { id: chat, input: { text: 'My name is Ada.' } });
    await invoke(agent, { id: chat, input: { text: 'I live in Paris.' } });
    expect(llm.requests.filter((r) => r.system === SUMMARY_SYSTEM)).toHaveLength(0);

    summaries.push('The user is called Ada.');
    await invoke(agent, { id: chat, input: { text: 'Where do I live?' } });
    const firstSummary = llm.requests.filter((r) => r.system === SUMMARY_SYSTEM);
    expect(firstSummary).toHaveLength(1);
    expect(firstSummary[0]!.lastUserText).toContain('User: My name is Ada.');
    expect(firstSummary[0]!.lastUserText).not.toContain('I live in Paris');
    expect(last().system).toContain('## Summary of the earlier conversation\nThe user is called Ada.');
    expect(last().body.messages.filter((m: any) => m.role !== 'system').map((m: any) => m.content)).toEqual([
      'I live in Paris.',
      'answer to: I live in Paris.',
      'Where do I live?',
    ]);

    // The next run extends the stored summary with the one run it lacks.
    summaries.push('The user is called Ada and lives in Paris.');
    const fourth = await invoke(agent, { id: chat, input: { text: 'And my name?' } });
    const second = llm.requests.filter((r) => r.system === SUMMARY_SYSTEM)[1]!;
    expect(second.lastUserText).toContain('Summary so far:\nThe user is called Ada.');
    expect(second.lastUserText).toContain('User: I live in Paris.');
    expect(second.lastUserText).not.toContain('My name is Ada.');
    expect(last().system).toContain('The user is called Ada and lives in Paris.');
    const traced = (await events(fourth.id)).filter((e) => e.type === 'llm_call' && e.data.purpose === 'session_summary');
    expect(traced.at(-1)!.data.summarized_runs).toEqual([2]);
  });

  it('with PII masking, the summary and extraction calls get placeholders; what they answer is stored with the real values', async () => {
    const agent = await t.createAgent({
      ...llmFields(),
      agno_settings: { session_summaries: true, num_history_runs: 1, user_memories: true, pii_detection_enabled: true, pii_detection_mask: true },
    });
    const chat = `pii-${kind}-${Date.now()}`;
    const user = { id: `u-pii-${kind}` };
    extractions.push({ user: { add: ['The user can be reached at <EMAIL_1>.'] } });
    const first = await invoke(agent, { id: chat, input: { text: 'Please write to grace@example.com.', user } });
    await t.c.memoryExtractor.idle();
    const extraction = llm.requests.find((r) => r.system === EXTRACTION_SYSTEM)!;
    expect(extraction.lastUserText).toContain('User: Please write to <EMAIL_1>.');
    expect(JSON.stringify(extraction.body)).not.toContain('grace@example.com');
    const memories = (await t.req('GET', `/v1/users/${user.id}/memories`)).json();
    expect(memories.items.map((m: { content: string }) => m.content)).toEqual(['The user can be reached at grace@example.com.']);
    expect((await events(first.id)).filter((e) => e.type === 'guardrail' && e.data.purpose === 'memory_extraction')).toHaveLength(1);

    await invoke(agent, { id: chat, input: { text: 'Second question.', user } });
    summaries.push('The user wants mail sent to <EMAIL_1>.');
    await invoke(agent, { id: chat, input: { text: 'Third question.', user } });
    const summary = llm.requests.find((r) => r.system === SUMMARY_SYSTEM)!;
    expect(summary.lastUserText).toContain('User: Please write to <EMAIL_1>.');
    expect(JSON.stringify(summary.body)).not.toContain('grace@example.com');
    // Stored with the real value; screened again on its way to the model.
    const stored = await t.c.db.kysely.selectFrom('session_summaries').select('summary').where('task_id', '=', chat).executeTakeFirstOrThrow();
    expect(stored.summary).toBe('The user wants mail sent to grace@example.com.');
    expect(last().system).toContain('The user wants mail sent to <EMAIL_1>.');
    expect(JSON.stringify(conversation().map((r) => r.body))).not.toContain('grace@example.com');
    // The later runs' extractions finish here, not in the next test's requests.
    await t.c.memoryExtractor.idle();
  });

  it('replays the last tool calls of history with max_tool_calls_from_history, and compresses old tool results', async () => {
    const long = `Step ${'carefully '.repeat(80)}`;
    expect((await t.req('POST', '/v1/skills', { name: `brew-${kind}`, description: 'How to brew tea', instructions: long })).statusCode).toBe(201);
    const agent = await t.createAgent({
      ...llmFields(),
      tools: [{ type: 'skill', skill_name: `brew-${kind}` }],
      agno_settings: { max_tool_calls_from_history: 1, tool_calls_compression: { enabled: true, threshold: 1, instructions: 'Shorten this.' } },
    });
    const chat = `tools-${kind}-${Date.now()}`;
    const load = { name: 'load_skill', arguments: { skill_name: `brew-${kind}` } };
    llm.reply({ toolCalls: [{ id: 'c1', ...load }] }, { toolCalls: [{ id: 'c2', ...load }] }, { text: 'Short skill.' }, { text: 'Brew it.' });
    await invoke(agent, { id: chat, input: { text: 'How do I brew tea?' } });
    // Third model call: the first of the two results was compressed with the agent's instructions, the newest kept.
    const compression = llm.requests[2]!;
    expect(compression.system).toBe('Shorten this.');
    expect(compression.lastUserText).toContain(long.trim());
    const third = llm.requests[3]!;
    const results = third.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
    expect(results[0]).toBe('[compressed] Short skill.');
    expect(results[1]).toContain(long.trim());

    await invoke(agent, { id: chat, input: { text: 'Again?' } });
    const replayed = last().body.messages.find((m: any) => m.role === 'assistant').content as string;
    expect(replayed).toContain('[Tool calls made before this answer]');
    expect(replayed.match(/load_skill\(/g)).toHaveLength(1);
    expect(replayed).toContain('[Answer]\nBrew it.');
  });

  it('scopes every memory route by organization and validates input', async () => {
    const agent = await t.createAgent(llmFields());
    const created = await t.req('POST', `/v1/users/u-scope/memories`, { agent_id: agent, content: 'Likes jazz.' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    const other = { 'x-api-key': t.keyB };
    for (const [method, url, body] of [
      ['GET', `/v1/agents/${agent}/memories`],
      ['POST', `/v1/agents/${agent}/memories`, { content: 'x' }],
      ['GET', `/v1/agents/${agent}/memories/${id}`],
      ['PATCH', `/v1/agents/${agent}/memories/${id}`, { content: 'x' }],
      ['DELETE', `/v1/agents/${agent}/memories/${id}`],
      ['POST', `/v1/users/u-scope/memories`, { agent_id: agent, content: 'x' }],
    ] as const) {
      const r = await t.req(method, url, body, other);
      expect(r.statusCode, `${method} ${url}`).toBe(404);
      expect(r.json().detail).toBe('Agent not found');
    }
    for (const [method, url, body] of [
      ['GET', `/v1/users/u-scope/memories/${id}`],
      ['PATCH', `/v1/users/u-scope/memories/${id}`, { content: 'x' }],
      ['DELETE', `/v1/users/u-scope/memories/${id}`],
    ] as const) {
      const r = await t.req(method, url, body, other);
      expect(r.statusCode, `${method} ${url}`).toBe(404);
      expect(r.json().detail).toBe('Memory not found');
    }
    expect((await t.req('GET', `/v1/users/u-scope/memories`, undefined, other)).json().total).toBe(0);
    // A memory is found only under its own agent and user.
    expect((await t.req('GET', `/v1/users/u-other/memories/${id}`)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/users/u-scope/memories/${id}`)).json().content).toBe('Likes jazz.');

    const bad = await t.req('POST', `/v1/agents/${agent}/memories`, { content: '' });
    expect(bad.statusCode).toBe(422);
    expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content: 'x'.repeat(1001) })).statusCode).toBe(422);
    expect((await t.req('POST', `/v1/agents/${agent}/memories`, { content: 'ok', extra: 1 })).statusCode).toBe(422);
    expect((await t.req('GET', `/v1/users/u-scope/memories`)).json().total).toBe(1);
  });
});
