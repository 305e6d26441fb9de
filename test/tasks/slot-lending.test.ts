import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from './tasks-harness.js';
import type { Task } from '../../src/tasks/task.types.js';

/**
 * A run waiting for its sub-agent lends its worker slot. With one slot, a manager calling a sub-agent that calls
 * its own would otherwise hold the only slot while its child waits in the queue, until the sub-agent timeout (here
 * 20 s, far above the ~1 s the chain takes) ends the wait with an error: the completed chain is the proof, so no
 * wall-clock bound is asserted (a loaded CI machine would make one flaky).
 */
describe.each(TEST_DBS)('worker slots lent by waiting parents (%s)', (kind) => {
  let llm: ScriptedLlmServer;
  let t: TasksApp;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind, { env: { AGENTRY_WORKER_CONCURRENCY: '1', AGENTRY_SYNC_TIMEOUT_MS: '20000' } });
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  it('runs a chain of three agents on a worker with one slot', { timeout: 60_000 }, async () => {
    const leaf = await t.createAgent(openaiAgentFields(llm.baseUrl));
    const middle = await t.createAgent(openaiAgentFields(llm.baseUrl, { type: 'manager', tools: [{ type: 'agent', agent_id: leaf }] }));
    const top = await t.createAgent(openaiAgentFields(llm.baseUrl, { type: 'manager', tools: [{ type: 'agent', agent_id: middle }] }));
    llm.handle((req) => {
      const said = JSON.stringify(req.body.messages);
      const delegate = req.tools.find((n) => n.startsWith('agent_'));
      if (req.lastUserText === 'leaf question') return { text: 'leaf answer' };
      if (delegate && req.lastUserText === 'middle question' && !said.includes('leaf answer')) return { toolCalls: [{ name: delegate, arguments: { input: 'leaf question' } }] };
      if (req.lastUserText === 'middle question') return { text: 'middle answer' };
      if (delegate && !said.includes('middle answer')) return { toolCalls: [{ name: delegate, arguments: { input: 'middle question' } }] };
      return { text: 'top answer' };
    });
    const r = await t.req('POST', `/v1/agents/${top}/invoke`, { input: { text: 'top question' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'top answer' });
    const middleTask = (await t.req('GET', `/v1/tasks/${r.json().sub_executions[0]}`)).json() as Task;
    expect(middleTask).toMatchObject({ agent_id: middle, status: 'completed', result: 'middle answer', call_depth: 1 });
    const leafTask = (await t.req('GET', `/v1/tasks/${middleTask.sub_executions[0]}`)).json() as Task;
    expect(leafTask).toMatchObject({ agent_id: leaf, status: 'completed', result: 'leaf answer', call_depth: 2 });
  });
});
