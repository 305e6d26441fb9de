import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { resetScript, runTraced, startScriptedRunWorld, type TraceEvent } from '../support/scripted-runs.js';
import { openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * with_auto_context_management acting at run time (docs/contract.md#context-management): a scripted provider that
 * refuses, as OpenAI does, any request whose messages exceed a size; with the setting on (the default) the run trims
 * and finishes, with it off the refusal fails the run.
 */
const LIMIT = 70_000;
const OVERFLOW = "This model's maximum context length is 16385 tokens. However, your messages resulted in 21000 tokens. Please reduce the length of the messages.";

describe.each(TEST_DBS)('automatic context management (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let fn: Record<string, string>;

  beforeAll(async () => {
    // Each result is 30,000 characters: three of them do not fit under LIMIT.
    ({ t, llm, fn } = await startScriptedRunWorld(kind, { big: 'async function run({ n }) { return "r" + n + ":" + "x".repeat(30000); }' }));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => resetScript(llm));

  const size = (messages: unknown) => JSON.stringify(messages).length;
  const llmCalls = (events: TraceEvent[]) => events.filter((e) => e.type === 'llm_call').map((e) => e.data);
  /** Three tool calls, then an answer naming what the model still saw; refused past LIMIT. */
  const scriptTools = () =>
    llm.handle((req) => {
      const messages = req.body.messages as { role: string; content: unknown }[];
      if (size(messages) > LIMIT) return { status: 400, error: OVERFLOW };
      const results = messages.filter((m) => m.role === 'tool');
      if (results.length < 3) return { toolCalls: [{ name: 'big', arguments: { n: results.length + 1 } }] };
      const kept = results.filter((m) => !JSON.stringify(m.content).includes('removed to fit')).length;
      return { text: `answered with ${kept} of ${results.length} results` };
    });

  it('elides the oldest tool results when the provider refuses the size, and says so in the trace', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { tools: [{ type: 'custom_function', custom_function_id: fn.big }] }));
    scriptTools();
    const { task, events } = await runTraced(t, agent, 'collect three');
    expect(task).toMatchObject({ status: 'completed', result: 'answered with 2 of 3 results' });
    const calls = llmCalls(events);
    expect(calls.filter((c) => c.finish_reason === 'error')).toHaveLength(1);
    expect(calls.at(-1)).toMatchObject({ finish_reason: expect.not.stringMatching(/error/), context_trimmed: { removed_messages: 0, elided_results: 1 } });
    // Every request the provider accepted was within its window.
    for (const r of llm.requests.filter((q) => size(q.body.messages) <= LIMIT)) expect(size(r.body.messages)).toBeLessThanOrEqual(LIMIT);
  });

  it('with the setting off, the refusal fails the run', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { tools: [{ type: 'custom_function', custom_function_id: fn.big }], with_auto_context_management: false }));
    scriptTools();
    const { task } = await runTraced(t, agent, 'collect three');
    expect(task.status).toBe('error');
    expect(task.result).toContain('maximum context length');
  });

  it("drops the thread's oldest runs first when the history is what does not fit", async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl));
    llm.handle((req) => {
      const messages = req.body.messages as { role: string; content: string }[];
      if (size(messages) > LIMIT) return { status: 400, error: OVERFLOW };
      return { text: `seen ${messages.filter((m) => m.role === 'user').length} user messages` };
    });
    const id = `ctx-${kind}-${Math.random().toString(36).slice(2)}`;
    let last: { status: string; result: string | null } | undefined;
    for (let i = 1; i <= 4; i++) {
      const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { id, input: { text: `turn ${i} ${'y'.repeat(20_000)}` } });
      last = r.json();
      expect(last!.status, JSON.stringify(last)).toBe('completed');
    }
    // Four turns of 20,000 characters do not fit under 70,000: the oldest were left out of the fourth call.
    expect(Number(/seen (\d+)/.exec(last!.result!)![1])).toBeLessThan(4);
    const events = (await t.req('GET', `/v1/tasks/${id}/events`)).json() as TraceEvent[];
    expect(llmCalls(events).at(-1)!.context_trimmed).toMatchObject({ removed_messages: expect.any(Number) });
  });
});
