import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';
import { api, createAgent, hook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/** Custom functions, MCP tools and skills used by the scripted LLM through the invoke endpoints and webhooks. */
describe.each(TEST_DBS)('tool kinds end to end (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let mcp: FakeMcpServer;
  beforeAll(async () => {
    [t, llm, mcp] = await Promise.all([createTasksApp(kind), startOpenAIServer(), startFakeMcpServer()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close(), mcp?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const llmFields = () => scriptedAgentFields(llm.baseUrl);

  const invoke = async (agentId: string, text: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as Task;
  };

  /** The tool message the model received in its n-th request. */
  const toolMessages = (n: number) => llm.requests[n].body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);

  it('the model calls a custom function, which runs in the sandbox', async () => {
    const f = (
      await t.req('POST', '/v1/custom_functions', {
        name: 'word_count',
        description: 'Counts the words of a text',
        code: 'async function run({ text }) { return { words: text.split(/\\s+/).filter(Boolean).length }; }',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      })
    ).json();
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'custom_function', custom_function_id: f.id }] });
    const stored = (await t.req('GET', `/v1/agents/${agent}`)).json();
    expect(stored.attached_tools).toEqual([{ id: 'service-custom-functions', operation_ids: [f.id] }]);

    llm.reply({ toolCalls: [{ name: 'word_count', arguments: { text: 'one two three' } }] }, { text: 'Three words.' });
    const task = await invoke(agent, 'How many words in "one two three"?');
    expect(task).toMatchObject({ status: 'completed', result: 'Three words.' });
    expect(llm.requests[0].tools).toContain('word_count');
    expect(JSON.parse(toolMessages(1)[0])).toEqual({ words: 3 });
  });

  it('a custom function that loops forever is stopped; its task and other tasks complete', async () => {
    const spin = (await t.req('POST', '/v1/custom_functions', { name: 'spin', code: 'async function run() { for (;;) {} }' })).json();
    const looping = await t.createAgent({ ...llmFields(), tools: [{ type: 'custom_function', custom_function_id: spin.id }] });
    const plain = await t.createAgent(llmFields());
    llm.handle((req) => {
      const sawTool = req.body.messages.some((m: { role: string }) => m.role === 'tool');
      if (req.lastUserText === 'spin') return sawTool ? { text: 'spin finished' } : { toolCalls: [{ name: 'spin', arguments: {} }] };
      return { text: 'quick answer' };
    });
    try {
      const started = await t.req('POST', `/v1/agents/${looping}/invoke/async`, { input: { text: 'spin' } });
      expect(started.statusCode).toBe(200);
      const quick = await invoke(plain, 'quick');
      expect(quick).toMatchObject({ status: 'completed', result: 'quick answer' });
      const spun = await t.waitTask(started.json().id, (x) => x.status === 'completed', 30_000);
      expect(spun.result).toBe('spin finished');
      const events = (await t.req('GET', `/v1/tasks/${spun.id}/events`)).json() as { type: string; data: Record<string, unknown> }[];
      expect(events.find((e) => e.type === 'tool_call_result')?.data).toMatchObject({ is_error: true });
      expect(JSON.stringify(events.find((e) => e.type === 'tool_call_result')?.data.result)).toContain('ran past its time limit');
    } finally {
      llm.handle(() => ({ status: 500, error: 'no scripted reply' }));
    }
  });

  it.each(['streamable-http', 'sse'] as const)('the model calls an MCP tool over %s, limited to allowed_tools', async (transport) => {
    const url = transport === 'sse' ? mcp.sseUrl : mcp.mcpUrl;
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'mcp', url, name: 'calc', transport, allowed_tools: ['add'] }] });
    llm.reply({ toolCalls: [{ name: 'calc_add', arguments: { a: 20, b: 22 } }] }, { text: 'It is 42.' });
    const task = await invoke(agent, 'What is 20 + 22?');
    expect(task).toMatchObject({ status: 'completed', result: 'It is 42.' });
    expect(llm.requests[0].tools.filter((n: string) => n.startsWith('calc_'))).toEqual(['calc_add']);
    expect(toolMessages(1)).toEqual(['42']);
    expect(mcp.calls.at(-1)).toMatchObject({ tool: 'add', args: { a: 20, b: 22 } });
  });

  it('an MCP server that is down fails the tool call with a clear message; the task completes', async () => {
    const doomed = await startFakeMcpServer();
    const url = doomed.mcpUrl;
    await doomed.close();
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'mcp', url, name: 'gone' }] });
    llm.reply({ toolCalls: [{ name: 'gone_unavailable', arguments: {} }] }, { text: 'The tool is down.' });
    const task = await invoke(agent, 'Use the gone server');
    expect(task).toMatchObject({ status: 'completed', result: 'The tool is down.' });
    expect(toolMessages(1).join('\n')).toMatch(/MCP server 'gone' .* is unreachable while connecting: connection refused/);
  });

  it("a skill's instructions reach the model only after it asks for them", async () => {
    const secretStep = `Always end with the phrase ZEBRA-${kind}.`;
    const created = await t.req('POST', '/v1/skills', { name: `house-style-${kind}`, description: 'How we phrase answers', instructions: secretStep });
    expect(created.statusCode).toBe(201);
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'skill', skill_name: `house-style-${kind}` }, { type: 'skill', skill_name: 'draft-email' }] });

    llm.reply({ toolCalls: [{ name: 'load_skill', arguments: { skill_name: `house-style-${kind}` } }] }, { text: `Done. ZEBRA-${kind}.` });
    const task = await invoke(agent, 'Say hello');
    expect(task.status).toBe('completed');
    const first = JSON.stringify(llm.requests[0].body.messages);
    expect(llm.requests[0].system).toContain(`- house-style-${kind}: How we phrase answers`);
    expect(llm.requests[0].system).toContain('- draft-email: ');
    expect(first).not.toContain(secretStep);
    expect(llm.requests[0].tools).toContain('load_skill');
    expect(toolMessages(1)[0]).toContain(secretStep);
  });
});

