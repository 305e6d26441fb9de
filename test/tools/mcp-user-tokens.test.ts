import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/** `/v1/mcp_servers/{id}/user_tokens`: OAuth tokens stored per user, write-only. */
describe.each(TEST_DBS)('MCP user tokens API (%s)', (kind) => {
  let t: TestApp;
  let oauthId: string;
  let plainId: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    const mk = async (body: Record<string, unknown>) => {
      const r = await t.req('POST', '/v1/mcp_servers', { url: 'https://mcp.example.com/mcp', ...body });
      expect(r.statusCode, r.body).toBe(201);
      return r.json().id as string;
    };
    oauthId = await mk({ name: 'crm', auth_type: 'oauth2' });
    plainId = await mk({ name: 'open' });
  });
  afterAll(async () => t?.close());

  const secretA = 'tok-AAA-should-never-show-1';
  const secretB = 'tok-BBB-should-never-show-2';
  const everything: string[] = [];
  const send = async (...args: Parameters<TestApp['req']>) => {
    const r = await t.req(...args);
    everything.push(r.body);
    return r;
  };

  it('creates (201), replaces (200), lists and deletes without ever showing the token', async () => {
    const created = await send('PUT', `/v1/mcp_servers/${oauthId}/user_tokens/alice`, { access_token: secretA, expires_in: 3600 });
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json();
    expect(Object.keys(c).sort()).toEqual(['created_at', 'expires_at', 'mcp_server_id', 'updated_at', 'user_id']);
    expect(c).toMatchObject({ user_id: 'alice', mcp_server_id: oauthId });
    const lifetime = Date.parse(c.expires_at) - Date.parse(c.created_at);
    expect(lifetime).toBeGreaterThanOrEqual(3600_000);
    expect(lifetime).toBeLessThan(3700_000);

    const replaced = await send('PUT', `/v1/mcp_servers/${oauthId}/user_tokens/alice`, { access_token: secretB });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({ user_id: 'alice', created_at: c.created_at, expires_at: null });

    const bob = await send('PUT', `/v1/mcp_servers/${oauthId}/user_tokens/${encodeURIComponent('bob@example.com')}`, { access_token: secretA });
    expect(bob.statusCode).toBe(201);
    expect(bob.json().user_id).toBe('bob@example.com');

    const list = await send('GET', `/v1/mcp_servers/${oauthId}/user_tokens?per_page=1`);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ total: 2, page: 1, per_page: 1, total_pages: 2 });
    expect(list.json().items).toEqual([replaced.json()]);
    const page2 = await send('GET', `/v1/mcp_servers/${oauthId}/user_tokens?page=2&per_page=1`);
    expect(page2.json().items.map((i: { user_id: string }) => i.user_id)).toEqual(['bob@example.com']);

    // The runtime sees the current token; the API never does.
    expect(await t.c.mcpUserTokens.lookup(t.orgA, oauthId, 'alice')).toEqual({ status: 'found', token: secretB });

    const del = await send('DELETE', `/v1/mcp_servers/${oauthId}/user_tokens/alice`);
    expect(del.statusCode).toBe(204);
    expect((await send('DELETE', `/v1/mcp_servers/${oauthId}/user_tokens/alice`)).statusCode).toBe(404);
    expect((await send('GET', `/v1/mcp_servers/${oauthId}/user_tokens`)).json().items.map((i: { user_id: string }) => i.user_id)).toEqual(['bob@example.com']);
    expect(await t.c.mcpUserTokens.lookup(t.orgA, oauthId, 'alice')).toEqual({ status: 'none' });

    // Not in any response, nor in the database in clear (every column of every row).
    const rows = await t.c.db.kysely.selectFrom('mcp_user_tokens').selectAll().execute();
    expect(rows.length).toBe(1);
    expect(rows[0].access_token_sealed).not.toBe(secretA);
    const stored = JSON.stringify(rows);
    for (const s of [secretA, secretB]) {
      expect(stored).not.toContain(s);
      expect(everything.join('\n')).not.toContain(s);
    }
  });

  it("answers 404 for another organization's server and changes nothing", async () => {
    await send('PUT', `/v1/mcp_servers/${oauthId}/user_tokens/carol`, { access_token: secretA });
    const asB = { 'x-api-key': t.keyB };
    const put = await t.req('PUT', `/v1/mcp_servers/${oauthId}/user_tokens/carol`, { access_token: 'from-b' }, asB);
    expect(put.statusCode).toBe(404);
    expect(put.json()).toEqual({ detail: 'MCP server not found' });
    expect((await t.req('GET', `/v1/mcp_servers/${oauthId}/user_tokens`, undefined, asB)).statusCode).toBe(404);
    expect((await t.req('DELETE', `/v1/mcp_servers/${oauthId}/user_tokens/carol`, undefined, asB)).statusCode).toBe(404);
    expect(await t.c.mcpUserTokens.lookup(t.orgA, oauthId, 'carol')).toEqual({ status: 'found', token: secretA });
    expect(await t.c.mcpUserTokens.lookup(t.orgB, oauthId, 'carol')).toEqual({ status: 'none' });
    expect((await t.req('PUT', '/v1/mcp_servers/no-such-server/user_tokens/carol', { access_token: 'x' })).statusCode).toBe(404);
  });

  it('answers 409 for a server whose auth_type is not oauth2', async () => {
    const r = await send('PUT', `/v1/mcp_servers/${plainId}/user_tokens/alice`, { access_token: secretA });
    expect(r.statusCode).toBe(409);
    expect(r.json().detail).toMatch(/auth_type 'none'.*oauth2/);
    expect((await t.req('GET', `/v1/mcp_servers/${plainId}/user_tokens`)).json().total).toBe(0);
  });

  it('answers 422 to bad bodies without echoing the token', async () => {
    const url = `/v1/mcp_servers/${oauthId}/user_tokens/dave`;
    const bad = [
      {},
      { access_token: '' },
      { access_token: 42 },
      { access_token: secretA, expires_in: 0 },
      { access_token: secretA, expires_in: 1.5 },
      { access_token: secretA, extra: true },
      { access_token: secretA + 'x'.repeat(20_000) },
    ];
    for (const body of bad) {
      const r = await send('PUT', url, body);
      expect(r.statusCode, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(Array.isArray(r.json().detail)).toBe(true);
    }
    expect(everything.join('\n')).not.toContain(secretA);
    expect(await t.c.mcpUserTokens.lookup(t.orgA, oauthId, 'dave')).toEqual({ status: 'none' });
  });

  it("deleting the server deletes its users' tokens", async () => {
    const r = await t.req('POST', '/v1/mcp_servers', { name: 'short-lived', url: 'https://mcp.example.com/mcp', auth_type: 'oauth2' });
    const id = r.json().id as string;
    expect((await t.req('PUT', `/v1/mcp_servers/${id}/user_tokens/erin`, { access_token: 'erin-token' })).statusCode).toBe(201);
    expect((await t.req('DELETE', `/v1/mcp_servers/${id}`)).statusCode).toBe(204);
    expect(await t.c.db.kysely.selectFrom('mcp_user_tokens').select('user_id').where('mcp_server_id', '=', id).execute()).toEqual([]);
  });
});
