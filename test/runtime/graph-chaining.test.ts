import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { resetScript, runTraced, startScriptedRunWorld, toolRequests as requests, toolResults } from '../support/scripted-runs.js';
import { openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/** Graph `targets` and `is_first` (spec 2.4) acting at run time: docs/planning-and-chaining.md. */
describe.each(TEST_DBS)('graph chaining (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let fn: Record<string, string>;

  beforeAll(async () => {
    ({ t, llm, fn } = await startScriptedRunWorld(kind, {
      search: 'async function run({ q }) { return { hits: [q + " result"] }; }',
      summarize: 'async function run({ text }) { return { summary: "short: " + text }; }',
      notify: 'async function run({ to }) { return { sent: to }; }',
      broken: 'async function run() { throw new Error("search backend down"); }',
    }));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => resetScript(llm));

  const item = (name: string, extra: Record<string, unknown> = {}) => ({ item_id: fn[name], name, type: 'tool', sub_type: 'custom_function', targets: [], ...extra });
  const cfTools = (...names: string[]) => names.map((n) => ({ type: 'custom_function', custom_function_id: fn[n] }));

  const run = (agentId: string, text: string) => runTraced(t, agentId, text);

  it('after a tool runs, its declared targets run next, in order, each forced on the model', async () => {
    const agent = await t.createAgent(
      openaiAgentFields(llm.baseUrl, {
        tools: cfTools('search', 'summarize', 'notify'),
        // Targets by item_id (search -> summarize) and by the graph item's own id (summarize -> notify).
        graph: [item('search', { targets: [fn.summarize] }), item('summarize', { id: 'step-summarize', targets: ['step-notify'] }), item('notify', { id: 'step-notify' })],
      }),
    );
    const stored = (await t.req('GET', `/v1/agents/${agent}`)).json();
    // The `tools` entries resolved on top kept the declared chaining.
    expect(stored.graph.find((g: { item_id: string }) => g.item_id === fn.search).targets).toEqual([fn.summarize]);

    llm.reply(
      { toolCalls: [{ id: 'c1', name: 'search', arguments: { q: 'agentry' } }] },
      { toolCalls: [{ id: 'c2', name: 'summarize', arguments: { text: 'agentry result' } }] },
      { toolCalls: [{ id: 'c3', name: 'notify', arguments: { to: 'ops' } }] },
      { text: 'Searched, summarized and sent.' },
    );
    const { task, events } = await run(agent, 'Research agentry and tell ops');
    expect(task).toMatchObject({ status: 'completed', result: 'Searched, summarized and sent.' });

    // The model chose the first tool; the graph named the next two (tool_choice), then left it free to answer.
    const choices = llm.requests.map((r) => r.body.tool_choice);
    expect(choices).toEqual(['auto', { type: 'function', function: { name: 'summarize' } }, { type: 'function', function: { name: 'notify' } }, 'auto']);
    expect(toolResults(events).map((r) => [r.tool_name, r.is_error])).toEqual([
      ['search', false],
      ['summarize', false],
      ['notify', false],
    ]);
    // The trace says why each call ran.
    expect(requests(events).map((r) => r.graph ?? null)).toEqual([
      null,
      { chained_after: 'search', graph_item_id: stored.graph.find((g: { name: string }) => g.name === 'summarize').id, step: 'target' },
      { chained_after: 'summarize', graph_item_id: 'step-notify', step: 'target' },
    ]);
    const llmCalls = events.filter((e) => e.type === 'llm_call').map((e) => e.data.tool_choice ?? null);
    expect(llmCalls).toEqual([null, { type: 'tool', toolName: 'summarize' }, { type: 'tool', toolName: 'notify' }, null]);
  });

  it('a call other than the declared successor is refused; a failed tool starts no successors', async () => {
    const agent = await t.createAgent(
      openaiAgentFields(llm.baseUrl, {
        tools: cfTools('search', 'summarize', 'notify', 'broken'),
        graph: [item('search', { targets: [fn.summarize] }), item('broken', { targets: [fn.notify] })],
      }),
    );
    llm.reply(
      { toolCalls: [{ name: 'search', arguments: { q: 'x' } }] },
      // A model that ignores tool_choice: notify is refused, summarize (the successor) runs.
      { toolCalls: [{ name: 'notify', arguments: { to: 'ops' } }, { name: 'summarize', arguments: { text: 'x result' } }] },
      { toolCalls: [{ name: 'broken', arguments: {} }] },
      { text: 'Search backend is down.' },
    );
    const { task, events } = await run(agent, 'go');
    expect(task.status).toBe('completed');
    const results = toolResults(events);
    expect(results.map((r) => [r.tool_name, r.is_error, r.refused ?? false])).toEqual([
      ['search', false, false],
      ['notify', true, true],
      ['summarize', false, false],
      ['broken', true, false],
    ]);
    expect(String(results[1].result)).toContain('runs "summarize" next (declared after "search")');
    // broken failed: its target (notify) was not forced; the model was free to answer.
    expect(llm.requests.at(-1)!.body.tool_choice).toBe('auto');
  });

  it('is_first: other graph tools are refused until an entry point has run', async () => {
    const agent = await t.createAgent(
      openaiAgentFields(llm.baseUrl, {
        tools: cfTools('search', 'summarize'),
        graph: [item('search', { is_first: true }), item('summarize')],
      }),
    );
    llm.reply(
      { toolCalls: [{ name: 'summarize', arguments: { text: 'guess' } }] },
      { toolCalls: [{ name: 'search', arguments: { q: 'facts' } }] },
      { toolCalls: [{ name: 'summarize', arguments: { text: 'facts result' } }] },
      { text: 'done' },
    );
    const { events } = await run(agent, 'go');
    const results = toolResults(events);
    expect(results.map((r) => [r.tool_name, r.is_error])).toEqual([
      ['summarize', true],
      ['search', false],
      ['summarize', false],
    ]);
    expect(String(results[0].result)).toContain('starts with "search": call one of them first');
    expect(requests(events)[1].graph).toMatchObject({ step: 'first' });
  });

  it('targets must name items of the graph (422, nothing created); detaching a tool drops targets to it', async () => {
    const before = (await t.req('GET', '/v1/agents')).json().total;
    const bad = await t.req('POST', '/v1/agents', { name: `bad graph ${kind}`, ...openaiAgentFields(llm.baseUrl), tools: cfTools('search'), graph: [item('search', { targets: ['nowhere'] })] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['body', 'graph', 0, 'targets', 0], type: 'value_error' });
    expect((await t.req('GET', '/v1/agents')).json().total).toBe(before);

    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { tools: cfTools('search', 'summarize'), graph: [item('search', { targets: [fn.summarize] })] }));
    expect((await t.req('DELETE', `/v1/agents/${agent}/tools/${fn.summarize}`)).statusCode).toBe(200);
    const graph = (await t.req('GET', `/v1/agents/${agent}`)).json().graph;
    expect(graph.map((g: { name: string; targets: string[] }) => [g.name, g.targets])).toEqual([['search', []]]);
  });
});
