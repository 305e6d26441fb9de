import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_RE } from '../../src/lib/ids.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createAgent, expectIssue } from './support.js';

const SPEC_DEFAULTS = {
  description: '',
  icon: '\u{1F680}',
  avatar: 'male-avatar',
  status: 'ACTIVE',
  type: 'manager',
  deployment_type: 'serverless',
  framework: 'agno',
  version: 2,
  has_pending_changes: false,
  is_latest: true,
  origin_template: null,
  environment_id: null,
  model_provider: 'anthropic',
  model_name: 'claude-sonnet-4-5',
  llm_reasoning_effort: 'medium',
  llm_api_base: null,
  llm_credentials_key: null,
  llm_credentials_key_type: 'xpander',
  llm_credentials: null,
  llm_extra_headers: {},
  instructions: { role: [], goal: [], general: '' },
  expected_output: '',
  output_format: 'markdown',
  output_schema: null,
  voice_id: null,
  deep_planning: false,
  enforce_deep_planning: false,
  tools: [],
  attached_tools: [],
  graph: [],
  knowledge_bases: [],
  source_nodes: [],
  skills: [],
  prompts: [],
  oas: {},
  orchestration_nodes: [],
  connectivity_details: {},
  access_scope: 'personal',
  task_level_strategies: null,
  notification_settings: {},
  using_nemo: false,
  is_supervised: false,
  is_autonomous: false,
  is_omni: false,
  discoverable: true,
  with_auto_context_management: true,
  developer_access: true,
  should_stage_before_publish: true,
  on_prem_event_streaming: true,
  use_agent_gateway: false,
  deletable: true,
  use_oidc_pre_auth: false,
  pre_auth_audiences: [],
  use_oidc_pre_auth_token_for_llm: false,
  oidc_pre_auth_token_llm_audience: null,
  oidc_pre_auth_token_mcp_audience: null,
  can_self_schedule: false,
  max_self_schedules: 3,
  use_dynamic_tools: false,
  workspace_tools_enabled: true,
};

const AGNO_DEFAULTS = {
  session_storage: true,
  learning: false,
  agent_memories: false,
  agentic_culture: false,
  user_memories: false,
  agentic_memory: false,
  session_summaries: false,
  num_history_runs: 10,
  max_tool_calls_from_history: 0,
  tool_call_limit: 0,
  coordinate_mode: true,
  pii_detection_enabled: false,
  pii_detection_mask: true,
  prompt_injection_detection_enabled: false,
  openai_moderation_enabled: false,
  openai_moderation_categories: null,
  reasoning_tools_enabled: true,
  tool_calls_compression: { enabled: false, threshold: 3, instructions: '' },
  max_plan_retries: 15,
  add_user_to_context: true,
};

const SYSTEM_FIELDS = ['id', 'organization_id', 'status', 'version', 'webhook_url', 'unique_name', 'created_at', 'has_pending_changes', 'is_latest'];

