import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createAgent, expectIssue, FakeToolWorld } from './support.js';

const FN1 = '0190f1f0-0000-7000-8000-0000000000f1';
const FN2 = '0190f1f0-0000-7000-8000-0000000000f2';

describe.each(TEST_DBS)('agent tools (%s)', (kind) => {
  let t: TestApp;
  let world: FakeToolWorld;
  beforeAll(async () => {
    t = await createTestApp(kind);
    world = new FakeToolWorld(t.orgA);
    world.connections.set('conn-1', ['listInvoices', 'createInvoice']);
    world.connections.set('conn-2', ['getWeather']);
    world.functions.add(FN1).add(FN2);
    world.install(t);
  });
  afterAll(async () => t?.close());

  it('creates tool graph items for attached_tools given without a graph', async () => {
    const a = await createAgent(t, {
      attached_tools: [
        { id: 'conn-1', operation_ids: ['listInvoices'] },
        { id: 'xpander-custom-functions', operation_ids: [FN1, FN2] },
      ],
    });
    expect(a.attached_tools).toEqual([
      { id: 'conn-1', operation_ids: ['listInvoices'] },
      { id: 'service-custom-functions', operation_ids: [FN1, FN2] },
    ]);
    expect(a.graph.map((g: Record<string, unknown>) => [g.type, g.sub_type, g.item_id])).toEqual([
      ['tool', null, 'op_listInvoices'],
      ['tool', 'custom_function', FN1],
      ['tool', 'custom_function', FN2],
    ]);
    for (const g of a.graph) expect(g).toMatchObject({ id: expect.any(String), targets: [], is_first: false });
  });

  it('keeps an explicit graph and adds only missing items', async () => {
    const a = await createAgent(t, {
      attached_tools: [{ id: 'conn-1', operation_ids: ['listInvoices', 'createInvoice'] }],
      // A target names an item of the graph by id or item_id (the auto-created item here).
      graph: [{ id: 'g1', item_id: 'op_listInvoices', type: 'tool', targets: ['op_createInvoice'], is_first: true }],
    });
    expect(a.graph).toHaveLength(2);
    expect(a.graph[0]).toEqual({ id: 'g1', item_id: 'op_listInvoices', name: null, type: 'tool', sub_type: null, targets: ['op_createInvoice'], settings: null, is_first: true });
    expect(a.graph[1]).toMatchObject({ item_id: 'op_createInvoice', type: 'tool' });
  });

  it('validates explicit attached_tools through the resolvers', async () => {
    expectIssue(await t.req('POST', '/v1/agents', { name: 'x1', attached_tools: [{ id: 'conn-9', operation_ids: ['a'] }] }), ['body', 'attached_tools', 0, 'connection_id'], 'value_error', /conn-9/);
    expectIssue(
      await t.req('POST', '/v1/agents', { name: 'x2', attached_tools: [{ id: 'service-custom-functions', operation_ids: [FN1, 'missing-fn'] }] }),
      ['body', 'attached_tools', 0, 'operation_ids', 1, 'custom_function_id'],
      'value_error',
      /missing-fn/,
    );
    // Another organization's connection does not exist for this one.
    expectIssue(await t.req('POST', '/v1/agents', { name: 'x3', attached_tools: [{ id: 'conn-1', operation_ids: ['listInvoices'] }] }, { 'x-api-key': t.keyB }), ['body', 'attached_tools', 0, 'connection_id'], 'value_error');
  });

  it('merges resolved tools on top of explicit attached_tools and graph', async () => {
    const sub = await createAgent(t, { name: 'Helper' });
    const a = await createAgent(t, {
      attached_tools: [{ id: 'conn-1', operation_ids: ['listInvoices'] }],
      graph: [{ id: 'mine', item_id: 'op_listInvoices', name: 'old', type: 'tool', targets: [] }],
      tools: [
        { type: 'action', connection_id: 'conn-1', operation_ids: ['listInvoices', 'createInvoice'] },
        { type: 'custom_function', custom_function_id: FN1 },
        { type: 'agent', agent_id: sub.id },
      ],
    });
    expect(a.attached_tools).toEqual([
      { id: 'conn-1', operation_ids: ['listInvoices', 'createInvoice'] },
      { id: 'service-custom-functions', operation_ids: [FN1] },
    ]);
    // The resolved item replaced the explicit one (keeping its id); the rest were added.
    expect(a.graph.find((g: { item_id: string }) => g.item_id === 'op_listInvoices')).toMatchObject({ id: 'mine', name: 'listInvoices' });
    expect(a.graph.map((g: { type: string; item_id: string }) => `${g.type}:${g.item_id}`)).toEqual(['tool:op_listInvoices', 'tool:op_createInvoice', `tool:${FN1}`, `agent:${sub.id}`]);
    expect(a.tools).toHaveLength(3);
  });

  it('seals credentials inside tool entries and graph settings', async () => {
    const key = 'mcp-key-' + 'q'.repeat(20);
    const a = await createAgent(t, { tools: [{ type: 'mcp', url: 'https://mcp.example.com/mcp', name: 'docs', auth_type: 'api_key', api_key: key }] });
    expect(JSON.stringify(a)).not.toContain(key);
    expect(a.tools[0].api_key).toBe('********');
    expect(a.graph[0].settings.mcp_settings.api_key).toBe('********');
    const row = await t.c.db.kysely.selectFrom('agents').select('config').where('id', '=', a.id).executeTakeFirstOrThrow();
    expect(row.config).not.toContain(key);
    const run = await t.c.agents.getRunnable(t.orgA, a.id);
    expect((run.config.graph as any)[0].settings.mcp_settings.api_key).toBe(key);
    expect((run.config.tools as any)[0].api_key).toBe(key);
  });

  it('attaches and detaches tools, deploying by default', async () => {
    const sub = await createAgent(t, { name: 'Attachable' });
    const a = await createAgent(t, { name: 'Host' });
    expect((await t.req('GET', `/v1/agents/${a.id}/tools`)).json()).toEqual({ tools: [], attached_tools: [], graph: [] });

    const add = await t.req('POST', `/v1/agents/${a.id}/tools`, { type: 'agent', agent_id: sub.id });
    expect(add.statusCode, add.body).toBe(201);
    expect(add.json().graph).toMatchObject([{ type: 'agent', item_id: sub.id, name: 'Attachable' }]);
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json()).toMatchObject({ version: 3, has_pending_changes: false });

    const staged = await t.req('POST', `/v1/agents/${a.id}/tools?deploy=false`, { type: 'action', connection_id: 'conn-2', operation_ids: ['getWeather'] });
    expect(staged.statusCode).toBe(201);
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json()).toMatchObject({ version: 3, has_pending_changes: true });
    expect(staged.json().attached_tools).toEqual([{ id: 'conn-2', operation_ids: ['getWeather'] }]);

    expectIssue(await t.req('POST', `/v1/agents/${a.id}/tools`, { type: 'agent', agent_id: a.id }), ['body', 'agent_id'], 'value_error', /own sub-agent/);
    expectIssue(await t.req('POST', `/v1/agents/${a.id}/tools`, { type: 'action', connection_id: 'nope', operation_ids: ['x'] }), ['body', 'connection_id'], 'value_error');
    expectIssue(await t.req('POST', `/v1/agents/${a.id}/tools`, { type: 'workflow', workflow_id: 'w' }), ['body', 'workflow_id'], 'value_error', /workflow 'w' not found/);
    expectIssue(await t.req('POST', `/v1/agents/${a.id}/tools`, { type: 'zap' }), ['body', 'type'], 'union_tag_invalid');

    // Detach by connection id: the connector, its graph items and its tools entry go; deployed by default.
    const del = await t.req('DELETE', `/v1/agents/${a.id}/tools/conn-2`);
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json().attached_tools).toEqual([]);
    expect(del.json().graph.map((g: { type: string }) => g.type)).toEqual(['agent']);
    expect(del.json().tools).toEqual([{ type: 'agent', agent_id: sub.id }]);
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json()).toMatchObject({ version: 4, has_pending_changes: false });

    // Detach by sub-agent id, staged.
    const del2 = await t.req('DELETE', `/v1/agents/${a.id}/tools/${sub.id}?deploy=false`);
    expect(del2.json()).toEqual({ tools: [], attached_tools: [], graph: [] });
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json()).toMatchObject({ version: 4, has_pending_changes: true });

    expect((await t.req('DELETE', `/v1/agents/${a.id}/tools/never-attached`)).json()).toEqual({ detail: 'Tool not found' });
  });

  it('detaches one custom function from the custom-function connector', async () => {
    const a = await createAgent(t, { attached_tools: [{ id: 'service-custom-functions', operation_ids: [FN1, FN2] }] });
    const r = (await t.req('DELETE', `/v1/agents/${a.id}/tools/${FN1}`)).json();
    expect(r.attached_tools).toEqual([{ id: 'service-custom-functions', operation_ids: [FN2] }]);
    expect(r.graph.map((g: { item_id: string }) => g.item_id)).toEqual([FN2]);
  });

  it('validates PATCHed tools and knowledge bases', async () => {
    const a = await createAgent(t, { name: 'Patch tools' });
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { attached_tools: [{ id: 'conn-x', operation_ids: ['y'] }] }), ['body', 'attached_tools', 0, 'connection_id'], 'value_error');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { knowledge_bases: [{ id: 'kb-9', strategy: 'agentic_rag' }] }), ['body', 'knowledge_bases', 0, 'id'], 'value_error');
    // A real knowledge base of org A: the agents service checks ids through the knowledge domain.
    const kb = (await t.req('POST', '/v1/knowledge', { name: 'Patch tools kb' })).json() as { id: string };
    const ok = await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { knowledge_bases: [{ id: kb.id, strategy: 'agentic_rag' }], tools: [{ type: 'action', connection_id: 'conn-2', operation_ids: ['getWeather'] }] });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({
      knowledge_bases: [{ id: kb.id, name: null, description: null, strategy: 'agentic_rag', rw: false, documents: [] }],
      attached_tools: [{ id: 'conn-2', operation_ids: ['getWeather'] }],
    });
    expectIssue(await t.req('POST', '/v1/agents', { name: 'kb other org', knowledge_bases: [{ id: kb.id, strategy: 'vanilla' }] }, { 'x-api-key': t.keyB }), ['body', 'knowledge_bases', 0, 'id'], 'value_error');
  });
});
