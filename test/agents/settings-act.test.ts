import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLimits, DEFAULT_MAX_ITERATIONS } from '../../src/runtime/run-settings.js';
import type { AgentConfig } from '../../src/agents/agent.schemas.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createAgent, expectIssue } from './support.js';

/**
 * Agent settings that were stored and then ignored now act or are refused (422, nothing stored): explicit graph
 * items, top-level skills, task_level_strategies, the run bounds, llm_credentials_key, secret placeholders.
 */
describe.each(TEST_DBS)('agent settings act or are refused (%s)', (kind) => {
  let t: TestApp;
  const names = async () => ((await t.req('GET', '/v1/agents?per_page=50')).json().items as { name: string }[]).map((a) => a.name);

  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('explicit graph items are checked by kind: unknown types, missing things and unusable MCP settings are refused', async () => {
    const post = (name: string, graph: unknown[]) => t.req('POST', '/v1/agents', { name, graph });
    expectIssue(await post('g1', [{ item_id: 'x', type: 'toool', targets: [] }]), ['body', 'graph', 0, 'type'], 'value_error', /not one of tool, mcp, agent, skill, workflow/);
    expectIssue(await post('g2', [{ item_id: 'x', type: 'agent', sub_type: 'fancy', targets: [] }]), ['body', 'graph', 0, 'sub_type'], 'value_error');
    expectIssue(await post('g3', [{ item_id: 'listInvoices', type: 'tool', targets: [] }]), ['body', 'graph', 0, 'item_id'], 'value_error', /not in attached_tools/);
    expectIssue(await post('g4', [{ item_id: 'no-such-skill', type: 'skill', targets: [] }]), ['body', 'graph', 0, 'item_id'], 'value_error', /skill 'no-such-skill' not found/);
    expectIssue(await post('g5', [{ item_id: 'no-such-flow', type: 'workflow', targets: [] }]), ['body', 'graph', 0, 'item_id'], 'value_error', /workflow 'no-such-flow' not found/);
    expectIssue(await post('g6', [{ item_id: 'fn', type: 'tool', sub_type: 'custom_function', targets: [] }]), ['body', 'graph', 0, 'item_id'], 'value_error');
    const mcp = (settings: unknown) => [{ item_id: 'srv', type: 'mcp', targets: [], settings }];
    // An auth_type the runtime does not know used to become 'none' (no credential sent); allowed_tools that is not a
    // list used to offer every tool of the server.
    expectIssue(await post('g7', mcp({ mcp_settings: { url: 'https://mcp.example.com/mcp', auth_type: 'bearer', api_key: 'k' } })), ['body', 'graph', 0, 'settings', 'mcp_settings', 'auth_type'], 'enum');
    expectIssue(await post('g8', mcp({ mcp_settings: { url: 'https://mcp.example.com/mcp', allowed_tools: 'search' } })), ['body', 'graph', 0, 'settings', 'mcp_settings', 'allowed_tools'], 'list_type');
    expectIssue(await post('g9', mcp({ mcp_settings: { url: 'https://mcp.example.com/mcp', auth_type: 'api_key' } })), ['body', 'graph', 0, 'settings', 'mcp_settings', 'api_key'], 'value_error');
    expectIssue(await post('g10', mcp(null)), ['body', 'graph', 0, 'settings', 'mcp_settings'], 'value_error');
    expectIssue(await post('g11', mcp({ mcp_settings: { mcp_id: 'not-registered' } })), ['body', 'graph', 0, 'settings', 'mcp_settings', 'mcp_id'], 'value_error', /not found/);
    expect(await names()).not.toEqual(expect.arrayContaining(['g1']));

    const ok = await createAgent(t, {
      name: 'graph ok',
      graph: [
        { item_id: 'srv', type: 'mcp', targets: ['summarize-document'], settings: { mcp_settings: { url: 'https://mcp.example.com/mcp', auth_type: 'api_key', api_key: 'sk-1', allowed_tools: ['search'] } } },
        { item_id: 'summarize-document', type: 'skill', targets: [] },
      ],
    });
    expect(ok.graph.map((g: { type: string }) => g.type)).toEqual(['mcp', 'skill']);
    expect(ok.graph[0].settings.mcp_settings.api_key).toBe('********');
    // Read back and sent again: the redacted key keeps the stored one.
    const again = await t.req('PATCH', `/v1/agents/${ok.id}?deploy=true`, { graph: ok.graph });
    expect(again.statusCode, again.body).toBe(200);
    const runnable = await t.c.agents.getRunnable(t.orgA, ok.id);
    expect((runnable.config.graph[0].settings as { mcp_settings: { api_key: string } }).mcp_settings.api_key).toBe('sk-1');
  });

  it('top-level skills resolve to skill tools; an unknown skill is refused', async () => {
    const a = await createAgent(t, { name: 'skilled', skills: [{ name: 'draft-email' }] });
    expect(a.skills).toEqual([{ name: 'draft-email' }]);
    expect(a.graph).toEqual([expect.objectContaining({ type: 'skill', item_id: 'draft-email' })]);
    expectIssue(await t.req('POST', '/v1/agents', { name: 's2', skills: [{ name: 'email-writing' }] }), ['body', 'skills', 0, 'name'], 'value_error', /skill 'email-writing' not found/);
    expectIssue(await t.req('POST', '/v1/agents', { name: 's3', skills: [{ description: 'no name' }] }), ['body', 'skills', 0], 'value_error');
    const patched = await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { skills: [{ skill_name: 'review-code' }] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().graph.map((g: { item_id: string }) => g.item_id)).toContain('review-code');
  });

  it('task_level_strategies: unknown keys refused, max_retries needs enabled, bounds on iterations and tool calls', async () => {
    const post = (body: Record<string, unknown>) => t.req('POST', '/v1/agents', { name: 'strategies', ...body });
    expectIssue(await post({ task_level_strategies: { persistent_context: true } }), ['body', 'task_level_strategies', 'persistent_context'], 'extra_forbidden');
    expectIssue(await post({ task_level_strategies: { retry_strategy: { enabled: true, max_retries: 2, backoff: 'exp' } } }), ['body', 'task_level_strategies', 'retry_strategy', 'backoff'], 'extra_forbidden');
    expectIssue(await post({ task_level_strategies: { retry_strategy: { max_retries: 3 } } }), ['body', 'task_level_strategies', 'retry_strategy', 'enabled'], 'value_error', /needs enabled/);
    expectIssue(await post({ task_level_strategies: { iterative_strategy: { max_iterations: 1_000_000 } } }), ['body', 'task_level_strategies', 'iterative_strategy', 'max_iterations'], 'less_than_equal');
    expectIssue(await post({ agno_settings: { tool_call_limit: 1_000_000_000 } }), ['body', 'agno_settings', 'tool_call_limit'], 'less_than_equal');
    expect(await names()).not.toContain('strategies');
    const ok = await createAgent(t, { name: 'strategies ok', task_level_strategies: { retry_strategy: { enabled: false, max_retries: 3 }, iterative_strategy: { enabled: false, max_iterations: 4 } }, agno_settings: { tool_call_limit: 500 } });
    expect(ok.task_level_strategies.iterative_strategy).toEqual({ enabled: false, max_iterations: 4 });
  });

  it('iterative_strategy.enabled false leaves the default bound; enabled (or unsaid) applies max_iterations', () => {
    const limits = (iterative: unknown) => runLimits({ agno_settings: { tool_call_limit: 0, session_storage: true, num_history_runs: 10 }, task_level_strategies: { iterative_strategy: iterative } } as unknown as AgentConfig);
    expect(limits({ enabled: false, max_iterations: 3 }).maxIterations).toBe(DEFAULT_MAX_ITERATIONS);
    expect(limits({ enabled: true, max_iterations: 3 }).maxIterations).toBe(3);
    expect(limits({ max_iterations: 3 }).maxIterations).toBe(3);
  });

  it('llm_credentials_key must name an existing secret, and not beside llm_credentials', async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'k1', llm_credentials_key: 'NO_SUCH_SECRET' }), ['body', 'llm_credentials_key'], 'value_error', /PUT \/v1\/secrets\/NO_SUCH_SECRET/);
    expect((await t.req('PUT', '/v1/secrets/TEAM_KEY', { value: 'sk-team' })).statusCode).toBeLessThan(300);
    const a = await createAgent(t, { name: 'k2', llm_credentials_key: 'TEAM_KEY' });
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { llm_credentials_key: 'OTHER_MISSING' }), ['body', 'llm_credentials_key'], 'value_error');
    expectIssue(
      await t.req('POST', '/v1/agents', { name: 'k3', llm_credentials_key: 'TEAM_KEY', llm_credentials: { name: 'own', value: 'sk-own' } }),
      ['body', 'llm_credentials_key'],
      'value_error',
      /not both/,
    );
    expect(await names()).not.toEqual(expect.arrayContaining(['k1', 'k3']));
  });

  it('"********" where no secret is stored is refused, not sealed as the credential', async () => {
    const slack = { on_error: { slack: [{ webhook_url: '********' }] } };
    expectIssue(await t.req('POST', '/v1/agents', { name: 'n1', notification_settings: slack }), ['body', 'notification_settings', 'on_error', 'slack', 0, 'webhook_url'], 'value_error', /none is stored/);
    expectIssue(await t.req('POST', '/v1/agents', { name: 'n2', llm_extra_headers: { 'x-gateway-key': '********' } }), ['body', 'llm_extra_headers', 'x-gateway-key'], 'value_error');
    // With a stored value the placeholder keeps it, as before.
    const a = await createAgent(t, { name: 'n3', notification_settings: { on_error: { slack: [{ webhook_url: 'https://hooks.slack.com/services/T/B/x' }] } } });
    expect((await t.req('PATCH', `/v1/agents/${a.id}`, { notification_settings: a.notification_settings })).statusCode).toBe(200);
  });
});
