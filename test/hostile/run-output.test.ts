import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * What a run produces is not the caller's input and cannot be refused: a model answering with a NUL must end as one
 * completed run. Before, PostgreSQL refused the outcome (the run was claimed again, calling the model again) and
 * SQLite kept the answer only up to the NUL. Half of a surrogate pair cannot be encoded as UTF-8 either: it becomes
 * U+FFFD, on both databases and whatever form the statement sends it in (db/pg-arrays.ts).
 */
describe.each(TEST_DBS)('text a run produces that the database cannot store as it is (%s)', (kind) => {
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

  it('stores half of a surrogate pair (a cut emoji) as U+FFFD, in the answer and its final event, in one attempt', async () => {
    const id = await t.createAgent(scriptedAgentFields(openai.baseUrl));
    openai.reply({ text: 'cut \ud83d here' });
    const r = await t.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'hi' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'completed', result: 'cut \uFFFD here', execution_attempts: 1 });
    const events = (await t.req('GET', `/v1/tasks/${r.json().id}/events`)).json() as { type: string; data: { result?: string } }[];
    expect(events.find((e) => e.type === 'task_finished')?.data.result).toBe('cut \uFFFD here');
  }, 60_000);
});
