import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/** GET /v1/mcp_servers/{id}/tools: what a registered server offers, as the console shows it. */
describe.each(TEST_DBS)('MCP server tools list (%s)', (kind) => {
  let t: TestApp;
  let mcp: FakeMcpServer;
  beforeAll(async () => {
    [t, mcp] = await Promise.all([createTestApp(kind, { env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1' } }), startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer k-1' } })]);
  });
  afterAll(async () => {
    await t?.close();
    await mcp?.close();
  });

  it('lists the tools with their schemas, marking those allowed_tools leaves out', async () => {
    const s = (await t.req('POST', '/v1/mcp_servers', { name: 'Calc', url: mcp.mcpUrl, auth_type: 'api_key', api_key: 'k-1', allowed_tools: ['add'] })).json();
    const r = await t.req('GET', `/v1/mcp_servers/${s.id}/tools`);
    expect(r.statusCode, r.body).toBe(200);
    const tools = r.json() as { name: string; allowed: boolean; input_schema: { properties: Record<string, unknown> } }[];
    const add = tools.find((x) => x.name === 'add')!;
    expect(add).toMatchObject({ description: 'Adds two numbers', allowed: true, read_only: false });
    expect(Object.keys(add.input_schema.properties).sort()).toEqual(['a', 'b']);
    expect(tools.find((x) => x.name === 'echo')!.allowed).toBe(false);
  });

  it('answers 502 with a readable message when the server refuses, 409 for OAuth servers, 404 across organizations', async () => {
    const wrong = (await t.req('POST', '/v1/mcp_servers', { name: 'Wrong key', url: mcp.mcpUrl, auth_type: 'api_key', api_key: 'nope' })).json();
    const r = await t.req('GET', `/v1/mcp_servers/${wrong.id}/tools`);
    expect(r.statusCode).toBe(502);
    expect(r.json().detail).toContain('Wrong key');
    expect(r.body).not.toContain('nope');
    const oauth = (await t.req('POST', '/v1/mcp_servers', { name: 'OAuth one', url: mcp.mcpUrl, auth_type: 'oauth2' })).json();
    expect((await t.req('GET', `/v1/mcp_servers/${oauth.id}/tools`)).statusCode).toBe(409);
    expect((await t.req('GET', '/v1/mcp_servers/missing/tools')).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/mcp_servers/${wrong.id}/tools`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
  });
});
