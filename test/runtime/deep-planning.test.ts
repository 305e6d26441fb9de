import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { resetScript, runTraced, startScriptedRunWorld, toolResults, type TraceEvent as Ev } from '../support/scripted-runs.js';
import { openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/** deep_planning, enforce_deep_planning and max_plan_retries at run time: docs/planning-and-chaining.md. */
describe.each(TEST_DBS)('deep planning (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let fn: Record<string, string>;

  beforeAll(async () => {
    ({ t, llm, fn } = await startScriptedRunWorld(kind, {
      fetch_page: 'async function run({ url }) { return { body: "content of " + url }; }',
      flaky: 'async function run() { throw new Error("upstream 503"); }',
    }));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => resetScript(llm));

  const planner = (extra: Record<string, unknown> = {}) =>
    t.createAgent(
      openaiAgentFields(llm.baseUrl, {
        deep_planning: true,
        tools: [{ type: 'custom_function', custom_function_id: fn.fetch_page }, { type: 'custom_function', custom_function_id: fn.flaky }],
        ...extra,
      }),
    );
  const run = (agentId: string, text: string) => runTraced(t, agentId, text);
  const plans = (events: Ev[]) => events.filter((e) => e.type === 'plan').map((e) => e.data);

  it('the agent writes a plan, works through it and checks steps off; every change is in the trace', async () => {
    const agent = await planner();
    llm.reply(
      { toolCalls: [{ name: 'create_plan', arguments: { goal: 'Summarize the page', steps: ['Fetch the page', 'Summarize it'] } }] },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'in_progress' } }, { name: 'fetch_page', arguments: { url: 'https://example.org' } }] },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'completed', note: 'fetched' } }] },
      // Answering with step 2 still open is sent back once.
      { text: 'Premature answer.' },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 2, status: 'completed', note: 'summarized' } }] },
      { text: 'The page is about examples.' },
    );
    const { task, events } = await run(agent, 'Summarize example.org');
    expect(task).toMatchObject({ status: 'completed', result: 'The page is about examples.' });

    expect(llm.requests[0].tools).toEqual(expect.arrayContaining(['create_plan', 'update_plan', 'fetch_page']));
    expect(llm.requests[0].system).toContain('Deep planning is on');
    expect(llm.requests[0].body.tool_choice).toBe('auto');
    expect(llm.requests[4].lastUserText).toContain('Your plan still has open steps: 2. Summarize it');

    const p = plans(events);
    expect(p.map((x) => x.action)).toEqual(['created', 'updated', 'updated', 'updated']);
    expect(p.at(-1)!.plan).toEqual({
      goal: 'Summarize the page',
      steps: [
        { id: 1, title: 'Fetch the page', status: 'completed', attempts: 1, note: 'fetched' },
        { id: 2, title: 'Summarize it', status: 'completed', attempts: 1, note: 'summarized' },
      ],
      retries_used: 0,
      max_retries: 15,
    });
    // The tool call made while step 1 was in progress is tied to it in the trace.
    expect(events.find((e) => e.type === 'tool_call_request' && e.data.tool_name === 'fetch_page')!.data.plan_step).toBe(1);
    // The plan events sit between the tool calls that changed the plan, in order.
    const order = events.filter((e) => ['plan', 'tool_call_result'].includes(e.type)).map((e) => (e.type === 'plan' ? `plan:${e.data.action}` : e.data.tool_name));
    expect(order).toEqual(['plan:created', 'create_plan', 'plan:updated', 'update_plan', 'fetch_page', 'plan:updated', 'update_plan', 'plan:updated', 'update_plan']);
  });

  it('a failed step is retried at most max_plan_retries times in a run', async () => {
    const agent = await planner({ agno_settings: { max_plan_retries: 1 } });
    const step = (status: string, note?: string) => ({ name: 'update_plan', arguments: { step_id: 1, status, ...(note ? { note } : {}) } });
    llm.reply(
      { toolCalls: [{ name: 'create_plan', arguments: { steps: ['Call the flaky service'] } }] },
      { toolCalls: [step('in_progress'), { name: 'flaky', arguments: {} }] },
      { toolCalls: [step('failed', 'upstream 503')] },
      { toolCalls: [step('in_progress'), { name: 'flaky', arguments: {} }] }, // the one retry allowed
      { toolCalls: [step('failed', 'still 503')] },
      { toolCalls: [step('in_progress')] }, // over the limit: refused
      { text: 'The flaky service kept failing.' },
    );
    const { task, events } = await run(agent, 'Call flaky');
    expect(task).toMatchObject({ status: 'completed', result: 'The flaky service kept failing.' });

    const updates = toolResults(events).filter((r) => r.tool_name === 'update_plan');
    expect(updates.map((r) => r.is_error)).toEqual([false, false, false, false, true]);
    expect(String(updates[2].result)).toMatch(/Step 1 is in progress/);
    expect(String(updates[4].result)).toContain('Retry limit reached: max_plan_retries is 1 and 1 retry was used');
    const last = plans(events).at(-1)!;
    expect(plans(events).map((x) => x.action)).toEqual(['created', 'updated', 'updated', 'retry', 'updated']);
    expect(last.plan).toMatchObject({ retries_used: 1, max_retries: 1, steps: [{ id: 1, status: 'failed', attempts: 2, note: 'still 503' }] });
    // The failed step is not "open": the answer was accepted without a reminder.
    expect(llm.requests).toHaveLength(7);
  });

  it('enforce_deep_planning: the first call must create the plan; other tools are refused until it exists', async () => {
    const agent = await planner({ enforce_deep_planning: true });
    llm.reply(
      // A model that ignores tool_choice: its tool call is refused.
      { toolCalls: [{ name: 'fetch_page', arguments: { url: 'https://a.example' } }] },
      { toolCalls: [{ name: 'create_plan', arguments: { steps: ['Fetch a.example'] } }] },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'in_progress' } }, { name: 'fetch_page', arguments: { url: 'https://a.example' } }] },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'completed' } }] },
      { text: 'Fetched.' },
    );
    const { task, events } = await run(agent, 'Fetch a.example');
    expect(task.status).toBe('completed');
    const choices = llm.requests.map((r) => r.body.tool_choice);
    expect(choices.slice(0, 3)).toEqual([{ type: 'function', function: { name: 'create_plan' } }, { type: 'function', function: { name: 'create_plan' } }, 'auto']);
    expect(llm.requests[0].system).toContain('The plan is mandatory');
    const results = toolResults(events);
    expect(results.map((r) => [r.tool_name, r.is_error])).toEqual([
      ['fetch_page', true],
      ['create_plan', false],
      ['update_plan', false],
      ['fetch_page', false],
      ['update_plan', false],
    ]);
    expect(String(results[0].result)).toContain('Plan first: this agent requires a plan before any other tool');
    expect(results[0].refused).toBe(true);
  });

  it('with graph targets: the chain forces the successor, and the planning tools are never refused by it', async () => {
    const agent = await planner({
      graph: [{ item_id: fn.fetch_page, type: 'tool', sub_type: 'custom_function', targets: [fn.flaky] }],
    });
    llm.reply(
      { toolCalls: [{ name: 'create_plan', arguments: { steps: ['Fetch', 'Call flaky'] } }] },
      { toolCalls: [{ name: 'fetch_page', arguments: { url: 'https://b.example' } }] },
      // The step the graph forces (flaky), with a checkmark beside it.
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'completed' } }, { name: 'flaky', arguments: {} }] },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 2, status: 'failed', note: '503' } }] },
      { text: 'Fetched; flaky failed.' },
    );
    const { task, events } = await run(agent, 'Fetch then flaky');
    expect(task.status).toBe('completed');
    expect(llm.requests[2].body.tool_choice).toEqual({ type: 'function', function: { name: 'flaky' } });
    expect(toolResults(events).map((r) => [r.tool_name, r.is_error, r.refused ?? false])).toEqual([
      ['create_plan', false, false],
      ['fetch_page', false, false],
      ['update_plan', false, false],
      ['flaky', true, false],
      ['update_plan', false, false],
    ]);
  });

  it('settings: enforce needs deep_planning (422, nothing changed); max_plan_retries is validated', async () => {
    const agent = await t.createAgent({ should_stage_before_publish: false });
    const r = await t.req('PATCH', `/v1/agents/${agent}`, { enforce_deep_planning: true });
    expect(r.statusCode).toBe(422);
    expect(r.json().detail[0]).toMatchObject({ loc: ['body', 'enforce_deep_planning'], msg: 'Value error, enforce_deep_planning requires deep_planning', type: 'value_error' });
    expect((await t.req('GET', `/v1/agents/${agent}`)).json().enforce_deep_planning).toBe(false);
    const neg = await t.req('PATCH', `/v1/agents/${agent}`, { agno_settings: { max_plan_retries: -1 } });
    expect(neg.statusCode).toBe(422);
    expect(neg.json().detail[0].loc).toEqual(['body', 'agno_settings', 'max_plan_retries']);
    const ok = await t.req('PATCH', `/v1/agents/${agent}`, { deep_planning: true, enforce_deep_planning: true, agno_settings: { max_plan_retries: 3 } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ deep_planning: true, enforce_deep_planning: true, agno_settings: { max_plan_retries: 3 } });
  });
});
