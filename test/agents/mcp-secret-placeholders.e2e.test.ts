import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * MCP secrets read back as "********" and written again (a configuration round trip) keep the stored secret: the
 * MCP server receives the key it was given, never the placeholder. Two scripted servers refuse any other credential:
 * one needs `Authorization: Bearer mcp-key-1` (api_key), the other `X-Tenant: acme` (a header whose name is not a
 * credential's, sealed in the graph item all the same).
 */
describe.each(TEST_DBS)('MCP secret placeholders (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let keyed: FakeMcpServer;
  let tenant: FakeMcpServer;
  beforeAll(async () => {
    [t, llm, keyed, tenant] = await Promise.all([
      createTasksApp(kind),
      startOpenAIServer(),
      startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer mcp-key-1' } }),
      startFakeMcpServer({ auth: { header: 'x-tenant', value: 'acme' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close(), keyed?.close(), tenant?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const keyedEntry = () => ({ type: 'mcp', url: keyed.mcpUrl, name: 'keyed', auth_type: 'api_key', api_key: 'mcp-key-1', allowed_tools: ['whoami'] });
  const tenantEntry = () => ({ type: 'mcp', url: tenant.mcpUrl, name: 'tenant', headers: { 'X-Tenant': 'acme' }, allowed_tools: ['echo'] });
  const createAgent = () => t.createAgent({ ...scriptedAgentFields(llm.baseUrl), should_stage_before_publish: false, tools: [keyedEntry(), tenantEntry()] });
  const read = async (id: string) => (await t.req('GET', `/v1/agents/${id}`)).json();

  /** Invokes the agent, the model calling both servers' tools: what each server saw, and the tools the model was offered. */
  const useBoth = async (agentId: string) => {
    const before = { keyed: keyed.calls.length, tenant: tenant.calls.length };
    llm.reply({ toolCalls: [{ name: 'keyed_whoami', arguments: {} }, { name: 'tenant_echo', arguments: { text: 'hi' } }] }, { text: 'done' });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'use both' } });
    expect(r.statusCode, r.body).toBe(200);
    expect((r.json() as Task).status).toBe('completed');
    return { offered: [...llm.requests[0].tools].sort(), keyed: keyed.calls.slice(before.keyed), tenant: tenant.calls.slice(before.tenant) };
  };

  const expectBothReached = async (agentId: string) => {
    const used = await useBoth(agentId);
    expect(used.offered).toEqual(['keyed_whoami', 'tenant_echo']);
    expect(used.keyed).toEqual([{ tool: 'whoami', args: {}, authorization: 'Bearer mcp-key-1' }]);
    expect(used.tenant).toMatchObject([{ tool: 'echo', args: { text: 'hi' } }]);
  };

  it('tools read back and sent again in a PATCH keep the stored key and headers', async () => {
    const id = await createAgent();
    const got = await read(id);
    expect(got.tools[0]).toMatchObject({ api_key: '********' });
    const item = got.graph.find((g: { name: string }) => g.name === 'keyed');
    expect(item.settings.mcp_settings.api_key).toBe('********');
    const rejectedBefore = keyed.unauthorized + tenant.unauthorized;

    const patched = await t.req('PATCH', `/v1/agents/${id}`, { tools: got.tools });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.body).not.toContain('mcp-key-1');
    await expectBothReached(id);
    expect(keyed.unauthorized + tenant.unauthorized).toBe(rejectedBefore);
  });

  it('the whole configuration read back (tools and graph) and sent again keeps them; so does a reordered list', async () => {
    const id = await createAgent();
    const got = await read(id);
    const patched = await t.req('PATCH', `/v1/agents/${id}`, { tools: got.tools, graph: got.graph });
    expect(patched.statusCode, patched.body).toBe(200);
    await expectBothReached(id);

    // Matched by what they are, not by position: the key stays with its server.
    const again = await read(id);
    const reordered = await t.req('PATCH', `/v1/agents/${id}`, { tools: [...again.tools].reverse(), graph: [...again.graph].reverse() });
    expect(reordered.statusCode, reordered.body).toBe(200);
    await expectBothReached(id);
  });

  it('"********" with no stored secret behind it is refused (422) and changes nothing', async () => {
    const id = await createAgent();
    const got = await read(id);
    const before = JSON.stringify(got);

    // Another url is another server: the stored key does not follow it.
    const moved = { ...got.tools[0], url: keyed.sseUrl, transport: 'sse' };
    const r = await t.req('PATCH', `/v1/agents/${id}`, { tools: [moved, got.tools[1]] });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().detail[0].loc).toEqual(['body', 'tools', 0, 'api_key']);
    expect(r.json().detail[0].msg).toContain('none is stored here');

    const headerless = { ...got.graph.find((g: { name: string }) => g.name === 'tenant') };
    headerless.settings = { mcp_settings: { ...headerless.settings.mcp_settings, headers: { 'X-Tenant': '********', 'X-Other': '********' } } };
    const r2 = await t.req('PATCH', `/v1/agents/${id}`, { graph: [headerless] });
    expect(r2.statusCode, r2.body).toBe(422);
    expect(r2.json().detail[0].loc).toEqual(['body', 'graph', 0, 'settings', 'mcp_settings', 'headers', 'X-Other']);

    const created = await t.req('POST', '/v1/agents', { ...scriptedAgentFields(llm.baseUrl), name: `placeholder-${kind}`, tools: [{ ...keyedEntry(), api_key: '********' }] });
    expect(created.statusCode, created.body).toBe(422);
    expect(created.json().detail[0].loc).toEqual(['body', 'tools', 0, 'api_key']);

    expect(JSON.stringify(await read(id))).toBe(before);
    await expectBothReached(id);
  });

  it('a registry server read back and sent again keeps its key and headers; "********" with nothing stored is refused', async () => {
    const created = await t.req('POST', '/v1/mcp_servers', { name: 'reg', url: keyed.mcpUrl, auth_type: 'api_key', api_key: 'mcp-key-1', headers: { 'X-Tenant': 'acme' } });
    expect(created.statusCode, created.body).toBe(201);
    const s = created.json();
    const { id: _id, organization_id: _o, created_at: _c, updated_at: _u, ...fields } = s;
    const patched = await t.req('PATCH', `/v1/mcp_servers/${s.id}`, fields);
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ api_key: '********', headers: { 'X-Tenant': '********' } });

    const agent = await t.createAgent({ ...scriptedAgentFields(llm.baseUrl), should_stage_before_publish: false, tools: [{ type: 'mcp', mcp_id: s.id, allowed_tools: ['whoami'] }] });
    const before = keyed.calls.length;
    llm.reply({ toolCalls: [{ name: 'reg_whoami', arguments: {} }] }, { text: 'done' });
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'who' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(keyed.calls.slice(before)).toEqual([{ tool: 'whoami', args: {}, authorization: 'Bearer mcp-key-1' }]);

    const bad = await t.req('PATCH', `/v1/mcp_servers/${s.id}`, { headers: { 'X-Tenant': '********', 'X-New': '********' } });
    expect(bad.statusCode, bad.body).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'headers', 'X-New']);
    const fresh = await t.req('POST', '/v1/mcp_servers', { name: 'reg2', url: keyed.mcpUrl, auth_type: 'api_key', api_key: '********' });
    expect(fresh.statusCode, fresh.body).toBe(422);
    expect(fresh.json().detail[0].loc).toEqual(['body', 'api_key']);
  });
});
