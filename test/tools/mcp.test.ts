import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpClientPool } from '../../src/mcp/mcp-client-pool.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { buildMcpTools } from './mcp-helpers.js';

describe.each(TEST_DBS)('MCP servers (%s)', (kind) => {
  let t: TestApp;
  let open: FakeMcpServer;
  let keyed: FakeMcpServer;
  let oauth: FakeMcpServer;
  beforeAll(async () => {
    [t, open, keyed, oauth] = await Promise.all([
      createTestApp(kind, { env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1' } }),
      startFakeMcpServer(),
      startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer mcp-key-1' } }),
      startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer user-token-7' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), open?.close(), keyed?.close(), oauth?.close()]);
  });

  describe('registry', () => {
    it('stores secrets write-only and shows them as ********', async () => {
      const r = await t.req('POST', '/v1/mcp_servers', {
        name: 'Docs',
        url: keyed.mcpUrl,
        auth_type: 'api_key',
        api_key: 'mcp-key-1',
        headers: { 'X-Tenant': 'acme' },
        allowed_tools: ['add'],
      });
      expect(r.statusCode).toBe(201);
      const s = r.json();
      expect(s).toMatchObject({
        name: 'Docs',
        url: keyed.mcpUrl,
        transport: 'streamable-http',
        auth_type: 'api_key',
        api_key: '********',
        client_secret: null,
        headers: { 'X-Tenant': '********' },
        allowed_tools: ['add'],
        share_user_token_across_other_agents: true,
      });
      expect(r.body).not.toContain('mcp-key-1');
      expect(r.body).not.toContain('acme');

      const patched = await t.req('PATCH', `/v1/mcp_servers/${s.id}`, { transport: 'sse', url: keyed.sseUrl, allowed_tools: null });
      expect(patched.json()).toMatchObject({ transport: 'sse', url: keyed.sseUrl, api_key: '********', allowed_tools: null });
      const listed = (await t.req('GET', '/v1/mcp_servers')).json();
      expect(listed.items.map((x: { id: string }) => x.id)).toContain(s.id);

      expect((await t.req('GET', `/v1/mcp_servers/${s.id}`, undefined, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'MCP server not found' });
      expect((await t.req('DELETE', `/v1/mcp_servers/${s.id}`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
      expect((await t.req('DELETE', `/v1/mcp_servers/${s.id}`)).statusCode).toBe(204);
      expect((await t.req('GET', `/v1/mcp_servers/${s.id}`)).statusCode).toBe(404);
    });

    it('refuses an api_key server without a key, and unknown fields, creating nothing', async () => {
      const before = (await t.req('GET', '/v1/mcp_servers')).json().total;
      const r = await t.req('POST', '/v1/mcp_servers', { name: 'x', url: open.mcpUrl, auth_type: 'api_key' });
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['body', 'api_key']);
      const r2 = await t.req('POST', '/v1/mcp_servers', { name: 'x', url: 'ftp://example.com', transport: 'websocket', extra: 1 });
      expect(r2.statusCode).toBe(422);
      expect(r2.json().detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual(expect.arrayContaining(['body.url', 'body.transport', 'body.extra']));
      expect((await t.req('GET', '/v1/mcp_servers')).json().total).toBe(before);
    });

    it('refuses an mcp_id of another organization when attaching', async () => {
      const s = (await t.req('POST', '/v1/mcp_servers', { name: 'B only', url: open.mcpUrl }, { 'x-api-key': t.keyB })).json();
      await expect(buildMcpTools(t.c, t.orgA, { mcp_id: s.id })).rejects.toMatchObject({ issues: [{ loc: ['body', 'tools', 0, 'mcp_id'] }] });
    });

    it('refuses connection settings beside mcp_id (the registry server applies its own), creating no agent', async () => {
      const s = (await t.req('POST', '/v1/mcp_servers', { name: 'Registry', url: open.mcpUrl })).json();
      const before = (await t.req('GET', '/v1/agents')).json().total;
      for (const [field, value] of [['api_key', 'k'], ['headers', { a: 'b' }], ['transport', 'sse'], ['auth_type', 'none'], ['name', 'other']] as const) {
        const r = await t.req('POST', '/v1/agents', { name: `mcp ${field}`, tools: [{ type: 'mcp', mcp_id: s.id, [field]: value }] });
        expect(r.statusCode, field).toBe(422);
        expect(r.json().detail[0].loc).toEqual(['body', 'tools', 0, field]);
        expect(r.json().detail[0].msg).toContain(`PATCH /v1/mcp_servers/${s.id}`);
      }
      expect((await t.req('GET', '/v1/agents')).json().total).toBe(before);
      const ok = await t.req('POST', '/v1/agents', { name: 'mcp allowed', tools: [{ type: 'mcp', mcp_id: s.id, allowed_tools: ['echo'] }] });
      expect(ok.statusCode).toBe(201);
    });
  });

  describe.each(['streamable-http', 'sse'] as const)('over %s', (transport) => {
    const urlOf = (s: FakeMcpServer) => (transport === 'sse' ? s.sseUrl : s.mcpUrl);

    it('lists the tools, filtered by allowed_tools, and calls them', async () => {
      const all = await buildMcpTools(t.c, t.orgA, { url: urlOf(open), name: 'calc', transport });
      expect(all.tools.map((x) => x.name).sort()).toEqual(['calc_add', 'calc_echo', 'calc_fail', 'calc_whoami']);
      expect(all.tools.find((x) => x.name === 'calc_add')!.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' } } });

      const some = await buildMcpTools(t.c, t.orgA, { url: urlOf(open), name: 'calc', transport, allowed_tools: ['add', 'fail'] });
      expect(some.tools.map((x) => x.name).sort()).toEqual(['calc_add', 'calc_fail']);
      expect(await some.call('calc_add', { a: 2, b: 3 })).toBe('5');
      expect(open.calls.at(-1)).toMatchObject({ tool: 'add', args: { a: 2, b: 3 } });
      await expect(some.call('calc_fail')).rejects.toThrow("MCP tool 'fail' of server 'calc' reported an error: the tool failed on purpose");
      await expect(some.call('calc_add', { a: 'two' })).rejects.toThrow(/add/);
      expect(await some.call('calc_add', { a: 1, b: 1 })).toBe('2');
    });

    it('sends the api_key of a registry server, and reports a wrong one clearly', async () => {
      const good = (await t.req('POST', '/v1/mcp_servers', { name: 'keyed', url: urlOf(keyed), transport, auth_type: 'api_key', api_key: 'mcp-key-1' })).json();
      const built = await buildMcpTools(t.c, t.orgA, { mcp_id: good.id });
      expect(await built.call('keyed_whoami')).toBe('Bearer mcp-key-1');

      const bad = (await t.req('POST', '/v1/mcp_servers', { name: 'wrongkey', url: urlOf(keyed), transport, auth_type: 'api_key', api_key: 'nope' })).json();
      const refused = await buildMcpTools(t.c, t.orgA, { mcp_id: bad.id });
      expect(refused.tools.map((x) => x.name)).toEqual(['wrongkey_unavailable']);
      await expect(refused.call('wrongkey_unavailable')).rejects.toThrow(/MCP server 'wrongkey' .* refused the credentials/);
    });

    it('uses only the user token given for the graph item of an oauth2 server', async () => {
      const entry = { url: urlOf(oauth), name: 'oauthy', transport, auth_type: 'oauth2' };
      const missing = await buildMcpTools(t.c, t.orgA, entry);
      expect(missing.tools.map((x) => x.name)).toEqual(['oauthy_unavailable']);
      await expect(missing.call('oauthy_unavailable')).rejects.toThrow(`pass an access token in user_tokens under the key '${missing.item.id}'`);
      expect(missing.events.filter((e) => e.type === 'auth_event')[0].data).toMatchObject({ status: 'authorization_required', graph_item_id: missing.item.id, server: 'oauthy' });

      const wrong = await buildMcpTools(t.c, t.orgA, entry, { [missing.item.id!]: 'stolen-token' });
      expect(wrong.tools.map((x) => x.name)).toEqual(['oauthy_unavailable']);
      expect(wrong.events.map((e) => e.data.status)).toEqual(['token_rejected']);

      const right = await buildMcpTools(t.c, t.orgA, entry, { [missing.item.id!]: 'user-token-7' });
      expect(await right.call('oauthy_whoami')).toBe('Bearer user-token-7');
      expect(right.events).toEqual([]);
    });
  });

  it('a server that is down fails its tool call with a clear message, not the run', async () => {
    const doomed = await startFakeMcpServer();
    const url = doomed.mcpUrl;
    const built = await buildMcpTools(t.c, t.orgA, { url, name: 'flaky' });
    expect(built.tools.map((x) => x.name)).toContain('flaky_add');
    await doomed.close();
    await expect(built.call('flaky_add', { a: 1, b: 1 })).rejects.toThrow(/MCP server 'flaky' \(http:\/\/127\.0\.0\.1:\d+\) is unreachable while calling add: connection (refused|reset)/);
    // A new run offers the stand-in tool that explains the outage.
    const later = await buildMcpTools(t.c, t.orgA, { url, name: 'flaky' });
    expect(later.tools.map((x) => x.name)).toEqual(['flaky_unavailable']);
    await expect(later.call('flaky_unavailable')).rejects.toThrow(/unreachable .*connection refused/);
  });

  it('keeps the tool list of a live session and lists again after reconnecting', async () => {
    const srv = await startFakeMcpServer();
    try {
      const first = await buildMcpTools(t.c, t.orgA, { url: srv.sseUrl, transport: 'sse', name: 'cache' });
      const inits = srv.initializations;
      srv.addTool('fresh', 'new');
      const second = await buildMcpTools(t.c, t.orgA, { url: srv.sseUrl, transport: 'sse', name: 'cache' });
      expect(srv.initializations).toBe(inits);
      expect(second.tools.map((x) => x.name)).toEqual(first.tools.map((x) => x.name));
      // The server ends the session: the next use reconnects and lists the tools again.
      await srv.dropSessions();
      await expect.poll(async () => (await buildMcpTools(t.c, t.orgA, { url: srv.sseUrl, transport: 'sse', name: 'cache' })).tools.map((x) => x.name), { timeout: 15_000, interval: 250 }).toContain('cache_fresh');
      expect(srv.initializations).toBeGreaterThan(inits);
    } finally {
      await srv.close();
    }
  });
});

describe('MCP egress policy', () => {
  it('refuses a loopback MCP server unless AGENTRY_EGRESS_ALLOW allows it', async () => {
    const [t, srv] = await Promise.all([createTestApp(TEST_DBS[0]), startFakeMcpServer()]);
    try {
      const built = await buildMcpTools(t.c, t.orgA, { url: srv.mcpUrl, name: 'internal' });
      expect(built.tools.map((x) => x.name)).toEqual(['internal_unavailable']);
      await expect(built.call('internal_unavailable')).rejects.toThrow(/refused: 127\.0\.0\.1 is a private, loopback or link-local address/);
      expect(srv.calls).toEqual([]);
    } finally {
      await Promise.all([t.close(), srv.close()]);
    }
  });
});

describe('MCP tool list cache', () => {
  it('serves the cached list until it expires, then lists again on the same session', async () => {
    const srv = await startFakeMcpServer();
    let now = 1_000_000;
    const pool = new McpClientPool({ fetch: globalThis.fetch, clock: { now: () => now }, toolListTtlMs: 60_000 });
    const ep = { name: 'ttl', url: srv.mcpUrl, transport: 'streamable-http' as const, headers: {} };
    try {
      const names = async () => (await pool.listTools(ep)).map((x) => x.name);
      expect(await names()).not.toContain('late');
      srv.addTool('late', 'x');
      now += 59_000;
      expect(await names()).not.toContain('late');
      now += 2_000;
      expect(await names()).toContain('late');
      expect(srv.initializations).toBe(1);
    } finally {
      await pool.close();
      await srv.close();
    }
  });
});
