import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_SKILLS } from '../../src/skills/builtin-skills.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

describe.each(TEST_DBS)('skills catalog and tool attachment (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('lists built-in skills first, then the organization\'s, paged', async () => {
    const created = await t.req('POST', '/v1/skills', { name: 'triage-ticket', description: 'Triage a support ticket', instructions: 'Classify, prioritise, route.' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name: 'triage-ticket', source: 'organization', instructions: 'Classify, prioritise, route.' });
    await t.req('POST', '/v1/skills', { name: 'another', description: 'd', instructions: 'i' });

    const all = (await t.req('GET', '/v1/skills?per_page=50')).json();
    expect(all.total).toBe(BUILTIN_SKILLS.length + 2);
    expect(all.items.map((s: { name: string }) => s.name)).toEqual([...BUILTIN_SKILLS.map((s) => s.name), 'another', 'triage-ticket']);
    expect(all.items[0]).toMatchObject({ source: 'builtin', created_at: null });

    // A page that straddles built-in and organization skills.
    const per = BUILTIN_SKILLS.length - 1;
    const p2 = (await t.req('GET', `/v1/skills?per_page=${per}&page=2`)).json();
    expect(p2.items.map((s: { name: string }) => s.name)).toEqual([BUILTIN_SKILLS.at(-1)!.name, 'another', 'triage-ticket'].slice(0, per));

    // Another organization sees only the built-ins.
    expect((await t.req('GET', '/v1/skills', undefined, { 'x-api-key': t.keyB })).json().total).toBe(BUILTIN_SKILLS.length);
    expect((await t.req('GET', '/v1/skills/triage-ticket', undefined, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'Skill not found' });
    expect((await t.req('DELETE', '/v1/skills/triage-ticket', undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
    expect((await t.req('GET', '/v1/skills/summarize-document', undefined, { 'x-api-key': t.keyB })).json().source).toBe('builtin');
  });

  it('refuses duplicates, built-in names, bad names, and deleting built-ins', async () => {
    await t.req('POST', '/v1/skills', { name: 'dup', description: 'd', instructions: 'i' });
    expect((await t.req('POST', '/v1/skills', { name: 'dup', description: 'd', instructions: 'i' })).statusCode).toBe(409);
    const builtin = await t.req('POST', '/v1/skills', { name: 'draft-email', description: 'd', instructions: 'i' });
    expect(builtin.statusCode).toBe(422);
    expect(builtin.json().detail[0].loc).toEqual(['body', 'name']);
    expect((await t.req('POST', '/v1/skills', { name: 'has space', description: 'd', instructions: 'i' })).statusCode).toBe(422);
    expect((await t.req('POST', '/v1/skills', { name: 'x', description: 'd' })).json().detail[0]).toMatchObject({ loc: ['body', 'instructions'], type: 'missing' });
    expect((await t.req('DELETE', '/v1/skills/draft-email')).statusCode).toBe(409);
    expect((await t.req('DELETE', '/v1/skills/dup')).statusCode).toBe(204);
    expect((await t.req('GET', '/v1/skills/dup')).statusCode).toBe(404);
  });

  it('agents attach skills, custom functions and MCP servers that exist in the organization only', async () => {
    const fn = (await t.req('POST', '/v1/custom_functions', { name: 'f', code: 'async function run() { return 1 }' })).json();
    const mcpB = (await t.req('POST', '/v1/mcp_servers', { name: 'b', url: 'https://mcp.example.com/mcp' }, { 'x-api-key': t.keyB })).json();
    const fnB = (await t.req('POST', '/v1/custom_functions', { name: 'g', code: 'async function run() { return 1 }' }, { 'x-api-key': t.keyB })).json();
    const refused: [Record<string, unknown>, string][] = [
      [{ type: 'skill', skill_name: 'no-such-skill' }, 'skill_name'],
      [{ type: 'custom_function', custom_function_id: fnB.id }, 'custom_function_id'],
      [{ type: 'mcp', mcp_id: mcpB.id }, 'mcp_id'],
    ];
    for (const [entry, field] of refused) {
      const bad = await t.req('POST', '/v1/agents', { name: `refused-${kind}-${field}`, tools: [{ type: 'skill', skill_name: 'plan-task' }, entry] });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().detail[0].loc).toEqual(['body', 'tools', 1, field]);
    }
    expect((await t.req('GET', '/v1/agents')).json().total).toBe(0);

    const ok = await t.req('POST', '/v1/agents', {
      name: `attached-${kind}`,
      tools: [
        { type: 'skill', skill_name: 'plan-task' },
        { type: 'custom_function', custom_function_id: fn.id },
        { type: 'mcp', url: 'https://mcp.example.com/mcp', name: 'ext', auth_type: 'api_key', api_key: 'sk-inline-secret', headers: { 'X-Secret': 'hdr-secret' } },
      ],
    });
    expect(ok.statusCode, ok.body).toBe(201);
    const agent = ok.json();
    expect(ok.body).not.toContain('sk-inline-secret');
    // Inline header values are sealed in the graph item (the `tools` echo is the agents domain's to redact).
    expect(JSON.stringify(agent.graph)).not.toContain('hdr-secret');
    const byType = (type: string) => agent.graph.filter((g: { type: string }) => g.type === type);
    expect(byType('skill')).toMatchObject([{ item_id: 'plan-task' }]);
    expect(byType('tool')).toMatchObject([{ item_id: fn.id, sub_type: 'custom_function' }]);
    expect(byType('mcp')[0].settings.mcp_settings).toMatchObject({
      url: 'https://mcp.example.com/mcp',
      transport: 'streamable-http',
      auth_type: 'api_key',
      name: 'ext',
      allowed_tools: null,
      api_key: '********',
      headers: { 'X-Secret': '********' },
    });
    expect(agent.attached_tools).toEqual([{ id: 'service-custom-functions', operation_ids: [fn.id] }]);

    // The xpander connector id is an alias; graph items are created from attached_tools.
    const aliased = await t.req('POST', '/v1/agents', { name: `aliased-${kind}`, attached_tools: [{ id: 'xpander-custom-functions', operation_ids: [fn.id] }] });
    expect(aliased.statusCode, aliased.body).toBe(201);
    expect(aliased.json().attached_tools).toEqual([{ id: 'service-custom-functions', operation_ids: [fn.id] }]);
    expect(aliased.json().graph).toMatchObject([{ item_id: fn.id, type: 'tool', sub_type: 'custom_function' }]);
  });
});
