import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

const ordersDoc = (serverUrl: string) => ({
  openapi: '3.1.0',
  info: { title: 'Orders', version: '1' },
  servers: [{ url: serverUrl }],
  paths: {
    '/orders/{id}': {
      get: { operationId: 'getOrder', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } },
    },
  },
});

/** Workflows run as tasks of their orchestration agent: agent, connector, function, condition, parallel, approval steps. */
describe.each(TEST_DBS)('workflow runs end to end (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let up: UpstreamApi;
  let connectionId: string;
  let functionId: string;
  let classifier: string;
  let writer: string;

  beforeAll(async () => {
    [t, llm, up] = await Promise.all([createTasksApp(kind), startOpenAIServer(), startUpstreamApi()]);
    up.on('GET', '/orders/42', () => ({ json: { id: '42', total: 30 } }));
    const connectorId = (await t.req('POST', '/v1/connectors', { name: 'orders', openapi: ordersDoc(up.url) })).json().id;
    connectionId = (await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'o', security: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'k' } })).json().id;
    functionId = (
      await t.req('POST', '/v1/custom_functions', {
        name: 'risk',
        code: 'async function run({ amount }) { return { risk: amount > 10 ? "high" : "low" }; }',
        input_schema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      })
    ).json().id;
    classifier = await t.createAgent(openaiAgentFields(llm.baseUrl, { name: `classifier-${kind}` }));
    writer = await t.createAgent(openaiAgentFields(llm.baseUrl, { name: `writer-${kind}` }));
    // The classifier answers "refund" for refund requests; the writer echoes what it was given.
    llm.handle((req) => (req.lastUserText.startsWith('Classify') ? { text: req.lastUserText.includes('refund') ? 'refund\n' : 'other' } : { text: `REPLY(${req.lastUserText})` }));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close(), up?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
    up.requests.length = 0;
  });

  const refundFlow = (name: string) => ({
    name,
    steps: [
      { id: 'classify', type: 'agent', agent_id: classifier, input: 'Classify: {{input.text.message}}', next: 'route' },
      { id: 'route', name: 'Refund or not', type: 'condition', value: '{{steps.classify.output}}', cases: [{ operator: 'equals', value: 'refund', next: 'gather' }], default: 'other' },
      { id: 'gather', type: 'parallel', branches: ['lookup', 'score'], next: 'approve' },
      { id: 'lookup', type: 'action', connection_id: connectionId, operation_id: 'getOrder', input: { path_params: { id: '{{input.text.order}}' } } },
      { id: 'score', type: 'custom_function', custom_function_id: functionId, input: { amount: 30 } },
      { id: 'approve', type: 'approval', message: 'Refund order {{input.text.order}} of {{steps.gather.output.lookup.result.total}}?', next: 'answer' },
      { id: 'answer', type: 'agent', agent_id: writer, input: 'total={{steps.lookup.output.result.total}} risk={{steps.score.output.risk}}' },
      { id: 'other', type: 'agent', agent_id: writer, input: 'not a refund' },
    ],
    output: { reply: '{{steps.answer.output}}', risk: '{{steps.score.output.risk}}' },
  });

  const events = async (id: string) => (await t.req('GET', `/v1/tasks/${id}/events`)).json() as TaskEvent[];
  const stepResults = (evs: TaskEvent[]) => evs.filter((e) => e.type === 'tool_call_result' && e.data.workflow_step).map((e) => ({ ...e.data, id: (e.data.workflow_step as { id: string }).id }) as Record<string, unknown> & { id: string });

  it('branches, runs a parallel step, pauses for approval, and completes once approved', { timeout: 60_000 }, async () => {
    const wf = (await t.req('POST', '/v1/workflows', refundFlow(`refunds-${kind}`))).json();
    const text = JSON.stringify({ order: '42', message: 'I want a refund' });
    const started = await t.req('POST', `/v1/agents/${wf.agent_id}/invoke/async`, { input: { text } });
    expect(started.statusCode, started.body).toBe(200);
    const paused = await t.waitTask(started.json().id, (x) => x.status === 'paused', 30_000);
    expect(paused.hitl_request).toMatchObject({ tool: 'workflow_approval_approve', arguments: { step_id: 'approve', message: 'Refund order 42 of 30?' } });
    // Both branches ran before the approval; the answer did not.
    expect(up.received('GET', '/orders/42')).toHaveLength(1);
    expect(up.received('GET', '/orders/42')[0].headers['x-api-key']).toBe('k');
    expect(llm.requests).toHaveLength(1);

    expect((await t.req('POST', `/v1/tasks/${paused.id}/approve`)).statusCode).toBe(200);
    const done = await t.waitTask(paused.id, (x) => ['completed', 'failed', 'error'].includes(x.status), 30_000);
    expect(done.status, done.result ?? '').toBe('completed');
    expect(JSON.parse(done.result!)).toEqual({ reply: 'REPLY(total=30 risk=high)', risk: 'high' });

    const results = stepResults(await events(done.id));
    expect(results.map((r) => r.id).sort()).toEqual(['answer', 'approve', 'classify', 'gather', 'lookup', 'route', 'score']);
    expect(results.every((r) => r.is_error === false)).toBe(true);
    expect(results.find((r) => r.id === 'route')!.result).toEqual({ value: 'refund', case: 0, next: 'gather' });
    // A step's name labels its trace events; a step without one has none.
    expect(results.find((r) => r.id === 'route')!.workflow_step).toEqual({ id: 'route', type: 'condition', run: 1, name: 'Refund or not' });
    expect(results.find((r) => r.id === 'classify')!.workflow_step).toEqual({ id: 'classify', type: 'agent', run: 1 });
    expect(results.find((r) => r.id === 'gather')!.result).toMatchObject({ lookup: { status_code: 200, result: { id: '42', total: 30 } }, score: { risk: 'high' } });
    // Agent steps are child tasks of the workflow's task.
    const children = (await t.req('GET', `/v1/agents/${writer}/tasks`)).json().items as Task[];
    expect(children.some((c) => c.parent_execution === done.id && c.source === 'sub_agent')).toBe(true);
  });

  it('takes the default branch when no case matches, and a rejection ends the run failed without the next step', { timeout: 60_000 }, async () => {
    const wf = (await t.req('POST', '/v1/workflows', refundFlow(`refunds2-${kind}`))).json();
    const other = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: JSON.stringify({ order: '42', message: 'hello there' }) } })).json() as Task;
    expect(other.status).toBe('completed');
    // No `answer` ran: the output template reads missing steps as empty.
    expect(JSON.parse(other.result!)).toEqual({ reply: null, risk: null });
    expect(stepResults(await events(other.id)).map((r) => r.id)).toEqual(['classify', 'route', 'other']);
    expect(up.requests).toHaveLength(0);

    const started = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke/async`, { input: { text: JSON.stringify({ order: '42', message: 'refund please' }) } })).json();
    await t.waitTask(started.id, (x) => x.status === 'paused', 30_000);
    expect((await t.req('POST', `/v1/tasks/${started.id}/reject`)).statusCode).toBe(200);
    const rejected = await t.waitTask(started.id, (x) => ['completed', 'failed', 'error'].includes(x.status), 30_000);
    expect(rejected).toMatchObject({ status: 'failed', result: "Step 'approve' was rejected by a person reviewing this run" });
    expect(stepResults(await events(started.id)).map((r) => r.id)).not.toContain('answer');
  });

  it('fails the run naming the step when a step fails, and a step that outlives its timeout', { timeout: 60_000 }, async () => {
    up.on('GET', '/orders/7', () => ({ status: 500, json: { error: 'down' } }));
    const failing = {
      name: `failing-${kind}`,
      steps: [{ id: 'lookup', type: 'action', connection_id: connectionId, operation_id: 'getOrder', input: { path_params: { id: '7' } } }],
    };
    const wf = (await t.req('POST', '/v1/workflows', failing)).json();
    const task = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: 'go' } })).json() as Task;
    expect(task.status).toBe('error');
    expect(task.result).toMatch(/^Step 'lookup' failed: the operation answered HTTP 500/);

    up.on('GET', '/orders/slow', () => ({ json: {}, delayMs: 5000 }));
    const slow = { name: `slow-${kind}`, steps: [{ id: 'lookup', type: 'action', connection_id: connectionId, operation_id: 'getOrder', timeout_seconds: 1, input: { path_params: { id: 'slow' } } }] };
    const wf2 = (await t.req('POST', '/v1/workflows', slow)).json();
    const timed = (await t.req('POST', `/v1/agents/${wf2.agent_id}/invoke`, { input: { text: 'go' } })).json() as Task;
    expect(timed).toMatchObject({ status: 'error', result: "Step 'lookup' failed: it did not finish within 1 s" });
  });

  it('an approval step with a timeout fails the run when nobody decides in time; without one it keeps waiting', { timeout: 60_000 }, async () => {
    const flow = (name: string, timeout?: number) => ({
      name,
      steps: [{ id: 'ok', type: 'approval', message: 'Ship it?', ...(timeout !== undefined && { timeout_seconds: timeout }), next: 'answer' }, { id: 'answer', type: 'agent', agent_id: writer, input: 'shipped' }],
    });
    const timed = (await t.req('POST', '/v1/workflows', flow(`deadline-${kind}`, 1))).json();
    const started = (await t.req('POST', `/v1/agents/${timed.agent_id}/invoke/async`, { input: { text: 'go' } })).json();
    const ended = await t.waitTask(started.id, (x) => ['completed', 'failed', 'error'].includes(x.status), 30_000);
    expect(ended).toMatchObject({ status: 'error', result: "Step 'ok' failed: no decision within 1 s" });
    // Nothing after the approval ran, and the task no longer asks for a decision.
    expect(ended.hitl_request ?? null).toBeNull();
    expect(stepResults(await events(ended.id)).map((r) => r.id)).toEqual(['ok']);
    expect((await t.req('POST', `/v1/tasks/${ended.id}/approve`)).statusCode).not.toBe(200);

    const open = (await t.req('POST', '/v1/workflows', flow(`no-deadline-${kind}`))).json();
    const waiting = (await t.req('POST', `/v1/agents/${open.agent_id}/invoke/async`, { input: { text: 'go' } })).json();
    await t.waitTask(waiting.id, (x) => x.status === 'paused', 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await t.req('GET', `/v1/tasks/${waiting.id}`)).json().status).toBe('paused');
    expect((await t.req('POST', `/v1/tasks/${waiting.id}/approve`)).statusCode).toBe(200);
    expect((await t.waitTask(waiting.id, (x) => x.status === 'completed', 30_000)).result).toBe('REPLY(shipped)');
  });

  it('a failing branch ends the run and cancels its sibling', { timeout: 60_000 }, async () => {
    up.on('GET', '/orders/broken', () => ({ status: 503, json: { error: 'down' } }));
    up.on('GET', '/orders/lingering', () => ({ json: { late: true }, delayMs: 20_000 }));
    const branch = (id: string) => ({ id, type: 'action', connection_id: connectionId, operation_id: 'getOrder', timeout_seconds: 30, input: { path_params: { id } } });
    const wf = (await t.req('POST', '/v1/workflows', { name: `sibling-${kind}`, steps: [{ id: 'both', type: 'parallel', branches: ['broken', 'lingering'] }, branch('broken'), branch('lingering')] })).json();
    const task = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: 'go' } })).json() as Task;
    expect(task.status).toBe('error');
    expect(task.result).toMatch(/^Step 'broken' failed: the operation answered HTTP 503/);
    const results = stepResults(await events(task.id));
    expect(results.find((r) => r.id === 'lingering')).toMatchObject({ is_error: true, result: "Step 'lingering' failed: cancelled: another branch of its parallel step failed" });
  });

  it('runs parallel branches at once: each branch waits for the other to have started', { timeout: 60_000 }, async () => {
    let release!: () => void;
    const bothStarted = new Promise<void>((r) => (release = r));
    let arrived = 0;
    const meet = async () => {
      if (++arrived === 2) release();
      await bothStarted;
      return { json: { id: 'met', total: arrived } };
    };
    up.on('GET', '/orders/left', meet);
    up.on('GET', '/orders/right', meet);
    const branch = (id: string) => ({ id, type: 'action', connection_id: connectionId, operation_id: 'getOrder', timeout_seconds: 10, input: { path_params: { id } } });
    const wf = (await t.req('POST', '/v1/workflows', { name: `meet-${kind}`, steps: [{ id: 'both', type: 'parallel', branches: ['left', 'right'] }, branch('left'), branch('right')] })).json();
    const task = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: 'go' } })).json() as Task;
    expect(task.status, task.result ?? '').toBe('completed');
    expect(JSON.parse(task.result!)).toEqual({ left: { status_code: 200, result: { id: 'met', total: 2 } }, right: { status_code: 200, result: { id: 'met', total: 2 } } });
  });

  it('stopping a workflow run stops the child task of its running agent step', { timeout: 60_000 }, async () => {
    llm.handle((req) => (req.lastUserText === 'hang' ? { text: 'never', delayMs: 60_000 } : { text: 'ok' }));
    const wf = (await t.req('POST', '/v1/workflows', { name: `stoppable-${kind}`, steps: [{ id: 'wait', type: 'agent', agent_id: writer, input: 'hang' }] })).json();
    const started = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke/async`, { input: { text: 'x' } })).json();
    let child: { id: string } | undefined;
    for (let i = 0; !child && i < 300; i++) {
      child = await t.c.db.kysely.selectFrom('tasks').select('id').where('parent_execution', '=', started.id).where('status', '=', 'executing').executeTakeFirst();
      if (!child) await new Promise((r) => setTimeout(r, 50));
    }
    expect(child, 'the agent step started its child task').toBeDefined();
    await t.waitTask(started.id, (x) => x.status === 'executing');
    expect((await t.req('POST', `/v1/tasks/${started.id}/stop`)).json().status).toBe('stopped');
    await t.waitTask(child!.id, (x) => x.status === 'stopped', 30_000);
    llm.handle((req) => (req.lastUserText.startsWith('Classify') ? { text: req.lastUserText.includes('refund') ? 'refund\n' : 'other' } : { text: `REPLY(${req.lastUserText})` }));
  });

  it('an agent calls a workflow as a tool and gets its result', { timeout: 60_000 }, async () => {
    const wf = (
      await t.req('POST', '/v1/workflows', {
        name: `scoring-${kind}`,
        description: 'Scores an amount',
        steps: [{ id: 'score', type: 'custom_function', custom_function_id: functionId, input: { amount: '{{input.text.amount}}' } }],
      })
    ).json();
    const bad = await t.req('POST', '/v1/agents', { ...openaiAgentFields(llm.baseUrl), name: `bad-tool-${kind}`, tools: [{ type: 'workflow', workflow_id: 'nope' }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['body', 'tools', 0, 'workflow_id'], msg: "Value error, workflow 'nope' not found" });

    const caller = await t.createAgent(openaiAgentFields(llm.baseUrl, { tools: [{ type: 'workflow', workflow_id: wf.id }] }));
    const stored = (await t.req('GET', `/v1/agents/${caller}`)).json();
    expect(stored.graph).toEqual([expect.objectContaining({ type: 'workflow', item_id: wf.id, name: `scoring-${kind}` })]);
    llm.handle(null);
    llm.reply({ toolCalls: [{ name: `workflow_scoring-${kind}`, arguments: { input: JSON.stringify({ amount: 3 }) } }] }, { text: 'The risk is low.' });
    const task = (await t.req('POST', `/v1/agents/${caller}/invoke`, { input: { text: 'score 3' } })).json() as Task;
    expect(task).toMatchObject({ status: 'completed', result: 'The risk is low.' });
    expect(llm.requests[0].tools).toContain(`workflow_scoring-${kind}`);
    const toolMsg = llm.requests[1].body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.parse(toolMsg.content)).toEqual({ risk: 'low' });
    // The workflow ran as a child task of its orchestration agent.
    const runs = (await t.req('GET', `/v1/agents/${wf.agent_id}/tasks`)).json().items as Task[];
    expect(runs).toEqual([expect.objectContaining({ parent_execution: task.id, status: 'completed', result: '{"risk":"low"}' })]);
  });
  it("the invocation's output_schema (with output_format json) holds for the workflow's result", { timeout: 60_000 }, async () => {
    const wf = (await t.req('POST', '/v1/workflows', { name: `scored-${kind}`, steps: [{ id: 'score', type: 'custom_function', custom_function_id: functionId, input: { amount: 30 } }], output: { risk: '{{steps.score.output.risk}}' } })).json();
    const strict = { type: 'object', properties: { risk: { enum: ['low'] } }, required: ['risk'] };
    const failed = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: 'go' }, output_format: 'json', output_schema: strict })).json() as Task;
    expect(failed.status).toBe('failed');
    expect(failed.result).toMatch(/^The workflow's result does not match output_schema/);
    const loose = { type: 'object', properties: { risk: { type: 'string' } }, required: ['risk'] };
    const ok = (await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: 'go' }, output_format: 'json', output_schema: loose })).json() as Task;
    expect(ok).toMatchObject({ status: 'completed', result: '{"risk":"high"}' });
  });

  it("a workflow's agent refuses the model-loop settings it would ignore, and callers cannot repoint orchestration_nodes", async () => {
    const wf = (await t.req('POST', '/v1/workflows', { name: `plain-${kind}`, steps: [{ id: 'score', type: 'custom_function', custom_function_id: functionId, input: { amount: 1 } }] })).json();
    const agent = (await t.req('GET', `/v1/agents/${wf.agent_id}`)).json();
    const refused = await t.req('PATCH', `/v1/agents/${wf.agent_id}`, { is_supervised: true, agno_settings: { pii_detection_enabled: true }, instructions: { general: 'be nice' } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().detail.map((d: { loc: unknown[] }) => d.loc.join('.'))).toEqual(['body.is_supervised', 'body.instructions', 'body.agno_settings.pii_detection_enabled']);
    const moved = await t.req('PATCH', `/v1/agents/${wf.agent_id}`, { orchestration_nodes: [{ type: 'workflow', workflow_id: 'elsewhere' }] });
    expect(moved.statusCode).toBe(422);
    expect(moved.json().detail[0].loc).toEqual(['body', 'orchestration_nodes']);
    // The configuration read back and sent again (as the xpander CLI does) is accepted, and so is a new name.
    const same = await t.req('PATCH', `/v1/agents/${wf.agent_id}`, { name: `renamed-${kind}`, orchestration_nodes: agent.orchestration_nodes, agno_settings: agent.agno_settings, is_supervised: false });
    expect(same.statusCode, same.body).toBe(200);
    // An invocation's model-only fields are refused; its additional_context acts ({{input.additional_context}}).
    const asked = await t.req('POST', `/v1/agents/${wf.agent_id}/invoke`, { input: { text: 'go' }, instructions_override: 'be brief' });
    expect(asked.statusCode).toBe(422);
    expect(asked.json().detail[0].loc).toEqual(['body', 'instructions_override']);
    const created = await t.req('POST', '/v1/agents', { name: `nodes-${kind}`, orchestration_nodes: [{ type: 'workflow', workflow_id: wf.id }] });
    expect(created.statusCode).toBe(422);
    expect(created.json().detail[0].loc).toEqual(['body', 'orchestration_nodes']);
  });
});
