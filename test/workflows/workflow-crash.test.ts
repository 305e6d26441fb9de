import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { TEST_DBS } from '../support/harness.js';
import { crashSuite, killHard, WorkerProcesses } from '../support/processes.js';
import { openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

const paymentsDoc = (serverUrl: string) => ({
  openapi: '3.1.0',
  info: { title: 'Payments', version: '1' },
  servers: [{ url: serverUrl }],
  paths: {
    '/charges': { post: { operationId: 'charge', requestBody: { content: { 'application/json': { schema: { type: 'object' } } } }, responses: { '201': { description: 'ok' } } } },
    '/receipts': { get: { operationId: 'receipt', responses: { '200': { description: 'ok' } } } },
  },
});

/**
 * Crash safety of workflow runs: the worker process running a workflow is SIGKILLed while a later step is under way;
 * another worker claims the task again and resumes from the trace, so the finished side effect is not repeated.
 */
describe.each(TEST_DBS)('workflow crash recovery (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let up: UpstreamApi;
  const workers = new WorkerProcesses(() => t, { AGENTRY_WORKER_CONCURRENCY: '4' });

  crashSuite(kind, workers, (app, model) => ((t = app), (llm = model)));
  beforeAll(async () => {
    up = await startUpstreamApi();
  });
  afterAll(async () => up?.close());

  it('resumes after SIGKILL without repeating a finished step; the unfinished step runs again', { timeout: 150_000 }, async () => {
    let charges = 0;
    up.on('POST', '/charges', () => ({ status: 201, json: { charge: `ch_${++charges}` } }));
    let receipts = 0;
    // The first receipt call hangs until its worker dies; the next one answers.
    up.on('GET', '/receipts', () => (++receipts === 1 ? { json: { never: true }, delayMs: 120_000 } : { json: { receipt: 'r_1' } }));
    llm.handle(() => ({ text: 'approved-by-model' }));
    const connectorId = (await t.req('POST', '/v1/connectors', { name: 'payments', openapi: paymentsDoc(up.url) })).json().id;
    const connectionId = (await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'p', security: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'k' } })).json().id;
    const checker = await t.createAgent(openaiAgentFields(llm.baseUrl));
    const wf = (
      await t.req('POST', '/v1/workflows', {
        name: `pay-${kind}`,
        steps: [
          { id: 'check', type: 'agent', agent_id: checker, input: 'check {{input.text}}', next: 'charge' },
          { id: 'charge', type: 'action', connection_id: connectionId, operation_id: 'charge', input: { body_params: { note: '{{steps.check.output}}' } }, next: 'receipt' },
          { id: 'receipt', type: 'action', connection_id: connectionId, operation_id: 'receipt', input: {} },
        ],
        output: '{{steps.charge.output.result.charge}} {{steps.receipt.output.result.receipt}}',
      })
    ).json();
    expect(wf.agent_id).toBeTruthy();
    const task = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke/async`, { input: { text: 'order 1' } })).json() as Task;

    workers.spawn();
    workers.spawn();
    const end = Date.now() + 60_000;
    while (receipts < 1) {
      if (Date.now() > end) throw new Error('the receipt step never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(charges).toBe(1);
    await killHard(await workers.holderOf(task.id));

    const done = await t.waitTask(task.id, (x) => ['completed', 'error', 'failed'].includes(x.status), 90_000);
    expect(done).toMatchObject({ status: 'completed', result: 'ch_1 r_1', execution_attempts: 2 });
    // The finished steps were reused from the trace: one charge, one model call; the interrupted one ran again.
    expect(charges).toBe(1);
    expect(llm.requests).toHaveLength(1);
    expect(receipts).toBe(2);
    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
    const results = events.filter((e) => e.type === 'tool_call_result' && e.data.workflow_step).map((e) => (e.data.workflow_step as { id: string }).id);
    expect(results).toEqual(['check', 'charge', 'receipt']);
    const requests = events.filter((e) => e.type === 'tool_call_request' && e.data.workflow_step).map((e) => (e.data.workflow_step as { id: string }).id);
    expect(requests).toEqual(['check', 'charge', 'receipt', 'receipt']);
    // The second start says it repeats a step that may have acted (at-least-once for an interrupted step).
    const receiptStarts = events.filter((e) => e.type === 'tool_call_request' && (e.data.workflow_step as { id?: string } | undefined)?.id === 'receipt');
    expect(receiptStarts.map((e) => e.data.rerun_after_interruption ?? false)).toEqual([false, true]);
  });
});
