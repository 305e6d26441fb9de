import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { resetScript, runTraced, startScriptedRunWorld, toolResults } from '../support/scripted-runs.js';
import { openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/** task_level_strategies.stop_strategy and iterative_strategy.end_condition acting in runs (docs/contract.md#stop-conditions). */
describe.each(TEST_DBS)('stop conditions (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let fn: Record<string, string>;

  beforeAll(async () => {
    ({ t, llm, fn } = await startScriptedRunWorld(kind, {
      lookup: 'async function run({ q }) { return { found: q }; }',
      broken: 'async function run() { throw new Error("billing backend down"); }',
    }));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => resetScript(llm));

  const tools = (...names: string[]) => names.map((n) => ({ type: 'custom_function', custom_function_id: fn[n] }));
  const agentWith = (strategies: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    t.createAgent(openaiAgentFields(llm.baseUrl, { tools: tools('lookup', 'broken'), task_level_strategies: strategies, ...extra }));

  it('stop_on_failure ends the run failed at the first failing tool, without asking the model again', async () => {
    const agent = await agentWith({ stop_strategy: { enabled: true } });
    // One reply only: a second model call would find none and fail the run differently.
    llm.reply({ toolCalls: [{ name: 'broken', arguments: {} }, { name: 'lookup', arguments: { q: 'never' } }] });
    const { task, events } = await runTraced(t, agent, 'charge the customer');
    expect(task.status).toBe('failed');
    expect(task.result).toContain('The tool "broken" failed, and stop_strategy.stop_on_failure ends the run');
    expect(task.result).toContain('billing backend down');
    expect(toolResults(events).map((r) => r.tool_name)).toEqual(['broken']);
    expect(llm.requests).toHaveLength(1);
  });

  it('without stop_on_failure (or the strategy) the model is told and carries on', async () => {
    for (const strategies of [{ stop_strategy: { enabled: true, stop_on_failure: false } }, { stop_strategy: { enabled: false, stop_on_failure: true } }]) {
      resetScript(llm);
      const agent = await agentWith(strategies);
      llm.reply({ toolCalls: [{ name: 'broken', arguments: {} }] }, { text: 'Billing is down; try later.' });
      const { task } = await runTraced(t, agent, 'charge the customer');
      expect(task).toMatchObject({ status: 'completed', result: 'Billing is down; try later.' });
    }
  });

  it('a call the run refuses (arguments not matching the schema) is not a failure', async () => {
    const agent = await agentWith({ stop_strategy: { enabled: true } });
    llm.reply({ toolCalls: [{ name: 'lookup', arguments: 'not an object' }] }, { text: 'retried without it' });
    const { task } = await runTraced(t, agent, 'look it up');
    expect(task).toMatchObject({ status: 'completed', result: 'retried without it' });
  });

  it('stop_on_condition: the text that meets it is the answer, and the tools asked for with it are not run', async () => {
    const agent = await agentWith({ stop_strategy: { enabled: true, stop_on_failure: false, stop_on_condition: { type: 'contains', term: 'escalate' } } });
    llm.reply(
      { toolCalls: [{ name: 'lookup', arguments: { q: 'order 1' } }] },
      { text: 'This needs a human: ESCALATE to support.', toolCalls: [{ name: 'lookup', arguments: { q: 'order 2' } }] },
    );
    const { task, events } = await runTraced(t, agent, 'where is my order');
    expect(task).toMatchObject({ status: 'completed', result: 'This needs a human: ESCALATE to support.' });
    expect(toolResults(events).map((r) => r.payload)).toEqual([{ q: 'order 1' }]);
    expect(llm.requests).toHaveLength(2);
  });

  it('a regex condition, and iterative_strategy.end_condition on a JSON answer path', async () => {
    const regex = await agentWith({ stop_strategy: { enabled: true, stop_on_condition: { type: 'regex', term: '^DONE\\b' } } });
    llm.reply({ text: 'Not yet', toolCalls: [{ name: 'lookup', arguments: { q: 'a' } }] }, { text: 'DONE: all found', toolCalls: [{ name: 'lookup', arguments: { q: 'b' } }] });
    expect((await runTraced(t, regex, 'find')).task).toMatchObject({ status: 'completed', result: 'DONE: all found' });

    resetScript(llm);
    const json = await agentWith({ iterative_strategy: { enabled: true, max_iterations: 10, end_condition: { type: 'gte', path: 'confidence', value: 0.9 } } });
    llm.reply(
      { text: '{"answer": "maybe", "confidence": 0.4}', toolCalls: [{ name: 'lookup', arguments: { q: 'more' } }] },
      { text: '{"answer": "yes", "confidence": 0.95}', toolCalls: [{ name: 'lookup', arguments: { q: 'even more' } }] },
    );
    const { task, events } = await runTraced(t, json, 'is it true');
    expect(task).toMatchObject({ status: 'completed', result: '{"answer": "yes", "confidence": 0.95}' });
    expect(toolResults(events)).toHaveLength(1);
  });

  it('validates conditions, and refuses stop rules where no local model loop runs', async () => {
    const bad = async (strategies: unknown, extra: Record<string, unknown> = {}) => {
      const r = await t.req('POST', '/v1/agents', { name: `bad-${Math.random().toString(36).slice(2)}`, task_level_strategies: strategies, ...extra });
      expect(r.statusCode, JSON.stringify(strategies)).toBe(422);
      return r.json().detail as { loc: unknown[] }[];
    };
    const cond = (c: unknown) => ({ stop_strategy: { enabled: true, stop_on_condition: c } });
    expect((await bad(cond({ type: 'regex', term: '(?<=a)b' })))[0]!.loc).toEqual(['body', 'task_level_strategies', 'stop_strategy', 'stop_on_condition', 'term']);
    await bad(cond({ type: 'contains' }));
    await bad(cond({ type: 'else' }));
    await bad(cond({ type: 'equal', path: 'status' }));
    await bad(cond({ type: 'not_empty' }));
    await bad(cond({ type: 'contains', term: 'x', group_id: 'g1' }));
    await bad({ stop_strategy: { enabled: true, stop_after: 3 } });
    await bad({ stop_strategy: { enabled: true } }, { type: 'a2a', connectivity_details: { url: 'http://127.0.0.1:9/a2a' } });
    const ok = await t.req('POST', '/v1/agents', {
      name: `ok-${Math.random().toString(36).slice(2)}`,
      task_level_strategies: { stop_strategy: { enabled: true, stop_on_failure: true, stop_on_condition: { type: 'not_empty', path: 'ticket_id' } } },
    });
    expect(ok.statusCode, ok.body).toBe(201);
  });
});