describe.each(TEST_DBS)('MCP OAuth through webhook user_tokens (%s)', (kind) => {
  let w: WebhookWorld;
  let oauth: FakeMcpServer;
  beforeAll(async () => {
    [w, oauth] = await Promise.all([startWebhookWorld(kind), startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer alice-token' } })]);
  });
  afterAll(async () => {
    await Promise.all([w?.close(), oauth?.close()]);
  });

  it('the token passed for the graph item reaches the server; without it the call fails with an auth_event', async () => {
    const agentId = await createAgent(w, { tools: [{ type: 'mcp', url: oauth.mcpUrl, name: 'crm', auth_type: 'oauth2' }] });
    const agent = (await api(w, 'GET', `/v1/agents/${agentId}`)).json;
    const itemId = agent.graph.find((g: { type: string }) => g.type === 'mcp').id as string;

    w.llm.reply({ toolCalls: [{ name: 'crm_add', arguments: { a: 1, b: 2 } }] }, { text: 'You are alice.' });
    const tokens = encodeURIComponent(JSON.stringify({ [itemId]: 'alice-token' }));
    const ok = await hook(w, `/?agent_id=${agentId}&user_tokens=${tokens}`, { json: { prompt: 'Who am I?' }, headers: { 'x-api-key': w.keyA } });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json).toMatchObject({ status: 'completed', result: 'You are alice.' });
    expect(oauth.calls.at(-1)).toMatchObject({ tool: 'add', authorization: 'Bearer alice-token' });
    const okTools = w.llm.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(okTools[0].content).toBe('3');

    w.llm.reply({ toolCalls: [{ name: 'crm_unavailable', arguments: {} }] }, { text: 'Please authorize the CRM.' });
    const missing = await hook(w, `/?agent_id=${agentId}`, { json: { prompt: 'Who am I?' }, headers: { 'x-api-key': w.keyA } });
    expect(missing.json).toMatchObject({ status: 'completed', result: 'Please authorize the CRM.' });
    const failed = w.llm.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(failed[0].content).toContain(`pass an access token in user_tokens under the key '${itemId}'`);
    const events = (await api(w, 'GET', `/v1/tasks/${missing.json.id}/events`)).json as { type: string; data: Record<string, unknown> }[];
    expect(events.find((e) => e.type === 'auth_event')?.data).toMatchObject({ status: 'authorization_required', graph_item_id: itemId });
    // The token is never stored: it appears in neither the task nor its trace.
    const okTask = JSON.stringify((await api(w, 'GET', `/v1/tasks/${ok.json.id}`)).json) + JSON.stringify((await api(w, 'GET', `/v1/tasks/${ok.json.id}/events`)).json);
    expect(okTask).not.toContain('alice-token');
  });
});
