import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from './tasks-harness.js';
import { TEST_DBS } from '../support/harness.js';

describe.each(TEST_DBS)('smoke (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  it('invokes', async () => {
    const agentId = await t.createAgent(openaiAgentFields(llm.baseUrl));
    llm.reply({ text: 'Hello there' });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'hi' } });
    console.log(r.statusCode, r.body);
    const ev = await t.req('GET', `/v1/tasks/${r.json().id}/events`);
    console.log(ev.body);
  });
});
