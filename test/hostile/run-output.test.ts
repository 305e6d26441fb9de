import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * What a run produces is not the caller's input and cannot be refused: a model answering with a NUL must end as one
 * completed run. Before, PostgreSQL refused the outcome (the run was claimed again, calling the model again) and
 * SQLite kept the answer only up to the NUL.
 */
describe.each(TEST_DBS)('NUL in what a run produces (%s)', (kind) => {
  let t: TasksApp;
  let openai: ScriptedLlmServer;
  beforeAll(async () => {
    [t, openai] = await Promise.all([createTasksApp(kind), startOpenAIServer()]);
  });
  afterAll(async () => Promise.all([t?.close(), openai?.close()]));

  it('stores the answer with U+FFFD in place of each NUL, in one attempt, and replays it in the thread', async () => {
    const id = await t.createAgent(scriptedAgentFields(openai.baseUrl));
    openai.reply({ text: 'before\u0000after' });
    const thread = `nul-${kind}-${Date.now()}`;
    const r = await t.req('POST', `/v1/agents/${id}/invoke`, { id: thread, input: { text: 'hi' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'completed', result: 'before\uFFFDafter', execution_attempts: 1 });
    expect(openai.requests).toHaveLength(1);

    openai.reply({ text: 'second' });
    const again = await t.req('POST', `/v1/agents/${id}/invoke`, { id: thread, input: { text: 'and?' } });
    expect(again.json()).toMatchObject({ status: 'completed', result: 'second' });
    const history = JSON.stringify(openai.requests[1]!.body.messages);
    expect(history).toContain('before\uFFFDafter');
    expect((await t.req('GET', `/v1/tasks?agent_id=${id}`)).statusCode).toBe(200);
  }, 60_000);
});
