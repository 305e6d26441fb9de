import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { RecordedRequest, ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from './tasks-harness.js';

/**
 * AGENTRY_APPROVAL_TIMEOUT_MS: a supervised call nobody decides on ends its task `error` once the wait passes the
 * bound, without the call being made, and frees what the paused run held; a decision in time goes through as usual.
 */
describe.each(TEST_DBS)('approval timeout (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let supervised: string;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind, { env: { AGENTRY_APPROVAL_TIMEOUT_MS: '3000' } });
    const base = scriptedAgentFields(llm.baseUrl);
    const child = await t.createAgent(base);
    supervised = await t.createAgent({ ...base, type: 'manager', is_supervised: true, tools: [{ type: 'agent', agent_id: child }] });
    llm.handle((req: RecordedRequest) => {
      if (req.tools.length === 0) return { text: `child did ${req.lastUserText}` };
      const tool = req.body.messages.find((m: { role: string }) => m.role === 'tool');
      return tool ? { text: `done: ${tool.content}` } : { toolCalls: [{ id: 'call_1', name: req.tools[0]!, arguments: { input: 'refund order 7' } }] };
    });
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  const submit = async (text: string) => {
    const r = await t.req('POST', `/v1/agents/${supervised}/invoke/async`, { input: { text } });
    expect(r.statusCode, r.body).toBe(200);
    return (r.json() as Task).id;
  };

  it('ends the task error when nobody decides in time, without making the call', async () => {
    const id = await submit('refund please');
    await t.waitTask(id, (x) => x.status === 'paused');
    const done = await t.waitTask(id, (x) => !['pending', 'executing', 'paused'].includes(x.status), 15_000);
    expect(done.status).toBe('error');
    expect(done.result).toMatch(/^Nobody approved or rejected the call to ".+" within 3 s \(AGENTRY_APPROVAL_TIMEOUT_MS\); the task was stopped without making it$/);
    expect(done.hitl_request ?? null).toBeNull();
    const events = (await t.req('GET', `/v1/tasks/${id}/events`)).json() as TaskEvent[];
    expect(events.filter((e) => e.type === 'sub_agent_trigger')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'task_finished', data: { status: 'error' } });
    // A decision now is too late.
    expect((await t.req('POST', `/v1/tasks/${id}/approve`)).statusCode).toBe(409);
  });

  it('a decision within the bound goes through as usual', async () => {
    const id = await submit('refund in time');
    await t.waitTask(id, (x) => x.status === 'paused');
    expect((await t.req('POST', `/v1/tasks/${id}/approve`)).statusCode).toBe(200);
    const done = await t.waitTask(id, (x) => !['pending', 'executing', 'paused'].includes(x.status), 15_000);
    expect(done).toMatchObject({ status: 'completed' });
    expect(done.result).toContain('child did');
  });
});
