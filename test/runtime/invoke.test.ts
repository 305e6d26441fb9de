import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { RecordedRequest, ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { SCRIPTED_LLM_KEY, scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/** The real runtime behind the invoke endpoints and the worker, driven by the scripted LLM servers. */
describe.each(TEST_DBS)('invoking agents end to end (%s)', (kind) => {
  let t: TasksApp;
  let openai: ScriptedLlmServer;
  let anthropic: ScriptedLlmServer;
  beforeAll(async () => {
    [t, openai, anthropic] = await Promise.all([createTasksApp(kind), startOpenAIServer(), startAnthropicServer()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), openai?.close(), anthropic?.close()]);
  });
  beforeEach(() => {
    openai.requests.length = 0;
    anthropic.requests.length = 0;
  });

  const llmFields = (server: ScriptedLlmServer, provider = 'openai') => scriptedAgentFields(server.baseUrl, { model_provider: provider });

  const invoke = async (agentId: string, body: Record<string, unknown>) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, body);
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as Task;
  };

  it('answers through the API, with tokens, trace and thread recorded', async () => {
    const id = await t.createAgent({ ...llmFields(openai), output_format: 'text', instructions: { role: [], goal: [], general: 'Answer in one word.' } });
    openai.reply({ text: 'Paris', usage: { prompt_tokens: 12, completion_tokens: 1 } });
    const task = await invoke(id, { input: { text: 'Capital of France?' } });
    expect(task).toMatchObject({ status: 'completed', result: 'Paris', tokens: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } });
    expect(task.llm_model_provider).toBe('openai');
    expect(openai.requests[0].system).toContain('Answer in one word.');
    expect(openai.requests[0].headers.authorization).toBe(`Bearer ${SCRIPTED_LLM_KEY}`);

    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as { type: string; data: any }[];
    expect(events.filter((e) => e.type === 'llm_call')).toHaveLength(1);
    expect(events.find((e) => e.type === 'llm_call')!.data).toMatchObject({ provider: 'openai', model: 'gpt-test' });
  });

  it('continues a conversation on the same task: the history reaches the model', async () => {
    const id = await t.createAgent(llmFields(anthropic, 'anthropic'));
    anthropic.handle((req) => ({ text: `echo: ${req.lastUserText}` }));
    const chat = `chat-${kind}-${Date.now()}`;
    await invoke(id, { id: chat, input: { text: 'My name is Ada.' } });
    const second = await invoke(id, { id: chat, input: { text: 'What is my name?' } });
    expect(second).toMatchObject({ id: chat, status: 'completed', result: 'echo: What is my name?' });
    const sent = anthropic.requests[1].body.messages.map((m: any) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text).join('')]);
    expect(sent).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'echo: My name is Ada.'],
      ['user', 'What is my name?'],
    ]);
  });

  it('returns JSON that validates against the invocation output_schema', async () => {
    const id = await t.createAgent(llmFields(openai));
    openai.reply({ text: '{"answer": 42}' });
    const task = await invoke(id, {
      input: { text: 'The answer?' },
      output_format: 'json',
      output_schema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] },
    });
    expect(task.status).toBe('completed');
    expect(JSON.parse(task.result!)).toEqual({ answer: 42 });
  });

  it('ends the task with error when the agent has no credentials', async () => {
    const id = await t.createAgent({ model_provider: 'openai', model_name: 'gpt-test', llm_api_base: openai.baseUrl });
    const task = await invoke(id, { input: { text: 'hello' } });
    expect(task.status).toBe('error');
    expect(task.result).toContain('"openai"');
    expect(task.result).toContain('OPENAI_API_KEY');
    expect(openai.requests).toHaveLength(0);
  });

  it('uses the organization secret named by llm_credentials_key', async () => {
    const put = await t.req('PUT', '/v1/secrets/team-openai', { value: 'sk-org-secret' });
    expect(put.statusCode, put.body).toBeLessThan(300);
    const id = await t.createAgent({ model_provider: 'openai', model_name: 'gpt-test', llm_api_base: openai.baseUrl, llm_credentials_key: 'team-openai' });
    openai.reply({ text: 'ok' });
    const task = await invoke(id, { input: { text: 'hello' } });
    expect(task.status).toBe('completed');
    expect(openai.requests[0].headers.authorization).toBe('Bearer sk-org-secret');
  });

  it('runs a sub-agent as a child task and gives its answer to the parent', async () => {
    const childId = await t.createAgent({ ...llmFields(anthropic, 'anthropic'), instructions: { role: ['Translator'], goal: [], general: '' } });
    anthropic.reply({ text: 'Bonjour le monde' });
    const parentId = await t.createAgent({ ...llmFields(openai), type: 'manager', tools: [{ type: 'agent', agent_id: childId }] });
    const toolMessage = (req: RecordedRequest) => req.body.messages.find((m: any) => m.role === 'tool');
    openai.handle((req) =>
      toolMessage(req)
        ? { text: `The translation is: ${toolMessage(req).content}` }
        : { toolCalls: [{ id: 'call_sub', name: req.tools[0], arguments: { input: 'Translate "hello world" to French' } }] },
    );

    const parent = await invoke(parentId, { input: { text: 'Please translate hello world to French', user: { id: 'user-42' } } });
    expect(parent).toMatchObject({ status: 'completed', result: 'The translation is: Bonjour le monde' });
    expect(openai.requests[0].tools).toHaveLength(1);
    expect(anthropic.requests[0].lastUserText).toBe('Translate "hello world" to French');

    const events = (await t.req('GET', `/v1/tasks/${parent.id}/events`)).json() as { type: string; data: any }[];
    const trigger = events.find((e) => e.type === 'sub_agent_trigger');
    expect(trigger?.data).toMatchObject({ agent_id: childId, tool_call_id: 'call_sub' });
    const child = (await t.req('GET', `/v1/tasks/${trigger!.data.task_id}`)).json() as Task;
    expect(child).toMatchObject({ agent_id: childId, source: 'sub_agent', parent_execution: parent.id, status: 'completed', result: 'Bonjour le monde' });
    // The child runs for the same user as its parent.
    expect(child.user_id).toBe('user-42');
    const result = events.find((e) => e.type === 'tool_call_result');
    expect(result?.data).toMatchObject({ tool_call_id: 'call_sub', result: 'Bonjour le monde', is_error: false });
  });

  it('a supervised manager asks before delegating: the sub-agent (unsupervised) runs only once approved', async () => {
    const childId = await t.createAgent(llmFields(anthropic, 'anthropic'));
    anthropic.reply({ text: 'done by the child' });
    const parentId = await t.createAgent({ ...llmFields(openai), type: 'manager', is_supervised: true, tools: [{ type: 'agent', agent_id: childId }] });
    const toolMessage = (req: RecordedRequest) => req.body.messages.find((m: any) => m.role === 'tool');
    openai.handle((req) => (toolMessage(req) ? { text: `Child said: ${toolMessage(req).content}` } : { toolCalls: [{ id: 'call_sup', name: req.tools[0], arguments: { input: 'POST the refund' } }] }));

    const r = await t.req('POST', `/v1/agents/${parentId}/invoke/async`, { input: { text: 'delegate the refund' } });
    expect(r.statusCode, r.body).toBe(200);
    const paused = await t.waitTask(r.json().id, (x) => x.status === 'paused');
    expect(paused.hitl_request).toMatchObject({ tool: expect.stringMatching(/^agent_/), arguments: { input: 'POST the refund' } });
    // Nothing was delegated while the approval waits.
    expect(anthropic.requests).toHaveLength(0);
    expect((await t.req('POST', `/v1/tasks/${paused.id}/approve`)).statusCode).toBe(200);
    const done = await t.waitTask(paused.id, (x) => ['completed', 'failed', 'error'].includes(x.status));
    expect(done).toMatchObject({ status: 'completed', result: 'Child said: done by the child' });
  });

  it('stops the sub-agent task when its parent is stopped', async () => {
    const childId = await t.createAgent(llmFields(anthropic, 'anthropic'));
    anthropic.reply({ text: 'too late', delayMs: 20_000 });
    const parentId = await t.createAgent({ ...llmFields(openai), type: 'manager', tools: [{ type: 'agent', agent_id: childId }] });
    openai.handle((req) => ({ toolCalls: [{ id: 'call_slow', name: req.tools[0], arguments: { input: 'take your time' } }] }));

    const r = await t.req('POST', `/v1/agents/${parentId}/invoke/async`, { input: { text: 'delegate' } });
    expect(r.statusCode, r.body).toBe(200);
    const parentTask = r.json() as Task;
    await anthropic.waitForRequests(1);
    // The child may reach its model before the parent's trigger event is written: wait for the event.
    let childTaskId: string | undefined;
    while (!childTaskId) {
      const events = (await t.req('GET', `/v1/tasks/${parentTask.id}/events`)).json() as { type: string; data: any }[];
      childTaskId = events.find((e) => e.type === 'sub_agent_trigger')?.data.task_id;
      if (!childTaskId) await new Promise((res) => setTimeout(res, 20));
    }

    expect((await t.req('POST', `/v1/tasks/${parentTask.id}/stop`)).statusCode).toBe(200);
    await t.waitTask(parentTask.id, (x) => x.status === 'stopped');
    const child = await t.waitTask(childTaskId, (x) => x.status === 'stopped');
    expect(child.parent_execution).toBe(parentTask.id);
  });
});
