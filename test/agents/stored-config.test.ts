import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeAgentConfig } from '../../src/agents/agent-config.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * One typed AgentConfig from storage to the runtime (docs/decisions.md "Typed agent configuration"): a stored version
 * lacking fields (written before they existed) is completed once when read, with the create schema's defaults; the
 * values it has are kept.
 */
describe('normalizeAgentConfig', () => {
  it('completes absent fields and nested keys with the create defaults, keeping every stored value', () => {
    const c = normalizeAgentConfig({
      name: 'old',
      deep_planning: null,
      model_name: 'gpt-4o',
      agno_settings: { num_history_runs: 3, session_storage: false, tool_calls_compression: { enabled: true } },
      instructions: { role: ['r'] },
    });
    expect(c.name).toBe('old');
    expect(c.deep_planning).toBeNull();
    expect(c.model_provider).toBe('anthropic');
    expect(c.model_name).toBe('gpt-4o');
    expect(c.created_by).toBeNull();
    expect(c.output_format).toBe('markdown');
    expect(c.graph).toEqual([]);
    expect(c.attached_tools).toEqual([]);
    expect(c.max_self_schedules).toBe(3);
    expect(c.agno_settings).toMatchObject({ num_history_runs: 3, session_storage: false, tool_call_limit: 0, add_user_to_context: true, max_plan_retries: 15 });
    expect(c.agno_settings.tool_calls_compression).toEqual({ enabled: true, threshold: 3, instructions: '' });
    // Not in the specification and without a default: stays absent (the guardrails read it as `warn`).
    expect('prompt_injection_content_action' in c.agno_settings).toBe(false);
    expect(c.instructions).toEqual({ role: ['r'], goal: [], general: '' });
  });

  it('gives each configuration its own copies of the defaults', () => {
    const a = normalizeAgentConfig({ name: 'a' });
    const b = normalizeAgentConfig({ name: 'b' });
    expect(a.graph).not.toBe(b.graph);
    expect(a.agno_settings).not.toBe(b.agno_settings);
    expect(normalizeAgentConfig({ name: 'c' }).model_name).toBeNull();
  });
});

describe.each(TEST_DBS)('a stored version without newer fields (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    [t, llm] = await Promise.all([createTasksApp(kind), startOpenAIServer()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });

  it('reads with the schema defaults, in the API and at run time', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { instructions: { role: ['You are terse'] } }));
    const row = await t.c.db.kysely.selectFrom('agents').select(['config']).where('id', '=', agent).executeTakeFirstOrThrow();
    const config = JSON.parse(row.config);
    for (const k of ['output_format', 'agno_settings', 'graph', 'attached_tools', 'knowledge_bases', 'is_supervised', 'task_level_strategies']) delete config[k];
    delete config.instructions.goal;
    await t.c.db.kysely.updateTable('agents').set({ config: JSON.stringify(config) }).where('id', '=', agent).execute();

    const view = (await t.req('GET', `/v1/agents/${agent}`)).json();
    expect(view.output_format).toBe('markdown');
    expect(view.agno_settings).toMatchObject({ session_storage: true, num_history_runs: 10, tool_call_limit: 0 });
    expect(view.graph).toEqual([]);
    expect(view.instructions).toEqual({ role: ['You are terse'], goal: [], general: '' });
    expect(view.task_level_strategies).toBeNull();

    llm.reply({ text: 'Done.' });
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'hi' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Done.' });
    const system = llm.requests.at(-1)!.system;
    expect(system).toContain('Answer in Markdown.');
    expect(system).toContain('- You are terse');
  });
});