describe.each(TEST_DBS)('POST /v1/agents (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // OIDC pre-auth settings need an issuer on the server (docs/access.md); none is contacted at create.
    t = await createTestApp(kind, { env: { AGENTRY_OIDC_PRE_AUTH_ISSUER: 'https://issuer.example.com' } });
  });
  afterAll(async () => t?.close());

  it('applies every default of spec 2.1 and 2.5 (the schema default set)', async () => {
    const a = await createAgent(t, { name: 'Defaults' });
    const { agno_settings, ...rest } = a;
    expect(rest).toMatchObject(SPEC_DEFAULTS);
    expect(agno_settings).toEqual(AGNO_DEFAULTS);
  });

  it('sets the system-managed fields', async () => {
    const before = Date.now();
    const a = await createAgent(t, { name: 'System fields' });
    expect(a.id).toMatch(UUID_RE);
    expect(a.organization_id).toBe(t.orgA);
    expect(a.version).toBe(2);
    expect(a.status).toBe('ACTIVE');
    expect(a.unique_name).toMatch(/^[a-z]+-[a-z]+$/);
    expect(a.webhook_url).toBe(`${t.c.urls.webhook}/?agent_id=${a.id}&asynchronous=false`);
    expect(a.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(Date.parse(a.created_at)).toBeGreaterThanOrEqual(before - 1000);
    // created_by comes from the key when absent, and is kept when given.
    expect(typeof a.created_by).toBe('string');
    expect(a.created_by.length).toBeGreaterThan(0);
    expect((await createAgent(t, { created_by: 'alice@example.com' })).created_by).toBe('alice@example.com');
    // The response keeps spec 2.1's field order.
    expect(Object.keys(a).slice(0, 4)).toEqual(['id', 'unique_name', 'name', 'organization_id']);
    expect(Object.keys(a).at(-1)).toBe('webhook_url');
  });

  it('gives each agent of an organization its own unique_name', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 25; i++) names.add((await createAgent(t)).unique_name);
    expect(names.size).toBe(25);
  });

  it('fills model_name from the catalog and substitutes deprecated models', async () => {
    expect((await createAgent(t, { model_provider: 'openai' })).model_name).toBe('gpt-5');
    expect((await createAgent(t, { model_provider: 'openai', model_name: 'gpt-4o' })).model_name).toBe('gpt-4.1');
    expect((await createAgent(t, { model_name: 'claude-3-5-sonnet-latest' })).model_name).toBe('claude-sonnet-4-5');
    // A model the catalog does not know (a custom deployment) is kept.
    expect((await createAgent(t, { model_provider: 'openai', model_name: 'my-finetune' })).model_name).toBe('my-finetune');
    // Stored as it runs: trimmed (a pasted name), and a blank name is the provider's default.
    expect((await createAgent(t, { model_provider: 'openai', model_name: '  my-finetune\n' })).model_name).toBe('my-finetune');
    expect((await createAgent(t, { model_provider: 'openai', model_name: ' gpt-4o ' })).model_name).toBe('gpt-4.1');
    expect((await createAgent(t, { model_provider: 'openai', model_name: '   ' })).model_name).toBe('gpt-5');
  });

  it.each(SYSTEM_FIELDS)('refuses the system-managed field %s with extra_forbidden', async (field) => {
    const r = await t.req('POST', '/v1/agents', { name: `sys-${field}`, [field]: field === 'version' ? 3 : 'x' });
    expectIssue(r, ['body', field], 'extra_forbidden');
  });

  it('refuses unknown fields, also nested ones', async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'x1', colour: 'red' }), ['body', 'colour'], 'extra_forbidden');
    expectIssue(await t.req('POST', '/v1/agents', { name: 'x2', agno_settings: { foo: 1 } }), ['body', 'agno_settings', 'foo'], 'extra_forbidden');
    expectIssue(await t.req('POST', '/v1/agents', { name: 'x3', instructions: { bar: [] } }), ['body', 'instructions', 'bar'], 'extra_forbidden');
    expectIssue(await t.req('POST', '/v1/agents', { name: 'x4', tools: [{ type: 'agent', agent_id: 'a', x: 1 }] }), ['body', 'tools', 0, 'x'], 'extra_forbidden');
  });

  it("refuses type 'orchestration'", async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'orch', type: 'orchestration' }), ['body', 'type'], 'value_error', /workflows/);
  });

  it('refuses a name already used in the organization, not in another one', async () => {
    await createAgent(t, { name: 'Twin' });
    const r = await t.req('POST', '/v1/agents', { name: 'Twin' });
    expectIssue(r, ['body', 'name'], 'value_error', /already exists/);
    await createAgent(t, { name: 'Twin' }, t.keyB);
  });

  it('bounds max_self_schedules to 1..1000', async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'm0', max_self_schedules: 0 }), ['body', 'max_self_schedules'], 'greater_than_equal');
    expectIssue(await t.req('POST', '/v1/agents', { name: 'm1', max_self_schedules: 1001 }), ['body', 'max_self_schedules'], 'less_than_equal');
    expectIssue(await t.req('POST', '/v1/agents', { name: 'm2', max_self_schedules: 2.5 }), ['body', 'max_self_schedules'], 'int_type');
    expect((await createAgent(t, { max_self_schedules: 1 })).max_self_schedules).toBe(1);
    expect((await createAgent(t, { max_self_schedules: 1000 })).max_self_schedules).toBe(1000);
  });

  it('answers type errors with Pydantic type names and their loc', async () => {
    const cases: [Record<string, unknown>, (string | number)[], string][] = [
      [{}, ['body', 'name'], 'missing'],
      [{ name: 5 }, ['body', 'name'], 'string_type'],
      [{ name: '' }, ['body', 'name'], 'string_too_short'],
      [{ name: 'e1', model_provider: 'acme' }, ['body', 'model_provider'], 'enum'],
      [{ name: 'e2', output_format: 'yaml' }, ['body', 'output_format'], 'enum'],
      [{ name: 'e3', llm_reasoning_effort: 'max' }, ['body', 'llm_reasoning_effort'], 'enum'],
      [{ name: 'e4', access_scope: 'public' }, ['body', 'access_scope'], 'enum'],
      [{ name: 'e5', deployment_type: 'lambda' }, ['body', 'deployment_type'], 'enum'],
      [{ name: 'e6', llm_credentials_key_type: 'vault' }, ['body', 'llm_credentials_key_type'], 'enum'],
      [{ name: 'e7', is_supervised: 'maybe' }, ['body', 'is_supervised'], 'bool_type'],
      [{ name: 'e8', agno_settings: { num_history_runs: 1.5 } }, ['body', 'agno_settings', 'num_history_runs'], 'int_type'],
      [{ name: 'e8b', agno_settings: { tool_call_limit: -1 } }, ['body', 'agno_settings', 'tool_call_limit'], 'greater_than_equal'],
      [{ name: 'e9', instructions: { role: 'boss' } }, ['body', 'instructions', 'role'], 'list_type'],
      [{ name: 'e10', llm_credentials: { name: 'k' } }, ['body', 'llm_credentials', 'value'], 'missing'],
      [{ name: 'e11', llm_extra_headers: { a: 1 } }, ['body', 'llm_extra_headers', 'a'], 'string_type'],
      [{ name: 'e12', knowledge_bases: [{ id: 'k', strategy: 'magic' }] }, ['body', 'knowledge_bases', 0, 'strategy'], 'enum'],
      [{ name: 'e13', graph: [{ item_id: 'x', type: 'tool' }] }, ['body', 'graph', 0, 'targets'], 'missing'],
      [{ name: 'e14', tools: [{ type: 'teleport' }] }, ['body', 'tools', 0, 'type'], 'union_tag_invalid'],
      [{ name: 'e15', tools: [{ type: 'mcp' }] }, ['body', 'tools', 0], 'value_error'],
      [{ name: 'e16', tools: [{ type: 'agent' }] }, ['body', 'tools', 0, 'agent_id'], 'missing'],
      [{ name: 'e17', llm_api_base: 'not a url' }, ['body', 'llm_api_base'], 'url_parsing'],
      [{ name: 'e18', attached_tools: [{ id: 'c' }] }, ['body', 'attached_tools', 0, 'operation_ids'], 'missing'],
      // A task that kills its worker is claimed 1 + max_retries times: the ceiling bounds a crash loop.
      [{ name: 'e19', task_level_strategies: { retry_strategy: { enabled: true, max_retries: 11 } } }, ['body', 'task_level_strategies', 'retry_strategy', 'max_retries'], 'less_than_equal'],
    ];
    for (const [body, loc, type] of cases) expectIssue(await t.req('POST', '/v1/agents', body), loc, type);
  });

  it('reports every problem of a request at once', async () => {
    const r = await t.req('POST', '/v1/agents', { type: 'orchestration', max_self_schedules: 0, id: 'x' });
    expect(r.statusCode).toBe(422);
    const locs = r.json().detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.name', 'body.type', 'body.max_self_schedules', 'body.id']));
  });

  it('refuses every setting whose behaviour does not exist yet, all at once, and creates nothing', async () => {
    const asked = {
      name: 'Promises we cannot keep',
      // Deep planning acts (docs/planning-and-chaining.md): accepted, so not among the refused.
      deep_planning: true,
      enforce_deep_planning: true,
      output_format: 'voice',
      voice_id: 'v-1',
      deployment_type: 'container',
      using_nemo: true,
      use_agent_gateway: true,
      use_dynamic_tools: true,
      is_autonomous: true,
      is_omni: true,
      agno_settings: {
        learning: true, agent_memories: true, agentic_culture: true, user_memories: true, agentic_memory: true,
        session_summaries: true, coordinate_mode: false, max_tool_calls_from_history: 3,
        tool_calls_compression: { enabled: true },
      },
      task_level_strategies: { agentic_context_enabled: true },
      connectivity_details: { custom_headers: { h: 'v' } },
    };
    const r = await t.req('POST', '/v1/agents', asked);
    expect(r.statusCode).toBe(422);
    const locs = r.json().detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    expect(locs.sort()).toEqual([
      'body.agno_settings.agentic_culture', 'body.agno_settings.coordinate_mode', 'body.agno_settings.learning',
      'body.connectivity_details', 'body.deployment_type', 'body.is_autonomous', 'body.is_omni',
      'body.output_format', 'body.task_level_strategies.agentic_context_enabled', 'body.use_agent_gateway', 'body.use_dynamic_tools',
      'body.using_nemo',
    ]);
    expect(r.json().detail.every((d: { msg: string; type: string }) => d.type === 'value_error' && /supported/.test(d.msg))).toBe(true);
    const names = (await t.req('GET', '/v1/agents?per_page=50')).json().items.map((a: { name: string }) => a.name);
    expect(names).not.toContain('Promises we cannot keep');
    // A PATCH that turns one on is refused the same way and leaves the draft as it was.
    const a = await createAgent(t, { name: 'Kept promises' });
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { agno_settings: { learning: true } }), ['body', 'agno_settings', 'learning'], 'value_error');
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json().agno_settings.learning).toBe(false);
    // Values that describe what the runtime does stay accepted.
    await createAgent(t, { name: 'Plain', deep_planning: false, deployment_type: 'serverless', task_level_strategies: { stop_strategy: null } });
  });

  it('accepts PII detection beside memory features (their model calls are screened too: test/memory/memory.test.ts)', async () => {
    for (const flag of ['user_memories', 'agent_memories', 'agentic_memory', 'session_summaries']) {
      await createAgent(t, { name: `pii-${flag}`, agno_settings: { pii_detection_enabled: true, [flag]: true } });
    }
  });

  it('answers malformed JSON and a non-object body with 422', async () => {
    const bad = await t.req('POST', '/v1/agents', '{"name": ', { 'content-type': 'application/json' });
    expectIssue(bad, ['body'], 'json_invalid');
    expectIssue(await t.req('POST', '/v1/agents', [1, 2]), ['body'], 'dict_type');
  });

  it('requires use_oidc_pre_auth for use_oidc_pre_auth_token_for_llm', async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'oidc', use_oidc_pre_auth_token_for_llm: true }), ['body', 'use_oidc_pre_auth_token_for_llm'], 'value_error');
    await createAgent(t, { use_oidc_pre_auth: true, pre_auth_audiences: ['app'], use_oidc_pre_auth_token_for_llm: true });
  });

  it('keeps llm_credentials write-only: sealed at rest, "********" in every response', async () => {
    const secret = 'sk-test-' + 'z'.repeat(24);
    const a = await createAgent(t, { llm_credentials: { name: 'openai', description: 'team key', value: secret } });
    expect(a.llm_credentials).toEqual({ name: 'openai', description: 'team key', value: '********' });
    for (const url of [`/v1/agents/${a.id}`, '/v1/agents/full?per_page=50', `/v1/agents/${a.id}/versions/2`]) {
      const r = await t.req('GET', url);
      expect(r.statusCode).toBe(200);
      expect(r.body).not.toContain(secret);
    }
    const rows = await t.c.db.kysely.selectFrom('agents').select(['config']).where('id', '=', a.id).execute();
    const versions = await t.c.db.kysely.selectFrom('agent_versions').select(['config']).where('agent_id', '=', a.id).execute();
    for (const r of [...rows, ...versions]) expect(r.config).not.toContain(secret);
    // The runtime gets the value.
    const runnable = await t.c.agents.getRunnable(t.orgA, a.id);
    expect((runnable.config.llm_credentials as { value: string }).value).toBe(secret);
  });

  it('seals credential-carrying MCP headers and every llm_extra_headers value, and keeps the other MCP headers readable', async () => {
    const secret = 'hdr-secret-' + 'q'.repeat(20);
    const a = await createAgent(t, {
      llm_extra_headers: { 'Helicone-Auth': `Bearer ${secret}`, 'X-Team': 'support' },
      tools: [{ type: 'mcp', url: 'https://mcp.example.com/mcp', name: 'docs', headers: { Authorization: `Bearer ${secret}`, 'X-Region': 'eu' } }],
    });
    expect(a.llm_extra_headers).toEqual({ 'Helicone-Auth': '********', 'X-Team': '********' });
    expect(a.tools[0].headers).toEqual({ Authorization: '********', 'X-Region': 'eu' });
    for (const url of [`/v1/agents/${a.id}`, '/v1/agents/full?per_page=50', `/v1/agents/${a.id}/versions/2`]) {
      expect((await t.req('GET', url)).body).not.toContain(secret);
    }
    const rows = await t.c.db.kysely.selectFrom('agents').select(['config']).where('id', '=', a.id).execute();
    for (const r of rows) expect(r.config).not.toContain(secret);
    // Sending the redacted configuration back keeps the stored values.
    const patched = await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { llm_extra_headers: a.llm_extra_headers });
    expect(patched.statusCode).toBe(200);
    const runnable = await t.c.agents.getRunnable(t.orgA, a.id);
    expect(runnable.config.llm_extra_headers).toEqual({ 'Helicone-Auth': `Bearer ${secret}`, 'X-Team': 'support' });
  });

  it('returns a full configuration as it was given (round trip)', async () => {
    // llm_credentials_key must name an existing secret.
    expect((await t.req('PUT', '/v1/secrets/OPENAI_TEAM', { value: 'sk-team' })).statusCode).toBeLessThan(300);
    const full = {
      name: 'Full configuration',
      description: 'Answers questions about invoices',
      icon: '\u{1F9FE}',
      avatar: 'female-avatar',
      type: 'regular',
      deployment_type: 'serverless',
      framework: 'langchain',
      origin_template: 'tpl-1',
      environment_id: 'env-7',
      created_by: 'bob',
      model_provider: 'openai',
      model_name: 'gpt-4.1',
      // A non-default effort does not act through a custom llm_api_base (refused: test/agents/reasoning-effort.test.ts).
      llm_reasoning_effort: null,
      llm_api_base: 'https://llm.example.com/v1',
      llm_credentials_key: 'OPENAI_TEAM',
      llm_credentials_key_type: 'custom',
      llm_extra_headers: { 'x-team': 'finance' },
      instructions: { role: ['You are an accountant'], goal: ['Be exact'], general: 'Answer in English.' },
      expected_output: 'A table',
      output_format: 'json',
      output_schema: { type: 'object', properties: { total: { type: 'number' } } },
      voice_id: 'v-1',
      deep_planning: false,
      enforce_deep_planning: false,
      source_nodes: [{ id: 'sn1', type: 'webhook', targets: ['a'], metadata: { k: 1 } }],
      skills: [{ name: 'summarize-document' }],
      prompts: ['What is due?'],
      oas: { openapi: '3.1.0' },
      orchestration_nodes: [],
      connectivity_details: {},
      access_scope: 'organizational',
      agno_settings: { ...AGNO_DEFAULTS, num_history_runs: 5, session_storage: false, openai_moderation_categories: ['violence'], tool_calls_compression: { enabled: false, threshold: 5, instructions: 'short' }, max_plan_retries: 2 },
      task_level_strategies: { retry_strategy: { enabled: true, max_retries: 2 }, max_runs_per_day: 100, iterative_strategy: { max_iterations: 4 }, stop_strategy: null },
      notification_settings: {
        on_error: { email: ['ops@example.com'] },
        smtp: { host: 'smtp.example.com', port: 587, secure: false, require_tls: true, username: 'bot', password_secret: 'SMTP_PASSWORD', from: 'bot@example.com' },
      },
      using_nemo: false,
      is_supervised: true,
      is_autonomous: false,
      is_omni: false,
      discoverable: false,
      with_auto_context_management: false,
      developer_access: false,
      should_stage_before_publish: false,
      on_prem_event_streaming: false,
      use_agent_gateway: false,
      deletable: false,
      use_oidc_pre_auth: true,
      pre_auth_audiences: ['aud-1'],
      use_oidc_pre_auth_token_for_llm: true,
      oidc_pre_auth_token_llm_audience: 'llm-aud',
      oidc_pre_auth_token_mcp_audience: 'mcp-aud',
      can_self_schedule: true,
      max_self_schedules: 42,
      use_dynamic_tools: false,
      workspace_tools_enabled: false,
    };
    const a = await createAgent(t, full);
    // llm_extra_headers values are write-only (agent-secrets.ts).
    const shown = { ...full, llm_extra_headers: { 'x-team': '********' } };
    expect(a).toMatchObject(shown);
    const got = (await t.req('GET', `/v1/agents/${a.id}`)).json();
    expect(got).toMatchObject(shown);
    expect(got).toEqual(a);
  });

  it('resolves tools of kind agent into graph items, refusing unknown or foreign agents', async () => {
    const sub = await createAgent(t, { name: 'Sub agent' });
    const boss = await createAgent(t, { tools: [{ type: 'agent', agent_id: sub.id }] });
    expect(boss.tools).toEqual([{ type: 'agent', agent_id: sub.id }]);
    expect(boss.graph).toEqual([{ id: expect.any(String), item_id: sub.id, name: 'Sub agent', type: 'agent', sub_type: null, targets: [], settings: null, is_first: false }]);
    expect(boss.attached_tools).toEqual([]);
    expectIssue(await t.req('POST', '/v1/agents', { name: 'b1', tools: [{ type: 'agent', agent_id: 'nope' }] }), ['body', 'tools', 0, 'agent_id'], 'value_error', /not found/);
    const foreign = await createAgent(t, {}, t.keyB);
    expectIssue(await t.req('POST', '/v1/agents', { name: 'b2', tools: [{ type: 'agent', agent_id: foreign.id }] }), ['body', 'tools', 0, 'agent_id'], 'value_error');
    expectIssue(await t.req('POST', '/v1/agents', { name: 'b3', graph: [{ item_id: 'ghost', type: 'agent', targets: [] }] }), ['body', 'graph', 0, 'item_id'], 'value_error');
  });

  it('refuses unknown workflows, tool kinds without a resolver, unknown connections and knowledge bases', async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'w', tools: [{ type: 'workflow', workflow_id: 'wf' }] }), ['body', 'tools', 0, 'workflow_id'], 'value_error', /workflow 'wf' not found/);
    delete t.c.toolResolvers.skill;
    delete t.c.toolResolvers.action;
    delete t.c.toolResolvers.custom_function;
    expectIssue(await t.req('POST', '/v1/agents', { name: 's', tools: [{ type: 'skill', skill_name: 'x' }] }), ['body', 'tools', 0], 'value_error', /tool type 'skill' is not available/);
    expectIssue(await t.req('POST', '/v1/agents', { name: 'c', attached_tools: [{ id: 'conn-1', operation_ids: ['op'] }] }), ['body', 'attached_tools', 0], 'value_error', /tool type 'action' is not available/);
    expectIssue(
      await t.req('POST', '/v1/agents', { name: 'cf', attached_tools: [{ id: 'xpander-custom-functions', operation_ids: ['f1'] }] }),
      ['body', 'attached_tools', 0, 'operation_ids', 0],
      'value_error',
      /tool type 'custom_function' is not available/,
    );
    expectIssue(await t.req('POST', '/v1/agents', { name: 'kb', knowledge_bases: [{ id: 'kb-1', strategy: 'vanilla' }] }), ['body', 'knowledge_bases', 0, 'id'], 'value_error', /kb-1/);
    // Nothing was created by the refused requests.
    const list = (await t.req('GET', '/v1/agents?per_page=50')).json();
    expect(list.items.map((i: { name: string }) => i.name)).not.toEqual(expect.arrayContaining(['w', 's', 'c', 'cf', 'kb']));
  });
});
